package js

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"reflect"
	"sync"
	"time"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/js/compile"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/metrics"
)

var contextBackground = context.Background()

var typePromise = reflect.TypeOf((*sobek.Promise)(nil))

// vu is one virtual user: a runtime that evaluated the init context, run
// by one goroutine at a time. It is both the executor's VU and the VU
// modules see.
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
	exports *sobek.Object
	env     *envObject

	goMods  map[*compile.GoModule]*goInstance
	cjs     map[*compile.Module]*sobek.Object
	scripts map[*compile.Module]*sobek.Object // exports of modules run as functions; nil while running

	// The current scenario and what follows from it.
	scenario  *executor.Scenario
	started   bool
	fn        sobek.Callable
	fnErr     error
	tags      *metrics.TagSet
	iter      int64
	scenIter  int64
	scenIters map[*executor.Scenario]int64

	setup    *setupData
	setupVal sobek.Value
	args     [1]sobek.Value

	jar         *vuJar
	prepared    bool
	interrupts  sync.WaitGroup
	interruptFn func()
	watched     context.Context
	stopWatch   func() bool
	execFn      func() error
	suspect     bool // an interrupt or panic may have broken the runtime
	probe       sobek.Callable
	callGo      sobek.Callable
	goFn        func()
	rejected    []*sobek.Promise
	stringifyF  sobek.Callable
	parseF      sobek.Callable
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

// healthy tells whether the runtime still runs promise jobs. An interrupt
// that lands inside an async function leaves sobek's call stack unwound
// only partly, after which the runtime never runs promise reactions again;
// a sync interruption leaves it sound.
func (v *vu) healthy() bool {
	if v.probe == nil {
		p, err := v.rt.RunProgram(healthProbe)
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
// function that says whether the job ran.
var healthProbe = sobek.MustCompile("health-probe.js",
	"(function () { let ran = false; Promise.resolve().then(() => { ran = true; }); return () => ran; })", true)

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
	v.goMods, v.cjs, v.scripts, v.exports = nil, nil, nil, nil
	v.setup, v.setupVal = nil, nil
	v.stringifyF, v.parseF, v.callGo, v.probe = nil, nil, nil, nil
	v.rejected = nil
	if err := v.initRuntime(ctx); err != nil {
		return fmt.Errorf("VU %d could not be initialised again after an interruption: %s", v.id, v.s.describe(err))
	}
	if v.started {
		v.lookupExec()
	}
	return nil
}

// vuOf returns the VU whose init context is running in rt.
func (s *Script) vuOf(rt *sobek.Runtime) *vu {
	if v, ok := s.vus.Load(rt); ok {
		return v.(*vu)
	}
	return nil
}

func (v *vu) evaluateInit() error {
	m := v.s.main
	if m.RunsAsFunction() {
		exp, err := v.scriptExports(m)
		if err != nil {
			return err
		}
		v.exports = exp
		return nil
	}
	if m.ESM() != nil {
		if err := v.evaluateModule(m); err != nil {
			return err
		}
		v.exports = v.rt.NamespaceObjectFor(m.ESM())
		return nil
	}
	mod, err := v.commonJS(m)
	if err != nil {
		return err
	}
	exp, ok := mod.Get("exports").(*sobek.Object)
	if !ok {
		exp = v.rt.NewObject()
	}
	v.exports = exp
	return nil
}

// evaluateModule evaluates an ES module and what it imports in the VU,
// waiting for top-level awaits.
func (v *vu) evaluateModule(f *compile.Module) error {
	p := v.rt.CyclicModuleRecordEvaluate(f.ESM(), v.s.loader.ResolveHook)
	if _, err := v.settle(p, nil); err != nil {
		return err
	}
	if p.State() == sobek.PromiseStatePending {
		return fmt.Errorf("%s: a top-level await never finished", v.s.display(f.Key()))
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

// prepare fills in the parts of the state that do not change between
// iterations; it runs before the VU first runs code outside its init
// context.
func (v *vu) prepare() {
	conf := v.s.config()
	if v.prepared && conf == v.conf {
		return
	}
	v.conf = conf
	v.prepared = true
	hooks := v.s.hooks()
	if v.jar == nil {
		v.jar = &vuJar{}
	}
	st := &v.state
	st.Options = conf.opts
	st.Builtin = conf.builtin
	st.Registry = conf.registry
	st.Recorder = v.rec
	st.SystemTags = conf.systemTags
	st.VUID = v.id
	st.VUIDInTest = conf.idInTest(v.id)
	st.Execution = hooks.exec
	if progress := hooks.progress; progress != nil {
		st.Progress = func() float64 {
			if v.scenario == nil {
				return 0
			}
			return progress(v.scenario.Name)
		}
	}
	st.Jar = v.jar
	st.Logf = v.s.logf
	st.Fail = hooks.fail
	if st.Fail == nil {
		st.Fail = func(string) {}
	}
	abort := hooks.abort
	st.Abort = func(reason string) {
		if abort != nil {
			abort(reason)
		}
		v.rt.Interrupt(&errAborted{reason: reason})
	}
	v.tags = nil
	v.scenario = nil
	v.started = false
}

// Run runs one iteration of the scenario's exec function.
func (v *vu) Run(ctx context.Context, it executor.Iteration) executor.Result {
	v.prepare()
	var broken error
	if v.suspect {
		broken = v.repair(ctx)
	}
	if !v.started || it.Scenario != v.scenario {
		v.enterScenario(it.Scenario)
	}
	st := &v.state
	st.Iteration = v.iter
	st.IterationInScenario = v.scenIter
	st.Current = it
	st.Group = ""
	st.Tags = v.tags
	if !v.conf.noCookies {
		v.jar.reset()
	}

	v.running = true
	start := time.Now()
	var err error
	switch {
	case ctx.Err() != nil:
		err = errInterrupted
	case broken != nil:
		err = broken
		v.suspect = true
	case v.fn == nil:
		err = v.fnErr
	default:
		v.args[0] = v.setupValue()
		if v.execFn == nil {
			v.execFn = v.callExec
		}
		err = v.guard(ctx, v.execFn)
	}
	end := time.Now()
	v.running = false

	v.tags = st.Tags
	if v.conf.groupTag {
		v.tags = v.tags.With("group", "")
	}
	v.emitData(end, v.tags)
	v.iter++
	v.scenIter++

	outcome := executor.Completed
	switch {
	case err == nil:
	case isAbort(err):
		// k6 counts the iteration that called exec.test.abort() as
		// completed: it ended where the script chose to end it.
	case ctx.Err() != nil || isInterrupt(err):
		outcome = executor.Interrupted
	default:
		outcome = executor.Failed
		v.s.logError(v.s.describe(err))
	}
	if outcome != executor.Interrupted && v.conf.minIterDur > 0 {
		if rest := v.conf.minIterDur - end.Sub(start); rest > 0 {
			clock.Sleep(clock.Real, rest, ctx.Done())
		}
	}
	// Samples older than the buffer's age limit go to the engine now, so
	// thresholds see a quiet VU's samples; fresher ones ride with the next
	// iteration's.
	switch f := v.rec.(type) {
	case interface{ FlushIfOlder(time.Time) }:
		f.FlushIfOlder(end)
	case interface{ Flush() }:
		f.Flush()
	}
	return executor.Result{Outcome: outcome, Start: start, End: end, Tags: v.tags}
}

// emitData records the bytes the VU moved since the last call as one
// data_sent and one data_received sample, zero included, as k6 emits them
// once per iteration, setup and teardown.
func (v *vu) emitData(at time.Time, tags *metrics.TagSet) {
	st := &v.state
	if b := st.Builtin; b != nil && v.rec != nil {
		if tags == nil {
			tags = metrics.EmptyTags
		}
		v.rec.Record(metrics.Sample{Metric: b.DataSent, Tags: tags, Time: at, Value: float64(st.DataSent)})
		v.rec.Record(metrics.Sample{Metric: b.DataReceived, Tags: tags, Time: at, Value: float64(st.DataReceived)})
	}
	st.DataSent, st.DataReceived = 0, 0
}

func (v *vu) callExec() error {
	ret, err := v.fn(sobek.Undefined(), v.args[:]...)
	if err != nil {
		return err
	}
	if v.loop.pending == 0 && len(v.rejected) == 0 {
		if o, ok := ret.(*sobek.Object); !ok || o.ExportType() != typePromise {
			return nil
		}
	}
	_, err = v.await(ret)
	return err
}

// isAbort reports whether err is the interrupt exec.test.abort() raised.
func isAbort(err error) bool {
	var ie *sobek.InterruptedError
	if errors.As(err, &ie) {
		_, ok := ie.Value().(*errAborted)
		return ok
	}
	var ab *errAborted
	return errors.As(err, &ab)
}

func isInterrupt(err error) bool {
	if errors.Is(err, errInterrupted) {
		return true
	}
	var ie *sobek.InterruptedError
	return errors.As(err, &ie)
}

// enterScenario switches the VU to a scenario: its exec function, tags,
// environment and per-scenario iteration counter.
func (v *vu) enterScenario(sc *executor.Scenario) {
	if v.started {
		if v.scenIters == nil {
			v.scenIters = map[*executor.Scenario]int64{}
		}
		v.scenIters[v.scenario] = v.scenIter
	}
	v.started = true
	v.scenario = sc
	v.scenIter = v.scenIters[sc]
	v.lookupExec()
	v.tags = v.conf.scenarioTags(sc)
}

// lookupExec finds the current scenario's exec function.
func (v *vu) lookupExec() {
	exec, name := "default", "default"
	if sc := v.scenario; sc != nil {
		name = sc.Name
		if sc.Exec != "" {
			exec = sc.Exec
		}
	}
	v.env.overlay = nil
	if v.scenario != nil {
		v.env.overlay = v.scenario.Env
	}
	v.fn, v.fnErr = nil, nil
	if f, ok := sobek.AssertFunction(v.exports.Get(exec)); ok {
		v.fn = f
	} else {
		v.fnErr = fmt.Errorf("scenario %s: the script does not export a function named %q", name, exec)
	}
}

// scenarioTags are the tags of a scenario's samples: run tags, scenario
// tags and the scenario and group system tags.
func (c *runConfig) scenarioTags(sc *executor.Scenario) *metrics.TagSet {
	if sc == nil {
		return c.rootTags
	}
	if t, ok := c.scenarioTag.Load(sc); ok {
		return t.(*metrics.TagSet)
	}
	t := c.runTags
	for k, val := range sc.Tags {
		t = t.With(k, val)
	}
	if c.systemTags["scenario"] {
		t = t.With("scenario", sc.Name)
	}
	if c.groupTag {
		t = t.With("group", "")
	}
	c.scenarioTag.Store(sc, t)
	return t
}

// setupValue is setup()'s result, parsed once per VU.
func (v *vu) setupValue() sobek.Value {
	sd := v.s.setupGen.Load()
	if sd == v.setup && v.setupVal != nil {
		return v.setupVal
	}
	v.setup = sd
	v.setupVal = sobek.Undefined()
	if sd != nil && len(sd.raw) > 0 {
		if val, err := v.parseJSON(sd.raw); err == nil {
			v.setupVal = val
		} else {
			v.s.logf("setup() data cannot be parsed: %v", err)
		}
	}
	return v.setupVal
}

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

// goInstance returns the VU's instance of a Go module, instantiating it
// on first use.
func (v *vu) goInstance(m *compile.GoModule) (*goInstance, error) {
	if inst, ok := v.goMods[m]; ok {
		return inst, nil
	}
	exp, err := instantiate(v, m.Module())
	if err != nil {
		return nil, fmt.Errorf("module %q: %w", m.Name(), err)
	}
	inst := &goInstance{rt: v.rt, exports: exp, names: m.Names()}
	if v.goMods == nil {
		v.goMods = map[*compile.GoModule]*goInstance{}
	}
	v.goMods[m] = inst
	return inst, nil
}

// commonJS runs a CommonJS module in the VU, once, and returns its module
// object. An ES module loaded through require() is evaluated and its
// namespace object stands for module.exports.
func (v *vu) commonJS(f *compile.Module) (*sobek.Object, error) {
	if mod, ok := v.cjs[f]; ok {
		return mod, nil
	}
	if v.cjs == nil {
		v.cjs = map[*compile.Module]*sobek.Object{}
	}
	mod := v.rt.NewObject()
	if f.RunsAsFunction() {
		exp, err := v.scriptExports(f)
		if err != nil {
			return nil, err
		}
		_ = mod.Set("exports", exp)
		v.cjs[f] = mod
		return mod, nil
	}
	if f.ESM() != nil {
		if err := v.evaluateModule(f); err != nil {
			return nil, err
		}
		_ = mod.Set("exports", v.rt.NamespaceObjectFor(f.ESM()))
		v.cjs[f] = mod
		return mod, nil
	}
	exports := v.rt.NewObject()
	_ = mod.Set("exports", exports)
	v.cjs[f] = mod
	wrapper, err := v.rt.RunProgram(f.CommonJS())
	if err != nil {
		return nil, err
	}
	call, ok := sobek.AssertFunction(wrapper)
	if !ok {
		return nil, fmt.Errorf("module %s did not compile to a function", f.Key())
	}
	if _, err := call(sobek.Undefined(), mod, exports); err != nil {
		delete(v.cjs, f)
		return nil, err
	}
	return mod, nil
}

// importDynamically starts an import() expression: the module is loaded
// (once per test) at once, and the import finishes from the event loop,
// as sobek requires.
func (v *vu) importDynamically(referrer any, specifier sobek.Value, payload any) {
	spec := specifier.String()
	var base *url.URL
	if rec, ok := referrer.(sobek.ModuleRecord); ok {
		base = v.s.loader.URLOf(rec)
	}
	if base == nil {
		base = v.callerURL()
	}
	ref, err := v.s.loader.Resolve(base, spec)
	cb := v.loop.register()
	cb(func() error {
		var rec sobek.ModuleRecord
		var reason any
		if err == nil {
			rec, err = v.s.loader.DynamicRecord(ref)
		}
		if err != nil {
			reason = v.rt.NewGoError(errors.New(v.s.describe(err)))
		}
		return v.topLevel(func() {
			v.rt.FinishLoadingImportModule(referrer, specifier, payload, rec, reason)
		})
	})
}

// topLevel runs f as if JavaScript had called it, so that the promise jobs
// it queues run before topLevel returns, with the VU findable from its
// runtime for the modules that f evaluates.
func (v *vu) topLevel(f func()) error {
	if v.callGo == nil {
		v.callGo, _ = sobek.AssertFunction(v.rt.ToValue(func(sobek.FunctionCall) sobek.Value {
			v.goFn()
			return sobek.Undefined()
		}))
	}
	v.goFn = f
	v.s.vus.Store(v.rt, v)
	_, err := v.callGo(sobek.Undefined())
	v.s.vus.Delete(v.rt)
	v.goFn = nil
	return err
}

// callerURL is the URL of the module whose code called the running Go
// function, nil when unknown.
func (v *vu) callerURL() *url.URL {
	var buf [8]sobek.StackFrame
	for _, f := range v.rt.CaptureCallStack(len(buf), buf[:0]) {
		name := f.SrcName()
		if name == "<native>" || name == "" {
			continue
		}
		if u, err := url.Parse(name); err == nil && u.Scheme != "" {
			return u
		}
	}
	return nil
}

// vuJar is the VU's cookie jar. It is emptied at the start of each
// iteration unless noCookiesReset; it makes the underlying jar only once a
// cookie is stored, so that VUs that never see a cookie pay nothing.
type vuJar struct {
	mu    sync.Mutex
	jar   *cookiejar.Jar
	dirty bool
}

var _ http.CookieJar = (*vuJar)(nil)

// SetCookies stores cookies received from u.
func (j *vuJar) SetCookies(u *url.URL, cookies []*http.Cookie) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.jar == nil {
		j.jar, _ = cookiejar.New(nil)
	}
	j.dirty = true
	j.jar.SetCookies(u, cookies)
}

// Cookies returns the cookies to send to u.
func (j *vuJar) Cookies(u *url.URL) []*http.Cookie {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.jar == nil {
		return nil
	}
	return j.jar.Cookies(u)
}

func (j *vuJar) reset() {
	j.mu.Lock()
	if j.dirty {
		j.jar = nil
		j.dirty = false
	}
	j.mu.Unlock()
}
