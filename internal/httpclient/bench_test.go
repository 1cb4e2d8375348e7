package httpclient

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkDo measures the engine alone: one VU's synchronous GET, on its
// lane and its own client, against a loopback server, with one Request
// overwritten for each, as k6/http reuses a VU's. BenchmarkGet in
// js/modules/http is the same request with the JavaScript call and the
// samples on top.
func BenchmarkDo(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	target, err := ParseTarget(srv.URL + "/")
	if err != nil {
		b.Fatal(err)
	}
	client := NewClient(Options{})
	defer client.CloseIdleConnections()
	lane := NewLane()
	tmpl := Request{
		Method: http.MethodGet, URL: target, Header: http.Header{"User-Agent": {"bench"}},
		Timeout: time.Minute, Redirects: 10,
	}
	ctx := context.Background()
	b.ReportAllocs()
	r := new(Request)
	for b.Loop() {
		*r = tmpl
		if res := Do(ctx, client.Transport, r, lane); res.Failure() != nil || res.Last().Status != http.StatusOK {
			b.Fatalf("status %d, error %v", res.Last().Status, res.Last().Err)
		}
	}
}

// BenchmarkDoTLS is BenchmarkDo over HTTPS (HTTP/2, http.Transport's
// path), with the proxy function the client uses, which refuses what the
// network options can refuse before a proxy is asked, and with Go's bare
// one, so that the two can be compared.
func BenchmarkDoTLS(b *testing.B) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok"))
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	target, err := ParseTarget(srv.URL + "/")
	if err != nil {
		b.Fatal(err)
	}
	for _, bare := range []bool{false, true} {
		name := "fenced"
		if bare {
			name = "bare"
		}
		b.Run(name, func(b *testing.B) {
			client := NewClient(Options{TLS: &tls.Config{InsecureSkipVerify: true}, BlockHostnames: []string{"*.blocked.test"}}) //nolint:gosec // a test server
			defer client.CloseIdleConnections()
			if bare {
				client.Transport.(*transport).Transport.Proxy = http.ProxyFromEnvironment
			}
			lane := NewLane()
			tmpl := Request{
				Method: http.MethodGet, URL: target, Header: http.Header{"User-Agent": {"bench"}},
				Timeout: time.Minute, Redirects: 10,
			}
			ctx := context.Background()
			b.ReportAllocs()
			r := new(Request)
			for b.Loop() {
				*r = tmpl
				if res := Do(ctx, client.Transport, r, lane); res.Failure() != nil || res.Last().Status != http.StatusOK {
					b.Fatalf("status %d, error %v", res.Last().Status, res.Last().Err)
				}
			}
		})
	}
}
