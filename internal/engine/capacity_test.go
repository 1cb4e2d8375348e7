package engine

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
)

// A capacity search through the whole engine: the meter hands each step
// its own samples (the executor's drops included, after the barrier), the
// gauge reaches the export, and the summary and handleSummary's data carry
// the steps. The server serves 20/s; a step of 2 s over it by 50 % queues
// arrivals for a second, failing p(99)<1000.
func TestRunCapacitySearch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := executortest.NewServer(2, 100*time.Millisecond)
		s := &fakeScript{workAt: func(at time.Time) time.Duration { return srv.Work(executor.Iteration{}, at) }}
		err, out, export := runFake(t, context.Background(), s, `{
			"scenarios": {"find": {"executor": "capacity-search", "startRate": 5, "maxRate": 100, "stepDuration": "2s",
				"objective": "p(99)<1000", "preAllocatedVUs": 5, "maxVUs": 50}},
			"thresholds": {"capacity_search_rate": ["value>=20"]}
		}`, nil)
		if err != nil {
			t.Fatalf("run failed: %v\n%s", err, out)
		}
		found := metricValue(t, export, "capacity_search_rate", "value")
		if found < 20 || found >= 30 {
			t.Errorf("capacity_search_rate = %v, want 20 to 30", found)
		}
		if !strings.Contains(out, "find (objective p(99)<1000): capacity ") || !strings.Contains(out, "the server's limit") {
			t.Errorf("summary lacks the search's verdict:\n%s", out)
		}
		data := s.summary["metronome"].(map[string]any)
		caps := data["capacity"].([]any)
		c := caps[0].(map[string]any)
		if c["capacity"] != found || c["limit"] != "server" {
			t.Errorf("handleSummary's capacity = %v, want %v, server", c, found)
		}
		for _, st := range c["steps"].([]any) {
			step := st.(map[string]any)
			rate, p50 := step["rate"].(float64), step["correctedP50"].(float64)
			// Under capacity every request takes the service time.
			if rate <= 20 && (p50 < 100 || p50 > 110 || step["verdict"] != "met") {
				t.Errorf("step %v/s: %v", rate, step)
			}
			if rate >= 30 && step["verdict"] != "server" {
				t.Errorf("step %v/s: %v", rate, step)
			}
		}
		if data["health"] == nil {
			t.Error("handleSummary's data has no health")
		}
	})
}
