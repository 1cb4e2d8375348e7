package js

import (
	"context"
	"fmt"
	"slices"
	"sync"
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
// each reservation remembers the loop's generation. The loop also follows
// the promises rejected without a handler, which fail the call it settles.
type eventLoop struct {
	mu    sync.Mutex
	queue []func() error
	spare []func() error
	gen   uint64
	wake  chan struct{}

	// The fields below belong to the VU goroutine.
	pending  int
	timers   map[int64]*timer
	timerID  int64
	rejected []*sobek.Promise
}

type timer struct {
	t  *time.Timer
	cb func(func() error)
}

// register reserves a place in the loop and returns the function that
// queues the continuation; it must be called exactly once.
func (l *eventLoop) register() func(func() error) {
	l.mu.Lock()
	if l.wake == nil {
		l.wake = make(chan struct{}, 1)
	}
	gen := l.gen
	l.mu.Unlock()
	l.pending++
	return func(f func() error) {
		l.mu.Lock()
		if l.gen != gen {
			l.mu.Unlock()
			return
		}
		l.queue = append(l.queue, f)
		l.mu.Unlock()
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// run runs queued continuations until nothing is reserved. It returns the
// first error a continuation returns (a JavaScript exception) or
// errInterrupted when ctx ends first. While it waits for a continuation it
// lends the VU's sample buffer out (rec, when it is a metrics.Parker), so
// that the samples recorded so far reach the metrics engine meanwhile.
func (l *eventLoop) run(ctx context.Context, rec metrics.Recorder) error {
	park, _ := rec.(metrics.Parker)
	for l.pending > 0 {
		l.mu.Lock()
		q := l.queue
		l.queue = l.spare[:0]
		l.spare = nil
		l.mu.Unlock()
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
		for i, f := range q {
			l.pending--
			q[i] = nil
			if err := f(); err != nil {
				return err
			}
		}
		l.mu.Lock()
		if l.spare == nil {
			l.spare = q[:0]
		}
		l.mu.Unlock()
	}
	return nil
}

// reset drops everything reserved or queued, after an iteration ended
// early, and stops the timers.
func (l *eventLoop) reset() {
	l.mu.Lock()
	l.gen++
	l.queue = nil
	l.mu.Unlock()
	l.pending = 0
	for id, t := range l.timers {
		t.t.Stop()
		delete(l.timers, id)
	}
}

// endCall drops what an unfinished or failed call left in the loop and
// forgets the call's unhandled rejections.
func (l *eventLoop) endCall(failed bool) {
	if failed || l.pending > 0 {
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
	if l.pending > 0 {
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
