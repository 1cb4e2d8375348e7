package js

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/exitcode"
)

// runtimeGuard is the part of a VU that keeps its runtime usable: it
// interrupts the runtime when the context of a call ends, turns panics
// into errors, tracks unhandled promise rejections and, after an
// interruption may have broken the runtime, checks it and rebuilds it.
type runtimeGuard struct {
	interrupts  sync.WaitGroup
	interruptFn func()
	watched     context.Context
	stopWatch   func() bool
	suspect     bool // an interrupt or panic may have broken the runtime
	probe       sobek.Callable
	rejected    []*sobek.Promise
}

// healthy tells whether the runtime still runs promise jobs. An interrupt
// that lands inside an async function leaves sobek's call stack unwound
// only partly, after which the runtime never runs promise reactions again;
// a sync interruption leaves it sound.
func (v *vu) healthy() bool {
	if v.probe == nil {
		p, err := v.rt.RunProgram(healthProbe())
		if err != nil {
			return false
		}
		if v.probe, _ = sobek.AssertFunction(p); v.probe == nil {
			return false
		}
	}
	check, err := v.probe(sobek.Undefined())
	if err != nil {
		return false
	}
	fn, ok := sobek.AssertFunction(check)
	if !ok {
		return false
	}
	ok2, err := fn(sobek.Undefined())
	return err == nil && ok2.ToBoolean()
}

// healthProbe returns a function that queues a promise job and returns a
// function that says whether the job ran. It is compiled when a runtime
// first needs a check.
var healthProbe = sync.OnceValue(func() *sobek.Program {
	return sobek.MustCompile("health-probe.js",
		"(function () { let ran = false; Promise.resolve().then(() => { ran = true; }); return () => ran; })", true)
})

// repair makes the VU usable after an interrupted or failed call that
// may have broken its runtime: when the runtime no longer runs promise
// jobs, the VU evaluates its init context again in a fresh one. It returns
// an error only when that fails.
func (v *vu) repair(ctx context.Context) error {
	v.suspect = false
	if v.healthy() {
		return nil
	}
	v.loop.reset()
	v.moduleSystem = moduleSystem{}
	v.setup, v.setupVal = nil, nil
	v.stringifyF, v.parseF, v.probe = nil, nil, nil
	v.rejected = nil
	if err := v.initRuntime(ctx); err != nil {
		return fmt.Errorf("VU %d could not be initialised again after an interruption: %s", v.id, v.s.describe(err))
	}
	if v.started {
		v.lookupExec()
	}
	return nil
}

// guard runs f, interrupting the runtime when ctx ends, and leaves the
// runtime ready for the next call.
func (v *vu) guard(ctx context.Context, f func() error) error {
	v.ctx = ctx
	if ctx.Done() == nil {
		if v.stopWatch != nil {
			v.unwatch()
			v.rt.ClearInterrupt()
		}
		err := protect(f)
		v.rt.ClearInterrupt() // exec.test.abort() interrupts too
		v.afterCall(err)
		return err
	}
	v.watch(ctx)
	err := protect(f)
	if ctx.Err() != nil {
		// Let the watch finish interrupting before the interrupt is
		// cleared.
		v.unwatch()
		if err == nil && v.loop.pending > 0 {
			err = errInterrupted
		}
	}
	v.rt.ClearInterrupt()
	v.afterCall(err)
	return err
}

// watch makes sure the runtime is interrupted when ctx ends. The watch
// stays in place across calls with the same context, which is what the
// executors pass for a VU's iterations, so that it costs nothing per
// iteration.
func (v *vu) watch(ctx context.Context) {
	if v.watched == ctx {
		return
	}
	v.unwatch()
	// A context watched before may have ended while the VU was idle.
	v.rt.ClearInterrupt()
	if v.interruptFn == nil {
		v.interruptFn = func() {
			v.rt.Interrupt(errInterrupted)
			v.interrupts.Done()
		}
	}
	v.interrupts.Add(1)
	v.watched = ctx
	v.stopWatch = context.AfterFunc(ctx, v.interruptFn)
}

// unwatch removes the watch, waiting for it if it is interrupting now.
func (v *vu) unwatch() {
	if v.stopWatch == nil {
		return
	}
	if v.stopWatch() {
		v.interrupts.Done()
	}
	v.interrupts.Wait()
	v.stopWatch, v.watched = nil, nil
}

// protect runs f, turning a Go panic (a bug in a module) into an error
// rather than a crash of the whole test.
func protect(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = exitcode.Errorf(exitcode.GoPanic, "internal error (a Go panic) while running the script: %v", r)
		}
	}()
	return f()
}

// afterCall drops what an unfinished call left in the event loop, and
// marks the runtime for a health check after an interruption or a panic.
func (v *vu) afterCall(err error) {
	if err != nil || v.loop.pending > 0 {
		v.loop.reset()
	}
	if err != nil && (isInterrupt(err) || exitcode.Of(err) == exitcode.GoPanic) {
		v.suspect = true
	}
	v.rejected = v.rejected[:0]
}

// await runs the event loop until nothing is pending and returns what the
// value settled to: a promise's result, or the value itself.
func (v *vu) await(ret sobek.Value) (sobek.Value, error) {
	var p *sobek.Promise
	if o, ok := ret.(*sobek.Object); ok && o.ExportType() == typePromise {
		p = o.Export().(*sobek.Promise)
	}
	return v.settle(p, ret)
}

// settle runs the event loop until nothing is pending and returns what p
// settled to (ret when p is nil).
func (v *vu) settle(p *sobek.Promise, ret sobek.Value) (sobek.Value, error) {
	if v.loop.pending > 0 {
		if err := v.loop.run(v.ctx, v.rec); err != nil {
			return nil, err
		}
	}
	if p != nil {
		switch p.State() {
		case sobek.PromiseStateRejected:
			return nil, v.rejection(p.Result())
		case sobek.PromiseStateFulfilled:
			ret = p.Result()
		default:
			ret = sobek.Undefined()
		}
	}
	for _, r := range v.rejected {
		if r != p && r.State() == sobek.PromiseStateRejected {
			err := v.rejection(r.Result())
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
func (v *vu) rejection(val sobek.Value) error {
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
// the iteration unless a handler is attached before it ends.
func (v *vu) trackRejection(p *sobek.Promise, op sobek.PromiseRejectionOperation) {
	if op == sobek.PromiseRejectionReject {
		v.rejected = append(v.rejected, p)
		return
	}
	for i, r := range v.rejected {
		if r == p {
			v.rejected = append(v.rejected[:i], v.rejected[i+1:]...)
			return
		}
	}
}

func isInterrupt(err error) bool {
	if errors.Is(err, errInterrupted) {
		return true
	}
	var ie *sobek.InterruptedError
	return errors.As(err, &ie)
}
