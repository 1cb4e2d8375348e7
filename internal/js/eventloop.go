package js

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules/jsmod"
	"github.com/metronome-load/metronome/metrics"
)

// eventLoop is a VU's minimal event loop. Asynchronous work (a timer, an
// async HTTP request) reserves a place with register while JavaScript runs
// and later queues its continuation from any goroutine; the VU runs the
// continuations on its own goroutine until nothing is reserved, which is
// when an iteration ends.
//
// Continuations of an earlier iteration that was cut short are dropped:
// each reservation remembers the loop's generation. Work that measures (a
// request made with jsmod.AsyncMeasured) reserves its place with
// registerMeasured: when the call is interrupted, drain still records what
// it measured. The loop also follows the promises rejected without a
// handler, which fail the call it settles.
type eventLoop struct {
	mu    sync.Mutex
	queue []continuation
	spare []continuation
	gen   uint64
	wake  chan struct{}

	// pending counts the reservations, measuring those of work that
	// measures; 32 bits each keep the vu in its size class. A reservation
	// may be made from any goroutine, as k6 tolerates (extensions built on
	// k6-taskqueue-lib reserve from a goroutine of their own), so they are
	// atomic; reading one costs the VU goroutine a plain load.
	pending, measuring atomic.Int32

	// The fields below belong to the VU goroutine.
	timers   map[int64]*timer
	timerID  int64
	rejected []*sobek.Promise
}

// continuation is what a reservation queues: f runs JavaScript; record,
// set for work that measures, records what it measured and runs first.
type continuation struct {
	f      func() error
	record func()
}

// drainWait bounds how long an interrupted call waits for the work that
// measures to return: its context is cancelled, so it returns at once
// unless a module ignores the cancellation.
const drainWait = time.Second

type timer struct {
	t  *time.Timer
	cb func(func() error)
}

// register reserves a place in the loop and returns the function that
// queues the continuation, which must be called exactly once. register
// itself may be called from any goroutine.
func (l *eventLoop) register() func(func() error) {
	queue := l.reserve()
	return func(f func() error) { queue(continuation{f: f}) }
}

// registerMeasured reserves a place for work that measures: the returned
// function queues record and f, and must be called exactly once.
func (l *eventLoop) registerMeasured() func(record func(), f func() error) {
	queue := l.reserve()
	l.measuring.Add(1)
	return func(record func(), f func() error) { queue(continuation{f: f, record: record}) }
}

// closedGen, set in gen, marks a loop closed between two calls of a VU
// whose calls are scoped (vu.endScope): a reservation made then is
// dropped at once.
const closedGen = 1 << 63

// close drops what is queued and refuses reservations until open.
func (l *eventLoop) close() {
	l.mu.Lock()
	l.gen = (l.gen + 1) | closedGen
	l.queue = l.queue[:0]
	l.mu.Unlock()
	l.pending.Store(0)
	l.measuring.Store(0)
}

// open takes reservations again after close; what was counted as
// measuring in between belongs to no call.
func (l *eventLoop) open() {
	l.mu.Lock()
	l.gen = (l.gen + 1) &^ closedGen
	l.mu.Unlock()
	l.measuring.Store(0)
}

// reserve reserves a place in the loop and returns the function that
// queues its continuation; in a closed loop, one that drops it.
func (l *eventLoop) reserve() func(continuation) {
	l.mu.Lock()
	if l.wake == nil {
		l.wake = make(chan struct{}, 1)
	}
	gen := l.gen
	l.mu.Unlock()
	if gen&closedGen != 0 {
		return func(continuation) {}
	}
	l.pending.Add(1)
	return func(c continuation) {
		l.mu.Lock()
		if l.gen != gen {
			l.mu.Unlock()
			return
		}
		l.queue = append(l.queue, c)
		l.mu.Unlock()
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// awaitReservation waits up to d, or until ctx ends, for a reservation,
// and reports whether one came.
func (l *eventLoop) awaitReservation(ctx context.Context, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for l.pending.Load() == 0 {
		if ctx.Err() != nil || time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Microsecond)
	}
	return true
}

// take hands over the queued continuations; give back the slice with
// giveBack once they ran.
func (l *eventLoop) take() []continuation {
	l.mu.Lock()
	q := l.queue
	l.queue = l.spare[:0]
	l.spare = nil
	l.mu.Unlock()
	return q
}

// giveBack keeps q's array for the next queue.
func (l *eventLoop) giveBack(q []continuation) {
	l.mu.Lock()
	if l.spare == nil {
		l.spare = q[:0]
	}
	l.mu.Unlock()
}

// run runs queued continuations until nothing is reserved. It returns the
// first error a continuation returns (a JavaScript exception) or
// errInterrupted when ctx ends first. While it waits for a continuation it
// lends the VU's sample buffer out (rec, when it is a metrics.Parker), so
// that the samples recorded so far reach the metrics engine meanwhile.
func (l *eventLoop) run(ctx context.Context, rec metrics.Recorder) error {
	park, _ := rec.(metrics.Parker)
	for l.pending.Load() > 0 {
		q := l.take()
		if len(q) == 0 {
			if park != nil {
				park.Park()
			}
			var err error
			select {
			case <-l.wake:
			case <-ctx.Done():
				err = errInterrupted
			}
			if park != nil {
				park.Unpark()
			}
			if err != nil {
				return err
			}
			continue
		}
		for i, c := range q {
			l.pending.Add(-1)
			q[i] = continuation{}
			if c.record != nil {
				l.measuring.Add(-1)
				c.record()
			}
			if err := c.f(); err != nil {
				// What is still queued is dropped with the call (endCall):
				// record what it measured first.
				l.recordAll(q[i+1:])
				return err
			}
		}
		l.giveBack(q)
	}
	return nil
}

// drain runs after a call that the end of its context interrupted: it
// waits up to drainWait for the work that measures to return, as its
// context is cancelled, and runs the record of each continuation, none of
// its JavaScript. What it records reaches the VU's buffer through the
// same gate as the rest, which keeps a request answered before the
// interruption and the charge of one cut off by it (jsmod.Measured) and
// drops the rest, as k6 does.
func (l *eventLoop) drain() {
	var deadline *time.Timer
	for l.measuring.Load() > 0 {
		q := l.take()
		if len(q) == 0 {
			if deadline == nil {
				deadline = time.NewTimer(drainWait)
				defer deadline.Stop()
			}
			select {
			case <-l.wake:
				continue
			case <-deadline.C:
				return
			}
		}
		l.recordAll(q)
		l.giveBack(q)
	}
}

// recordAll runs the records of q's continuations, which the loop drops,
// and releases their places.
func (l *eventLoop) recordAll(q []continuation) {
	for i, c := range q {
		l.pending.Add(-1)
		q[i] = continuation{}
		if c.record != nil {
			l.measuring.Add(-1)
			c.record()
		}
	}
}

// reset drops everything reserved or queued, after an iteration ended
// early, and stops the timers.
func (l *eventLoop) reset() {
	l.mu.Lock()
	l.gen++
	l.queue = nil
	l.mu.Unlock()
	l.pending.Store(0)
	l.measuring.Store(0)
	for id, t := range l.timers {
		t.t.Stop()
		delete(l.timers, id)
	}
}

// endCall drops what an unfinished or failed call left in the loop and
// forgets the call's unhandled rejections.
func (l *eventLoop) endCall(failed bool) {
	if failed || l.pending.Load() > 0 {
		l.reset()
	}
	clear(l.rejected) // the promises belong to a runtime that may be replaced
	l.rejected = l.rejected[:0]
}

// promiseOf returns the promise ret is, nil when it is none.
func promiseOf(ret sobek.Value) *sobek.Promise {
	if o, ok := ret.(*sobek.Object); ok && o.ExportType() == typePromise {
		return o.Export().(*sobek.Promise)
	}
	return nil
}

// settle runs the loop until nothing is pending and returns what p
// settled to (ret when p is nil), or the first promise rejected without a
// handler. While it waits it lends rec out (run), and it ends with
// errInterrupted when ctx ends.
func (l *eventLoop) settle(ctx context.Context, rec metrics.Recorder, p *sobek.Promise, ret sobek.Value) (sobek.Value, error) {
	if l.pending.Load() > 0 {
		if err := l.run(ctx, rec); err != nil {
			return nil, err
		}
	}
	if p != nil {
		switch p.State() {
		case sobek.PromiseStateRejected:
			return nil, rejection(p.Result())
		case sobek.PromiseStateFulfilled:
			ret = p.Result()
		default:
			ret = sobek.Undefined()
		}
	}
	for _, r := range l.rejected {
		if r != p && r.State() == sobek.PromiseStateRejected {
			err := rejection(r.Result())
			if te, ok := err.(*thrownError); ok {
				te.prefix = "Uncaught (in promise) "
				return nil, te
			}
			return nil, fmt.Errorf("Uncaught (in promise) %w", err)
		}
	}
	return ret, nil
}

// rejection turns a rejection reason into an error.
func rejection(val sobek.Value) error {
	if val == nil {
		return &thrownError{val: sobek.Undefined()}
	}
	if o, ok := val.(*sobek.Object); ok && o.ClassName() != "Error" {
		switch x := o.Export().(type) {
		case *sobek.Exception:
			return x
		case error:
			return x
		}
	}
	return &thrownError{val: val}
}

// trackRejection records promises rejected without a handler, which fail
// the call unless a handler is attached before it ends. It is the
// runtime's promise rejection tracker.
func (l *eventLoop) trackRejection(p *sobek.Promise, op sobek.PromiseRejectionOperation) {
	if op == sobek.PromiseRejectionReject {
		l.rejected = append(l.rejected, p)
		return
	}
	// slices.Delete clears the freed slot, so a handled rejection keeps no
	// promise (and through it a replaced runtime) alive past the length
	// that endCall clears.
	if i := slices.Index(l.rejected, p); i >= 0 {
		l.rejected = slices.Delete(l.rejected, i, i+1)
	}
}

// setTimer implements setTimeout and setInterval in rt.
func (l *eventLoop) setTimer(rt *sobek.Runtime, call sobek.FunctionCall, repeat bool) sobek.Value {
	fn := jsmod.Function(rt, call.Argument(0), "the first argument of setTimeout or setInterval")
	delay := call.Argument(1).ToFloat()
	if !(delay > 0) {
		delay = 0
	}
	if repeat && delay < 1 {
		delay = 1
	}
	d := time.Duration(delay * float64(time.Millisecond))
	var args []sobek.Value
	if len(call.Arguments) > 2 {
		args = append(args, call.Arguments[2:]...)
	}
	if l.timers == nil {
		l.timers = map[int64]*timer{}
	}
	l.timerID++
	id := l.timerID
	t := &timer{}
	l.timers[id] = t
	var arm func()
	arm = func() {
		cb := l.register()
		t.cb = cb
		t.t = time.AfterFunc(d, func() {
			cb(func() error {
				if l.timers[id] != t {
					return nil // cleared meanwhile
				}
				if !repeat {
					delete(l.timers, id)
				}
				if _, err := fn(sobek.Undefined(), args...); err != nil {
					return err
				}
				if repeat && l.timers[id] == t {
					arm()
				}
				return nil
			})
		})
	}
	arm()
	return rt.ToValue(id)
}

// clearTimer implements clearTimeout and clearInterval.
func (l *eventLoop) clearTimer(call sobek.FunctionCall) sobek.Value {
	id := call.Argument(0).ToInteger()
	t, ok := l.timers[id]
	if !ok {
		return sobek.Undefined()
	}
	delete(l.timers, id)
	if t.t.Stop() {
		// The timer will not fire: release its place in the loop.
		t.cb(func() error { return nil })
	}
	return sobek.Undefined()
}
