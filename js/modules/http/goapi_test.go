package http

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	neturl "net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/internal/httpclient"
	"github.com/metronome-load/metronome/metrics"
)

// A Go module's request goes out through the VU's client, with its header
// and body as given, and is recorded as a script's: http_reqs and
// http_req_duration with the given tags plus the HTTP system tags (a name
// naming the url tag too), expected_response from its callback, and
// corrected_latency with the same tags worth its whole time plus the
// iteration's lag.
func TestRequesterRecordsLikeAScript(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	const lag = 25 * time.Millisecond
	start := time.Now()
	e.st.Latency = executor.Iteration{Intended: start.Add(-lag)}.Latency(start)
	q := NewRequester(e.vu)

	res, err := q.Do(&Request{
		Method: http.MethodPost, URL: srv.URL + "/echo", Name: "/push",
		Header:   http.Header{"X-Scope-Orgid": {"t1"}, "Content-Type": {"application/x-protobuf"}},
		Body:     []byte("payload"),
		Tags:     metrics.NewTags(map[string]string{"scenario": "default", "own": "yes"}),
		Expected: func(s int) bool { return s == 201 },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 200 || res.Proto != "HTTP/1.1" || res.Error != "" || res.RemoteIP != "127.0.0.1" {
		t.Fatalf("response %+v", res)
	}
	var got echo
	if err := json.Unmarshal([]byte(res.Body), &got); err != nil {
		t.Fatalf("body %q: %v", res.Body, err)
	}
	if got.Method != "POST" || got.Body != "payload" || got.Headers["X-Scope-Orgid"] != "t1" || got.ContentType != "application/x-protobuf" {
		t.Errorf("the server got %+v", got)
	}
	if res.Header.Get("Content-Type") != "application/json" || res.SentHeader.Get("X-Scope-Orgid") != "t1" {
		t.Errorf("headers: got %v, sent %v", res.Header, res.SentHeader)
	}

	reqs, durs, cor := e.samples("http_reqs"), e.samples("http_req_duration"), e.samples("corrected_latency")
	if len(reqs) != 1 || len(durs) != 1 || len(cor) != 1 || len(e.samples("http_req_failed")) != 1 {
		t.Fatalf("%d http_reqs, %d http_req_duration, %d corrected_latency, %d http_req_failed; want one each",
			len(reqs), len(durs), len(cor), len(e.samples("http_req_failed")))
	}
	tags := durs[0].Tags
	for k, want := range map[string]string{"name": "/push", "url": "/push", "method": "POST", "status": "200",
		"own": "yes", "expected_response": "false", "proto": "HTTP/1.1"} {
		if v, _ := tags.Get(k); v != want {
			t.Errorf("tag %s=%q, want %q (tags %v)", k, v, want, tags)
		}
	}
	if cor[0].Tags != tags {
		t.Errorf("corrected_latency tags %v, want http_req_duration's %v", cor[0].Tags, tags)
	}
	own := durs[0].Value + e.samples("http_req_blocked")[0].Value
	if want := own + metrics.Milliseconds(lag); math.Abs(cor[0].Value-want) > 1e-6 {
		t.Errorf("corrected_latency %v ms, want the request's %v + the lag %v", cor[0].Value, own, metrics.Milliseconds(lag))
	}
	if d := metrics.Milliseconds(res.Timings.Duration); math.Abs(d-durs[0].Value) > 1e-6 {
		t.Errorf("Timings.Duration %v ms, http_req_duration %v ms", d, durs[0].Value)
	}
	if e.st.DataSent == 0 || e.st.DataReceived == 0 {
		t.Errorf("data sent %d, received %d: the VU's counters missed the request", e.st.DataSent, e.st.DataReceived)
	}
}

// Without a name the request is tagged with its URL, without a callback
// it has no expected_response, Throw turns a failure into an error, and a
// jar stores the response's cookies and sends them next time. Redirects
// bounds the hops, and the binary and none body types keep bytes or
// nothing.
func TestRequesterOptions(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	q := NewRequester(e.vu)

	jar := httpclient.NewJar()
	if _, err := q.Do(&Request{Method: "GET", URL: srv.URL + "/set-cookie?k=v", Jar: jar}); err != nil {
		t.Fatal(err)
	}
	res, _ := q.Do(&Request{Method: "GET", URL: srv.URL + "/echo", Jar: jar})
	if !strings.Contains(res.Body, `"Cookie":"k=v"`) {
		t.Errorf("the jar's cookie was not sent: %s", res.Body)
	}
	d := e.samples("http_req_duration")
	if v, _ := d[0].Tags.Get("url"); v != srv.URL+"/set-cookie?k=v" {
		t.Errorf("url tag %q", v)
	}
	if _, ok := d[0].Tags.Get("expected_response"); ok || len(e.samples("http_req_failed")) != 0 {
		t.Errorf("a request without a callback was tagged expected_response or counted in http_req_failed")
	}

	res, _ = q.Do(&Request{Method: "GET", URL: srv.URL + "/redirect/3", Redirects: 1})
	if res.Status != http.StatusFound || !strings.HasSuffix(res.URL, "/redirect/2") {
		t.Errorf("with 1 redirect: %d at %s, want the second 302", res.Status, res.URL)
	}

	res, _ = q.Do(&Request{Method: "GET", URL: srv.URL + "/bin", BodyType: BodyBinary})
	if len(res.Bin) == 0 || res.Body != "" {
		t.Errorf("binary: %d bytes, text %q", len(res.Bin), res.Body)
	}
	res, _ = q.Do(&Request{Method: "GET", URL: srv.URL + "/echo", BodyType: BodyNone})
	if res.Bin != nil || res.Body != "" || res.Status != 200 {
		t.Errorf("none kept a body: %+v", res)
	}

	closed := "http://127.0.0.1:1/"
	res, err := q.Do(&Request{Method: "GET", URL: closed})
	if err != nil || res.ErrorCode == 0 || res.Error == "" {
		t.Errorf("a refused connection: %+v, %v; want an error code and no Go error", res, err)
	}
	if res, err := q.Do(&Request{Method: "GET", URL: closed, Throw: true}); err == nil || res != nil {
		t.Errorf("Throw: %+v, %v; want an error", res, err)
	}

	// The module's own context bounds the request: ended, the request
	// fails and records no k6 sample.
	e.reset()
	ctx, cancel := context.WithCancel(e.vu.Context())
	cancel()
	res, err = q.Do(&Request{Context: ctx, Method: "GET", URL: srv.URL + "/echo"})
	if err != nil || res.Error == "" || res.Status != 0 || len(e.samples("http_reqs")) != 0 {
		t.Errorf("an ended context: %+v, %v, %d http_reqs; want a failed request and none", res, err, len(e.samples("http_reqs")))
	}
}

// Once a k6 extension is built in (ExposeJars), a jar object a script
// hands a Go module exports as *CookieJar whose Jar is the jar its
// requests use: cookies stored through it are the script's, and the
// script's are in it. Before, the object carries no Jar.
func TestJarObjectsExposeTheirJar(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	if j := e.run(`new http.CookieJar()`).Export().(*CookieJar); j.Jar != nil {
		t.Fatalf("a jar object carries a Jar without ExposeJars")
	}
	ExposeJars()
	t.Cleanup(func() { exposeJars.Store(false) })
	for _, src := range []string{`jar = new http.CookieJar()`, `jar = http.cookieJar()`} {
		e.reset()
		j, ok := e.run(`var jar; ` + src + `; jar.set(` + strconv.Quote(srv.URL) + `, "js", "1"); jar`).Export().(*CookieJar)
		if !ok || j.Jar == nil {
			t.Fatalf("%s: exported %T without a Jar", src, j)
		}
		u, _ := neturl.Parse(srv.URL + "/")
		j.Jar.SetCookies(u, []*http.Cookie{{Name: "go", Value: "2", Path: "/"}})
		if got := len(j.Jar.Cookies(u)); got != 2 {
			t.Errorf("%s: the Go jar holds %d cookies, want the script's and its own", src, got)
		}
		body := e.run(`http.get(` + strconv.Quote(srv.URL+"/echo") + `, { jar: jar }).json().cookie`).String()
		if body != "js=1; go=2" {
			t.Errorf("%s: the request sent cookies %q, want js=1; go=2", src, body)
		}
	}
}
