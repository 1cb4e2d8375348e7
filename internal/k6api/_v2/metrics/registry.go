package metrics

import (
	"fmt"
	"sync"

	mm "github.com/metronome-load/metronome/metrics"
)

// Registry makes and finds metrics. Over a run's registry (every
// InitEnvironment and lib.State of the run has the same one) its metrics
// are the run's.
type Registry struct {
	r  *mm.Registry
	mu sync.Mutex
	// ours are the metrics handed out, by metronome's metric, so that a
	// name gives the same pointer every time.
	ours map[*mm.Metric]*Metric
}

// registries are the Registries over metronome's, one each.
var registries sync.Map // *mm.Registry → *Registry

// NewRegistry returns a registry of its own, outside any run.
func NewRegistry() *Registry { return registryOf(mm.NewRegistry()) }

func registryOf(r *mm.Registry) *Registry {
	if reg, ok := registries.Load(r); ok {
		return reg.(*Registry)
	}
	reg, _ := registries.LoadOrStore(r, &Registry{r: r, ours: map[*mm.Metric]*Metric{}})
	return reg.(*Registry)
}

var metronomeTypes = [...]mm.Type{Counter: mm.Counter, Gauge: mm.Gauge, Trend: mm.Trend, Rate: mm.Rate}

var metronomeValueTypes = [...]mm.ValueType{Default: mm.Default, Time: mm.Time, Data: mm.Data}

// badNameWarning is k6's explanation of its metric names.
const badNameWarning = "Metric names must only include up to 128 ASCII letters, numbers, or underscores " +
	"and start with a letter or an underscore."

// NewMetric defines a metric, or returns the one of that name when it
// has the same type (and value type, when t gives one).
func (r *Registry) NewMetric(name string, typ MetricType, t ...ValueType) (*Metric, error) {
	if !mm.ValidName(name) {
		return nil, fmt.Errorf("Invalid metric name: '%s'. %s", name, badNameWarning) //nolint:staticcheck // k6's words
	}
	if typ < 0 || int(typ) >= len(metronomeTypes) {
		return nil, ErrInvalidMetricType
	}
	vt := Default
	if len(t) > 0 {
		vt = t[0]
		if vt < 0 || int(vt) >= len(metronomeValueTypes) {
			return nil, ErrInvalidValueType
		}
	}
	if old := r.Get(name); old != nil {
		if old.Type != typ {
			return nil, fmt.Errorf("metric '%s' already exists but with type %s, instead of %s", name, old.Type, typ)
		}
		if len(t) > 0 && old.Contains != vt {
			return nil, fmt.Errorf("metric '%s' already exists but with a value type %s, instead of %s", name, old.Contains, vt)
		}
		return old, nil
	}
	m, err := r.r.New(name, metronomeTypes[typ], metronomeValueTypes[vt])
	if err != nil {
		return nil, err
	}
	return r.wrap(m), nil
}

// MustNewMetric is NewMetric that panics on error.
func (r *Registry) MustNewMetric(name string, typ MetricType, t ...ValueType) *Metric {
	m, err := r.NewMetric(name, typ, t...)
	if err != nil {
		panic(err)
	}
	return m
}

// Get returns the metric named name, nil when there is none.
func (r *Registry) Get(name string) *Metric {
	if m := r.r.Get(name); m != nil {
		return r.wrap(m)
	}
	return nil
}

// All returns every metric of the registry, nil when it has none.
func (r *Registry) All() []*Metric {
	all := r.r.All()
	if len(all) == 0 {
		return nil
	}
	out := make([]*Metric, len(all))
	for i, m := range all {
		out[i] = r.wrap(m)
	}
	return out
}

// RootTagSet is the empty tag set every other one grows from.
func (r *Registry) RootTagSet() *TagSet { return (*TagSet)(mm.EmptyTags) }

// wrap returns the Metric over metronome's m, the same one every time.
func (r *Registry) wrap(m *mm.Metric) *Metric {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w, ok := r.ours[m]; ok {
		return w
	}
	w := &Metric{Name: m.Name, Type: k6Type(m.Type), Contains: k6ValueType(m.Contains), m: m, registry: r.r}
	r.ours[m] = w
	return w
}

func k6Type(t mm.Type) MetricType {
	for i, mt := range metronomeTypes {
		if mt == t {
			return MetricType(i)
		}
	}
	return -1
}

func k6ValueType(t mm.ValueType) ValueType {
	for i, vt := range metronomeValueTypes {
		if vt == t {
			return ValueType(i)
		}
	}
	return Default
}
