package httpclient

import (
	"context"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"time"

	"github.com/metronome-load/metronome/internal/http1"
)

// Lane carries the synchronous requests of one VU, one at a time (Do's
// l), and keeps what would otherwise be built for every request: the request's
// context, the tracer and a request template holding both.
//
// The context (a laneCtx) outlives requests and iterations; only after it
// was cancelled is a new one made. One reusable timer cancels it, when the
// request's timeout passed or when the timer finds the VU's context ended:
// while a request runs the timer looks at the VU's context every
// PollParent. Watching each new VU context instead (they change every
// iteration) would cost allocations per iteration. An http1 connection
// in use is interrupted directly, so a request on it allocates no context.
type Lane struct {
	mu       sync.Mutex
	parent   context.Context
	ctx      *laneCtx
	deadline time.Duration // since epoch
	armed    bool
	timer    *time.Timer
	conn     net.Conn // the fast-path connection in use, if any

	// Used on the VU goroutine only.
	tr    *tracer
	req   *http.Request // the hops' request, carrying ctx and tr's trace
	pause *time.Timer   // holdBack's, made on first use
}

// PollParent is how often a running request checks the VU's context, so
// the longest an ended iteration waits for its request to stop.
const PollParent = 20 * time.Millisecond

// NewLane returns the lane of one VU.
func NewLane() *Lane {
	l := &Lane{}
	l.timer = time.AfterFunc(time.Hour, l.onTimer)
	l.timer.Stop()
	return l
}

// arm prepares the lane for a request, started at now, that may last
// timeout, under the VU's context parent. It returns false when the lane
// cannot be used because parent carries a trace of its own (which the
// lane's tracer would have to be composed with).
func (l *Lane) arm(parent context.Context, timeout, now time.Duration) bool {
	if l.parent != parent && httptrace.ContextClientTrace(parent) != nil {
		return false
	}
	l.mu.Lock()
	if l.ctx == nil || l.ctx.err != nil {
		l.ctx = &laneCtx{l: l, done: make(chan struct{})}
		l.req = nil
	}
	l.parent = parent
	l.deadline = now + timeout
	l.armed = true
	l.mu.Unlock()
	if err := parent.Err(); err != nil {
		l.cancel(err)
	}
	l.timer.Reset(min(timeout, PollParent))
	if l.tr == nil {
		l.tr = newTracer()
		l.req = nil
	}
	return true
}

// disarm stops the timer after a request.
func (l *Lane) disarm() {
	l.mu.Lock()
	l.armed = false
	l.mu.Unlock()
	l.timer.Stop()
}

// onTimer cancels the running request when its deadline passed or the VU's
// context ended, and otherwise looks again later. It decides and cancels
// under the lock, so a timer that fired for a request that has just ended
// cannot cancel the next one.
func (l *Lane) onTimer() {
	now := sinceEpoch()
	var funcs []*afterFunc
	l.mu.Lock()
	switch {
	case !l.armed:
	case l.deadline <= now:
		funcs = l.cancelLocked(errTimeout)
	case l.parent.Err() != nil:
		funcs = l.cancelLocked(l.parent.Err())
	default:
		l.timer.Reset(min(l.deadline-now, PollParent))
	}
	l.mu.Unlock()
	runAfter(funcs)
}

// cancel ends the current context with err and interrupts the connection
// in use.
func (l *Lane) cancel(err error) {
	l.mu.Lock()
	funcs := l.cancelLocked(err)
	l.mu.Unlock()
	runAfter(funcs)
}

// cancelLocked is cancel under l.mu. It returns the functions registered
// with laneCtx.AfterFunc, to be run once the lock is released.
func (l *Lane) cancelLocked(err error) []*afterFunc {
	c := l.ctx
	if c == nil || c.err != nil {
		return nil
	}
	c.err = err
	close(c.done)
	funcs := c.funcs
	c.funcs = nil
	if l.conn != nil {
		_ = l.conn.SetDeadline(aLongTimeAgo)
	}
	return funcs
}

func runAfter(funcs []*afterFunc) {
	for _, f := range funcs {
		go f.f()
	}
}

// aLongTimeAgo is a deadline in the past, to interrupt blocked I/O.
var aLongTimeAgo = time.Unix(1, 0)

// attach makes conn the connection a cancellation interrupts. It returns
// false when ctx was already cancelled.
func (l *Lane) attach(ctx *laneCtx, conn net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ctx.err != nil || l.ctx != ctx {
		return false
	}
	l.conn = conn
	return true
}

// detach forgets the connection in use. It returns false when a
// cancellation interrupted it, so it must not be reused.
func (l *Lane) detach(ctx *laneCtx) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.conn = nil
	return ctx.err == nil
}

// err is why the current request's context ended, or nil.
func (l *Lane) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ctx.err
}

// tracer returns the lane's tracer, reset for a new hop.
func (l *Lane) tracer() *tracer {
	if l.tr == nil {
		l.tr = newTracer()
		l.req = nil
	}
	l.tr.reset()
	return l.tr
}

// request returns the lane's request, which carries the lane's context
// and tracer; Do sets every other field it sends on each hop. One serves
// every hop: the transport is done with a hop's request once all of its
// tracer's callbacks fired (the last, the request written, comes after
// its last use of it) and the response body is closed, and release gives
// up both together otherwise.
func (l *Lane) request() *http.Request {
	if l.req == nil {
		l.req = (&http.Request{}).WithContext(httptrace.WithClientTrace(l.ctx, &l.tr.trace))
	}
	return l.req
}

// release gives up the tracer, and the request with it, when a callback
// may still arrive for it: the transport may still be using both.
func (l *Lane) release(tr *tracer) {
	if !tr.done() && l.tr == tr {
		l.tr = nil
		l.req = nil
	}
}

// laneCtx is the context of a lane's requests. Values come from the VU's
// context of the moment.
type laneCtx struct {
	l     *Lane
	done  chan struct{}
	err   error // under l.mu
	funcs []*afterFunc
}

type afterFunc struct{ f func() }

func (c *laneCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *laneCtx) Done() <-chan struct{}       { return c.done }

func (c *laneCtx) Err() error {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	return c.err
}

func (c *laneCtx) Value(key any) any {
	if key == (http1.WatcherKey{}) {
		return c
	}
	c.l.mu.Lock()
	p := c.l.parent
	c.l.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.Value(key)
}

// Attach makes conn the connection the lane's cancellation interrupts
// (http1.Watcher).
func (c *laneCtx) Attach(conn net.Conn) bool { return c.l.attach(c, conn) }

// Detach forgets it (http1.Watcher).
func (c *laneCtx) Detach() bool { return c.l.detach(c) }

// AfterFunc lets contexts derived from c (net/http makes one per request)
// follow its cancellation without a goroutine each.
func (c *laneCtx) AfterFunc(f func()) func() bool {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
	af := &afterFunc{f: f}
	c.funcs = append(c.funcs, af)
	return func() bool {
		c.l.mu.Lock()
		defer c.l.mu.Unlock()
		for i, g := range c.funcs {
			if g == af {
				c.funcs = append(c.funcs[:i], c.funcs[i+1:]...)
				return true
			}
		}
		return false
	}
}
