package engine

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/metrics"
)

// freezingScript is a closed loop against a target that freezes: each
// iteration sends a request, answered in 1 ms unless it arrives in
// [from, to), then thinks 9 ms.
type freezingScript struct {
	*fakeScript
	from, to time.Time
}

func (f *freezingScript) NewVU(_ context.Context, id uint64, rec metrics.Recorder) (executor.VU, error) {
	return &freezingVU{fakeVU: fakeVU{id: id, rec: rec, s: f.fakeScript}, script: f}, nil
}

type freezingVU struct {
	fakeVU
	script *freezingScript
}

func (v *freezingVU) Run(ctx context.Context, it executor.Iteration) executor.Result {
	start := time.Now()
	tags := metrics.EmptyTags.With("scenario", it.Scenario.Name)
	if !start.Before(v.script.from) && start.Before(v.script.to) {
		time.Sleep(v.script.to.Sub(start))
	}
	time.Sleep(time.Millisecond)
	d := time.Since(start)
	v.rec.Record(metrics.Sample{Metric: v.s.b.HTTPReqDuration, Tags: tags, Time: time.Now(), Value: metrics.Milliseconds(d)})
	it.Latency(start).Record(v.rec, v.s.b.CorrectedLatency, tags, time.Now(), d)
	time.Sleep(9 * time.Millisecond)
	return executor.Result{Outcome: executor.Completed, Start: start, End: time.Now(), Tags: tags}
}

// An unchanged closed-model script — constant-vus, no expectedInterval
// anywhere — gets corrected_latency back-filled from each VU's estimated
// cadence, and the summary labels it. Two VUs pace at 10 ms for 20 s;
// the target freezes from 3 s to 4 s, so each VU has one iteration of
// about 1,010 ms, back-filled with floor(1010/10) − 1 = 100 samples (99 if
// its iteration met the freeze a little after it began). Those two slow
// iterations of ~3,800 are 0.05%, so the slowest is over 10× the p(99.9)
// and the coordinated-omission warning quotes the back-fill. With
// expectedInterval 'off' test-wide, nothing is back-filled and the
// coordinated-omission warning says how to turn it on.
func TestClosedModelBackFillsByDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		s := &freezingScript{fakeScript: &fakeScript{}, from: t0.Add(3 * time.Second), to: t0.Add(4 * time.Second)}
		err, out, export := runFake(t, context.Background(), s.fakeScript, `{"vus": 2, "duration": "20s", "summaryTrendStats": ["count", "med", "p(99)", "p(99.9)", "max"]}`, func(c *Config) { c.Script = s })
		if err != nil {
			t.Fatalf("run failed: %v\n%s", err, out)
		}
		fills := s.summary["metronome"].(map[string]any)["backFills"].([]any)
		if len(fills) != 1 {
			t.Fatalf("backFills %v, want the default scenario's", fills)
		}
		f := fills[0].(map[string]any)
		n := f["backfilled"].(int64)
		if f["expectedInterval"] != "auto" || f["estimated"] != true || n < 198 || n > 200 || f["unestimated"] != int64(10) ||
			f["vus"] != int64(2) || f["cadenceMedian"] != 10.0 {
			t.Errorf("account %v; want auto, 198–200 back-filled, 10 unestimated, 2 VUs estimated at 10ms", f)
		}
		if got := metricValue(t, export, "corrected_latency", "count") - metricValue(t, export, "iterations", "count"); got != float64(n) {
			t.Errorf("corrected_latency has %v samples more than iterations, the account says %d back-filled", got, n)
		}
		if p99 := metricValue(t, export, "corrected_latency", "p(99)"); p99 < 500 {
			t.Errorf("corrected_latency p(99) = %v ms; the back-filled freeze (one in ten samples) should put it above 500", p99)
		}
		for _, want := range []string{
			"    default (constant-vus, expectedInterval: auto)",
			"      interval.......: estimated per VU: median 10ms of 2 VUs (10ms – 10ms)",
			"      p99............: raw 1ms (http_req_duration), 10ms (iteration_duration); back-filled ",
			"includes " + itoa(n) + " back-filled samples (expectedInterval; 'auto' ones estimated from each VU's cadence), not measured",
			"corrected_latency back-fills what they would have sent at each VU's estimated cadence (median 10.0ms): " + itoa(n) + " samples",
			"— an estimate; measure with intended-arrival-rate for a measurement",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("summary lacks %q:\n%s", want, out)
			}
		}
	})
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		s := &freezingScript{fakeScript: &fakeScript{}, from: t0.Add(3 * time.Second), to: t0.Add(4 * time.Second)}
		err, out, export := runFake(t, context.Background(), s.fakeScript, `{"vus": 2, "duration": "20s", "expectedInterval": "off"}`, func(c *Config) { c.Script = s })
		if err != nil {
			t.Fatalf("run failed: %v\n%s", err, out)
		}
		if _, ok := export["metrics"].(map[string]any)["corrected_latency"]; ok {
			t.Error("corrected_latency recorded with expectedInterval off")
		}
		if fills := s.summary["metronome"].(map[string]any)["backFills"].([]any); len(fills) != 0 {
			t.Errorf("backFills %v with expectedInterval off", fills)
		}
		if !strings.Contains(out, "or set expectedInterval ('auto' or a duration) to back-fill corrected_latency") {
			t.Errorf("the warning does not say how to back-fill:\n%s", out)
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
