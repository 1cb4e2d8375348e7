package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/metrics"

	_ "github.com/metronome-load/metronome/output/json"
)

// fakeScript stands in for a JavaScript test: each iteration takes work of
// virtual time and records one http_reqs and one http_req_duration sample.
type fakeScript struct {
	work time.Duration
	// workAt, when set, gives each request's duration from its start
	// instead of work.
	workAt func(start time.Time) time.Duration
	b      *metrics.Builtin
	inlet  *metrics.Inlet
	// viaInlet makes each iteration also send one http_reqs sample
	// through the run's inlet, from a goroutine of its own.
	viaInlet     bool
	setups       atomic.Int32
	teardown     atomic.Int32
	summary      map[string]any
	teardownData json.RawMessage
}

func (f *fakeScript) Configure(_ *config.Options, _ *metrics.Registry, b *metrics.Builtin, in *metrics.Inlet) error {
	f.b, f.inlet = b, in
	return nil
}

func (f *fakeScript) NewVU(_ context.Context, id uint64, rec metrics.Recorder) (executor.VU, error) {
	return &fakeVU{id: id, rec: rec, s: f}, nil
}

func (f *fakeScript) Setup(context.Context, metrics.Recorder) (json.RawMessage, error) {
	f.setups.Add(1)
	return json.RawMessage(`{"token":"abc"}`), nil
}

func (f *fakeScript) Teardown(_ context.Context, _ metrics.Recorder, data json.RawMessage) error {
	f.teardown.Add(1)
	f.teardownData = data
	return nil
}

func (f *fakeScript) HandleSummary(_ context.Context, data map[string]any) (map[string][]byte, bool, error) {
	f.summary = data
	return nil, false, nil
}

// Capabilities reports every lifecycle function: the fake implements
// them all.
func (f *fakeScript) Capabilities() executor.Capabilities {
	return executor.Capabilities{Setup: true, Teardown: true, HandleSummary: true, Functions: []string{"default"}}
}

type fakeVU struct {
	id  uint64
	rec metrics.Recorder
	s   *fakeScript
}

func (v *fakeVU) ID() uint64                 { return v.id }
func (v *fakeVU) Recorder() metrics.Recorder { return v.rec }

func (v *fakeVU) Run(ctx context.Context, it executor.Iteration) executor.Result {
	start := time.Now()
	lat := it.Latency(start)
	tags := metrics.EmptyTags.With("scenario", it.Scenario.Name)
	work := v.s.work
	if v.s.workAt != nil {
		work = v.s.workAt(start)
	}
	select {
	case <-time.After(work):
	case <-ctx.Done():
		lat.Interrupted(v.rec, v.s.b.CorrectedLatency, tags, start, time.Now())
		return executor.Result{Outcome: executor.Interrupted, Start: start, End: time.Now(), Tags: tags}
	}
	end := time.Now()
	if v.s.viaInlet {
		sent := make(chan struct{})
		go func() {
			v.s.inlet.Send([]metrics.Sample{{Metric: v.s.b.HTTPReqs, Tags: tags, Time: end, Value: 1}})
			close(sent)
		}()
		<-sent
	}
	v.rec.Record(metrics.Sample{Metric: v.s.b.HTTPReqs, Tags: tags, Time: end, Value: 1})
	v.rec.Record(metrics.Sample{Metric: v.s.b.HTTPReqDuration, Tags: tags, Time: end, Value: metrics.Milliseconds(work)})
	lat.Record(v.rec, v.s.b.CorrectedLatency, tags, end, work)
	return executor.Result{Outcome: executor.Completed, Start: start, End: end, Tags: tags}
}

func options(t *testing.T, js string) *config.Options {
	t.Helper()
	o, err := config.Parse([]byte(js), "test options")
	if err != nil {
		t.Fatal(err)
	}
	c, err := config.Consolidate(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func runFake(t *testing.T, ctx context.Context, s Script, opts string, extra func(*Config)) (error, string, map[string]any) {
	t.Helper()
	dir := t.TempDir()
	var out bytes.Buffer
	cfg := Config{
		Script: s, ScriptPath: "fake.js", Options: options(t, opts),
		SummaryExport: filepath.Join(dir, "export.json"), SummaryMode: "compact", Quiet: true, NoColor: true,
		Stdout: &out, Stderr: &out,
	}
	if extra != nil {
		extra(&cfg)
	}
	err := Run(ctx, cfg)
	var export map[string]any
	if b, rerr := os.ReadFile(cfg.SummaryExport); rerr == nil {
		if jerr := json.Unmarshal(b, &export); jerr != nil {
			t.Fatalf("summary export is not JSON: %v", jerr)
		}
	}
	return err, out.String(), export
}

func metricValue(t *testing.T, export map[string]any, metric, stat string) float64 {
	t.Helper()
	m, ok := export["metrics"].(map[string]any)[metric].(map[string]any)
	if !ok {
		t.Fatalf("metric %s missing from the export", metric)
	}
	v, ok := m[stat].(float64)
	if !ok {
		t.Fatalf("%s.%s missing from the export: %v", metric, stat, m)
	}
	return v
}

func TestRunSharedIterations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &fakeScript{work: 100 * time.Millisecond}
		err, out, export := runFake(t, context.Background(), s, `{
			"scenarios": {"main": {"executor": "shared-iterations", "vus": 4, "iterations": 20}},
			"thresholds": {"iterations": ["count==20"], "http_req_duration": ["p(99)<=100"]}
		}`, nil)
		if err != nil {
			t.Fatalf("run failed: %v\n%s", err, out)
		}
		if got := metricValue(t, export, "iterations", "count"); got != 20 {
			t.Errorf("iterations = %v, want 20", got)
		}
		if got := metricValue(t, export, "http_reqs", "count"); got != 20 {
			t.Errorf("http_reqs = %v, want 20", got)
		}
		// 20 iterations of 100 ms on 4 VUs: 5 rounds, so 500 ms of
		// iterations; the duration trend holds 100 ms exactly.
		if got := metricValue(t, export, "iteration_duration", "max"); got != 100 {
			t.Errorf("iteration_duration max = %v, want 100", got)
		}
		if s.setups.Load() != 1 || s.teardown.Load() != 1 || string(s.teardownData) != `{"token":"abc"}` {
			t.Errorf("setup ran %d times, teardown %d times with %s", s.setups.Load(), s.teardown.Load(), s.teardownData)
		}
		if !strings.Contains(out, "iterations") || !strings.Contains(out, "THRESHOLDS") {
			t.Errorf("text summary lacks the expected sections:\n%s", out)
		}
		if s.summary == nil || s.summary["metrics"] == nil {
			t.Errorf("handleSummary got no data")
		}
	})
}

// A threshold key with an empty list makes its submetric, or shows its
// metric, in the summary, the export and handleSummary's data, with no
// threshold, as in k6 v2.2.0 (issue 37; test/compat's
// 218-threshold-empty-list).
func TestRunEmptyThresholdList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &fakeScript{work: 10 * time.Millisecond}
		err, out, export := runFake(t, context.Background(), s, `{
			"scenarios": {"main": {"executor": "per-vu-iterations", "vus": 1, "iterations": 3}},
			"thresholds": {"http_reqs{scenario:main}": [], "checks": []}
		}`, nil)
		if err != nil {
			t.Fatalf("run failed: %v\n%s", err, out)
		}
		if got := metricValue(t, export, "http_reqs{scenario:main}", "count"); got != 3 {
			t.Errorf("http_reqs{scenario:main} count = %v, want 3", got)
		}
		if got := metricValue(t, export, "checks", "passes"); got != 0 {
			t.Errorf("checks passes = %v, want 0", got)
		}
		if m := export["metrics"].(map[string]any)["http_reqs{scenario:main}"].(map[string]any); m["thresholds"] != nil {
			t.Errorf("the submetric has thresholds %v; the key had none", m["thresholds"])
		}
		data, _ := s.summary["metrics"].(map[string]any)
		if _, ok := data["http_reqs{scenario:main}"]; !ok {
			t.Errorf("handleSummary's data has no http_reqs{scenario:main}: %v", keys(data))
		}
		if !strings.Contains(out, "{ scenario:main }") || !strings.Contains(out, "checks_total") || strings.Contains(out, "THRESHOLDS") {
			t.Errorf("the text summary shows the submetric and the checks, and no threshold block:\n%s", out)
		}
	})
}

// TestInletSamplesReachTheRun sends one sample per iteration through the
// run's inlet from another goroutine: they count in the summary beside
// the VUs' own, and once the run is over the inlet is done and drops
// what it gets.
func TestInletSamplesReachTheRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &fakeScript{work: 10 * time.Millisecond, viaInlet: true}
		err, out, export := runFake(t, context.Background(), s, `{
			"scenarios": {"main": {"executor": "shared-iterations", "vus": 2, "iterations": 6}}
		}`, nil)
		if err != nil {
			t.Fatalf("run failed: %v\n%s", err, out)
		}
		if got := metricValue(t, export, "http_reqs", "count"); got != 12 {
			t.Errorf("http_reqs = %v, want 12: 6 recorded by the VUs and 6 sent through the inlet", got)
		}
		select {
		case <-s.inlet.Done():
		default:
			t.Error("the inlet is not done after the run")
		}
		s.inlet.Send([]metrics.Sample{{Metric: s.b.HTTPReqs, Tags: metrics.EmptyTags, Time: time.Now(), Value: 1}})
	})
}

func TestRunThresholdsFail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &fakeScript{work: 50 * time.Millisecond}
		err, out, _ := runFake(t, context.Background(), s, `{
			"scenarios": {"main": {"executor": "per-vu-iterations", "vus": 2, "iterations": 3}},
			"thresholds": {"http_req_duration": ["p(95)<10"]}
		}`, nil)
		if exitcode.Of(err) != exitcode.ThresholdsFailed {
			t.Fatalf("exit code %d (%v), want %d\n%s", exitcode.Of(err), err, exitcode.ThresholdsFailed, out)
		}
		if !strings.Contains(err.Error(), "http_req_duration") {
			t.Errorf("error does not name the metric: %v", err)
		}
	})
}

func TestRunAbortOnFail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &fakeScript{work: 50 * time.Millisecond}
		start := time.Now()
		err, out, export := runFake(t, context.Background(), s, `{
			"scenarios": {"main": {"executor": "constant-vus", "vus": 1, "duration": "1m"}},
			"thresholds": {"http_req_duration": [{"threshold": "max<10", "abortOnFail": true}]}
		}`, nil)
		if exitcode.Of(err) != exitcode.ThresholdsFailed {
			t.Fatalf("exit code %d (%v), want 99\n%s", exitcode.Of(err), err, out)
		}
		// Thresholds are evaluated every 2 s: the abort comes at the
		// first evaluation, long before the minute is over.
		if el := time.Since(start); el > 3*time.Second {
			t.Errorf("abort took %s", el)
		}
		if s.teardown.Load() != 1 {
			t.Errorf("teardown did not run after the abort")
		}
		if got := metricValue(t, export, "iterations", "count"); got < 30 || got > 41 {
			t.Errorf("iterations = %v, want the ~40 of the first 2 s", got)
		}
	})
}

func TestRunSignalAbort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &fakeScript{work: 10 * time.Millisecond}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(500*time.Millisecond, cancel)
		err, out, export := runFake(t, ctx, s, `{
			"scenarios": {"main": {"executor": "constant-vus", "vus": 2, "duration": "10s"}}
		}`, nil)
		if exitcode.Of(err) != exitcode.ExternalAbort {
			t.Fatalf("exit code %d (%v), want 105\n%s", exitcode.Of(err), err, out)
		}
		if s.teardown.Load() != 1 {
			t.Error("teardown did not run after Ctrl-C")
		}
		// 2 VUs × 500 ms / 10 ms: 100 iterations. Each VU's last one
		// ends at exactly 500 ms, the instant of the abort, so each of
		// the two may count or be interrupted: 98, 99 or 100.
		if got := metricValue(t, export, "iterations", "count"); got < 98 || got > 100 {
			t.Errorf("iterations = %v, want 98-100", got)
		}
	})
}

func TestRunOpenModelAccount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &fakeScript{work: 5 * time.Millisecond}
		err, out, export := runFake(t, context.Background(), s, `{
			"scenarios": {"api": {"executor": "intended-arrival-rate", "rate": 100, "timeUnit": "1s", "duration": "2s", "preAllocatedVUs": 2}}
		}`, nil)
		if err != nil {
			t.Fatalf("run failed: %v\n%s", err, out)
		}
		if got := metricValue(t, export, "corrected_latency", "max"); got != 5 {
			t.Errorf("corrected_latency max = %v, want 5 (no lag in virtual time)", got)
		}
		if got := metricValue(t, export, "iterations", "count"); got != 200 {
			t.Errorf("iterations = %v, want 200", got)
		}
		if !strings.Contains(out, "api") {
			t.Errorf("summary lacks the scenario account:\n%s", out)
		}
		data := s.summary
		if data == nil {
			t.Fatal("no handleSummary data")
		}
		if _, ok := data["metronome"]; !ok {
			t.Errorf("handleSummary data lacks the metronome account: %v", keys(data))
		}
	})
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func TestBadOutput(t *testing.T) {
	s := &fakeScript{}
	err, _, _ := runFake(t, context.Background(), s, `{"iterations": 1}`, func(c *Config) { c.Outputs = []string{"nope=x"} })
	if exitcode.Of(err) != exitcode.InvalidConfig || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("got %v (exit %d), want an invalid-config error naming the output", err, exitcode.Of(err))
	}
}

func TestPlannedVUs(t *testing.T) {
	cfgs, err := config.Scenarios(options(t, `{"scenarios": {
		"a": {"executor": "constant-vus", "vus": 5, "duration": "10s", "gracefulStop": "0s"},
		"b": {"executor": "constant-vus", "vus": 3, "duration": "10s", "startTime": "10s"},
		"c": {"executor": "constant-vus", "vus": 4, "duration": "5s", "startTime": "12s"}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	// a holds 5 over [0,10s); b 3 over [10s,50s); c 4 over [12s,47s): the
	// peak is b+c = 7, not 5+3+4.
	if got := plannedVUs(cfgs); got != 7 {
		t.Errorf("plannedVUs = %d, want 7", got)
	}

	// k6 v2.2.0 reports vus_max 8 from its first sample for a ramping-vus
	// scenario from 1 to 6 VUs beside a later one of 2 (recorded
	// 2026-12-01): a ramp is planned at its peak. An arrival-rate scenario
	// is planned at preAllocatedVUs; k6 adds the rest mid-test.
	cfgs, err = config.Scenarios(options(t, `{"scenarios": {
		"rv": {"executor": "ramping-vus", "startVUs": 1, "stages": [{"duration": "2s", "target": 6}, {"duration": "1s", "target": 0}]},
		"later": {"executor": "per-vu-iterations", "vus": 2, "iterations": 1, "startTime": "1s"},
		"car": {"executor": "constant-arrival-rate", "rate": 1, "duration": "1s", "preAllocatedVUs": 3, "maxVUs": 10}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := plannedVUs(cfgs); got != 6+2+3 {
		t.Errorf("plannedVUs = %d, want 11: the ramp's peak 6, 2, and 3 preallocated", got)
	}
}
