package js_test

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
	"github.com/metronome-load/metronome/js/jstest"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/metrics"
)

// An extension-style module that times its own operations with a Trend it
// defines in the registry and records through the VU's recorder, as an
// xk6 extension's pushed samples reach it; it never calls
// jsmod.RecordLatency.
func init() {
	modules.Register("k6/x/latencyop", modules.ModuleFunc(func(vu modules.VU) (modules.Exports, error) {
		trend, err := vu.InitEnv().Registry.New("ext_op_duration", metrics.Trend, metrics.Time)
		if err != nil {
			return modules.Exports{}, err
		}
		return modules.Exports{Named: map[string]any{
			"op": func(ms float64) {
				st := vu.State()
				st.Recorder.Record(metrics.Sample{Metric: trend, Tags: st.Tags.With("op", "GET"), Time: time.Now(), Value: ms})
			},
		}}, nil
	}))
}

const latencyTrendScript = `
import { Trend } from "k6/metrics";
import { sleep } from "k6";
import ext from "k6/x/latencyop";
const op = new Trend("op_duration", true);
const other = new Trend("other_duration", true);
export function setup() { op.add(5); ext.op(5); }
export default function () {
	op.add(12, { name: "GET key" });
	sleep(0.001);
	other.add(7);
	ext.op(3);
}
export function teardown() { op.add(5); ext.op(5); }
`

// latencyTrendRun loads latencyTrendScript with options.latencyTrends set
// to trends.
func latencyTrendRun(t *testing.T, trends ...string) *jstest.Runner {
	t.Helper()
	return jstest.Load(t, map[string]string{"script.js": latencyTrendScript},
		&jstest.Config{Options: &config.Options{LatencyTrends: trends}})
}

// correctedOf returns the corrected_latency samples tagged metric=name.
func correctedOf(r *jstest.Runner, rec *executortest.Recorder, name string) []metrics.Sample {
	var out []metrics.Sample
	for _, s := range jstest.Samples(rec, r.Builtin.CorrectedLatency) {
		if v, _ := s.Tags.Get(executor.LatencyTrendTag); v == name {
			out = append(out, s)
		}
	}
	return out
}

// In an open-model iteration, a sample of a named trend — the script's
// Trend.add or an extension's own recording — also records
// corrected_latency: its value plus the iteration's lag, at its time, with
// its tags and metric=NAME. Trends not named record nothing more.
func TestLatencyTrendSamplesRecordCorrectedLatency(t *testing.T) {
	r := latencyTrendRun(t, "op_duration", "ext_op_duration")
	vu, rec := r.NewVU(t, 1)
	const lag = 40 * time.Millisecond
	intended := time.Now().Add(-lag)
	res := vu.Run(context.Background(), executor.Iteration{Scenario: jstest.DefaultScenario, Intended: intended})
	if res.Outcome != executor.Completed {
		t.Fatalf("iteration %v: %s", res.Outcome, r.Stderr)
	}
	realLag := metrics.Milliseconds(res.Start.Sub(intended))
	for _, c := range []struct {
		trend string
		value float64
		tags  map[string]string
	}{
		{"op_duration", 12, map[string]string{"name": "GET key", "scenario": "default", "metric": "op_duration"}},
		{"ext_op_duration", 3, map[string]string{"op": "GET", "scenario": "default", "metric": "ext_op_duration"}},
	} {
		raw := jstest.Samples(rec, r.Registry.Get(c.trend))
		cor := correctedOf(r, rec, c.trend)
		if len(raw) != 1 || len(cor) != 1 {
			t.Fatalf("%s: %d samples, %d corrected_latency; want one each", c.trend, len(raw), len(cor))
		}
		if math.Abs(cor[0].Value-(c.value+realLag)) > 1e-6 || !cor[0].Time.Equal(raw[0].Time) {
			t.Errorf("%s: corrected %v ms at %v, want %v + the lag %v at the sample's time %v",
				c.trend, cor[0].Value, cor[0].Time, c.value, realLag, raw[0].Time)
		}
		if cor[0].Tags != raw[0].Tags.With("metric", c.trend) {
			t.Errorf("%s: corrected tags %v, want the sample's %v plus metric", c.trend, cor[0].Tags, raw[0].Tags)
		}
		for k, v := range c.tags {
			if got, _ := cor[0].Tags.Get(k); got != v {
				t.Errorf("%s: tag %s=%q, want %q", c.trend, k, got, v)
			}
		}
	}
	if n := len(jstest.Samples(rec, r.Builtin.CorrectedLatency)); n != 2 {
		t.Errorf("%d corrected_latency samples, want 2: other_duration is not named", n)
	}

	// Closed model, back-filled at 2 ms: the 12 ms operation gives 12, 10,
	// 8, 6, 4, 2.
	vu, rec = r.NewVU(t, 2)
	fill := &executor.BackFiller{Interval: 2 * time.Millisecond}
	vu.Run(context.Background(), executor.Iteration{Scenario: jstest.DefaultScenario, BackFill: fill})
	var got []float64
	for _, s := range correctedOf(r, rec, "op_duration") {
		got = append(got, s.Value)
	}
	if want := []float64{12, 10, 8, 6, 4, 2}; !slices.Equal(got, want) {
		t.Errorf("back-filled corrected_latency %v, want %v", got, want)
	}
	if fill.Requests != 2 || fill.Filled != 5 {
		t.Errorf("back-fill tallies %d requests, %d filled; want 2 operations (12 ms and 3 ms), 5 filled", fill.Requests, fill.Filled)
	}
	// A closed model that does not back-fill records none.
	vu, rec = r.NewVU(t, 3)
	jstest.Iterate(vu)
	if n := len(jstest.Samples(rec, r.Builtin.CorrectedLatency)); n != 0 {
		t.Errorf("%d corrected_latency samples in a closed model without back-fill", n)
	}
}

// setup() and teardown() run outside every iteration: their samples of a
// named trend record no corrected_latency, as their requests record none.
func TestLatencyTrendSetupTeardownRecordNothing(t *testing.T) {
	r := latencyTrendRun(t, "op_duration", "ext_op_duration")
	rec := &executortest.Recorder{}
	data, err := r.Script.Setup(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Script.Teardown(context.Background(), rec, data); err != nil {
		t.Fatal(err)
	}
	if n := len(jstest.Samples(rec, r.Registry.Get("op_duration"))); n != 2 {
		t.Fatalf("%d op_duration samples in setup and teardown, want 2", n)
	}
	if n := len(jstest.Samples(rec, r.Builtin.CorrectedLatency)); n != 0 {
		t.Errorf("%d corrected_latency samples in setup and teardown, want none", n)
	}
}

// Without the option nothing changes: the same iteration records no
// corrected_latency.
func TestLatencyTrendsUnsetRecordNothing(t *testing.T) {
	r := latencyTrendRun(t)
	vu, rec := r.NewVU(t, 1)
	vu.Run(context.Background(), executor.Iteration{Scenario: jstest.DefaultScenario, Intended: time.Now().Add(-time.Second)})
	if n := len(jstest.Samples(rec, r.Builtin.CorrectedLatency)); n != 0 {
		t.Errorf("%d corrected_latency samples without latencyTrends, want none", n)
	}
	if n := len(jstest.Samples(rec, r.Registry.Get("op_duration"))); n != 1 {
		t.Errorf("%d op_duration samples, want 1", n)
	}
}
