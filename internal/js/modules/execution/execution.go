// Package execution implements the "k6/execution" module: what a script
// can learn about the scenario, the instance, its VU and the test while it
// runs, and exec.test.abort() and exec.test.fail().
//
// metronome adds exec.scenario.intendedStartTime: the intended start time
// of the current iteration of an open-model scenario, in milliseconds
// since the Unix epoch (a float); undefined for closed-model scenarios,
// whose iterations have no intended time. Comparing it with Date.now()
// tells how late the iteration started (its schedule_lag).
package execution

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
	"github.com/metronome-load/metronome/metrics"
)

func init() {
	modules.Register("k6/execution", modules.ModuleFunc(New))
}

// New instantiates the module for one VU. The objects it exports are
// views: every property is read from the VU's state when accessed, and
// functions are made on first use.
func New(vu modules.VU) (modules.Exports, error) {
	rt := vu.Runtime()
	m := &module{vu: vu}
	return modules.Exports{Named: map[string]any{
		"scenario": rt.NewDynamicObject(&view{m: m, what: "exec.scenario", keys: scenarioKeys, get: m.scenario}),
		"instance": rt.NewDynamicObject(&view{m: m, what: "exec.instance", keys: instanceKeys, get: m.instance}),
		"vu":       rt.NewDynamicObject(&view{m: m, what: "exec.vu", keys: vuKeys, get: m.vuInfo}),
		"test":     rt.NewDynamicObject(&testObject{m: m}),
	}}, nil
}

type module struct {
	vu        modules.VU
	vuTags    *sobek.Object
	vuMetrics *sobek.Object
	metadata  map[string]string // exec.vu.metrics.metadata, see metadataView
	abortFn   sobek.Value
	failFn    sobek.Value

	optsFor  *config.Options
	optsJSON []byte
}

func (m *module) state(what string) *modules.State {
	st := m.vu.State()
	if st == nil {
		jsmod.ThrowGoError(m.vu.Runtime(), "%s is not available in the init context", what)
	}
	return st
}

// view is a read-only object whose properties come from get.
type view struct {
	m    *module
	what string
	keys []string
	get  func(st *modules.State, key string) sobek.Value
}

func (v *view) Get(key string) sobek.Value {
	if !v.Has(key) {
		return nil
	}
	return v.get(v.m.state(v.what), key)
}

func (v *view) Set(key string, _ sobek.Value) bool {
	jsmod.Throwf(v.m.vu.Runtime(), "%s.%s is read-only", v.what, key)
	return false
}

func (v *view) Has(key string) bool {
	for _, k := range v.keys {
		if k == key {
			return true
		}
	}
	return false
}

func (v *view) Delete(string) bool { return false }
func (v *view) Keys() []string     { return v.keys }

var scenarioKeys = []string{"name", "executor", "startTime", "progress", "iterationInInstance", "iterationInTest", "intendedStartTime"}

func msSinceEpoch(t time.Time) float64 { return float64(t.UnixNano()) / 1e6 }

func (m *module) scenario(st *modules.State, key string) sobek.Value {
	rt := m.vu.Runtime()
	sc := st.Current.Scenario
	if sc == nil {
		jsmod.ThrowGoError(rt, "exec.scenario is only available in scenario code, not in setup() or teardown()")
	}
	switch key {
	case "name":
		return rt.ToValue(sc.Name)
	case "executor":
		return rt.ToValue(sc.Executor)
	case "startTime":
		if st.Execution == nil || st.Execution.Start.IsZero() {
			return rt.ToValue(0)
		}
		// Whole milliseconds, as k6 gives it.
		return rt.ToValue(st.Execution.Start.Add(sc.StartTime).UnixMilli())
	case "progress":
		if st.Progress == nil {
			return rt.ToValue(0)
		}
		return rt.ToValue(st.Progress())
	case "iterationInInstance":
		return rt.ToValue(st.Current.LocalIndex)
	case "iterationInTest":
		return rt.ToValue(st.Current.Index)
	case "intendedStartTime":
		if st.Current.Intended.IsZero() {
			return sobek.Undefined()
		}
		return rt.ToValue(msSinceEpoch(st.Current.Intended))
	}
	return nil
}

var instanceKeys = []string{"iterationsCompleted", "iterationsInterrupted", "vusActive", "vusInitialized", "currentTestRunDuration"}

func (m *module) instance(st *modules.State, key string) sobek.Value {
	rt := m.vu.Runtime()
	e := st.Execution
	if e == nil {
		return rt.ToValue(0)
	}
	switch key {
	case "iterationsCompleted":
		return rt.ToValue(e.IterationsCompleted.Load())
	case "iterationsInterrupted":
		return rt.ToValue(e.IterationsInterrupted.Load())
	case "vusActive":
		return rt.ToValue(e.VUsActive.Load())
	case "vusInitialized":
		return rt.ToValue(e.VUsInitialized.Load())
	case "currentTestRunDuration":
		if e.RunStart.IsZero() {
			return rt.ToValue(0)
		}
		return rt.ToValue(float64(time.Since(e.RunStart)) / float64(time.Millisecond))
	}
	return nil
}

var vuKeys = []string{"idInInstance", "idInTest", "iterationInInstance", "iterationInScenario", "tags", "metrics"}

func (m *module) vuInfo(st *modules.State, key string) sobek.Value {
	rt := m.vu.Runtime()
	switch key {
	case "idInInstance":
		return rt.ToValue(st.VUID)
	case "idInTest":
		return rt.ToValue(st.VUIDInTest)
	case "iterationInInstance":
		return rt.ToValue(st.Iteration)
	case "iterationInScenario":
		return rt.ToValue(st.IterationInScenario)
	case "tags":
		return m.tags()
	case "metrics":
		if m.vuMetrics == nil {
			m.vuMetrics = rt.NewObject()
			_ = m.vuMetrics.Set("tags", m.tags())
			_ = m.vuMetrics.Set("metadata", rt.NewDynamicObject(&metadataView{m: m}))
		}
		return m.vuMetrics
	}
	return nil
}

func (m *module) tags() *sobek.Object {
	if m.vuTags == nil {
		m.vuTags = m.vu.Runtime().NewDynamicObject(&tagsView{m: m})
	}
	return m.vuTags
}

// testObject is exec.test: abort, fail and options.
type testObject struct{ m *module }

func (t *testObject) Get(key string) sobek.Value {
	m := t.m
	rt := m.vu.Runtime()
	switch key {
	case "abort":
		if m.abortFn == nil {
			m.abortFn = rt.ToValue(m.abort)
		}
		return m.abortFn
	case "fail":
		if m.failFn == nil {
			m.failFn = rt.ToValue(m.fail)
		}
		return m.failFn
	case "options":
		return m.options()
	}
	return nil
}

func (t *testObject) Set(key string, _ sobek.Value) bool {
	jsmod.Throwf(t.m.vu.Runtime(), "exec.test.%s is read-only", key)
	return false
}

func (t *testObject) Has(key string) bool {
	return key == "abort" || key == "fail" || key == "options"
}

func (t *testObject) Delete(string) bool { return false }
func (t *testObject) Keys() []string     { return []string{"abort", "fail", "options"} }

// tagsView is exec.vu.tags: the tags of the samples the VU emits from now
// on. Assigning a tag adds it to them (for the rest of the VU's life in
// the scenario); deleting removes it.
type tagsView struct{ m *module }

func (t *tagsView) Get(key string) sobek.Value {
	st := t.m.state("exec.vu.tags")
	if v, ok := st.Tags.Get(key); ok {
		return t.m.vu.Runtime().ToValue(v)
	}
	return nil
}

func (t *tagsView) Set(key string, val sobek.Value) bool {
	st := t.m.state("exec.vu.tags")
	rt := t.m.vu.Runtime()
	if _, isObj := val.(*sobek.Object); isObj || sobek.IsUndefined(val) || sobek.IsNull(val) {
		jsmod.Throwf(rt, "exec.vu.tags[%q]: a tag value must be a string, number or boolean", key)
	}
	st.Tags = st.Tags.With(key, val.String())
	return true
}

func (t *tagsView) Has(key string) bool {
	_, ok := t.m.state("exec.vu.tags").Tags.Get(key)
	return ok
}

func (t *tagsView) Delete(key string) bool {
	st := t.m.state("exec.vu.tags")
	st.Tags = st.Tags.Without(key)
	return true
}

func (t *tagsView) Keys() []string {
	st := t.m.state("exec.vu.tags")
	keys := make([]string, 0, st.Tags.Len())
	st.Tags.Range(func(k, _ string) bool {
		keys = append(keys, k)
		return true
	})
	return keys
}

// metadataView is exec.vu.metrics.metadata: values, such as a trace id,
// that the samples the VU records from now on carry without being tagged
// by them (the JSON output shows them as "metadata"). Each change makes a
// new map, which the VU's recorder stamps on its samples; a recorder that
// cannot (a test's) leaves them bare.
type metadataView struct{ m *module }

func (v *metadataView) set(st *modules.State, meta map[string]string) {
	v.m.metadata = meta
	st.Metadata = meta
	if r, ok := st.Recorder.(metrics.MetadataSetter); ok {
		r.SetMetadata(meta)
	}
}

func (v *metadataView) Get(key string) sobek.Value {
	v.m.state("exec.vu.metrics.metadata")
	if val, ok := v.m.metadata[key]; ok {
		return v.m.vu.Runtime().ToValue(val)
	}
	return nil
}

func (v *metadataView) Set(key string, val sobek.Value) bool {
	st := v.m.state("exec.vu.metrics.metadata")
	if _, isObj := val.(*sobek.Object); isObj || sobek.IsUndefined(val) || sobek.IsNull(val) {
		jsmod.Throwf(v.m.vu.Runtime(), "exec.vu.metrics.metadata[%q]: a metadata value must be a string, number or boolean", key)
	}
	meta := maps.Clone(v.m.metadata)
	if meta == nil {
		meta = map[string]string{}
	}
	meta[key] = val.String()
	v.set(st, meta)
	return true
}

func (v *metadataView) Has(key string) bool {
	v.m.state("exec.vu.metrics.metadata")
	_, ok := v.m.metadata[key]
	return ok
}

func (v *metadataView) Delete(key string) bool {
	st := v.m.state("exec.vu.metrics.metadata")
	if _, ok := v.m.metadata[key]; ok {
		meta := maps.Clone(v.m.metadata)
		delete(meta, key)
		v.set(st, meta)
	}
	return true
}

func (v *metadataView) Keys() []string {
	v.m.state("exec.vu.metrics.metadata")
	return slices.Sorted(maps.Keys(v.m.metadata))
}

// abort stops the whole test at once (exit code 108); teardown and the
// summary still run.
func (m *module) abort(call sobek.FunctionCall) sobek.Value {
	st := m.vu.State()
	if st == nil {
		jsmod.Throwf(m.vu.Runtime(), "exec.test.abort() is not available in the init context; throw an error to stop the test there")
	}
	reason := ""
	if a := call.Argument(0); !sobek.IsUndefined(a) {
		reason = a.String()
	}
	st.Abort(reason)
	return sobek.Undefined()
}

// fail marks the test as failed (exit code 110) and lets it go on; each
// call logs k6's line, its reason after a colon when one is given, even
// an empty one.
func (m *module) fail(call sobek.FunctionCall) sobek.Value {
	st := m.state("exec.test.fail()")
	msg := "test marked as failed"
	if a := call.Argument(0); !sobek.IsUndefined(a) {
		msg += ": " + a.String()
	}
	if st.Fail != nil {
		st.Fail(msg)
	}
	return sobek.Undefined()
}

// options is exec.test.options: the consolidated options as a plain
// object, with the shortcut options (vus, duration, iterations, stages)
// turned into the scenarios they make, as in k6 (k6-utils'
// getCurrentStageIndex reads the stages there).
func (m *module) options() sobek.Value {
	st := m.state("exec.test.options")
	rt := m.vu.Runtime()
	if st.Options != m.optsFor || m.optsJSON == nil {
		o := config.Options{}
		if st.Options != nil {
			o = *st.Options
		}
		if sc, err := o.ResolveScenarios(); err == nil {
			o.Scenarios = sc
		}
		o.VUs, o.Duration, o.Iterations, o.Stages = nil, nil, nil, nil
		b, err := json.Marshal(&o)
		if err != nil {
			jsmod.Throwf(rt, "exec.test.options: %v", err)
		}
		m.optsFor, m.optsJSON = st.Options, b
	}
	parse, _ := sobek.AssertFunction(rt.Get("JSON").ToObject(rt).Get("parse"))
	v, err := parse(sobek.Undefined(), rt.ToValue(string(m.optsJSON)))
	if err != nil {
		panic(err)
	}
	return v
}
