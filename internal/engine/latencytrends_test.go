package engine

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/health"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/summary"
)

// trendScript stands in for a script whose operations are not HTTP (a
// Redis or SQL extension's, say): each iteration performs one operation
// and times it with a custom Trend, op_duration, which its init context
// defines along with a counter; it records no corrected_latency of its
// own. Its VUs hand the operation's sample to a LatencyRecorder when the
// options name latency trends, as the JavaScript VUs do. The target
// freezes from 2 s to 2.5 s: an operation sent then is answered at 2.5 s,
// any other in 1 ms (times from the scenario's start).
type trendScript struct {
	*fakeScript
	opts *config.Options
	reg  *metrics.Registry
}

func (s *trendScript) Configure(o *config.Options, reg *metrics.Registry, b *metrics.Builtin, in *metrics.Inlet) error {
	s.opts, s.reg = o, reg
	return s.fakeScript.Configure(o, reg, b, in)
}

func (s *trendScript) NewVU(_ context.Context, id uint64, rec metrics.Recorder) (executor.VU, error) {
	op := s.reg.MustNew("op_duration", metrics.Trend, metrics.Time)
	s.reg.MustNew("op_count", metrics.Counter, metrics.Default)
	s.reg.MustNew("op_bytes", metrics.Trend, metrics.Default)
	return &trendVU{fakeVU: fakeVU{id: id, rec: rec, s: s.fakeScript}, script: s, op: op}, nil
}

type trendVU struct {
	fakeVU
	script *trendScript
	op     *metrics.Metric
}

func (v *trendVU) Run(ctx context.Context, it executor.Iteration) executor.Result {
	// The engine's precise clock waits the last 2 ms before an arrival on
	// a kernel timer, which a synctest bubble's clock does not see: here
	// the iteration is handed over 2 ms early. A real one would begin on
	// time, and so does this one.
	if early := time.Until(it.Intended); early > 0 {
		time.Sleep(early)
	}
	start := time.Now()
	lat := it.Latency(start)
	var rec metrics.Recorder = v.rec
	if names := v.script.opts.LatencyTrends; len(names) > 0 {
		trends, _ := executor.ResolveLatencyTrends(v.script.reg, names)
		rec = executor.NewLatencyRecorder(v.rec, &lat, v.s.b.CorrectedLatency, trends)
	}
	tags := metrics.EmptyTags.With("scenario", it.Scenario.Name)
	// The scenario's start, from the uniform schedule of 100/s.
	origin := it.Intended.Add(-time.Duration(it.Index) * 10 * time.Millisecond)
	d := time.Millisecond
	if off := start.Sub(origin); off >= 2*time.Second && off < 2500*time.Millisecond {
		d = 2500*time.Millisecond - off
	}
	time.Sleep(d)
	end := time.Now()
	rec.Record(metrics.Sample{Metric: v.op, Tags: tags.With("op", "GET"), Time: end, Value: metrics.Milliseconds(d)})
	return executor.Result{Outcome: executor.Completed, Start: start, End: end, Tags: tags}
}

// trendOptions are 100 operations/s for 5 s on 2 VUs, timed by
// op_duration, with %s for more options.
const trendOptions = `{
  "scenarios": {"ops": {"executor": "intended-arrival-rate", "rate": 100, "duration": "5s", "preAllocatedVUs": 2}},
  "summaryTrendStats": ["count", "p(99)", "max"]%s
}`

// runTrendScript runs trendScript with trendOptions plus extra on virtual
// time, writing a result file, and returns the run's error, printed
// output and summary export.
func runTrendScript(t *testing.T, dir, extra string) (error, string, map[string]any) {
	t.Helper()
	var err error
	var out bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		s := &trendScript{fakeScript: &fakeScript{}}
		cfg := Config{
			Script: s, ScriptPath: "fake.js", Options: options(t, fmt.Sprintf(trendOptions, extra)),
			Outputs:       []string{"result=" + filepath.Join(dir, "run.result")},
			SummaryExport: filepath.Join(dir, "run.json"), SummaryMode: "compact", Quiet: true, NoColor: true,
			Stdout: &out, Stderr: &out,
		}
		err = Run(context.Background(), cfg)
	})
	return err, out.String(), readJSON(t, filepath.Join(dir, "run.json"))
}

// The stall experiment on an operation metronome does not know: its own
// Trend, named in latencyTrends, sees one slow operation per VU per
// freeze, while corrected_latency{metric:op_duration} charges every
// arrival the freeze held up. The 50 arrivals intended in [2 s, 2.5 s)
// wait until 2.5 s (two at the target, the rest for a VU), so the five
// slowest of the 500, intended at 2.00–2.04 s, are charged about 500,
// 490, … 460 ms and the sixth 450 ms plus its ≤ 3 ms wait for a VU after
// the thaw: the p(99), between the fifth and the sixth slowest, is within
// [450, 462] ms. The raw trend has two slow samples of 500, under 1 %:
// its p(99) is the 1 ms operation. A threshold on the submetric fails
// (exit 99) where the raw trend's holds; the summary shows the submetric
// under corrected_latency; and the merge of the run's result file
// reproduces the run's numbers and verdict, needing nothing but the file.
func TestLatencyTrendChargesTheStall(t *testing.T) {
	dir := t.TempDir()
	err, out, export := runTrendScript(t, dir, `,
  "latencyTrends": ["op_duration"],
  "thresholds": {"op_duration": ["p(99)<100"], "corrected_latency{metric:op_duration}": ["p(99)<100"]}`)
	if exitcode.Of(err) != exitcode.ThresholdsFailed {
		t.Fatalf("exit %v, want 99\n%s", err, out)
	}
	sub := "corrected_latency{metric:op_duration}"
	if n := metricValue(t, export, sub, "count"); n != 500 {
		t.Errorf("%s count = %v, want one per arrival: 500", sub, n)
	}
	if n := metricValue(t, export, "corrected_latency", "count"); n != 500 {
		t.Errorf("corrected_latency count = %v, want 500: nothing else records it", n)
	}
	p99 := metricValue(t, export, sub, "p(99)")
	if p99 < 450 || p99 > 462 {
		t.Errorf("%s p(99) = %v ms, want the stall arithmetic's 450–462", sub, p99)
	}
	if raw := metricValue(t, export, "op_duration", "p(99)"); raw > 1.1 {
		t.Errorf("op_duration p(99) = %v ms, want the 1 ms operation: 2 slow samples of 500 are under 1 %%", raw)
	}
	if th := thresholds(export); th["op_duration"]["p(99)<100"] != false || th[sub]["p(99)<100"] != true {
		t.Errorf("thresholds %v: want op_duration's to hold and the corrected one's to fail", th)
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "{ metric:op_duration }") {
			line = l
		}
	}
	if !strings.Contains(line, "count=500") || !strings.Contains(out, "corrected_latency") {
		t.Errorf("the summary has no corrected_latency { metric:op_duration } line of 500 samples:\n%s", out)
	}
	// The scenario's account reads its raw p99 from the trend, as it made
	// no HTTP request.
	account := "p99............: raw 1ms (op_duration), corrected " + summary.FormatTime(p99, "") + " (corrected_latency)"
	if !strings.Contains(out, account) {
		t.Errorf("the scenario's account does not set the trend's raw p99 beside the corrected one:\n%s", out)
	}

	merged, mout := mergeFiles(t, dir, nil, filepath.Join(dir, "run.result"))
	if exitcode.Of(merged.err) != exitcode.ThresholdsFailed {
		t.Fatalf("merge: %v, want 99\n%s", merged.err, mout)
	}
	for _, stat := range []string{"count", "p(99)", "max"} {
		if got, want := metricValue(t, merged.export, sub, stat), metricValue(t, export, sub, stat); got != want {
			t.Errorf("merged %s %s = %v, the run's %v", sub, stat, got, want)
		}
	}
	for _, want := range []string{"{ metric:op_duration }", account} {
		if !strings.Contains(mout, want) {
			t.Errorf("the merge's summary lacks %q:\n%s", want, mout)
		}
	}
}

// Without the option the same run records no corrected_latency at all,
// and the summary says why.
func TestLatencyTrendUnsetRecordsNothing(t *testing.T) {
	dir := t.TempDir()
	err, out, export := runTrendScript(t, dir, "")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	if m, ok := export["metrics"].(map[string]any)["corrected_latency"].(map[string]any); ok && m["count"] != 0.0 {
		t.Errorf("corrected_latency %v without latencyTrends, want no samples", m)
	}
	if !strings.Contains(out, "a custom Trend named in latencyTrends") {
		t.Errorf("the summary does not point at latencyTrends:\n%s", out)
	}
}

// A name that the init context did not define, or that is no Trend of
// time, stops the run before it starts: one sentence per name, with the
// option path, exit 104.
func TestLatencyTrendsMustNameTimeTrends(t *testing.T) {
	dir := t.TempDir()
	err, out, _ := func() (error, string, map[string]any) {
		var err error
		var out bytes.Buffer
		synctest.Test(t, func(t *testing.T) {
			s := &trendScript{fakeScript: &fakeScript{}}
			err = Run(context.Background(), Config{
				Script: s, ScriptPath: "fake.js",
				Options:       options(t, fmt.Sprintf(trendOptions, `, "latencyTrends": ["op_duration", "op_count", "op_bytes", "op_latncy"]`)),
				SummaryExport: filepath.Join(dir, "run.json"), Quiet: true, NoColor: true, Stdout: &out, Stderr: &out,
			})
		})
		return err, out.String(), nil
	}()
	if exitcode.Of(err) != exitcode.InvalidConfig {
		t.Fatalf("exit %v, want 104\n%s", err, out)
	}
	for _, want := range []string{
		`options.latencyTrends[1]: "op_count" is a counter metric; only a Trend of time qualifies`,
		`options.latencyTrends[2]: "op_bytes" is a Trend of plain numbers, not of time`,
		`options.latencyTrends[3]: metric "op_latncy" is not defined`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "[0]") {
		t.Errorf("error %q blames op_duration, a Trend of time", err)
	}
}

// A capacity search's spans read an operation of a latency trend as a
// request: its own time is raw, its corrected_latency corrected.
func TestMeterReadsLatencyTrendsAsRaw(t *testing.T) {
	reg := metrics.NewRegistry()
	op := reg.MustNew("op_duration", metrics.Trend, metrics.Time)
	other := reg.MustNew("other_duration", metrics.Trend, metrics.Time)
	r := &testRun{reg: reg, builtin: metrics.RegisterBuiltin(reg), systemTags: map[string]bool{"scenario": true},
		opts: &config.Options{LatencyTrends: []string{"op_duration"}}}
	r.monitor = health.NewMonitor(clock.Real, &health.Runtime{}, nil)
	m := r.newMeter("api", nil)
	m.Begin(clock.Real.Now())
	tags := metrics.NewTags(map[string]string{"scenario": "api", "op": "GET"})
	at := clock.Real.Now()
	m.add([]metrics.Sample{
		{Metric: op, Tags: tags, Time: at, Value: 3},
		{Metric: other, Tags: tags, Time: at, Value: 7},
		{Metric: r.builtin.CorrectedLatency, Tags: tags.With(executor.LatencyTrendTag, "op_duration"), Time: at, Value: 40},
	})
	if m.span.Raw.Count() != 1 || m.span.Raw.Max() != 3 || m.span.Corrected.Count() != 1 {
		t.Errorf("span raw %d samples (max %v), corrected %d; want op_duration's 3 ms raw and one corrected",
			m.span.Raw.Count(), m.span.Raw.Max(), m.span.Corrected.Count())
	}
}
