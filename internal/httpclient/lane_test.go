package httpclient

import (
	"context"
	"net/http"
	"net/http/httptrace"
	"testing"
	"time"
)

// TestLaneRequestReuse checks that a lane's hops share one request, reset
// for each, and that a hop whose tracer still waits for a callback (the
// transport may still be writing its request) gives it up.
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
	if b.Method != "" || b.Header != nil {
		t.Errorf("the reused request kept the last hop's fields: %q %v", b.Method, b.Header)
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
