package httpclient

import (
	"context"
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
