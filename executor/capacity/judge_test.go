package capacity

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/health"
	"github.com/metronome-load/metronome/metrics"
)

func trend(vals ...float64) *metrics.TrendSink {
	t := metrics.NewTrendSink()
	for _, v := range vals {
		t.AddValue(v)
	}
	return t
}

// Whose failure a step is, case by case, for the objective p(99)<50.
func TestJudge(t *testing.T) {
	cfg, err := Parse("api", json.RawMessage(`{"executor":"capacity-search","startRate":10,"maxRate":100,
		"objective":"p(99)<50","preAllocatedVUs":1,"maxVUs":7}`))
	if err != nil {
		t.Fatal(err)
	}
	e := &Executor{cfg: cfg.(*Config)}
	healthy := health.Interval{CPU: 0.2, SchedP99: time.Millisecond}
	for _, c := range []struct {
		name           string
		corrected, raw *metrics.TrendSink
		failed         metrics.RateSink
		health         health.Interval
		account        executor.Account
		limit          Limit
		why            string
	}{
		{"met", trend(10, 20, 40), trend(10, 20, 40), metrics.RateSink{}, healthy, executor.Account{}, NoLimit, ""},
		{"slow server", trend(10, 80), trend(10, 80), metrics.RateSink{}, healthy, executor.Account{},
			Server, "corrected_latency p(99)=79.30ms"},
		{"errors", trend(10), trend(10), metrics.RateSink{Trues: 2, Total: 100}, healthy, executor.Account{},
			Server, "2.00% of requests failed"},
		{"cpu-bound generator", trend(10, 80), trend(10, 80), metrics.RateSink{}, health.Interval{CPU: 0.95}, executor.Account{},
			Generator, "the generator was CPU-bound: cpu 95%"},
		// 4 ms of scheduling cannot fail 100 ms: the server's.
		{"slow scheduling, slower server", trend(10, 100), trend(10, 100), metrics.RateSink{}, health.Interval{CPU: 0.2, SchedP99: 4 * time.Millisecond}, executor.Account{},
			Server, "corrected_latency"},
		// The requests took 52 ms at p99, up to 4 ms of which the
		// generator may have spent before reading the answers.
		{"reading answers late", trend(10, 52.5), trend(10, 52.5), metrics.RateSink{}, health.Interval{CPU: 0.2, SchedP99: 4 * time.Millisecond}, executor.Account{},
			Generator, "of which up to 4.00ms may be the generator's delay in reading the answers"},
		{"waiting for VUs", trend(10, 200), trend(10, 12), metrics.RateSink{}, healthy, executor.Account{Late: 100, LateForVU: 90, PeakBacklog: 30},
			Generator, "arrivals waited for a free VU (peak backlog 30), raise maxVUs (7)"},
		{"waking late", trend(10, 200), trend(10, 12), metrics.RateSink{}, healthy, executor.Account{Late: 100, LateForVU: 10},
			Generator, "the generator started 90 arrivals late with a VU free"},
	} {
		st := Step{Health: c.health, Account: c.account}
		if err := e.judge(&st, executor.Span{Corrected: c.corrected, Raw: c.raw, Failed: c.failed}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if st.Limit != c.limit || !strings.Contains(st.Why, c.why) {
			t.Errorf("%s: limit %v, why %q; want %v, %q", c.name, st.Limit, st.Why, c.limit, c.why)
		}
	}
	if err := e.judge(&Step{}, executor.Span{Corrected: metrics.NewTrendSink()}); err != errNoLatency {
		t.Errorf("no corrected_latency: %v", err)
	}
}
