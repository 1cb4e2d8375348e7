package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/metrics"
)

// stageScript is a fakeScript whose stages can be made to hang until
// their context ends, as a stuck script does.
type stageScript struct {
	*fakeScript
	newVU         func(ctx context.Context, id uint64) error
	setup         func(ctx context.Context) error
	handleSummary func(ctx context.Context) error
}

func (s *stageScript) NewVU(ctx context.Context, id uint64, rec metrics.Recorder) (executor.VU, error) {
	if s.newVU != nil {
		if err := s.newVU(ctx, id); err != nil {
			return nil, err
		}
	}
	return s.fakeScript.NewVU(ctx, id, rec)
}

func (s *stageScript) Setup(ctx context.Context, rec metrics.Recorder) (json.RawMessage, error) {
	if s.setup != nil {
		if err := s.setup(ctx); err != nil {
			return nil, err
		}
	}
	return s.fakeScript.Setup(ctx, rec)
}

func (s *stageScript) HandleSummary(ctx context.Context, data map[string]any) (map[string][]byte, bool, error) {
	if s.handleSummary != nil {
		if err := s.handleSummary(ctx); err != nil {
			return nil, false, err
		}
		return map[string][]byte{"stdout": []byte("CUSTOM SUMMARY\n")}, true, nil
	}
	return s.fakeScript.HandleSummary(ctx, data)
}

// hang waits for ctx to end, as a script interrupted there does, or gives
// up after an hour of virtual time.
func hang(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return errors.New("interrupted: " + ctx.Err().Error())
	case <-time.After(time.Hour):
		return nil
	}
}

// runStages runs s under synctest's virtual clock; cancel is the signal.
func runStages(t *testing.T, s *stageScript, opts string, cancelAt time.Duration, extra func(*Config)) (error, string, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if cancelAt > 0 {
		time.AfterFunc(cancelAt, cancel)
	}
	return runFakeScript(t, ctx, s, opts, extra)
}

// runFakeScript is runFake for any Script.
func runFakeScript(t *testing.T, ctx context.Context, s Script, opts string, extra func(*Config)) (error, string, map[string]any) {
	t.Helper()
	var out bytes.Buffer
	cfg := Config{
		Script: s, ScriptPath: "fake.js", Options: options(t, opts),
		SummaryExport: filepath.Join(t.TempDir(), "export.json"), SummaryMode: "compact", Quiet: true, NoColor: true,
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

const fourVUs = `{"scenarios": {"s": {"executor": "per-vu-iterations", "vus": 4, "iterations": 1}}}`

// A signal while VUs are initialised ends the run with 105 (it was 107,
// "iteration interrupted"), before setup, with a summary export.
func TestSignalWhileVUsStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &stageScript{fakeScript: &fakeScript{}, newVU: func(ctx context.Context, id uint64) error {
			if id > 1 {
				return hang(ctx)
			}
			return nil
		}}
		err, out, export := runStages(t, s, fourVUs, time.Second, nil)
		if exitcode.Of(err) != exitcode.ExternalAbort {
			t.Fatalf("exit code %d (%v), want 105\n%s", exitcode.Of(err), err, out)
		}
		if s.setups.Load() != 0 || s.teardown.Load() != 0 {
			t.Errorf("setup ran %d, teardown %d times; want neither after a signal during initialisation", s.setups.Load(), s.teardown.Load())
		}
		if export == nil {
			t.Error("no summary export after a signal during initialisation")
		}
	})
}

// A signal during setup ends the run with 105 (it was 255), without the
// scenarios or teardown, with a summary export.
func TestSignalDuringSetup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &stageScript{fakeScript: &fakeScript{}, setup: hang}
		err, out, export := runStages(t, s, fourVUs, time.Second, nil)
		if exitcode.Of(err) != exitcode.ExternalAbort {
			t.Fatalf("exit code %d (%v), want 105\n%s", exitcode.Of(err), err, out)
		}
		if s.teardown.Load() != 0 {
			t.Error("teardown ran after an interrupted setup")
		}
		if export == nil {
			t.Fatal("no summary export after a signal during setup")
		}
		if _, ok := export["metrics"].(map[string]any)["iterations"]; ok {
			t.Error("iterations ran after an interrupted setup")
		}
	})
}

// A signal while handleSummary runs interrupts it (it was ignored until
// the timeout) and the default summary is printed: exit 105.
func TestSignalDuringHandleSummary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s := &stageScript{fakeScript: &fakeScript{}, handleSummary: func(hctx context.Context) error {
			cancel() // the user presses Ctrl-C now
			return hang(hctx)
		}}
		start := time.Now()
		var out strings.Builder
		err, _, _ := runFakeScript(t, ctx, s, fourVUs, func(c *Config) { c.Stdout = &out })
		if exitcode.Of(err) != exitcode.ExternalAbort {
			t.Fatalf("exit code %d (%v), want 105", exitcode.Of(err), err)
		}
		if d := time.Since(start); d >= time.Hour {
			t.Errorf("handleSummary was not interrupted: the run took %v", d)
		}
		if !strings.Contains(out.String(), "iterations") || strings.Contains(out.String(), "CUSTOM SUMMARY") {
			t.Errorf("want the default summary in place of handleSummary's:\n%s", out.String())
		}
	})
}

// A signal during the scenarios does not interrupt handleSummary, which
// then runs in full, as in k6.
func TestSignalBeforeHandleSummary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sawCancelled bool
		s := &stageScript{fakeScript: &fakeScript{work: 10 * time.Millisecond}, handleSummary: func(hctx context.Context) error {
			sawCancelled = hctx.Err() != nil
			return nil
		}}
		var out strings.Builder
		err, _, _ := runStages(t, s, `{"scenarios": {"s": {"executor": "constant-vus", "vus": 2, "duration": "10s"}}}`,
			500*time.Millisecond, func(c *Config) { c.Stdout = &out })
		if exitcode.Of(err) != exitcode.ExternalAbort {
			t.Fatalf("exit code %d (%v), want 105", exitcode.Of(err), err)
		}
		if sawCancelled || !strings.Contains(out.String(), "CUSTOM SUMMARY") {
			t.Errorf("handleSummary got a cancelled context (%v) or its output is missing:\n%s", sawCancelled, out.String())
		}
	})
}

// handleSummary running over handleSummaryTimeout exits 102 (it exited
// 0) and the default summary is printed instead.
func TestHandleSummaryTimeoutExits102(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &stageScript{fakeScript: &fakeScript{}, handleSummary: hang}
		var out strings.Builder
		err, _, _ := runStages(t, s, `{"vus": 1, "iterations": 1, "handleSummaryTimeout": "2s"}`, 0,
			func(c *Config) { c.Stdout = &out })
		if exitcode.Of(err) != exitcode.GenericTimeout || !strings.Contains(err.Error(), "2s") {
			t.Fatalf("exit code %d (%v), want 102 naming the 2s timeout", exitcode.Of(err), err)
		}
		if !strings.Contains(out.String(), "iterations") {
			t.Errorf("the default summary is missing:\n%s", out.String())
		}
	})
}

// Scenarios that each fit but together need more VUs at once than the
// machine holds are refused; apart in time they fit.
func TestLimitsTotalVUs(t *testing.T) {
	old := availableMemory
	t.Cleanup(func() { availableMemory = old })
	availableMemory = func() int64 { return 100 * vuMemory }
	s := &fakeScript{}
	together := options(t, `{"scenarios": {
		"a": {"executor": "constant-vus", "vus": 60, "duration": "10s"},
		"b": {"executor": "constant-vus", "vus": 60, "duration": "10s"}}}`)
	_, err := Scenarios(together, s)
	if exitcode.Of(err) != exitcode.InvalidConfig || !strings.Contains(err.Error(), "120 VUs") || !strings.Contains(err.Error(), "the 100 that fit") {
		t.Errorf("got %v, want exit 104 naming 120 VUs and the limit of 100", err)
	}
	apart := options(t, `{"scenarios": {
		"a": {"executor": "constant-vus", "vus": 60, "duration": "10s"},
		"b": {"executor": "constant-vus", "vus": 60, "duration": "10s", "startTime": "60s"}}}`)
	if _, err := Scenarios(apart, s); err != nil {
		t.Errorf("scenarios apart in time were refused: %v", err)
	}
	one := options(t, `{"scenarios": {"a": {"executor": "constant-vus", "vus": 101, "duration": "10s"}}}`)
	if _, err := Scenarios(one, s); exitcode.Of(err) != exitcode.InvalidConfig || !strings.Contains(err.Error(), "scenarios.a.vus: 101 VUs") {
		t.Errorf("got %v, want scenarios.a.vus refused", err)
	}
}

// lateScript's setup and teardown outlive their timeouts and record a
// data_sent sample once interrupted, setup at once and teardown only
// after the engine stopped waiting for it.
type lateScript struct{ *fakeScript }

func (s *lateScript) record(rec metrics.Recorder) {
	rec.Record(metrics.Sample{Metric: s.b.DataSent, Tags: metrics.EmptyTags, Time: time.Now(), Value: 42})
	if f, ok := rec.(interface{ Flush() }); ok {
		f.Flush()
	}
}

func (s *lateScript) Setup(ctx context.Context, rec metrics.Recorder) (json.RawMessage, error) {
	err := hang(ctx)
	s.record(rec)
	return nil, err
}

func (s *lateScript) Teardown(ctx context.Context, rec metrics.Recorder, _ json.RawMessage) error {
	err := hang(ctx)
	time.Sleep(3 * interruptGrace)
	s.record(rec)
	return err
}

// A timed-out setup's last samples still count, as k6 reports a
// timed-out setup's data_sent (exit 100).
func TestSetupTimeoutKeepsItsSamples(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &lateScript{&fakeScript{}}
		err, out, export := runFakeScript(t, context.Background(), s, `{"vus": 1, "iterations": 1, "setupTimeout": "1s"}`, nil)
		if exitcode.Of(err) != exitcode.SetupTimeout {
			t.Fatalf("exit code %d (%v), want 100\n%s", exitcode.Of(err), err, out)
		}
		if v := metricValue(t, export, "data_sent", "count"); v != 42 {
			t.Errorf("data_sent = %v, want the 42 bytes setup recorded when interrupted", v)
		}
	})
}

// A teardown that records samples after the engine gave up on it and
// closed the sample pipeline does not crash the run (it did: "send on
// closed channel"); the late samples are dropped.
func TestTeardownLateSamplesDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &lateScript{&fakeScript{}}
		err, out, _ := runFakeScript(t, context.Background(), s, `{"vus": 1, "iterations": 1, "setupTimeout": "1s", "teardownTimeout": "1s"}`,
			func(c *Config) { c.Script = teardownOnly{s} })
		if exitcode.Of(err) != exitcode.TeardownTimeout {
			t.Fatalf("exit code %d (%v), want 101\n%s", exitcode.Of(err), err, out)
		}
		time.Sleep(5 * interruptGrace) // the teardown goroutine records now
	})
}

// teardownOnly is lateScript with fakeScript's prompt setup.
type teardownOnly struct{ *lateScript }

func (s teardownOnly) Setup(ctx context.Context, rec metrics.Recorder) (json.RawMessage, error) {
	return s.fakeScript.Setup(ctx, rec)
}
