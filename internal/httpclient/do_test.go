package httpclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestUnsendableURLs checks that a URL which parses but which Go's client
// would not send (k6 sends through it) fails the request with Go's error
// and k6's code 1000, without reaching the transport: no connection, no
// lookup.
func TestUnsendableURLs(t *testing.T) {
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		t.Errorf("%s reached the transport", r.URL)
		return nil, http.ErrNotSupported
	})
	for raw, text := range map[string]string{
		"example.com/x":      `unsupported protocol scheme ""`,
		"#{Endpoint}#":       `unsupported protocol scheme ""`,
		"":                   `unsupported protocol scheme ""`,
		"localhost:8080/x":   `unsupported protocol scheme "localhost"`,
		"ftp://example.com/": `unsupported protocol scheme "ftp"`,
		"file:///etc/passwd": `unsupported protocol scheme "file"`,
		"data:text/plain,hi": `unsupported protocol scheme "data"`,
		"http:///x":          "http: no Host in request URL",
		"https://":           "http: no Host in request URL",
	} {
		target, err := ParseTarget(raw)
		if err != nil {
			t.Errorf("%q: %v; only what url.Parse refuses may be refused", raw, err)
			continue
		}
		if target.Raw != raw {
			t.Errorf("%q: Raw %q", raw, target.Raw)
		}
		res := Do(context.Background(), rt, &Request{Method: http.MethodGet, URL: target, Timeout: time.Minute}, NewLane())
		h := res.Failure()
		switch {
		case len(res.Hops) != 1 || h == nil:
			t.Errorf("%q: %d hops, failure %v", raw, len(res.Hops), h)
		case h.Err.Error() != text || ErrorText(h.Err) != text || h.ErrCode != 1000 || h.Status != 0:
			t.Errorf("%q: %q (text %q) code %d status %d, want %q 1000 0", raw, h.Err, ErrorText(h.Err), h.ErrCode, h.Status, text)
		case h.Timings != (Timings{}):
			t.Errorf("%q: timings %+v for a request never sent", raw, h.Timings)
		}
	}
	if _, err := ParseTarget("http://[fe80"); err == nil {
		t.Error("a URL that does not parse was accepted")
	}
}

// TestRedirectToOtherScheme checks redirects as Go's client follows them:
// to a scheme it cannot send, the next hop fails; a Location that does
// not parse fails the redirect itself, whatever the redirects limit.
func TestRedirectToOtherScheme(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", r.URL.Query().Get("to"))
		w.WriteHeader(http.StatusFound)
	}))
	defer srv.Close()
	client := NewClient(Options{})
	defer client.CloseIdleConnections()
	do := func(to string, redirects int) *Result {
		target, err := ParseTarget(srv.URL + "/?to=" + url.QueryEscape(to))
		if err != nil {
			t.Fatal(err)
		}
		return Do(context.Background(), client.Transport, &Request{Method: http.MethodPost, URL: target, Header: http.Header{}, Timeout: time.Minute, Redirects: redirects}, nil)
	}

	res := do("file:///etc/passwd", 10)
	if len(res.Hops) != 2 || res.Hops[0].Status != http.StatusFound || res.Hops[0].Err != nil {
		t.Fatalf("hops %+v, want the 302 then the failed hop", res.Hops)
	}
	h := res.Hops[1]
	if h.Err == nil || h.Err.Error() != `unsupported protocol scheme "file"` || h.ErrCode != 1000 || h.URL.Full != "file:///etc/passwd" || h.Method != http.MethodGet {
		t.Errorf("second hop %s %s: %v (code %d)", h.Method, h.URL.Full, h.Err, h.ErrCode)
	}
	if got, want := ThrowText(http.MethodPost, &h), `Post "file:///etc/passwd": unsupported protocol scheme "file"`; got != want {
		t.Errorf("thrown %q, want %q", got, want)
	}

	if res := do("file:///etc/passwd", 0); len(res.Hops) != 1 || res.Last().Status != http.StatusFound || res.Failure() != nil {
		t.Errorf("with redirects 0: %+v, want the 302", res.Hops)
	}

	for _, limit := range []int{10, 0} {
		res := do("http://[fe80", limit)
		h := res.Failure()
		if len(res.Hops) != 1 || h == nil {
			t.Fatalf("redirects %d: hops %+v, want the redirect failed", limit, res.Hops)
		}
		if want := `failed to parse Location header "http://[fe80": parse "http://[fe80": missing ']' in host`; h.Err.Error() != want || h.ErrCode != 1000 || h.Status != 0 || h.Proto != "" || res.Header != nil {
			t.Errorf("redirects %d: %q code %d status %d proto %q header %v", limit, h.Err, h.ErrCode, h.Status, h.Proto, res.Header)
		}
	}
}

func TestThrowText(t *testing.T) {
	for _, c := range []struct {
		method, url, want string
	}{
		{"GET", "ftp://user:secret@localhost/x", `Get "ftp://user:***@localhost/x": boom`},
		{"PATCH", "http://user@localhost/x", `Patch "http://user@localhost/x": boom`},
		{"", "http:", `Get "http:": boom`},
		{"CUSTOM", "#%7BEndpoint%7D%23", `Custom "#%7BEndpoint%7D%23": boom`},
	} {
		h := &Hop{URL: &Target{Full: c.url}, Err: refusal("boom")}
		if got := ThrowText(c.method, h); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.method, c.url, got, c.want)
		}
	}
}
