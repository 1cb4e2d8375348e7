package js

import (
	"context"
	"reflect"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/metrics"
)

var contextBackground = context.Background()

var typePromise = reflect.TypeOf((*sobek.Promise)(nil))

// vu is one virtual user: a runtime that evaluated the init context, run
// by one goroutine at a time. It is both the executor's VU and the VU
// modules see. Its state is split by responsibility: the runtime guard
// (guard.go) interrupts and repairs the runtime, the module system
// (modsys.go) holds the VU's module instances, and the iteration state
// (iteration.go) follows scenarios and iterations.
type vu struct {
	s    *Script
	id   uint64
	rt   *sobek.Runtime
	rec  metrics.Recorder
	conf *runConfig

	ctx     context.Context
	initEnv *modules.InitEnv
	running bool
	state   modules.State
	loop    eventLoop
	env     *envObject

	runtimeGuard
	moduleSystem
	iterationState

	stringifyF sobek.Callable
	parseF     sobek.Callable
}

var (
	_ executor.VU = (*vu)(nil)
	_ modules.VU  = (*vu)(nil)
)

// newVU makes a runtime and evaluates the init context in it.
func (s *Script) newVU(ctx context.Context, id uint64, rec metrics.Recorder) (*vu, error) {
	conf := s.config()
	if rec == nil {
		rec = discard{}
	}
	v := &vu{s: s, id: id, rec: rec, conf: conf}
	if err := v.initRuntime(ctx); err != nil {
		return nil, s.scriptError(err)
	}
	return v, nil
}

// initRuntime gives the VU a fresh runtime that evaluated the init
// context.
func (v *vu) initRuntime(ctx context.Context) error {
	v.unwatch() // the watch interrupts v.rt
	v.rt = sobek.New()
	v.rt.SetFieldNameMapper(fieldNames{})
	v.rt.SetImportModuleDynamically(v.importDynamically)
	v.initEnv = v.s.config().initEnv
	v.installGlobals()
	v.s.vus.Store(v.rt, v)
	err := v.guard(ctx, v.evaluateInit)
	v.s.vus.Delete(v.rt)
	v.initEnv = nil
	v.ctx = nil
	v.suspect = false
	return err
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

// ID is __VU.
func (v *vu) ID() uint64 { return v.id }

// Recorder is the VU's sample buffer.
func (v *vu) Recorder() metrics.Recorder { return v.rec }

// stringify is JSON.stringify in the VU's runtime.
func (v *vu) stringify(val sobek.Value) (string, error) {
	if v.stringifyF == nil {
		json := v.rt.Get("JSON").ToObject(v.rt)
		v.stringifyF, _ = sobek.AssertFunction(json.Get("stringify"))
	}
	r, err := v.stringifyF(sobek.Undefined(), val)
	if err != nil {
		return "", err
	}
	if sobek.IsUndefined(r) {
		return "", nil
	}
	return r.String(), nil
}

// parseJSON is JSON.parse in the VU's runtime.
func (v *vu) parseJSON(b []byte) (sobek.Value, error) {
	if v.parseF == nil {
		json := v.rt.Get("JSON").ToObject(v.rt)
		v.parseF, _ = sobek.AssertFunction(json.Get("parse"))
	}
	return v.parseF(sobek.Undefined(), v.rt.ToValue(string(b)))
}
