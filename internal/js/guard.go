package js

import (
	"context"
	"errors"
	"sync"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/ctxwatch"
)

// runtimeGuard is the part of a VU that keeps its runtime usable: it
// interrupts the runtime when the context of a call ends, turns panics
// into errors and, after an interruption may have broken the runtime,
// checks whether it still runs promise jobs. The VU rebuilds a runtime the
// check finds broken (vu.repair).
type runtimeGuard struct {
	rt         *sobek.Runtime
	interrupts sync.WaitGroup
	ctxWatch   ctxwatch.Handle
	suspect    bool // an interrupt or panic may have broken the runtime
	probe      sobek.Callable
}

// reset makes the guard guard rt, the VU's new runtime: it removes the
// watch of the runtime before and drops what it made in it.
func (g *runtimeGuard) reset(rt *sobek.Runtime) {
	g.unwatch()
	g.rt = rt
	g.probe = nil
	g.suspect = false
}

// trust clears the suspicion that the runtime is broken: a repair is
// under way, or the runtime is new.
func (g *runtimeGuard) trust() { g.suspect = false }

// distrust keeps the runtime suspect, after a repair that failed, so that
// the next call tries again.
func (g *runtimeGuard) distrust() { g.suspect = true }

// healthy tells whether the runtime still runs promise jobs. An interrupt
// that lands inside an async function leaves sobek's call stack unwound
// only partly, after which the runtime never runs promise reactions again;
// a sync interruption leaves it sound.
func (g *runtimeGuard) healthy() bool {
	if g.probe == nil {
		p, err := g.rt.RunProgram(healthProbe())
		if err != nil {
			return false
		}
		if g.probe, _ = sobek.AssertFunction(p); g.probe == nil {
			return false
		}
	}
	check, err := g.probe(sobek.Undefined())
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

// watch makes sure the runtime is interrupted when ctx ends. The watch
// stays in place across calls with the same context, which is what the
// executors pass for a VU's iterations, so that it costs nothing per
// iteration. Every VU's guard shares one watch of the context (ctxwatch).
func (g *runtimeGuard) watch(ctx context.Context) {
	if g.ctxWatch.Context() == ctx {
		return
	}
	g.unwatch()
	// A context watched before may have ended while the VU was idle.
	g.rt.ClearInterrupt()
	g.interrupts.Add(1)
	g.ctxWatch.Watch(ctx, g)
}

// Wake interrupts the runtime; the watch calls it when its context ends.
func (g *runtimeGuard) Wake() {
	g.rt.Interrupt(errInterrupted)
	g.interrupts.Done()
}

// watching reports whether a context is watched.
func (g *runtimeGuard) watching() bool { return g.ctxWatch.Context() != nil }

// unwatch removes the watch, waiting for it if it is interrupting now.
func (g *runtimeGuard) unwatch() {
	if g.ctxWatch.Context() == nil {
		return
	}
	if g.ctxWatch.Stop() {
		g.interrupts.Done()
	}
	g.interrupts.Wait()
}

// suspectAfter marks the runtime for a health check after a call that
// ended with err, when err is an interruption or a panic.
func (g *runtimeGuard) suspectAfter(err error) {
	if err != nil && (isInterrupt(err) || exitcode.Of(err) == exitcode.GoPanic) {
		g.suspect = true
	}
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

func isInterrupt(err error) bool {
	if errors.Is(err, errInterrupted) {
		return true
	}
	var ie *sobek.InterruptedError
	return errors.As(err, &ie)
}
