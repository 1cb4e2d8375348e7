package http1

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"
)

// BenchmarkRoundTrip measures the engine alone: a GET with a few headers
// written and its answer read over an in-memory connection that answers
// every request at once, so no system call or server is counted.
func BenchmarkRoundTrip(b *testing.B) {
	answer := []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\nDate: Mon, 01 Jan 2026 00:00:00 GMT\r\n\r\nok")
	c := &echoConn{answer: answer}
	tr := New(Config{Dial: func(context.Context, string, string) (net.Conn, error) { return c, nil }})
	req := benchRequest(b, "http://bench.test/a/b?x=1")
	b.ReportAllocs()
	for b.Loop() {
		roundTrip(b, tr, req)
	}
}

// BenchmarkRoundTripLoopback is the same GET against a net/http server on
// loopback: the engine with the system calls of a real connection.
func BenchmarkRoundTripLoopback(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	tr := New(Config{})
	defer tr.CloseIdleConnections()
	req := benchRequest(b, srv.URL+"/a/b?x=1")
	b.ReportAllocs()
	for b.Loop() {
		roundTrip(b, tr, req)
	}
}

func benchRequest(b *testing.B, raw string) *http.Request {
	u, err := url.Parse(raw)
	if err != nil {
		b.Fatal(err)
	}
	return (&http.Request{
		Method: http.MethodGet, URL: u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Host: u.Host,
		Header: http.Header{"User-Agent": {"bench/1"}, "Accept": {"application/json"}, "X-Request-Id": {"abc123"}},
	}).WithContext(context.Background())
}

func roundTrip(b *testing.B, tr *Transport, req *http.Request) {
	resp, err := tr.RoundTrip(req)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		b.Fatal(err)
	}
	_ = resp.Body.Close()
}

// echoConn answers each request written to it with answer. It is used by
// one goroutine at a time, as the engine uses a connection.
type echoConn struct {
	answer []byte
	left   []byte
}

func (c *echoConn) Write(p []byte) (int, error) {
	c.left = c.answer
	return len(p), nil
}

func (c *echoConn) Read(p []byte) (int, error) {
	if len(c.left) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.left)
	c.left = c.left[n:]
	return n, nil
}

func (c *echoConn) Close() error                     { return nil }
func (c *echoConn) LocalAddr() net.Addr              { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }
func (c *echoConn) RemoteAddr() net.Addr             { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }
func (c *echoConn) SetDeadline(time.Time) error      { return nil }
func (c *echoConn) SetReadDeadline(time.Time) error  { return nil }
func (c *echoConn) SetWriteDeadline(time.Time) error { return nil }
