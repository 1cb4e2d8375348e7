package js

import (
	"slices"
	"sort"
	"strings"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/internal/logsink"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
)

// installGlobals defines what every runtime offers besides the language:
// console, open, require, timers, __ENV, __VU, __ITER and global. They live on a
// dynamic object placed as the global object's prototype, which makes each
// function only when a script first uses it: most VUs of most scripts
// never touch most of them, and a native function costs about half a
// kilobyte per runtime.
func (v *vu) installGlobals() {
	rt := v.rt
	rt.SetPromiseRejectionTracker(v.loop.trackRejection)
	v.env = &envObject{v: v}
	g := rt.GlobalObject()
	_ = g.SetPrototype(rt.NewDynamicObject(&globals{v: v}))
}

// globalNames are the names globals provides.
var globalNames = []string{
	"console", "open", "require", "setTimeout", "setInterval", "clearTimeout", "clearInterval",
	"__ENV", "__VU", "__ITER", "global",
}

// globals makes the runtime's globals on first use. Assigning to one
// replaces it for this VU.
type globals struct {
	v     *vu
	cache map[string]sobek.Value
}

func (g *globals) Get(key string) sobek.Value {
	if val, ok := g.cache[key]; ok {
		return val
	}
	v := g.v
	rt := v.rt
	var val sobek.Value
	switch key {
	case "__VU":
		return rt.ToValue(v.ID())
	case "__ITER":
		return rt.ToValue(v.iter)
	case "console":
		val = rt.NewDynamicObject(&console{v: v})
	case "open":
		val = rt.ToValue(v.open)
	case "require":
		val = rt.ToValue(v.require)
	case "setTimeout":
		val = rt.ToValue(func(c sobek.FunctionCall) sobek.Value { return v.loop.setTimer(rt, c, false) })
	case "setInterval":
		val = rt.ToValue(func(c sobek.FunctionCall) sobek.Value { return v.loop.setTimer(rt, c, true) })
	case "clearTimeout", "clearInterval":
		val = rt.ToValue(v.loop.clearTimer)
	case "__ENV":
		val = rt.NewDynamicObject(v.env)
	case "global":
		// k6's name for the global object, which bundles made for Node
		// use (k6chaijs 4.3.4.2).
		val = rt.GlobalObject()
	default:
		m, ok := modules.LookupGlobal(key)
		if !ok {
			return nil
		}
		val = g.module(key, m)
	}
	g.set(key, val)
	return val
}

func (g *globals) set(key string, val sobek.Value) {
	if g.cache == nil {
		g.cache = make(map[string]sobek.Value, 4)
	}
	g.cache[key] = val
}

func (g *globals) Set(key string, val sobek.Value) bool {
	g.set(key, val)
	return true
}

func (g *globals) Has(key string) bool {
	if val, ok := g.cache[key]; ok {
		return val != nil
	}
	for _, n := range globalNames {
		if n == key {
			return true
		}
	}
	_, ok := modules.LookupGlobal(key)
	return ok
}

func (g *globals) Delete(key string) bool {
	g.set(key, nil)
	return true
}

func (g *globals) Keys() []string {
	var keys []string
	for _, n := range globalNames {
		if g.Has(n) {
			keys = append(keys, n)
		}
	}
	registered := modules.GlobalNames()
	for _, n := range registered {
		if g.Has(n) {
			keys = append(keys, n)
		}
	}
	for k, val := range g.cache {
		if val != nil && !slices.Contains(globalNames, k) && !slices.Contains(registered, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// module instantiates a module registered with modules.RegisterGlobal
// for the VU; its default export is the global.
func (g *globals) module(name string, m modules.Module) sobek.Value {
	ex, err := m.Instantiate(g.v)
	if err != nil {
		jsmod.ThrowGoError(g.v.rt, "global %s: %v", name, err)
	}
	return g.v.rt.ToValue(ex.Default)
}

// console is the console object; its methods are made on first use.
type console struct {
	v     *vu
	cache map[string]sobek.Value
}

var consoleLevels = map[string]logsink.Level{"log": logsink.Info, "info": logsink.Info, "warn": logsink.Warn, "error": logsink.Error, "debug": logsink.Debug}

func (c *console) Get(key string) sobek.Value {
	if val, ok := c.cache[key]; ok {
		return val
	}
	level, ok := consoleLevels[key]
	if !ok {
		return nil
	}
	val := c.v.rt.ToValue(c.write(level))
	if c.cache == nil {
		c.cache = map[string]sobek.Value{}
	}
	c.cache[key] = val
	return val
}

func (c *console) Set(key string, val sobek.Value) bool {
	if c.cache == nil {
		c.cache = map[string]sobek.Value{}
	}
	c.cache[key] = val
	return true
}

func (c *console) Has(key string) bool { return c.Get(key) != nil }

func (c *console) Delete(key string) bool {
	if c.cache == nil {
		c.cache = map[string]sobek.Value{}
	}
	c.cache[key] = nil
	return true
}

func (c *console) Keys() []string { return []string{"debug", "error", "info", "log", "warn"} }

// write returns the console method of a level, which writes its
// arguments as one line, each as consoleArg writes it.
func (c *console) write(level logsink.Level) func(sobek.FunctionCall) sobek.Value {
	v := c.v
	return func(call sobek.FunctionCall) sobek.Value {
		if level == logsink.Debug && !v.s.opts.Verbose {
			return sobek.Undefined()
		}
		var b strings.Builder
		for i, a := range call.Arguments {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(consoleArg(a))
		}
		v.s.writeLine(level, b.String(), "console")
		return sobek.Undefined()
	}
}

// envObject is __ENV: the run's environment, overlaid with the current
// scenario's env, plus what the script assigned. The maps it reads are
// shared by every VU, so a VU pays only for its own assignments and for
// the values it read.
type envObject struct {
	v       *vu
	overlay map[string]string
	own     map[string]sobek.Value // nil value: deleted
	// read are the values of the run's and the scenario's environment
	// this VU's script has read, made once: a script that reads
	// __ENV.BASE_URL in every iteration would otherwise convert the
	// string into a new JavaScript value (two allocations) each time.
	// Behind a pointer, the object stays in the 32-byte size class, and
	// a VU whose iterations never read __ENV pays nothing for it.
	read *[]envPair
}

// envPair is a variable of the environment and its JavaScript value.
type envPair struct {
	key string
	val sobek.Value
}

// maxEnvRead bounds what a VU remembers of the variables it read: a
// script that walks the whole environment keeps no copy of it.
const maxEnvRead = 16

// useScenario overlays the environment of sc (nil: none).
func (e *envObject) useScenario(sc *executor.Scenario) {
	e.overlay = nil
	if e.read != nil {
		*e.read = (*e.read)[:0]
	}
	if sc != nil {
		e.overlay = sc.Env
	}
}

// Get returns a variable, nil when unset.
func (e *envObject) Get(key string) sobek.Value {
	if v, ok := e.own[key]; ok {
		return v
	}
	if e.read != nil {
		for _, p := range *e.read {
			if p.key == key {
				return p.val
			}
		}
	}
	s, ok := e.overlay[key]
	if !ok {
		if s, ok = e.v.s.opts.Env[key]; !ok {
			return nil
		}
	}
	val := e.v.rt.ToValue(s)
	// Only what iterations read is kept: a read in the init context
	// happens once, and keeping it would cost every VU memory.
	if !e.v.running {
		return val
	}
	if e.read == nil {
		e.read = new([]envPair)
	}
	if len(*e.read) < maxEnvRead {
		*e.read = append(*e.read, envPair{key, val})
	}
	return val
}

// Set assigns a variable for this VU.
func (e *envObject) Set(key string, val sobek.Value) bool {
	if e.own == nil {
		e.own = map[string]sobek.Value{}
	}
	e.own[key] = val
	return true
}

// Has reports whether a variable is set.
func (e *envObject) Has(key string) bool { return e.Get(key) != nil }

// Delete unsets a variable for this VU.
func (e *envObject) Delete(key string) bool {
	if e.own == nil {
		e.own = map[string]sobek.Value{}
	}
	e.own[key] = nil
	return true
}

// Keys lists the variables, sorted.
func (e *envObject) Keys() []string {
	seen := map[string]bool{}
	var keys []string
	add := func(k string) {
		if !seen[k] && e.Get(k) != nil {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	for k := range e.v.s.opts.Env {
		add(k)
	}
	for k := range e.overlay {
		add(k)
	}
	for k := range e.own {
		add(k)
	}
	sort.Strings(keys)
	return keys
}
