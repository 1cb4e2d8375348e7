package http1

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestRoundTripRefusesWhatNetHTTPRefuses holds the engine to net/http's
// refusals, with the messages k6 v2.2.0 reported for the same requests
// (its HTTP client is net/http's): nothing may be dialled or written. A
// method with CR/LF in it used to go on the wire as a second request whose
// answer a later request on the connection then read as its own.
func TestRoundTripRefusesWhatNetHTTPRefuses(t *testing.T) {
	cases := []struct {
		method string
		header http.Header
		want   string
	}{
		{"GET /SMUGGLED HTTP/1.1\r\nHOST: X\r\n\r\nGET", nil, `net/http: invalid method "GET /SMUGGLED HTTP/1.1\r\nHOST: X\r\n\r\nGET"`},
		{"GET\x00X", nil, `net/http: invalid method "GET\x00X"`},
		{"GET /x", nil, `net/http: invalid method "GET /x"`},
		{"G(E)T", nil, `net/http: invalid method "G(E)T"`},
		{"GÉT", nil, `net/http: invalid method "GÉT"`},
		{"GET", http.Header{"X-A": {"v\r\nInjected-Val: 1"}}, `net/http: invalid header field value for "X-A"`},
		{"GET", http.Header{"X-A": {"v\x00after"}}, `net/http: invalid header field value for "X-A"`},
		{"GET", http.Header{"X-A": {"v\x7f"}}, `net/http: invalid header field value for "X-A"`},
		{"GET", http.Header{"X-A": {"v\n"}}, `net/http: invalid header field value for "X-A"`},
		{"GET", http.Header{"User-Agent": {"a\nb"}}, `net/http: invalid header field value for "User-Agent"`},
		{"GET", http.Header{"X-A\r\nInjected-Name: 1\r\nX-B": {"v"}}, `net/http: invalid header field name "X-A\r\nInjected-Name: 1\r\nX-B"`},
		{"GET", http.Header{"X A": {"v"}}, `net/http: invalid header field name "X A"`},
		{"GET", http.Header{"": {"v"}}, `net/http: invalid header field name ""`},
		{"GET", http.Header{"X-É": {"v"}}, `net/http: invalid header field name "X-É"`},
	}
	for _, c := range cases {
		dialled := false
		tr := New(Config{Dial: func(context.Context, string, string) (net.Conn, error) {
			dialled = true
			return nil, errors.New("dialled")
		}})
		h := c.header
		if h == nil {
			h = http.Header{}
		}
		req := &http.Request{Method: c.method, URL: &url.URL{Scheme: "http", Host: "h", Path: "/"}, Header: h}
		_, err := tr.RoundTrip(req.WithContext(context.Background()))
		if err == nil || err.Error() != c.want {
			t.Errorf("%q %v: error %v, want %s", c.method, c.header, err, c.want)
		}
		if dialled {
			t.Errorf("%q %v: the engine dialled for a request it must refuse", c.method, c.header)
		}
	}
	// What net/http accepts, the engine accepts: obs-text and tabs in
	// values, lower-case and empty methods.
	for _, c := range []struct {
		method string
		header http.Header
		line   string
	}{
		{"get", http.Header{"X-A": {"é"}}, "get / HTTP/1.1"},
		{"", http.Header{"X-A": {"v\tw"}}, "GET / HTTP/1.1"},
	} {
		fc := &fakeConn{data: []byte("HTTP/1.1 204 No Content\r\n\r\n")}
		var w strings.Builder
		tr := New(Config{Dial: func(context.Context, string, string) (net.Conn, error) { return &teeConn{fakeConn: fc, w: &w}, nil }})
		req := &http.Request{Method: c.method, URL: &url.URL{Scheme: "http", Host: "h", Path: "/"}, Header: c.header}
		resp, err := tr.RoundTrip(req.WithContext(context.Background()))
		if err != nil {
			t.Errorf("%q %v: %v", c.method, c.header, err)
			continue
		}
		_ = resp.Body.Close()
		if !strings.HasPrefix(w.String(), c.line+"\r\n") {
			t.Errorf("%q %v: wrote %q", c.method, c.header, w.String())
		}
	}
}

// teeConn is a fakeConn that keeps what is written to it.
type teeConn struct {
	*fakeConn
	w *strings.Builder
}

func (c *teeConn) Write(p []byte) (int, error) { return c.w.Write(p) }

// TestHeadLimit checks that a response head over MaxHeadBytes fails the
// request with net/http's error (k6 v2.2.0 reports this text, error_code
// 1000), having read no more than the limit, while one under it is read.
// Before the limit a server could grow the client by sending one endless
// header line.
func TestHeadLimit(t *testing.T) {
	for _, c := range []struct {
		line    int
		wantErr bool
	}{
		{MaxHeadBytes - 1<<10, false},
		{MaxHeadBytes + 1<<10, true},
	} {
		src := &endlessHead{line: c.line}
		tr := New(Config{Dial: func(context.Context, string, string) (net.Conn, error) {
			return &readerConn{fakeConn: &fakeConn{}, r: src}, nil
		}})
		req := &http.Request{Method: "GET", URL: &url.URL{Scheme: "http", Host: "h", Path: "/"}, Header: http.Header{}}
		resp, err := tr.RoundTrip(req.WithContext(context.Background()))
		if c.wantErr {
			if err == nil || err.Error() != "net/http: server response headers exceeded 10485760 bytes; aborted" {
				t.Errorf("%d-byte header line: error %v", c.line, err)
			}
			if src.served > MaxHeadBytes {
				t.Errorf("%d-byte header line: %d bytes read, over the %d limit", c.line, src.served, MaxHeadBytes)
			}
			continue
		}
		if err != nil {
			t.Errorf("%d-byte header line: %v", c.line, err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		if len(resp.Header.Get("X-Huge")) != c.line || string(body) != "ok" {
			t.Errorf("%d-byte header line: header of %d bytes, body %q", c.line, len(resp.Header.Get("X-Huge")), body)
		}
	}
}

// endlessHead serves a response whose X-Huge header is line bytes long,
// then "ok". It counts the bytes read.
type endlessHead struct {
	line   int
	served int
	r      *bufio.Reader
}

func (e *endlessHead) Read(p []byte) (int, error) {
	if e.r == nil {
		e.r = bufio.NewReader(io.MultiReader(
			strings.NewReader("HTTP/1.1 200 OK\r\nX-Huge: "),
			io.LimitReader(repeatA{}, int64(e.line)),
			strings.NewReader("\r\nContent-Length: 2\r\n\r\nok")))
	}
	n, err := e.r.Read(p)
	e.served += n
	return n, err
}

type repeatA struct{}

func (repeatA) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// readerConn is a fakeConn whose server side is r.
type readerConn struct {
	*fakeConn
	r io.Reader
}

func (c *readerConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// TestSilentServer: on a socket the Transport waits for the answer before
// it reads (sendAndWait). A server that reads the request and never
// answers holds the request until its context ends, and no longer; the
// error is the context's, as on the read path.
func TestSilentServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			_, _ = http.ReadRequest(bufio.NewReader(c))
			got <- c // held open, never answered
		}
	}()
	tr := New(Config{})
	defer tr.CloseIdleConnections()
	u := &url.URL{Scheme: "http", Host: ln.Addr().String(), Path: "/"}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req := (&http.Request{Method: "GET", URL: u, Header: http.Header{}}).WithContext(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := tr.RoundTrip(req)
		done <- err
	}()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the request outlived its context by 10 s")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want the context's deadline", err)
	}
	(<-got).Close()
}
