// Package metrics implements the "k6/metrics" module: the constructors of
// custom metrics, Counter, Gauge, Rate and Trend.
package metrics

import (
	"math"
	"reflect"
	"time"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
	"github.com/metronome-load/metronome/metrics"
)

func init() {
	modules.Register("k6/metrics", modules.ModuleFunc(New))
}

// New instantiates the module for one VU.
func New(vu modules.VU) (modules.Exports, error) {
	m := &module{vu: vu}
	return modules.Exports{Named: map[string]any{
		"Counter": m.constructor(metrics.Counter),
		"Gauge":   m.constructor(metrics.Gauge),
		"Rate":    m.constructor(metrics.Rate),
		"Trend":   m.constructor(metrics.Trend),
	}}, nil
}

type module struct {
	vu  modules.VU
	add sobek.Value
}

func typeName(t metrics.Type) string {
	switch t {
	case metrics.Counter:
		return "Counter"
	case metrics.Gauge:
		return "Gauge"
	case metrics.Rate:
		return "Rate"
	}
	return "Trend"
}

// constructor returns the JavaScript constructor of one metric type:
// new Trend(name, isTime?). Metrics can only be declared in the init
// context, where they are defined in the run's registry. An instance is a
// small Go-backed object whose add method is shared by all the VU's
// metrics.
func (m *module) constructor(t metrics.Type) func(sobek.ConstructorCall) *sobek.Object {
	return func(call sobek.ConstructorCall) *sobek.Object {
		rt := m.vu.Runtime()
		env := m.vu.InitEnv()
		name := call.Argument(0).String()
		if env == nil {
			jsmod.Throwf(rt, "new %s(%q): metrics can only be declared in the init context", typeName(t), name)
		}
		if !metrics.ValidName(name) {
			jsmod.Throwf(rt, "new %s(%q): invalid metric name: a name starts with a letter or '_' and has 2 to 129 letters, digits or '_'", typeName(t), name)
		}
		contains := metrics.Default
		if call.Argument(1).ToBoolean() {
			contains = metrics.Time
		}
		def, err := env.Registry.New(name, t, contains)
		if err != nil {
			jsmod.Throwf(rt, "new %s(%q): %v", typeName(t), name, err)
		}
		return rt.NewDynamicObject(&metric{m: m, def: def})
	}
}

// metric is one custom metric object: name and add.
type metric struct {
	m   *module
	def *metrics.Metric
}

func (mt *metric) Get(key string) sobek.Value {
	switch key {
	case "name":
		return mt.m.vu.Runtime().ToValue(mt.def.Name)
	case "add":
		return mt.m.addFunc()
	}
	return nil
}

func (mt *metric) Set(key string, _ sobek.Value) bool {
	jsmod.Throwf(mt.m.vu.Runtime(), "%s.%s cannot be assigned", mt.def.Name, key)
	return false
}

func (mt *metric) Has(key string) bool { return key == "name" || key == "add" }
func (mt *metric) Delete(string) bool  { return false }
func (mt *metric) Keys() []string      { return []string{"name"} }

var typeBool = reflect.TypeOf(true)

// addFunc is the add method every metric object of the VU shares.
func (m *module) addFunc() sobek.Value {
	if m.add == nil {
		m.add = m.vu.Runtime().ToValue(m.addSample)
	}
	return m.add
}

// addSample is metric.add(value, tags?): it records one sample with the
// current tags plus tags. Booleans count as 1 and 0; a value that is not
// a number is refused with a warning, and add returns false.
func (m *module) addSample(call sobek.FunctionCall) sobek.Value {
	rt := m.vu.Runtime()
	mt, ok := call.This.Export().(*metric)
	if !ok {
		jsmod.ThrowTypeError(rt, "add() must be called as a method of a metric")
	}
	st := m.vu.State()
	if st == nil {
		jsmod.Throwf(rt, "%s.add(): metrics can only be added to in VU code, not in the init context", mt.def.Name)
	}
	arg := call.Argument(0)
	var v float64
	switch {
	case sobek.IsUndefined(arg) || sobek.IsNull(arg):
		v = math.NaN()
	case arg.ExportType() == typeBool:
		if arg.ToBoolean() {
			v = 1
		}
	default:
		v = arg.ToFloat()
	}
	if math.IsNaN(v) {
		if st.Logf != nil {
			st.Logf("%s.add(%s): the value is not a number; no sample was recorded", mt.def.Name, arg.String())
		}
		return rt.ToValue(false)
	}
	tags := st.Tags
	if t, ok := call.Argument(1).(*sobek.Object); ok {
		for _, k := range t.Keys() {
			tags = tags.With(k, t.Get(k).String())
		}
	}
	st.Recorder.Record(metrics.Sample{Metric: mt.def, Tags: tags, Time: time.Now(), Value: v})
	return rt.ToValue(true)
}
