package prometheus

import (
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/metrics"
)

// The generator's health and a capacity search reach Prometheus like any
// metric: per-interval trends as stat series (time ones in seconds),
// generator_limited as the share of limited intervals, and the found rate
// per scenario.
func TestHealthAndCapacitySeries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := metrics.RegisterBuiltin(metrics.NewRegistry())
		srv := &fakeServer{}
		o, _ := newTestOutput(t, map[string]string{"K6_PROMETHEUS_RW_TREND_STATS": "p(99),max"}, srv)
		if err := o.Start(); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		var batch []metrics.Sample
		for i, cpu := range []float64{0.2, 0.95, 0.4, 0.3} {
			at := now.Add(time.Duration(i+1) * time.Second)
			limited := 0.0
			if cpu > 0.9 {
				limited = 1
			}
			batch = append(batch,
				metrics.Sample{Metric: b.GeneratorCPU, Tags: metrics.EmptyTags, Time: at, Value: cpu},
				metrics.Sample{Metric: b.GeneratorSchedLatency, Tags: metrics.EmptyTags, Time: at, Value: 2 * cpu},
				metrics.Sample{Metric: b.GeneratorLimited, Tags: metrics.EmptyTags, Time: at, Value: limited})
		}
		batch = append(batch, metrics.Sample{Metric: b.CapacitySearchRate,
			Tags: metrics.NewTags(map[string]string{"scenario": "search"}), Time: now.Add(5 * time.Second), Value: 402})
		o.AddSamples(batch)
		if err := o.Stop(); err != nil {
			t.Fatal(err)
		}
		got := srv.received()
		for key, want := range map[string]float64{
			"k6_generator_cpu_max{}":                     0.95,
			"k6_generator_sched_latency_max{}":           0.0019,
			"k6_generator_limited_rate{}":                0.25,
			`k6_capacity_search_rate{scenario="search"}`: 402,
		} {
			if p := last(t, got, key); math.Abs(p.v-want) > 1e-9 {
				t.Errorf("%s = %g, want %g", key, p.v, want)
			}
		}
	})
}
