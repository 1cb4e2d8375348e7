package http

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"testing"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/ratelimit"
)

// benchRecorder is a VU's recorder as the engine makes it, a Buffer,
// whose batches are given back at once as the ingest loop gives them back
// once read.
func benchRecorder() metrics.Recorder { return metrics.NewBuffer(metrics.ReleaseBatch) }

// benchVU is one VU whose iteration is a single http.get of url. Every
// iteration runs under a context of its own, as a runtime's do.
func benchVU(b *testing.B, url string) func() error {
	e := newEnv(b, nil)
	e.st.Recorder = benchRecorder()
	e.run(fmt.Sprintf(`var url = %q; function iteration() { return http.get(url).status }`, url))
	fn, ok := sobek.AssertFunction(e.vu.rt.Get("iteration"))
	if !ok {
		b.Fatal("no iteration function")
	}
	return func() error {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		e.vu.ctx = ctx
		_, err := fn(sobek.Undefined())
		return err
	}
}

// BenchmarkGet measures one VU calling http.get against a loopback
// server: the whole per-request cost of the module, JavaScript included.
func BenchmarkGet(b *testing.B) {
	srv := httptest.NewServer(okHandler)
	defer srv.Close()
	iteration := benchVU(b, srv.URL+"/")
	b.ReportAllocs()
	for b.Loop() {
		if err := iteration(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGet50VUs runs 50 VUs, each on its own goroutine and runtime, as
// the throughput target describes; ns/op is the cost per request with the
// server on the same cores.
func BenchmarkGet50VUs(b *testing.B) {
	srv := httptest.NewServer(okHandler)
	defer srv.Close()
	b.SetParallelism((50 + 1) / 2)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		iteration := benchVU(b, srv.URL+"/")
		for pb.Next() {
			if err := iteration(); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkBareClient is the reference: a plain net/http client doing the
// same GET with no JavaScript, no metrics and no response object.
func BenchmarkBareClient(b *testing.B) {
	srv := httptest.NewServer(okHandler)
	defer srv.Close()
	c := NewClient(nil)
	defer c.CloseIdleConnections()
	b.ReportAllocs()
	for b.Loop() {
		resp, err := c.Get(srv.URL + "/")
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
}

// fakeTransport answers every request at once with a two-byte body and
// fires the trace callbacks a real transport fires, so the module's own
// cost can be measured without the network.
type fakeTransport struct{ header http.Header }

func (f *fakeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if tr := httptrace.ContextClientTrace(req.Context()); tr != nil {
		tr.GetConn("fake:80")
		tr.GotConn(httptrace.GotConnInfo{Reused: true})
		tr.WroteRequest(httptrace.WroteRequestInfo{})
		tr.GotFirstResponseByte()
	}
	return &http.Response{
		Status: "200 OK", StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: f.header, Body: io.NopCloser(strings.NewReader("ok")), ContentLength: 2, Request: req,
	}, nil
}

// BenchmarkGetOverhead is BenchmarkGet without the network: what the
// module and the JavaScript call cost per request on top of net/http.
func BenchmarkGetOverhead(b *testing.B) { benchGetOverhead(b, nil) }

// BenchmarkGetOverheadRPS is BenchmarkGetOverhead under an rps limit too
// high to hold any request back: what the limiter costs a request that
// does not wait.
func BenchmarkGetOverheadRPS(b *testing.B) { benchGetOverhead(b, ratelimit.New(1e9)) }

func benchGetOverhead(b *testing.B, rps *ratelimit.Limiter) {
	e := newEnv(b, nil)
	e.st.RPS = rps
	e.st.Recorder = benchRecorder()
	e.st.Client = &http.Client{Transport: &fakeTransport{header: http.Header{"Content-Length": {"2"}}}}
	e.run(`function iteration() { return http.get("http://fake/").status }`)
	fn, _ := sobek.AssertFunction(e.vu.rt.Get("iteration"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fn(sobek.Undefined()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareClient50 is BenchmarkBareClient with 50 goroutines, the
// reference for BenchmarkGet50VUs.
func BenchmarkBareClient50(b *testing.B) {
	srv := httptest.NewServer(okHandler)
	defer srv.Close()
	b.SetParallelism((50 + 1) / 2)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		c := NewClient(nil)
		defer c.CloseIdleConnections()
		for pb.Next() {
			resp, err := c.Get(srv.URL + "/")
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
	})
}

// BenchmarkNetHTTP50 is BenchmarkBareClient50 on a stock http.Transport,
// to compare the fast path against.
func BenchmarkNetHTTP50(b *testing.B) {
	srv := httptest.NewServer(okHandler)
	defer srv.Close()
	b.SetParallelism((50 + 1) / 2)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 100}}
		defer c.CloseIdleConnections()
		for pb.Next() {
			resp, err := c.Get(srv.URL + "/")
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
	})
}
