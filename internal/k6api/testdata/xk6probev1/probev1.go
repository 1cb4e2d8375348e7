// Package probev1 is a test extension written against k6's extension API
// at go.k6.io/k6, the import path of k6 v0.x and v1.x: a plain Go value
// registered as a module, as xk6-ssh and xk6-mongo do, and a module that
// counts into a metric of its own through the VU's state.
package probev1

import (
	"time"

	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/lib"
	"go.k6.io/k6/metrics"
)

func init() {
	modules.Register("k6/x/probev1", &Plain{Version: "v1"})
	modules.Register("k6/x/probev1/count", new(counter))
}

// Plain is registered as it is: its fields and methods are the module's
// exports, named by k6's rule.
type Plain struct {
	Version    string
	MaxRetries int
}

// SayHello is sayHello to scripts.
func (p *Plain) SayHello(name string) string { return "hi " + name + " from " + p.Version }

// counter makes an instance per VU.
type counter struct{}

type instance struct {
	vu    modules.VU
	count *metrics.Metric
}

func (*counter) NewModuleInstance(vu modules.VU) modules.Instance {
	return &instance{vu: vu, count: vu.InitEnv().Registry.MustNewMetric("probev1_count", metrics.Counter)}
}

func (i *instance) Exports() modules.Exports {
	return modules.Exports{Default: map[string]any{"add": i.add}}
}

// add counts n into probev1_count with the VU's tags.
func (i *instance) add(n float64) bool {
	var st *lib.State = i.vu.State()
	return metrics.PushIfNotDone(i.vu.Context(), st.Samples, metrics.Sample{
		TimeSeries: metrics.TimeSeries{Metric: i.count, Tags: st.Tags.GetCurrentValues().Tags},
		Time:       time.Now(), Value: n,
	})
}
