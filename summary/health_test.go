package summary

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/metrics"
)

// The generator's health has a section of its own, after the accounts, and
// its metrics are listed only in the full summary.
func TestTextHealth(t *testing.T) {
	cpu := &metrics.Metric{Name: metrics.GeneratorCPUName, Type: metrics.Trend}
	in := &Input{
		Options: Options{NoColor: true, Mode: "compact"},
		Metrics: []Metric{{Name: cpu.Name, Metric: cpu, Sink: trendOf([]float64{0.2, 0.95})}},
		Health: &HealthReport{Interval: time.Second, Intervals: 60, Limited: 12, Procs: 1,
			Reasons:   []HealthReason{{"CPU-bound", 10}, {"late to start arrivals", 5}},
			CPUMedian: 0.5, CPUMax: 0.97, SchedP99Median: 0.2, SchedP99Max: 12, GCPauseMax: 1.5,
			Arrivals: 10000, LateWakeup: 150, LateForVU: 300},
	}
	text := Text(in)
	lineWith(t, text, "  █ GENERATOR HEALTH (per 1s interval)")
	lineWith(t, text, "    intervals......: 60, 12 in which the generator may have inflated latency (CPU-bound 10, late to start arrivals 5)")
	lineWith(t, text, "    cpu............: median 50%, max 97% of 1 core")
	lineWith(t, text, "    sched p99......: median 200µs, max 12ms")
	lineWith(t, text, "    gc pauses......: at most 1.5ms in one interval")
	lineWith(t, text, "    late starts....: 1.50% the generator woke late, 3.00% waited for a VU (of 10000 arrivals)")
	if strings.Contains(text, "generator_cpu") {
		t.Error("the compact summary lists generator_cpu")
	}
	in.Options.Mode = "full"
	text = Text(in)
	lineWith(t, text, "    GENERATOR")
	lineWith(t, text, "    generator_cpu")

	in.Health.CPUMax, in.Health.Arrivals = math.NaN(), 0
	text = Text(in)
	lineWith(t, text, "    cpu............: n/a on this platform")
	if strings.Contains(text, "late starts") {
		t.Error("late starts shown without arrivals")
	}
	d := Data(in)["metronome"].(map[string]any)["health"].(map[string]any)
	if d["limited"] != int64(12) || d["cpuMax"] != nil || d["schedP99Max"] != 12.0 {
		t.Errorf("data health = %v", d)
	}
}

// A capacity search prints its verdict and a row per step; handleSummary's
// data has them all.
func TestTextCapacity(t *testing.T) {
	in := &Input{
		Options: Options{NoColor: true},
		Capacity: []CapacityReport{{Name: "api", Objective: "p(99)<50", Limit: "server", Capacity: 400, FailedAt: 412,
			Verdict: "capacity 400.00/s: the server's limit",
			Steps: []CapacityStep{
				{Rate: 400, Objective: 10, CorrectedP50: 10, CorrectedP99: 10, RawP50: 10, RawP99: 10, CPU: 0.05, SchedP99: 0.3, Verdict: "met"},
				{Rate: 412, Objective: 120, CorrectedP50: 60, CorrectedP99: 120, RawP50: 60, RawP99: 118, ErrorRate: 0.001, CPU: math.NaN(), SchedP99: 0.3, Verdict: "server", Why: "p99"},
			}}},
	}
	text := Text(in)
	lineWith(t, text, "  █ CAPACITY SEARCH (the highest rate whose corrected_latency met the objective)")
	lineWith(t, text, "    api (objective p(99)<50): capacity 400.00/s: the server's limit")
	lineWith(t, text, "      rate/s  corrected p50    p99  raw p50    p99  errors  generator cpu  sched p99  verdict")
	lineWith(t, text, "      400.00           10ms   10ms     10ms   10ms   0.00%             5%      300µs      met")
	lineWith(t, text, "      412.00           60ms  120ms     60ms  118ms   0.10%            n/a      300µs   server")
	caps := Data(in)["metronome"].(map[string]any)["capacity"].([]any)
	c := caps[0].(map[string]any)
	steps := c["steps"].([]any)
	if c["capacity"] != 400.0 || c["limit"] != "server" || len(steps) != 2 || steps[1].(map[string]any)["cpu"] != nil {
		t.Errorf("data capacity = %v", c)
	}
}
