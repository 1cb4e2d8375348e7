// Package counter is an example metronome extension, written the way a
// third-party Go module writes one: it imports only metronome's public
// packages and registers, from init functions, one extension of each kind:
//
//   - the JavaScript module "k6/x/counter": named counters that every VU of
//     the test shares, and a gauge that publishes their values as samples;
//   - the "pacing-vus" executor: a fixed number of VUs, each starting an
//     iteration on a fixed beat (constant pacing);
//   - the "counts" output (-o counts=FILE): at the end of the test, one
//     line per metric with the number of samples it received.
//
// A binary gets all three by importing this package for its side effects
// next to metronome's built-ins; see examples/extension/cmd/metronome-counter
// and docs/extensions.md.
package counter

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
	"github.com/metronome-load/metronome/metrics"
)

// ModuleName is the import path scripts use.
const ModuleName = "k6/x/counter"

// ValueMetric is the gauge record() adds samples to, tagged with the
// counter's name (counter=NAME).
const ValueMetric = "counter_value"

func init() { modules.Register(ModuleName, modules.ModuleFunc(instantiate)) }

// store holds the counters of one test run. It is built once through
// modules.Shared, so every VU of the run increments the same numbers.
type store struct {
	counters sync.Map // name → *atomic.Int64
}

// counter returns the counter called name, creating it at zero.
func (s *store) counter(name string) *atomic.Int64 {
	if c, ok := s.counters.Load(name); ok {
		return c.(*atomic.Int64)
	}
	c, _ := s.counters.LoadOrStore(name, new(atomic.Int64))
	return c.(*atomic.Int64)
}

// module is the module instance of one VU.
type module struct {
	vu    modules.VU
	store *store
	gauge *metrics.Metric
}

// instantiate builds the module for one VU. It runs in the VU's init
// context, the only place where shared data and metric definitions are
// reachable.
func instantiate(vu modules.VU) (modules.Exports, error) {
	env := vu.InitEnv()
	if env == nil {
		return modules.Exports{}, fmt.Errorf("%s can only be imported in the init context", ModuleName)
	}
	shared, err := env.Shared.Get(ModuleName, func() (any, error) { return &store{}, nil })
	if err != nil {
		return modules.Exports{}, err
	}
	s, ok := shared.(*store)
	if !ok {
		return modules.Exports{}, fmt.Errorf("%s: the shared name %q holds a %T", ModuleName, ModuleName, shared)
	}
	gauge, err := env.Registry.New(ValueMetric, metrics.Gauge, metrics.Default)
	if err != nil {
		return modules.Exports{}, fmt.Errorf("%s: %v", ModuleName, err)
	}
	m := &module{vu: vu, store: s, gauge: gauge}
	return modules.Exports{Named: map[string]any{
		"incr":   m.incr,
		"get":    m.get,
		"record": m.record,
	}}, nil
}

// name reads the counter name every function takes first.
func (m *module) name(fn string, v sobek.Value) string {
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		jsmod.Throwf(m.vu.Runtime(), "counter.%s() needs a counter name as its first argument", fn)
	}
	s := v.String()
	if s == "" {
		jsmod.Throwf(m.vu.Runtime(), "counter.%s(): the counter name must not be empty", fn)
	}
	return s
}

// incr(name, by = 1) adds by to the counter and returns its new value. It
// works anywhere, the init context included.
func (m *module) incr(call sobek.FunctionCall) sobek.Value {
	rt := m.vu.Runtime()
	name := m.name("incr", call.Argument(0))
	by := int64(1)
	if arg := call.Argument(1); !sobek.IsUndefined(arg) {
		f := arg.ToFloat()
		if math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			jsmod.Throwf(rt, "counter.incr(%q, %s): the step must be a whole number", name, arg.String())
		}
		by = int64(f)
	}
	return rt.ToValue(m.store.counter(name).Add(by))
}

// get(name) returns the counter's value; a counter never incremented is 0.
func (m *module) get(call sobek.FunctionCall) sobek.Value {
	name := m.name("get", call.Argument(0))
	return m.vu.Runtime().ToValue(m.store.counter(name).Load())
}

// record(name, tags?) adds the counter's current value as a sample of the
// counter_value gauge, with the VU's current tags, counter=name and tags,
// and returns the value. Samples go through modules.State, so record() is
// for VU code (exec functions, setup and teardown), not the init context.
func (m *module) record(call sobek.FunctionCall) sobek.Value {
	rt := m.vu.Runtime()
	name := m.name("record", call.Argument(0))
	st := m.vu.State()
	if st == nil {
		jsmod.Throwf(rt, "counter.record(%q) adds a sample, which VU code can do but the init context cannot", name)
	}
	v := m.store.counter(name).Load()
	tags := st.Tags
	if tags == nil {
		tags = metrics.EmptyTags
	}
	tags = tags.With("counter", name)
	if t, ok := call.Argument(1).(*sobek.Object); ok {
		for _, k := range t.Keys() {
			tags = tags.With(k, t.Get(k).String())
		}
	}
	st.Recorder.Record(metrics.Sample{Metric: m.gauge, Tags: tags, Time: time.Now(), Value: float64(v)})
	return rt.ToValue(v)
}
