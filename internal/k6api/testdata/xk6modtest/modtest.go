// Package modtest is a k6 extension as small as one can be that emits a
// sample and returns a promise: what its own test (modtest_test.go) does
// with js/modulestest is what an extension's author writes, and
// TestModulesTestRuntime runs that test against metronome's layer.
package modtest

import (
	"time"

	"github.com/grafana/sobek"

	"go.k6.io/k6/v2/js/modules"
	"go.k6.io/k6/v2/js/promises"
	"go.k6.io/k6/v2/metrics"
)

func init() { modules.Register("k6/x/modtest", New()) }

// RootModule makes the per-VU instances.
type RootModule struct{}

// New returns the root module.
func New() *RootModule { return &RootModule{} }

// Instance is the module in one VU; adds is its counter.
type Instance struct {
	vu   modules.VU
	adds *metrics.Metric
}

// NewModuleInstance registers the counter modtest_adds in the VU's registry.
func (*RootModule) NewModuleInstance(vu modules.VU) modules.Instance {
	return &Instance{vu: vu, adds: vu.InitEnv().Registry.MustNewMetric("modtest_adds", metrics.Counter)}
}

// Exports has add as the default export's only method.
func (m *Instance) Exports() modules.Exports {
	return modules.Exports{Default: map[string]any{"add": m.add}}
}

// add counts n in modtest_adds and returns a promise that a goroutine of
// its own resolves with twice n.
func (m *Instance) add(n int64) *sobek.Promise {
	st := m.vu.State()
	metrics.PushIfNotDone(m.vu.Context(), st.Samples, metrics.Sample{
		TimeSeries: metrics.TimeSeries{Metric: m.adds, Tags: st.Tags.GetCurrentValues().Tags.With("op", "add")},
		Time:       time.Now(),
		Value:      float64(n),
	})
	p, resolve, _ := promises.New(m.vu)
	go func() { resolve(2 * n) }()
	return p
}
