package metrics

import (
	"fmt"
	"sort"
	"sync"
)

// Registry holds every metric definition of a test run. It is safe for
// concurrent use; lookups on the hot path should hold on to the *Metric.
type Registry struct {
	mu     sync.RWMutex
	byName map[string]*Metric
	list   []*Metric
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byName: make(map[string]*Metric)}
}

// New defines a metric, or returns the existing one when name is already
// defined with the same type and value type.
func (r *Registry) New(name string, t Type, contains ValueType) (*Metric, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m, ok := r.byName[name]; ok {
		if m.Type != t {
			return nil, fmt.Errorf("metric %q is already defined as a %s, not a %s", name, m.Type, t)
		}
		if m.Contains != contains && contains != Default {
			return nil, fmt.Errorf("metric %q is already defined with %s values", name, m.Contains)
		}
		return m, nil
	}
	m := &Metric{Name: name, Type: t, Contains: contains, ID: len(r.list)}
	r.byName[name] = m
	r.list = append(r.list, m)
	return m, nil
}

// Def is one metric for NewAll to define, and where to keep it.
type Def struct {
	To       **Metric
	Name     string
	Type     Type
	Contains ValueType
}

// NewAll defines each of defs with New and stores it in its To: a
// module's metrics in one table.
func (r *Registry) NewAll(defs ...Def) error {
	for _, d := range defs {
		m, err := r.New(d.Name, d.Type, d.Contains)
		if err != nil {
			return err
		}
		*d.To = m
	}
	return nil
}

// MustNew is New for definitions that cannot conflict (the built-ins).
func (r *Registry) MustNew(name string, t Type, contains ValueType) *Metric {
	m, err := r.New(name, t, contains)
	if err != nil {
		panic(err)
	}
	return m
}

// Get returns the metric named name, or nil.
func (r *Registry) Get(name string) *Metric {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byName[name]
}

// All returns every defined metric in definition order.
func (r *Registry) All() []*Metric {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]*Metric(nil), r.list...)
}

// Len returns the number of defined metrics.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.list)
}

// Names returns the defined metric names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.list))
	for _, m := range r.list {
		names = append(names, m.Name)
	}
	sort.Strings(names)
	return names
}
