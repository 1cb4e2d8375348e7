package engine

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/exitcode"
)

// stallOptions runs endpointsScript at 20 arrivals/s for two minutes, with
// thresholds on login's corrected latency.
func stallOptions(thresholds string) string {
	return `{
		"scenarios": {"api": {"executor": "constant-arrival-rate", "rate": 20, "duration": "2m", "preAllocatedVUs": 40}},
		"thresholds": {"corrected_latency{name:login}": [` + thresholds + `]}
	}`
}

// One stall inside a run moves the windowed verdict, not the whole-run
// one. login freezes from 60 to 61 s: the 20 logins sent then wait 50 ms to
// 1 s and all end at 61.002 s. That is 20 of the run's 2,400 logins (0.83%,
// under the 1% a p99 lets through), but 20 of the 200 in each 10 s window
// that holds 61.002 s: those starting at 52 to 61 s, which cover 52 s to
// 1m11s.
func TestStallMovesTheWindowedVerdict(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		s := &endpointsScript{fakeScript: &fakeScript{}, from: t0.Add(60 * time.Second), to: t0.Add(61 * time.Second)}
		err, out, export := runFake(t, context.Background(), s.fakeScript, stallOptions(`"p(99)<100", {"threshold": "p(99)<100", "window": "10s"}`), func(c *Config) { c.Script = s })
		if exitcode.Of(err) != exitcode.ThresholdsFailed {
			t.Fatalf("exit code %d (%v), want 99\n%s", exitcode.Of(err), err, out)
		}
		lineWith(t, out, "    ✓ 'p(99)<100' p(99)=2ms")
		l := lineWith(t, out, "    ✗ 'p(99)<100' p(99)=")
		if !strings.Contains(l, " in the worst 10s window (52s–1m2s); 10 of 11") || !strings.HasSuffix(l, " windows failed: 52s–1m11s") {
			t.Errorf("windowed line %q, want the worst window 52s–1m2s and 10 failing windows over 52s–1m11s", l)
		}
		// --summary-export keeps k6's shape: one key per expression, true
		// when it failed. Both expressions read the same, as they would in
		// k6, and the failing one wins.
		th := export["metrics"].(map[string]any)["corrected_latency{name:login}"].(map[string]any)["thresholds"].(map[string]any)
		if len(th) != 1 || th["p(99)<100"] != true {
			t.Errorf("exported thresholds %v", th)
		}
		ws := s.summary["metronome"].(map[string]any)["windows"].([]any)
		if len(ws) != 1 {
			t.Fatalf("handleSummary's metronome.windows: %v", ws)
		}
		w := ws[0].(map[string]any)
		if w["failed"] != int64(10) || w["windowMs"] != 10000.0 || w["ok"] != false {
			t.Errorf("handleSummary's window verdict %v", w)
		}
	})
}

// abortOnFail on a windowed threshold stops the run at the first failing
// window: the one from 52 s to 62 s, judged at the first evaluation (every
// 2 s) at least WindowGrace after its end, at 64 s.
func TestWindowedAbortOnFail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		s := &endpointsScript{fakeScript: &fakeScript{}, from: t0.Add(60 * time.Second), to: t0.Add(61 * time.Second)}
		err, out, _ := runFake(t, context.Background(), s.fakeScript, stallOptions(`{"threshold": "p(99)<100", "window": "10s", "abortOnFail": true}`), func(c *Config) { c.Script = s })
		if exitcode.Of(err) != exitcode.ThresholdsFailed || !strings.Contains(err.Error(), "aborted") {
			t.Fatalf("exit code %d (%v), want 99 for an abort\n%s", exitcode.Of(err), err, out)
		}
		// The run ends within an iteration (53 ms) of the abort.
		if took := time.Since(t0); took < 64*time.Second || took > 65*time.Second {
			t.Errorf("the run took %s, want it aborted at 64 s", took)
		}
		// The final evaluation judges the windows the run began, up to
		// 55–65 s: four of them fail.
		l := lineWith(t, out, "    ✗ 'p(99)<100' p(99)=")
		if !strings.HasSuffix(l, "; 4 of 56 10s windows failed: 52s–1m5s") {
			t.Errorf("windowed line %q, want 4 of 56 windows failing from 52 s", l)
		}
	})
}

// lineWith returns the first line of text that starts with prefix.
func lineWith(t *testing.T, text, prefix string) string {
	t.Helper()
	for l := range strings.Lines(text) {
		if strings.HasPrefix(l, prefix) {
			return strings.TrimRight(l, "\n")
		}
	}
	t.Fatalf("no line starts with %q in:\n%s", prefix, text)
	return ""
}

// A merge of result files reads each file's totals, not the steps windows
// are made of: it judges a windowed threshold on the whole merged run and
// says so, rather than finding no window with samples and passing.
func TestMergeJudgesWindowsOnTheWholeRun(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "run.result")
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		s := &endpointsScript{fakeScript: &fakeScript{}, from: t0.Add(60 * time.Second), to: t0.Add(61 * time.Second)}
		err, out, _ := runFake(t, context.Background(), s.fakeScript,
			stallOptions(`{"threshold": "p(99)<100", "window": "10s"}, {"threshold": "p(99)<10", "window": "10s"}`),
			func(c *Config) { c.Script = s; c.Outputs = []string{"result=" + file} })
		if exitcode.Of(err) != exitcode.ThresholdsFailed {
			t.Fatalf("the run: exit %d (%v), want 99\n%s", exitcode.Of(err), err, out)
		}
	})
	r, out := mergeFiles(t, dir, nil, file)
	// On the whole run login's p99 is 2 ms: p(99)<100 passes, p(99)<10
	// too; on its windows, the first failed.
	if r.err != nil {
		t.Errorf("merge: %v\n%s", r.err, out)
	}
	for _, want := range []string{
		`thresholds.corrected_latency{name:login}: "p(99)<100" is judged on the whole merged run, not on each 10s window: a merge reads each file's totals`,
		"    ✓ 'p(99)<100' p(99)=2ms",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the merge's output lacks %q:\n%s", want, out)
		}
	}
}
