package js

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"slices"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/internal/js/compile"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
	"github.com/metronome-load/metronome/metrics"
)

// moduleSystem is the part of a VU that evaluates modules: its exports
// and the instances of the modules it imported, each made once per
// runtime, and the init context's require() and open(). A VU makes a new
// one with each runtime.
type moduleSystem struct {
	vu moduleVU // the VU the instances are made for

	exports *moduleExports // the main module's
	goMods  *goInstance    // the first of the instances, linked by next
	cjs     map[*compile.Module]*sobek.Object
	scripts pairs[*compile.Module, *moduleExports] // exports of modules run as functions; nil while running
	callGo  sobek.Callable
	goFn    func()
}

// moduleVU is what the module system needs of its VU: the VU modules see
// (its runtime, context and event loop), its script, and the wait for a
// top-level await.
type moduleVU interface {
	modules.VU
	script() *Script
	// settle runs the VU's event loop until nothing is pending, failing
	// with p's rejection or an unhandled one.
	settle(p *sobek.Promise, ret sobek.Value) (sobek.Value, error)
}

// moduleHost is the runtime side of the loader (compile.Host): it makes
// module instances in the VU that evaluates them.
type moduleHost struct{ s *Script }

var _ compile.Host = moduleHost{}

// Probe instantiates a Go module in a scratch runtime, whose data are
// thrown away, so that the loader learns the module's export names.
func (h moduleHost) Probe(mod modules.Module) (modules.Exports, error) {
	probe := &vu{s: h.s}
	probe.runtimeGuard.reset(sobek.New())
	// Names a module derives from its Go values must be the ones the
	// VUs' runtimes give them.
	probe.rt.SetFieldNameMapper(fieldNames{})
	reg := metrics.NewRegistry()
	metrics.RegisterBuiltin(reg)
	run := h.s.newRun(&config.Options{}, nil)
	run.Log = slog.New(slog.DiscardHandler)
	probe.initEnv = &modules.InitEnv{Registry: reg, CWD: h.s.dir, Shared: &modules.Shared{Get: probeShared}, Logf: func(string, ...any) {}, Run: run}
	probe.ctx = context.Background()
	return instantiate(probe, mod)
}

// Instance makes ref's instance in the VU whose init context runs in rt,
// once per VU: sobek asks for it at every import of the module.
func (h moduleHost) Instance(rt *sobek.Runtime, ref compile.Ref) (sobek.ModuleInstance, error) {
	ms := h.s.modulesOf(rt)
	switch m := ref.(type) {
	case *compile.GoModule:
		if ms == nil {
			return nil, fmt.Errorf("module %q evaluated outside an init context", m.Name())
		}
		return ms.goInstance(m)
	case *compile.Module:
		if ms == nil {
			return nil, fmt.Errorf("module %s evaluated outside an init context", m.Key())
		}
		if m.RunsAsFunction() {
			exp, err := ms.scriptExports(m)
			return &scriptInstance{exports: exp}, err
		}
		mod, err := ms.commonJS(m)
		return &cjsInstance{module: mod}, err
	}
	return nil, fmt.Errorf("cannot evaluate module %T", ref)
}

// probeShared builds shared data without sharing it: the probe runtime's
// data are thrown away.
func probeShared(_ string, build func() (any, error)) (any, error) { return build() }

// instantiate calls the module's Instantiate, turning a panic into an
// error: a module may throw a JavaScript exception while it initialises.
func instantiate(v modules.VU, mod modules.Module) (exp modules.Exports, err error) {
	defer func() {
		if r := recover(); r != nil {
			switch x := r.(type) {
			case *sobek.Exception:
				err = x
			case sobek.Value:
				err = errors.New(x.String())
			case error:
				err = x
			default:
				err = fmt.Errorf("%v", x)
			}
		}
	}()
	exp, err = mod.Instantiate(v)
	if err == nil && exp.Default != nil && modules.IsOnFirstUse(mod) {
		err = errors.New("a module instantiated on first use cannot have a default export of its own")
	}
	return exp, err
}

// goInstance is a Go module's exports in one runtime. Exports become
// JavaScript values when first used: an import binding is read lazily, and
// a script rarely uses everything a module offers. A module marked
// modules.OnFirstUse is instantiated then too.
//
// The instance keeps the module's exports as pairs rather than the map the
// module returned, which costs an idle VU a few hundred bytes per module,
// and each export's value in place of the raw export it was made of
// rather than in pairs of their own (about 100 bytes per idle VU of the
// bench's script).
type goInstance struct {
	ms  *moduleSystem
	mod *compile.GoModule
	// def is the default export: the module's own (ownDef), raw and then
	// the value made of it, or the object of the named exports made for
	// a module without one; nil until then.
	def any
	// named are the named exports, each raw until its value replaces it,
	// and what a script set on the default-export object. The first
	// of them are values, the rest raw: a script reads exports
	// through the default-export object at every call (http.get), and
	// the few it uses are found first.
	named pairs[string, any]
	// namespace is the object import * binds in modules run as
	// functions, made on first use.
	namespace *sobek.Object
	next      *goInstance // the VU's next instance
	values    uint32      // how many of named are values
	ownDef    bool
}

// made reports whether the module was instantiated.
func (i *goInstance) made() bool { return i.named != nil }

// instantiate makes the module's exports in the instance's VU.
func (i *goInstance) instantiate() error {
	if _, ok := i.mod.Module().(modules.CallScoped); ok {
		i.ms.vu.script().scopedCalls.Store(true)
	}
	exp, err := instantiate(i.ms.vu, i.mod.Module())
	if err != nil {
		return fmt.Errorf("module %q: %w", i.mod.Name(), err)
	}
	if exp.Default != nil {
		i.def, i.ownDef = exp.Default, true
	}
	i.named = make(pairs[string, any], 0, len(exp.Named)) // not nil: made
	for name, raw := range exp.Named {
		i.named = append(i.named, pair[string, any]{name, raw})
	}
	return nil
}

// setValue makes v the value of the export at n, moving it among the
// values.
func (i *goInstance) setValue(n int, v sobek.Value) {
	if n < int(i.values) {
		i.named[n].val = v
		return
	}
	p := pair[string, any]{i.named[n].key, v}
	copy(i.named[i.values+1:n+1], i.named[i.values:n])
	i.named[i.values] = p
	i.values++
}

// GetBindingValue returns an export, nil when there is no such export.
// A value made once is made again by ToValue as itself.
func (i *goInstance) GetBindingValue(name string) sobek.Value {
	rt := i.ms.vu.Runtime()
	if name == "default" {
		// The default export of a module instantiated on first use is
		// the object of its named exports, which reads them when asked.
		if i.def == nil {
			i.def = rt.NewDynamicObject(&moduleObject{i: i})
		}
		v := rt.ToValue(i.def)
		i.def = v
		return v
	}
	i.mustMake(rt)
	n := i.named.index(name)
	switch {
	case n < 0:
		return nil
	case n < int(i.values):
		return i.named[n].val.(sobek.Value)
	}
	v := rt.ToValue(i.named[n].val)
	i.setValue(n, v)
	return v
}

// mustMake instantiates the module if it was not, throwing its error.
func (i *goInstance) mustMake(rt *sobek.Runtime) {
	if !i.made() {
		if err := i.instantiate(); err != nil {
			panic(rt.NewGoError(err))
		}
	}
}

// moduleObject is the default export of a Go module that has none of its
// own, and the namespace object of import *: an object holding the named
// exports. As in k6, neither holds a default key.
type moduleObject struct{ i *goInstance }

func (o *moduleObject) Get(key string) sobek.Value {
	if key == "default" {
		return nil
	}
	return o.i.GetBindingValue(key)
}

func (o *moduleObject) Set(key string, val sobek.Value) bool {
	if key == "default" {
		o.i.def = val
		return true
	}
	o.i.mustMake(o.i.ms.vu.Runtime())
	n := o.i.named.index(key)
	if n < 0 {
		n = len(o.i.named)
		o.i.named = append(o.i.named, pair[string, any]{key, val})
	}
	o.i.setValue(n, val)
	return true
}

func (o *moduleObject) Has(key string) bool { return o.Get(key) != nil }

func (o *moduleObject) Delete(string) bool { return false }

func (o *moduleObject) Keys() []string { return o.i.mod.Named() }

type cjsInstance struct{ module *sobek.Object }

// GetBindingValue reads module.exports, or a property of it; the default
// export follows the __esModule interop (cjsDefault).
func (i *cjsInstance) GetBindingValue(name string) sobek.Value {
	exp := i.module.Get("exports")
	if name == "default" {
		return cjsDefault(exp)
	}
	if o, ok := exp.(*sobek.Object); ok {
		return o.Get(name)
	}
	return sobek.Undefined()
}

// cjsDefault is what `import x from` gives for a CommonJS module whose
// module.exports is exports: exports.default when the module says it was
// compiled from an ES module (exports.__esModule is truthy, as Babel,
// TypeScript and esbuild write it), else module.exports itself. k6 does
// the same, so `import chai from '.../k6chaijs/.../index.js'` is the
// library's default export, not the object around it.
func cjsDefault(exports sobek.Value) sobek.Value {
	if o, ok := exports.(*sobek.Object); ok {
		if flag := o.Get("__esModule"); flag != nil && flag.ToBoolean() {
			if d := o.Get("default"); d != nil {
				return d
			}
			return sobek.Undefined()
		}
	}
	return exports
}

// cjsNamespace is what `import * as ns from` gives for a CommonJS module,
// as in k6: an object holding module.exports' own enumerable properties
// (so a __esModule flag, defined non-enumerable, is left out, and a plain
// module has no default key).
func cjsNamespace(rt *sobek.Runtime, exports sobek.Value) sobek.Value {
	ns := rt.NewObject()
	if o, ok := exports.(*sobek.Object); ok {
		for _, k := range o.Keys() {
			_ = ns.Set(k, o.Get(k))
		}
	}
	return ns
}

// scriptInstance is a rewritten module's exports in one runtime.
type scriptInstance struct{ exports *moduleExports }

// GetBindingValue reads an export.
func (i *scriptInstance) GetBindingValue(name string) sobek.Value { return i.exports.Get(name) }

// moduleExports are a module's exports in one VU. For a module run as a
// function they are the values its function returned, in the order of the
// module's sorted export names, and the object returned is let go: with
// its property map it cost every idle VU about 490 bytes to keep the one
// function an iteration calls (BenchmarkVUHeap). An object is made again
// only when a script asks for one (import * or require), and from then on
// the exports are read from it, so that what a script sets on it is seen
// as before. For a main module evaluated otherwise, obj is its namespace
// object or module.exports.
type moduleExports struct {
	mod  *compile.Module // nil when obj is all there is
	vals []sobek.Value
	obj  *sobek.Object
}

// exportsOf keeps the values of exp, the object the function of module f
// returned.
func exportsOf(f *compile.Module, exp *sobek.Object) *moduleExports {
	names := f.Exported()
	e := &moduleExports{mod: f, vals: make([]sobek.Value, len(names))}
	for i, name := range names {
		e.vals[i] = exp.Get(name)
	}
	return e
}

// Get returns the export name, nil when there is none.
func (e *moduleExports) Get(name string) sobek.Value {
	if e.obj != nil {
		return e.obj.Get(name)
	}
	if i, ok := slices.BinarySearch(e.mod.Exported(), name); ok {
		return e.vals[i]
	}
	return nil
}

// Keys returns the names of the exports.
func (e *moduleExports) Keys() []string {
	if e.obj != nil {
		return e.obj.Keys()
	}
	return e.mod.Exported()
}

// object returns the object of the exports, making it in rt on first use
// as the module's function made it: no prototype, a property per export in
// the order of their names.
func (e *moduleExports) object(rt *sobek.Runtime) *sobek.Object {
	if e.obj == nil {
		o := rt.NewObject()
		_ = o.SetPrototype(nil)
		for i, name := range e.mod.Exported() {
			_ = o.Set(name, e.vals[i])
		}
		e.obj, e.vals = o, nil
	}
	return e.obj
}

// scriptExports runs the rewritten module f in the VU, once, after the
// modules it imports, and returns its exports.
func (ms *moduleSystem) scriptExports(f *compile.Module) (*moduleExports, error) {
	if exp, ok := ms.scripts.get(f); ok {
		if exp == nil {
			return nil, fmt.Errorf("%s is imported while it runs its own imports", ms.vu.script().display(f.Key()))
		}
		return exp, nil
	}
	ms.scripts.set(f, nil)
	prog, imports := f.Function()
	args := make([]sobek.Value, 1+len(imports))
	args[0] = sobek.Undefined()
	for i, imp := range imports {
		val, err := ms.importValue(imp)
		if err != nil {
			ms.scripts.delete(f)
			return nil, err
		}
		args[i+1] = val
	}
	obj, err := ms.callScript(f.Key(), prog, args)
	if err != nil {
		ms.scripts.delete(f)
		return nil, err
	}
	exp := exportsOf(f, obj)
	ms.scripts.set(f, exp)
	return exp, nil
}

// callScript runs a wrapper program and calls the function it yields.
func (ms *moduleSystem) callScript(key string, p *sobek.Program, args []sobek.Value) (*sobek.Object, error) {
	wrapper, err := ms.vu.Runtime().RunProgram(p)
	if err != nil {
		return nil, err
	}
	call, ok := sobek.AssertFunction(wrapper)
	if !ok {
		return nil, fmt.Errorf("module %s did not compile to a function", key)
	}
	ret, err := call(sobek.Undefined(), args...)
	if err != nil {
		return nil, err
	}
	exp, ok := ret.(*sobek.Object)
	if !ok {
		return nil, fmt.Errorf("module %s returned no exports", key)
	}
	return exp, nil
}

// importValue evaluates the module an import names, if it has not run
// yet, and returns the value the import binds.
func (ms *moduleSystem) importValue(imp compile.Import) (sobek.Value, error) {
	rt := ms.vu.Runtime()
	var ns func() sobek.Value // the namespace object, when asked for
	var get func(name string) sobek.Value
	switch m := imp.Ref().(type) {
	case *compile.GoModule:
		inst, err := ms.goInstance(m)
		if err != nil {
			return nil, err
		}
		get = inst.GetBindingValue
		ns = func() sobek.Value {
			if inst.namespace == nil {
				inst.namespace = rt.NewDynamicObject(&moduleObject{i: inst})
			}
			return inst.namespace
		}
	case *compile.Module:
		switch {
		case m.RunsAsFunction():
			exp, err := ms.scriptExports(m)
			if err != nil {
				return nil, err
			}
			get = exp.Get
			ns = func() sobek.Value { return exp.object(rt) }
		case m.ESM() != nil:
			if err := ms.evaluateModule(m); err != nil {
				return nil, err
			}
			o := rt.NamespaceObjectFor(m.ESM())
			get = o.Get
			ns = func() sobek.Value { return o }
		default:
			mod, err := ms.commonJS(m)
			if err != nil {
				return nil, err
			}
			exports := mod.Get("exports")
			get = func(name string) sobek.Value {
				if name == "default" {
					return cjsDefault(exports)
				}
				if o, ok := exports.(*sobek.Object); ok {
					return o.Get(name)
				}
				return sobek.Undefined()
			}
			ns = func() sobek.Value { return cjsNamespace(rt, exports) }
		}
	default:
		return nil, fmt.Errorf("cannot import %q", imp.Spec())
	}
	var val sobek.Value
	switch imp.Kind() {
	case compile.ImportDefault:
		val = get("default")
	case compile.ImportNamed:
		val = get(imp.Name())
	case compile.ImportNamespace:
		val = ns()
	}
	if val == nil {
		val = sobek.Undefined()
	}
	return val, nil
}

// modulesOf returns the module system of the VU whose init context is
// running in rt.
func (s *Script) modulesOf(rt *sobek.Runtime) *moduleSystem {
	if ms, ok := s.vus.Load(rt); ok {
		return ms.(*moduleSystem)
	}
	return nil
}

func (ms *moduleSystem) evaluateInit() error {
	rt := ms.vu.Runtime()
	m := ms.vu.script().main
	if m.RunsAsFunction() {
		exp, err := ms.scriptExports(m)
		if err != nil {
			return err
		}
		ms.exports = exp
		return nil
	}
	if m.ESM() != nil {
		if err := ms.evaluateModule(m); err != nil {
			return err
		}
		ms.exports = &moduleExports{obj: rt.NamespaceObjectFor(m.ESM())}
		return nil
	}
	mod, err := ms.commonJS(m)
	if err != nil {
		return err
	}
	exp, ok := mod.Get("exports").(*sobek.Object)
	if !ok {
		exp = rt.NewObject()
	}
	ms.exports = &moduleExports{obj: exp}
	return nil
}

// evaluateModule evaluates an ES module and what it imports in the VU,
// waiting for top-level awaits.
func (ms *moduleSystem) evaluateModule(f *compile.Module) error {
	s := ms.vu.script()
	p := ms.vu.Runtime().CyclicModuleRecordEvaluate(f.ESM(), s.loader.ResolveHook)
	if _, err := ms.vu.settle(p, nil); err != nil {
		return err
	}
	if p.State() == sobek.PromiseStatePending {
		return fmt.Errorf("%s: a top-level await never finished", s.display(f.Key()))
	}
	return nil
}

// goInstance returns the VU's instance of a Go module, instantiating it
// on first use.
func (ms *moduleSystem) goInstance(m *compile.GoModule) (*goInstance, error) {
	for inst := ms.goMods; inst != nil; inst = inst.next {
		if inst.mod == m {
			return inst, nil
		}
	}
	inst := &goInstance{ms: ms, mod: m}
	if !modules.IsOnFirstUse(m.Module()) {
		if err := inst.instantiate(); err != nil {
			return nil, err
		}
	}
	inst.next, ms.goMods = ms.goMods, inst
	return inst, nil
}

// commonJS runs a CommonJS module in the VU, once, and returns its module
// object. An ES module loaded through require() is evaluated and its
// namespace object stands for module.exports.
func (ms *moduleSystem) commonJS(f *compile.Module) (*sobek.Object, error) {
	rt := ms.vu.Runtime()
	if mod, ok := ms.cjs[f]; ok {
		return mod, nil
	}
	if ms.cjs == nil {
		ms.cjs = map[*compile.Module]*sobek.Object{}
	}
	mod := rt.NewObject()
	if f.RunsAsFunction() {
		exp, err := ms.scriptExports(f)
		if err != nil {
			return nil, err
		}
		_ = mod.Set("exports", exp.object(rt))
		ms.cjs[f] = mod
		return mod, nil
	}
	if f.ESM() != nil {
		if err := ms.evaluateModule(f); err != nil {
			return nil, err
		}
		_ = mod.Set("exports", rt.NamespaceObjectFor(f.ESM()))
		ms.cjs[f] = mod
		return mod, nil
	}
	exports := rt.NewObject()
	_ = mod.Set("exports", exports)
	ms.cjs[f] = mod
	wrapper, err := rt.RunProgram(f.CommonJS())
	if err != nil {
		return nil, err
	}
	call, ok := sobek.AssertFunction(wrapper)
	if !ok {
		return nil, fmt.Errorf("module %s did not compile to a function", f.Key())
	}
	if _, err := call(sobek.Undefined(), mod, exports); err != nil {
		delete(ms.cjs, f)
		return nil, err
	}
	return mod, nil
}

// importDynamically starts an import() expression: the module is loaded
// (once per test) at once, and the import finishes from the event loop,
// as sobek requires.
func (ms *moduleSystem) importDynamically(referrer any, specifier sobek.Value, payload any) {
	rt := ms.vu.Runtime()
	s := ms.vu.script()
	spec := specifier.String()
	var base *url.URL
	if rec, ok := referrer.(sobek.ModuleRecord); ok {
		base = s.loader.URLOf(rec)
	}
	if base == nil {
		base = callerURL(rt)
	}
	ref, err := s.loader.Resolve(base, spec)
	cb := ms.vu.RegisterCallback()
	cb(func() error {
		var rec sobek.ModuleRecord
		var reason any
		if err == nil {
			rec, err = s.loader.DynamicRecord(ref)
		}
		if err != nil {
			reason = rt.NewGoError(errors.New(s.describe(err)))
		}
		return ms.topLevel(func() {
			rt.FinishLoadingImportModule(referrer, specifier, payload, rec, reason)
		})
	})
}

// topLevel runs f as if JavaScript had called it, so that the promise jobs
// it queues run before topLevel returns, with the VU findable from its
// runtime for the modules that f evaluates.
func (ms *moduleSystem) topLevel(f func()) error {
	rt := ms.vu.Runtime()
	s := ms.vu.script()
	if ms.callGo == nil {
		ms.callGo, _ = sobek.AssertFunction(rt.ToValue(func(sobek.FunctionCall) sobek.Value {
			ms.goFn()
			return sobek.Undefined()
		}))
	}
	ms.goFn = f
	s.vus.Store(rt, ms)
	_, err := ms.callGo(sobek.Undefined())
	s.vus.Delete(rt)
	ms.goFn = nil
	return err
}

// initArg returns the first argument of fn, a function of the init
// context (open, require), and throws when it is called outside it.
func (ms *moduleSystem) initArg(call sobek.FunctionCall, fn string) string {
	arg := call.Argument(0).String()
	if ms.vu.InitEnv() == nil {
		jsmod.Throwf(ms.vu.Runtime(), "%s(%q) can only be called in the init context", fn, arg)
	}
	return arg
}

// open reads a file in the init context, relative to the calling module's
// folder: a string, or an ArrayBuffer with mode "b". A file:// URL names a
// local path, as in k6.
func (ms *moduleSystem) open(call sobek.FunctionCall) sobek.Value {
	rt := ms.vu.Runtime()
	s := ms.vu.script()
	name := ms.initArg(call, "open")
	mode := ""
	if m := call.Argument(1); !sobek.IsUndefined(m) && !sobek.IsNull(m) {
		mode = m.String()
	}
	path := modules.LocalPath(name)
	if !filepath.IsAbs(path) {
		base := s.dir
		if u := callerURL(rt); u != nil {
			if u.Scheme != "file" {
				jsmod.Throwf(rt, "open(%q): a module loaded from %s cannot open local files by a relative path", name, u)
			}
			base = filepath.Dir(filepath.FromSlash(u.Path))
		}
		path = filepath.Join(base, path)
	}
	content, err := s.loader.ReadOpened(path)
	if err != nil {
		jsmod.Throwf(rt, "open(%q): %v", name, err)
	}
	if mode == "b" {
		return rt.ToValue(rt.NewArrayBuffer([]byte(content)))
	}
	return rt.ToValue(content)
}

// require loads a module in the init context: a Go module's default
// export (with its named ones beside it when it has both), a CommonJS
// module's module.exports or an ES module's namespace.
func (ms *moduleSystem) require(call sobek.FunctionCall) sobek.Value {
	rt := ms.vu.Runtime()
	s := ms.vu.script()
	spec := ms.initArg(call, "require")
	ref, err := s.loader.Resolve(callerURL(rt), spec)
	if err != nil {
		jsmod.Throwf(rt, "%s", s.describe(err))
	}
	switch m := ref.(type) {
	case *compile.GoModule:
		inst, err := ms.goInstance(m)
		if err != nil {
			jsmod.Throwf(rt, "%v", err)
		}
		def := inst.GetBindingValue("default")
		if !inst.ownDef || len(m.Named()) == 0 {
			return def
		}
		// As k6 does for a Go module with a default export of its own
		// and named ones: an object of the named ones, with the default
		// one under "default" and __esModule for Babel's interop.
		o := rt.NewObject()
		for _, name := range m.Named() {
			_ = o.Set(name, inst.GetBindingValue(name))
		}
		_ = o.Set("default", def)
		_ = o.Set("__esModule", true)
		return o
	case *compile.Module:
		mod, err := ms.commonJS(m)
		if err != nil {
			if ex, ok := err.(*sobek.Exception); ok {
				panic(ex.Value())
			}
			jsmod.Throwf(rt, "%s", s.describe(err))
		}
		return mod.Get("exports")
	}
	return sobek.Undefined()
}

// callerURL is the URL of the module whose code called the Go function
// running in rt, nil when unknown.
func callerURL(rt *sobek.Runtime) *url.URL {
	var buf [8]sobek.StackFrame
	for _, f := range rt.CaptureCallStack(len(buf), buf[:0]) {
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
