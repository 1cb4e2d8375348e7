package httpclient

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"testing"
	"time"
)

// TestLaneRequestReuse checks that a lane's hops share one request, and
// that a hop whose tracer still waits for a callback (the transport may
// still be writing its request) gives it up.
func TestLaneRequestReuse(t *testing.T) {
	l := NewLane()
	if !l.arm(context.Background(), time.Minute, sinceEpoch()) {
		t.Fatal("the lane refused a plain context")
	}
	defer l.disarm()

	tr := l.tracer()
	a := l.request()
	a.Method, a.Header = http.MethodPost, http.Header{"X-Hop": {"1"}}
	tr.trace.GetConn("host:80")
	tr.trace.GotConn(httptrace.GotConnInfo{})
	tr.trace.WroteRequest(httptrace.WroteRequestInfo{})
	tr.trace.GotFirstResponseByte()
	l.release(tr)

	tr = l.tracer()
	b := l.request()
	if b != a {
		t.Error("a hop after one whose callbacks all fired got a new request")
	}
	if got := httptrace.ContextClientTrace(b.Context()); got != &tr.trace {
		t.Error("the reused request does not carry the lane's tracer")
	}

	// This hop's request was not written yet when it ended.
	tr.trace.GetConn("host:80")
	tr.trace.GotConn(httptrace.GotConnInfo{})
	l.release(tr)
	tr = l.tracer()
	if c := l.request(); c == b {
		t.Error("a request the transport may still be writing was reused")
	} else if got := httptrace.ContextClientTrace(c.Context()); got != &tr.trace {
		t.Error("the new request does not carry the lane's new tracer")
	}
}

// A lane's request serves every hop, so Do sets on each what the last
// left: a GET after a POST on the same lane sends no body.
func TestLaneRequestCarriesNothingOver(t *testing.T) {
	type seen struct {
		method, body string
		length       int64
	}
	got := make(chan seen, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, string(b), r.ContentLength}
	}))
	defer srv.Close()
	target, err := ParseTarget(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	client := NewClient(Options{})
	defer client.CloseIdleConnections()
	lane := NewLane()
	for _, r := range []*Request{
		{Method: http.MethodPost, URL: target, Header: http.Header{}, Body: "payload", HasBody: true, Timeout: time.Minute},
		{Method: http.MethodGet, URL: target, Header: http.Header{}, Timeout: time.Minute},
	} {
		if res := Do(context.Background(), client.Transport, r, lane); res.Failure() != nil {
			t.Fatal(res.Last().Err)
		}
	}
	if first, second := <-got, <-got; first != (seen{"POST", "payload", 7}) || second != (seen{"GET", "", 0}) {
		t.Errorf("the server saw %+v then %+v, want the POST's body only on the POST", first, second)
	}
}
