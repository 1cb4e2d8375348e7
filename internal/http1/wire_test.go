package http1

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// TestWriteRequestMatchesNetHTTP checks writeRequest byte for byte against
// Request.Write, and that it declines what it does not handle.
func TestWriteRequestMatchesNetHTTP(t *testing.T) {
	mk := func(method, rawURL string, h http.Header, body string) *http.Request {
		u, err := url.Parse(rawURL)
		if err != nil {
			t.Fatal(err)
		}
		r := &http.Request{Method: method, URL: u, Header: h, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
		if body != "" {
			r.Body = io.NopCloser(strings.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		return r
	}
	ua := http.Header{"User-Agent": {"me/1"}}
	handled := []*http.Request{
		mk("GET", "http://h:8080/a/b?x=1&y=%20", ua, ""),
		mk("GET", "http://h/", http.Header{}, ""),
		mk("GET", "http://h", http.Header{"User-Agent": {""}, "X-B": {"2"}, "X-A": {"1", "1b"}, "Accept": {"*/*"}}, ""),
		mk("HEAD", "http://h/p", ua, ""),
		mk("POST", "http://h/p", ua, "payload"),
		mk("POST", "http://h/p", ua, ""),
		mk("DELETE", "http://h/p", ua, ""),
		mk("PURGE", "http://h/p?", ua, ""),
		mk("PUT", "http://h/caf%C3%A9", http.Header{"Content-Type": {"text/plain"}, "Cookie": {"a=b; c=d"}}, "x"),
	}
	withHost := mk("GET", "http://h/", ua, "")
	withHost.Host = "virtual.test"
	closing := mk("GET", "http://h/", ua, "")
	closing.Close = true
	handled = append(handled, withHost, closing)
	for i, r := range handled {
		var want, got bytes.Buffer
		body := ""
		if r.Body != nil {
			b, _ := io.ReadAll(r.Body)
			body = string(b)
			r.Body = io.NopCloser(strings.NewReader(body))
		}
		if err := r.Write(&want); err != nil {
			t.Fatal(err)
		}
		if r.Body != nil {
			r.Body = io.NopCloser(strings.NewReader(body))
		}
		w := bufio.NewWriter(&got)
		ok, err := writeRequest(w, r)
		_ = w.Flush()
		if !ok || err != nil {
			t.Errorf("request %d: not handled (%v)", i, err)
			continue
		}
		if got.String() != want.String() {
			t.Errorf("request %d:\n got %q\nwant %q", i, got.String(), want.String())
		}
	}
	declined := []*http.Request{
		mk("GET", "http://h/", http.Header{"X": {" padded "}}, ""),
		mk("GET", "http://h/", http.Header{"X": {"tab\t"}}, ""),
		mk("GET", "http://[fe80::1%25eth0]:80/", ua, ""),
	}
	chunked := mk("POST", "http://h/", ua, "x")
	chunked.ContentLength = -1
	declined = append(declined, chunked)
	for i, r := range declined {
		var got bytes.Buffer
		w := bufio.NewWriter(&got)
		if ok, _ := writeRequest(w, r); ok {
			t.Errorf("declined request %d was handled", i)
		}
		_ = w.Flush()
		if got.Len() != 0 {
			t.Errorf("declined request %d wrote %q", i, got.String())
		}
	}
}

// TestReadHeadMatchesNetHTTP parses responses with readHead and with
// http.ReadResponse and compares what a caller sees.
func TestReadHeadMatchesNetHTTP(t *testing.T) {
	get, _ := http.NewRequest("GET", "http://h/", nil)
	head, _ := http.NewRequest("HEAD", "http://h/", nil)
	cases := []struct {
		raw     string
		req     *http.Request
		handled bool
	}{
		{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok", get, true},
		{"HTTP/1.1 404 Not Found\r\ncontent-length: 3\r\nx-thing:  spaced \t\r\nETag: \"a\"\r\n\r\nnah", get, true},
		{"HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 0\r\n\r\n", get, true},
		{"HTTP/1.1 200\r\nContent-Length: 1\r\n\r\nx", get, true},
		{"HTTP/1.1 204 No Content\r\n\r\n", get, true},
		{"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", get, true},
		{"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", head, true},
		{"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx", get, true},
		{"HTTP/1.1 200 OK\r\nConnection: keep-alive, Upgrade\r\nContent-Length: 1\r\n\r\nx", get, true},
		{"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", get, true},
		{"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx", get, true},
		{"HTTP/1.1 200 OK\r\n\r\n", head, true},
		// Left to net/http:
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", get, false},
		{"HTTP/1.1 200 OK\r\n\r\nuntil close", get, false},
		{"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", get, false},
		{"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx", get, false},
		{"HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\nx", get, false},
		{"HTTP/1.1 200 OK\r\nX: a\r\n folded\r\nContent-Length: 1\r\n\r\nx", get, false},
		{"HTTP/1.1 200 OK\r\nBad Header: 1\r\nContent-Length: 1\r\n\r\nx", get, false},
		{"HTTP/2.0 200 OK\r\nContent-Length: 1\r\n\r\nx", get, false},
		{"HTTP/1.1 20x OK\r\nContent-Length: 1\r\n\r\nx", get, false},
		{"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n", get, false}, // head not complete
	}
	for i, c := range cases {
		br := bufio.NewReaderSize(strings.NewReader(c.raw), 4096)
		_, _ = br.Peek(1)
		fr, ok := readHead(br, c.req)
		if ok != c.handled {
			t.Errorf("case %d: handled %v, want %v", i, ok, c.handled)
			continue
		}
		if !ok {
			if br.Buffered() != len(c.raw) {
				t.Errorf("case %d: declined but consumed input", i)
			}
			continue
		}
		resp := &fr.Response
		var body []byte
		if resp.Body == nil {
			fb := &bodyReader{left: resp.ContentLength, c: &conn{br: br}}
			for {
				var buf [3]byte
				n, err := fb.readFixed(buf[:])
				body = append(body, buf[:n]...)
				if err != nil {
					if err != io.EOF {
						t.Errorf("case %d: body: %v", i, err)
					}
					break
				}
			}
		} else {
			body, _ = io.ReadAll(resp.Body)
		}
		want, err := http.ReadResponse(bufio.NewReader(strings.NewReader(c.raw)), c.req)
		if err != nil {
			t.Fatalf("case %d: net/http: %v", i, err)
		}
		wantBody, _ := io.ReadAll(want.Body)
		if resp.Status != want.Status || resp.StatusCode != want.StatusCode || resp.Proto != want.Proto ||
			resp.ProtoMajor != want.ProtoMajor || resp.ProtoMinor != want.ProtoMinor ||
			resp.ContentLength != want.ContentLength || resp.Close != want.Close {
			t.Errorf("case %d: got %q %d %s %d.%d len %d close %v, want %q %d %s %d.%d len %d close %v", i,
				resp.Status, resp.StatusCode, resp.Proto, resp.ProtoMajor, resp.ProtoMinor, resp.ContentLength, resp.Close,
				want.Status, want.StatusCode, want.Proto, want.ProtoMajor, want.ProtoMinor, want.ContentLength, want.Close)
		}
		if !reflect.DeepEqual(resp.Header, want.Header) {
			t.Errorf("case %d: header %v, want %v", i, resp.Header, want.Header)
		}
		if string(body) != string(wantBody) {
			t.Errorf("case %d: body %q, want %q", i, body, wantBody)
		}
		if (resp.Body == http.NoBody) != (want.Body == http.NoBody) {
			t.Errorf("case %d: NoBody %v, net/http %v", i, resp.Body == http.NoBody, want.Body == http.NoBody)
		}
	}
}
