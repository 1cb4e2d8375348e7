package engine

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/health"
	"github.com/metronome-load/metronome/summary"
)

// A run measures the generator once a second, on the vus gauge's tick:
// a 3 s scenario gives three intervals, each with its generator_*
// samples, and the summary accounts for them. A closed model has no
// arrivals, so no late shares.
func TestRunRecordsHealth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &fakeScript{work: 100 * time.Millisecond}
		err, out, export := runFake(t, context.Background(), s, `{
			"scenarios": {"main": {"executor": "constant-vus", "vus": 1, "duration": "3s", "gracefulStop": "0s"}},
			"summaryTrendStats": ["avg", "count"]
		}`, nil)
		if err != nil {
			t.Fatalf("run failed: %v\n%s", err, out)
		}
		for _, name := range []string{"generator_cpu", "generator_sched_latency", "generator_gc_pause"} {
			if got := metricValue(t, export, name, "count"); got != 3 {
				t.Errorf("%s has %v samples, want 3", name, got)
			}
		}
		m := export["metrics"].(map[string]any)
		if lim := m["generator_limited"].(map[string]any); lim["passes"].(float64)+lim["fails"].(float64) != 3 {
			t.Errorf("generator_limited = %v, want 3 intervals", lim)
		}
		if _, ok := m["generator_late_wakeup"]; ok {
			t.Error("a closed model recorded late shares")
		}
		if !strings.Contains(out, "GENERATOR HEALTH (per 1s interval)") || !strings.Contains(out, "intervals......: 3, ") {
			t.Errorf("summary lacks the health account:\n%s", out)
		}
	})
}

// The generator_* metrics take thresholds like any other: an interval's
// values are never negative, so of these only "max<0" fails, and the run
// ends with k6's exit code for failed thresholds.
func TestHealthThresholds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &fakeScript{work: 100 * time.Millisecond}
		err, out, export := runFake(t, context.Background(), s, `{
			"scenarios": {"main": {"executor": "constant-vus", "vus": 1, "duration": "3s", "gracefulStop": "0s"}},
			"thresholds": {"generator_sched_latency": ["p(99)>=0"], "generator_limited": ["rate<=1"],
				"generator_gc_pause": ["max<0"]}
		}`, nil)
		if exitcode.Of(err) != exitcode.ThresholdsFailed {
			t.Fatalf("run ended with %v, want failed thresholds\n%s", err, out)
		}
		// The export says whether each threshold failed.
		got := thresholds(export)
		for name, failed := range map[string]map[string]any{
			"generator_sched_latency": {"p(99)>=0": false},
			"generator_limited":       {"rate<=1": false},
			"generator_gc_pause":      {"max<0": true},
		} {
			if !reflect.DeepEqual(got[name], failed) {
				t.Errorf("%s's thresholds failed: %v, want %v", name, got[name], failed)
			}
		}
	})
}

// The warning counts the limited intervals and names each reason with
// its count when there are several.
func TestHealthWarning(t *testing.T) {
	one := healthWarning(&summary.HealthReport{Intervals: 60, Limited: 12, Reasons: []summary.HealthReason{{Reason: "CPU-bound", Intervals: 12}}})
	if !strings.HasPrefix(one, "in 12 of 60 intervals the generator was CPU-bound; latency there is an upper bound") {
		t.Errorf("warning %q", one)
	}
	two := healthWarning(&summary.HealthReport{Intervals: 60, Limited: 12,
		Reasons: []summary.HealthReason{{Reason: health.ReasonCPU.String(), Intervals: 10}, {Reason: health.ReasonWakeup.String(), Intervals: 5}}})
	if !strings.HasPrefix(two, "in 12 of 60 intervals the generator was CPU-bound (10) or late to start arrivals (5); ") {
		t.Errorf("warning %q", two)
	}
}
