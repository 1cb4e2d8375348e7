package httpclient

import (
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"
)

// tracer collects the moments of one hop from net/http/httptrace. The
// callbacks may run on the transport's goroutines, so every field is
// atomic. Tracers are pooled; a tracer is only reused once all of its
// callbacks have fired.
type tracer struct {
	getConn, gotConn, wrote, firstByte atomic.Int64
	reused                             atomic.Bool
	conn                               atomic.Pointer[countingConn]
	trace                              httptrace.ClientTrace
}

var tracers = sync.Pool{New: func() any { return newTracer() }}

func newTracer() *tracer {
	t := &tracer{}
	t.trace = httptrace.ClientTrace{
		GetConn:              t.onGetConn,
		GotConn:              t.onGotConn,
		WroteRequest:         t.onWrote,
		GotFirstResponseByte: t.onFirstByte,
	}
	return t
}

func (t *tracer) onGetConn(string) { t.getConn.Store(int64(sinceEpoch())) }

func (t *tracer) onGotConn(info httptrace.GotConnInfo) {
	t.reused.Store(info.Reused)
	t.conn.Store(connOf(info.Conn))
	t.gotConn.Store(int64(sinceEpoch()))
}

func (t *tracer) onWrote(httptrace.WroteRequestInfo) { t.wrote.Store(int64(sinceEpoch())) }

func (t *tracer) onFirstByte() { t.firstByte.Store(int64(sinceEpoch())) }

func (t *tracer) reset() {
	t.getConn.Store(0)
	t.gotConn.Store(0)
	t.wrote.Store(0)
	t.firstByte.Store(0)
	t.reused.Store(false)
	t.conn.Store(nil)
}

// done reports whether every callback fired, so no late one can come.
func (t *tracer) done() bool {
	return t.getConn.Load() != 0 && t.gotConn.Load() != 0 && t.wrote.Load() != 0 && t.firstByte.Load() != 0
}

// timings turns the moments into phases. Missing moments (a failed hop)
// are filled with the end, so the time up to the failure lands in the
// phase that was running, as k6 does with waiting.
func (t *tracer) timings(start, end time.Duration) Timings {
	var r Timings
	get := time.Duration(t.getConn.Load())
	if get == 0 {
		get = start
	}
	got := time.Duration(t.gotConn.Load())
	if got == 0 {
		r.Blocked = end - get
		return r.clamp()
	}
	// blocked is all the wait for a connection, a new one's dial and TLS
	// handshake included, as k6 measures it (GetConn to GotConn);
	// connecting and tlsHandshaking are those parts of it.
	r.Blocked = got - get
	if c := t.conn.Load(); c != nil && !t.reused.Load() {
		r.Connecting = c.dialEnd - c.dialStart
		if c.tlsEnd != 0 {
			r.TLSHandshaking = c.tlsEnd - c.tlsStart
		}
	}
	wrote := time.Duration(t.wrote.Load())
	if wrote == 0 {
		r.Sending = end - got
		return r.clamp()
	}
	r.Sending = wrote - got
	first := time.Duration(t.firstByte.Load())
	if first == 0 {
		r.Waiting = end - wrote
		return r.clamp()
	}
	r.Waiting = first - wrote
	r.Receiving = end - first
	return r.clamp()
}

func (r Timings) clamp() Timings {
	r.Blocked = max(r.Blocked, 0)
	r.Connecting = max(r.Connecting, 0)
	r.TLSHandshaking = max(r.TLSHandshaking, 0)
	r.Sending = max(r.Sending, 0)
	r.Waiting = max(r.Waiting, 0)
	r.Receiving = max(r.Receiving, 0)
	return r
}
