package js

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"time"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/metrics"
)

var contextBackground = context.Background()

var typePromise = reflect.TypeOf((*sobek.Promise)(nil))

// vu is one virtual user: a runtime that evaluated the init context, run
// by one goroutine at a time. It is both the executor's VU and the VU
// modules see. Its state is split into parts, each with the methods that
// write it (docs/js-layers.md): the event loop (eventloop.go) runs
// asynchronous work and settles promises, the runtime guard (guard.go)
// interrupts the runtime and checks it, the module system (modsys.go)
// holds the VU's module instances, and the iteration state (iteration.go)
// follows scenarios and iterations. The vu's own methods are the ones that
// coordinate parts.
//
// A vu is 760 bytes, which with malloc's 8-byte header fills its 768-byte
// size class: a field more costs every VU 128 bytes (BenchmarkVUHeap).
type vu struct {
	// The guard comes first: at the vu's own address, it costs guard no
	// extra word of stack under a running script (Run).
	runtimeGuard

	// The runtime is the guard's (v.rt), and the VU's number is its
	// state's VUID, so that neither costs a word twice.
	s    *Script
	rec  metrics.Recorder
	conf *runConfig

	ctx     context.Context
	initEnv *modules.InitEnv
	state   modules.State
	loop    eventLoop
	env     *envObject

	moduleSystem
	iterationState

	json   jsonFuncs
	args   [1]sobek.Value // the exec function's argument
	execFn func() error   // callExec, made once
}

var (
	_ executor.VU           = (*vu)(nil)
	_ modules.VU            = (*vu)(nil)
	_ modules.MeasuringVU   = (*vu)(nil)
	_ modules.GatedRecorder = (*recordGate)(nil)
	_ modules.InletVU       = (*vu)(nil)
)

// newVU makes a runtime and evaluates the init context in it.
func (s *Script) newVU(ctx context.Context, id uint64, rec metrics.Recorder) (*vu, error) {
	conf := s.config()
	if rec == nil {
		rec = discard{}
	}
	v := &vu{s: s, rec: rec, conf: conf}
	v.state.VUID = id
	if err := v.initRuntime(ctx); err != nil {
		return nil, s.initError(err)
	}
	return v, nil
}

// initRuntime gives the VU a fresh runtime that evaluated the init
// context.
func (v *vu) initRuntime(ctx context.Context) error {
	v.json = jsonFuncs{}
	v.runtimeGuard.reset(sobek.New())
	v.rt.SetFieldNameMapper(fieldNames{})
	v.moduleSystem = moduleSystem{vu: v}
	v.rt.SetImportModuleDynamically(v.importDynamically)
	v.initEnv = v.s.config().initEnv
	v.installGlobals()
	v.s.vus.Store(v.rt, &v.moduleSystem)
	err := v.guard(ctx, v.evaluateInit)
	forgetCompletion(v.rt)
	v.s.vus.Delete(v.rt)
	v.initEnv = nil
	v.ctx = nil
	v.trust()
	return err
}

// forgetCompletion makes rt let go of the value of the last program it
// ran, which sobek keeps until it runs another: after the init context that
// is the function wrapping the main module (compile/esmscript.go), about
// 600 bytes that every idle VU would hold for nothing (BenchmarkVUHeap).
//
// The program it runs also calls a function, so that sobek's call stack
// (which keeps its capacity between calls) holds the two frames of an
// iteration's call into a Go function such as sleep before the first
// iteration: grown there instead, at the bottom of the script's call, the
// allocation's slow path went past the 4 KB of an idle VU's goroutine
// stack, which then stays 8 KB (docs/performance.md).
func forgetCompletion(rt *sobek.Runtime) {
	_, _ = rt.RunProgram(warmProgram())
}

// warmProgram is a program whose only effect is one nested call.
var warmProgram = sync.OnceValue(func() *sobek.Program { return sobek.MustCompile("", "(() => {})();", true) })

// repair makes the VU usable after an interrupted or failed call that
// may have broken its runtime: when the runtime no longer runs promise
// jobs, the VU evaluates its init context again in a fresh one. It returns
// an error only when that fails.
func (v *vu) repair(ctx context.Context) error {
	v.trust()
	if v.healthy() {
		return nil
	}
	v.loop.reset()
	v.forgetSetup()
	if err := v.initRuntime(ctx); err != nil {
		return fmt.Errorf("VU %d could not be initialised again after an interruption: %s", v.ID(), v.s.describe(err))
	}
	if v.started {
		v.lookupExec(v.exports)
		v.env.useScenario(v.scenario)
	}
	return nil
}

// guard runs f, interrupting the runtime when ctx ends, and leaves the
// runtime and the event loop ready for the next call.
func (v *vu) guard(ctx context.Context, f func() error) error {
	v.ctx = ctx
	if v.s.scopedCalls.Load() {
		v.scopeCall()
	}
	if ctx.Done() == nil {
		if v.watching() {
			v.unwatch()
			v.rt.ClearInterrupt()
		}
		err := protect(f)
		v.rt.ClearInterrupt() // exec.test.abort() interrupts too
		v.loop.endCall(err != nil)
		if v.s.scopedCalls.Load() {
			v.endScope()
		}
		v.suspectAfter(err)
		return err
	}
	v.watch(ctx)
	err := protect(f)
	if ctx.Err() != nil {
		// Let the watch finish interrupting before the interrupt is
		// cleared.
		v.unwatch()
		if err == nil && v.loop.pending.Load() > 0 {
			err = errInterrupted
		}
		// Requests still out were cut off, or answered and not yet
		// recorded: their records run now, their JavaScript never.
		v.loop.drain()
	}
	v.rt.ClearInterrupt()
	v.loop.endCall(err != nil)
	if v.s.scopedCalls.Load() {
		v.endScope()
	}
	v.suspectAfter(err)
	return err
}

// callContext is the context of one call of a VU whose script scopes
// calls (modules.CallScoped), cancelled when the call returns.
type callContext struct {
	context.Context
	cancel context.CancelFunc
}

// scopeCall gives the call that starts, outside the init context, of a
// script that scopes calls a context of its own, and opens the event loop
// to reservations again. guard calls it only for such a script, and it is
// a call of its own so that guard's frame, under every running script,
// does not grow.
//
//go:noinline
func (v *vu) scopeCall() {
	if v.initEnv == nil {
		ctx, cancel := context.WithCancel(v.ctx)
		v.ctx = &callContext{ctx, cancel}
		v.loop.open()
	}
}

// endScope, after a call with a context of its own returned and its event
// loop was emptied, closes the loop until the next call and cancels the
// context: what the call's goroutines reserve once they see it end is
// dropped, never run in the next call with that call's context (as
// xk6-tcp's socket loop would, whose late event could wait for a loop
// long gone). Modules reading Context afterwards get it, done, as in k6.
//
//go:noinline
func (v *vu) endScope() {
	if c, ok := v.ctx.(*callContext); ok {
		v.loop.close()
		c.cancel()
	}
}

// script is the VU's script.
func (v *vu) script() *Script { return v.s }

// settle runs the event loop in the context of the VU's call until
// nothing is pending, and returns what p settled to, ret when p is nil
// (eventLoop.settle). A call of its own keeps the frame under a running
// script small (Run).
//
//go:noinline
func (v *vu) settle(p *sobek.Promise, ret sobek.Value) (sobek.Value, error) {
	for {
		out, err := v.loop.settle(v.ctx, v.rec, p, ret)
		if err != nil || !v.s.scopedCalls.Load() || !v.lateReservation(p) {
			return out, err
		}
	}
}

// lateReservationWait is how long a call of a script that imports a k6
// extension waits, when its loop emptied with its promise still pending,
// for a goroutine to reserve a place in the loop.
const lateReservationWait = 20 * time.Millisecond

// lateReservation reports whether, in a call of a script that imports a
// k6 extension whose event loop emptied, a goroutine reserved a place in
// the loop late. Extensions built on k6-taskqueue-lib (xk6-tcp, xk6-mqtt,
// xk6-icmp) reserve from a goroutine of their own, which may not have run
// yet: the VU yields, so that the goroutines the call started run
// first, and while the call's promise is pending it waits up to
// lateReservationWait. Without this the call ends at once, and what the
// goroutine then queues is lost with it.
//
//go:noinline
func (v *vu) lateReservation(p *sobek.Promise) bool {
	// A few yields: the scheduler sometimes picks the yielding goroutine
	// again first.
	for range 3 {
		if v.loop.pending.Load() > 0 {
			return true
		}
		runtime.Gosched()
	}
	if v.loop.pending.Load() > 0 {
		return true
	}
	return p != nil && p.State() == sobek.PromiseStatePending && v.loop.awaitReservation(v.ctx, lateReservationWait)
}

// Runtime returns the VU's runtime.
func (v *vu) Runtime() *sobek.Runtime { return v.rt }

// Context is the context of what the VU runs now.
func (v *vu) Context() context.Context {
	if v.ctx == nil {
		return contextBackground
	}
	return v.ctx
}

// InitEnv is non-nil while the init context runs.
func (v *vu) InitEnv() *modules.InitEnv { return v.initEnv }

// State is non-nil while setup, an iteration or teardown runs.
func (v *vu) State() *modules.State {
	if v.running {
		return &v.state
	}
	return nil
}

// RegisterCallback reserves a place in the event loop.
func (v *vu) RegisterCallback() func(func() error) { return v.loop.register() }

// RegisterMeasured reserves a place in the event loop for work that
// measures (modules.MeasuringVU).
func (v *vu) RegisterMeasured() func(record func(), f func() error) { return v.loop.registerMeasured() }

// SetTimer is setTimeout (repeat false) or setInterval (repeat true) for
// modules: k6/timers exports the same timers as the globals, so ids from
// one clear with the other.
func (v *vu) SetTimer(call sobek.FunctionCall, repeat bool) sobek.Value {
	return v.loop.setTimer(v.rt, call, repeat)
}

// ClearTimer is clearTimeout and clearInterval for modules.
func (v *vu) ClearTimer(call sobek.FunctionCall) sobek.Value { return v.loop.clearTimer(call) }

// ID is __VU.
func (v *vu) ID() uint64 { return v.state.VUID }

// Recorder is the VU's sample buffer.
func (v *vu) Recorder() metrics.Recorder { return v.rec }

// jsonFuncs are a runtime's JSON.stringify and JSON.parse, looked up on
// first use.
type jsonFuncs struct {
	stringifyF sobek.Callable
	parseF     sobek.Callable
}

// stringify is JSON.stringify in rt.
func (j *jsonFuncs) stringify(rt *sobek.Runtime, val sobek.Value) (string, error) {
	if j.stringifyF == nil {
		json := rt.Get("JSON").ToObject(rt)
		j.stringifyF, _ = sobek.AssertFunction(json.Get("stringify"))
	}
	r, err := j.stringifyF(sobek.Undefined(), val)
	if err != nil {
		return "", err
	}
	if sobek.IsUndefined(r) {
		return "", nil
	}
	return r.String(), nil
}

// parse is JSON.parse in rt.
func (j *jsonFuncs) parse(rt *sobek.Runtime, b []byte) (sobek.Value, error) {
	if j.parseF == nil {
		json := rt.Get("JSON").ToObject(rt)
		j.parseF, _ = sobek.AssertFunction(json.Get("parse"))
	}
	return j.parseF(sobek.Undefined(), rt.ToValue(string(b)))
}
