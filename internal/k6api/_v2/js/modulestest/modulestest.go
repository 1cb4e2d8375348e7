// Package modulestest gives an extension's Go tests a JavaScript runtime
// with a VU outside any test run (xk6-sql's sqltest runs its scripts so):
// the VU's fields are set by hand, and a small event loop runs the
// callbacks of promises. It has no module system and none of k6's globals
// (timers, crypto, encoding): a test that needs those still needs k6.
package modulestest

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/grafana/sobek"
	"github.com/sirupsen/logrus"

	"go.k6.io/k6/v2/js/common"
	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/metrics"
)

// VU is a VU whose parts a test sets: each method returns its field.
type VU struct {
	CtxField              context.Context
	InitEnvField          *common.InitEnvironment
	StateField            *lib.State
	RuntimeField          *sobek.Runtime
	RegisterCallbackField func() func(f func() error)
}

// Context returns CtxField.
func (v *VU) Context() context.Context { return v.CtxField }

// InitEnv returns InitEnvField.
func (v *VU) InitEnv() *common.InitEnvironment { return v.InitEnvField }

// State returns StateField.
func (v *VU) State() *lib.State { return v.StateField }

// Runtime returns RuntimeField.
func (v *VU) Runtime() *sobek.Runtime { return v.RuntimeField }

// RegisterCallback calls RegisterCallbackField.
func (v *VU) RegisterCallback() func(f func() error) { return v.RegisterCallbackField() }

// Runtime is a VU in its init context, with an event loop and k6's
// built-in metrics in its registry.
type Runtime struct {
	VU             *VU
	EventLoop      *EventLoop
	CancelContext  func()
	BuiltinMetrics *metrics.BuiltinMetrics
}

// NewRuntime returns a runtime whose context ends with the test, whose
// runtime names Go fields by k6's rule, and whose log goes to t.Log.
func NewRuntime(t testing.TB) *Runtime {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	rt := sobek.New()
	rt.SetFieldNameMapper(common.FieldNameMapper{})
	log := logrus.New()
	log.SetOutput(testWriter{t})
	reg := metrics.NewRegistry()
	builtin := metrics.RegisterBuiltinMetrics(reg)
	vu := &VU{
		CtxField:     ctx,
		RuntimeField: rt,
		InitEnvField: &common.InitEnvironment{
			TestPreInitState: &lib.TestPreInitState{Registry: reg, BuiltinMetrics: builtin, Logger: log,
				LookupEnv: func(string) (string, bool) { return "", false }},
			CWD: new(url.URL),
		},
	}
	loop := &EventLoop{}
	vu.RegisterCallbackField = loop.RegisterCallback
	r := &Runtime{VU: vu, EventLoop: loop, CancelContext: cancel, BuiltinMetrics: builtin}
	// A test may have replaced CancelContext.
	t.Cleanup(func() { r.CancelContext() })
	return r
}

// MoveToVUContext leaves the init context: InitEnv is nil from now on and
// State is state, as when a VU starts its first iteration.
func (r *Runtime) MoveToVUContext(state *lib.State) {
	r.VU.InitEnvField = nil
	r.VU.StateField = state
}

// RunOnEventLoop runs code, then the callbacks it registered until none
// is pending, and returns code's value or the first error.
func (r *Runtime) RunOnEventLoop(code string) (sobek.Value, error) {
	var v sobek.Value
	err := r.EventLoop.Start(func() (err error) {
		v, err = r.VU.Runtime().RunString(code)
		return err
	})
	return v, err
}

// EventLoop runs, on the goroutine that started it, the callbacks that
// other goroutines queue.
type EventLoop struct {
	mu      sync.Mutex
	pending int
	queue   []func() error
	wake    chan struct{}
}

// RegisterCallback reserves a place in the loop: the loop does not end
// before the returned function was called, once, with a function it then
// runs.
func (l *EventLoop) RegisterCallback() func(f func() error) {
	l.mu.Lock()
	l.pending++
	if l.wake == nil {
		l.wake = make(chan struct{}, 1)
	}
	l.mu.Unlock()
	var once sync.Once
	return func(f func() error) {
		once.Do(func() {
			l.mu.Lock()
			l.queue = append(l.queue, f)
			l.mu.Unlock()
			select {
			case l.wake <- struct{}{}:
			default:
			}
		})
	}
}

// Start runs first, then every queued callback until none is pending,
// and returns the first error.
func (l *EventLoop) Start(first func() error) error {
	if err := first(); err != nil {
		return err
	}
	for {
		l.mu.Lock()
		if len(l.queue) == 0 && l.pending == 0 {
			l.mu.Unlock()
			return nil
		}
		q := l.queue
		l.queue = nil
		l.pending -= len(q)
		wake := l.wake
		l.mu.Unlock()
		if len(q) == 0 {
			<-wake
			continue
		}
		for _, f := range q {
			if err := f(); err != nil {
				return err
			}
		}
	}
}

// testWriter writes log lines to a test's log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(b), "\n"))
	return len(b), nil
}
