package http

import (
	"context"
	"net/http"
	"net/http/httptrace"
	"sync"
	"time"
)

// lane carries the synchronous requests of one VU, one at a time. It keeps
// what would otherwise be built for every request: the request's context
// (cancelled by the VU's context or by one reusable timer), the tracer and
// a request template holding that context. It is rebuilt only when the
// VU's context changes, a timeout fired, or a tracer may still receive a
// late callback.
//
// The timer goroutine only touches the fields under mu; everything else
// is used on the VU goroutine alone.
type lane struct {
	mu       sync.Mutex
	parent   context.Context
	base     context.Context // cancelled by parent, or by the timer with errTimeout
	cancel   context.CancelCauseFunc
	deadline time.Duration // since epoch; the timer acts only after it
	timer    *time.Timer

	tr   *tracer
	tmpl *http.Request // carries base and tr's trace
}

func newLane() *lane {
	l := &lane{}
	l.timer = time.AfterFunc(time.Hour, l.fire)
	l.timer.Stop()
	return l
}

// arm prepares the lane for a request, started at now, that may last
// timeout. It returns
// false when the lane cannot be used because parent already carries a
// trace of its own (which the lane's tracer would have to be composed with).
func (l *lane) arm(parent context.Context, timeout, now time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.parent != parent || l.base == nil || l.base.Err() != nil {
		if httptrace.ContextClientTrace(parent) != nil {
			return false
		}
		if l.cancel != nil {
			l.cancel(context.Canceled)
		}
		l.parent = parent
		l.base, l.cancel = context.WithCancelCause(parent)
		l.tmpl = nil
	}
	if l.tr == nil {
		l.tr = newTracer()
		l.tmpl = nil
	}
	if l.tmpl == nil {
		l.tmpl = (&http.Request{}).WithContext(httptrace.WithClientTrace(l.base, &l.tr.trace))
	}
	l.deadline = now + timeout
	l.timer.Reset(timeout)
	return true
}

// disarm stops the timer after a request.
func (l *lane) disarm() { l.timer.Stop() }

// fire cancels the current request when its deadline passed. A timer that
// fires late for an earlier request finds a later deadline and does
// nothing.
func (l *lane) fire() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cancel != nil && sinceEpoch() >= l.deadline {
		l.cancel(errTimeout)
	}
}

// timedOut reports whether the current request was cut by its timeout.
func (l *lane) timedOut() bool {
	return context.Cause(l.base) == errTimeout
}

// tracer returns the lane's tracer, reset for a new hop.
func (l *lane) tracer() *tracer {
	if l.tr == nil {
		l.tr = newTracer()
		l.tmpl = (&http.Request{}).WithContext(httptrace.WithClientTrace(l.base, &l.tr.trace))
	}
	l.tr.reset()
	return l.tr
}

// request returns a new request carrying the lane's context and tracer.
func (l *lane) request() *http.Request {
	req := new(http.Request)
	*req = *l.tmpl
	return req
}

// release gives up the tracer when a callback may still arrive for it.
func (l *lane) release(tr *tracer) {
	if tr.done() {
		return
	}
	if l.tr == tr {
		l.tr = nil
		l.tmpl = nil
	}
}
