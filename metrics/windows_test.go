package metrics

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestWindowStep(t *testing.T) {
	for _, c := range []struct {
		window, step time.Duration
		n            int
	}{
		{time.Second, time.Second, 1},
		{1500 * time.Millisecond, 750 * time.Millisecond, 2},
		{10 * time.Second, time.Second, 10},
		{time.Minute, time.Second, 60},
		{5 * time.Minute, 5 * time.Second, 60},
		{time.Hour, time.Minute, 60},
	} {
		step, n := WindowStep(c.window)
		if step != c.step || n != c.n {
			t.Errorf("WindowStep(%s) = %s, %d; want %s, %d", c.window, step, n, c.step, c.n)
		}
	}
}

// windowRun feeds an engine samples in virtual time: one sample of every
// fed metric every 10 ms, stamped in the middle of its 10 ms so that none
// sits on a window's edge, starting at origin.
type windowRun struct {
	f      *thresholdFixture
	e      *Engine
	origin time.Time
}

func newWindowRun(t *testing.T, defs map[string][]ThresholdDef) *windowRun {
	t.Helper()
	f := newThresholdFixture(t)
	w := &windowRun{f: f, e: f.engine(t, defs), origin: time.Unix(1_700_000_000, 0)}
	w.e.SetStart(w.origin)
	return w
}

// feed ingests, for each 10 ms tick in [from, to), one sample of m with
// the value v(offset) (skipped when v returns NaN).
func (w *windowRun) feed(m *Metric, from, to time.Duration, v func(at time.Duration) float64) {
	const tick = 10 * time.Millisecond
	var batch []Sample
	for at := from + tick/2; at < to; at += tick {
		if x := v(at); !math.IsNaN(x) {
			batch = append(batch, Sample{Metric: m, Tags: EmptyTags, Time: w.origin.Add(at), Value: x})
		}
	}
	w.e.Ingest(batch)
}

func windowed(source string, window time.Duration) ThresholdDef {
	return ThresholdDef{Source: source, Window: window}
}

// result returns the result of the threshold source under key.
func result(t *testing.T, rep *ThresholdReport, key, source string) ThresholdResult {
	t.Helper()
	for _, mt := range rep.Metrics {
		if mt.Key != key {
			continue
		}
		for _, r := range mt.Thresholds {
			if r.Source == source {
				return r
			}
		}
	}
	t.Fatalf("no threshold %s %q in the report", key, source)
	return ThresholdResult{}
}

// stall is a trend of 10 ms values with a one-second stall at 60.3 s,
// during which every value is 2000 ms: 100 of the 12,000 samples of a
// two-minute run, 0.83% of them.
func stall(at time.Duration) float64 {
	if at >= 60300*time.Millisecond && at < 61300*time.Millisecond {
		return 2000
	}
	return 10
}

// A one-second stall is under 1% of a two-minute run, so the run's p99
// hides it; it is 10% of a ten-second window that holds it, and up to 7% of
// those that hold part of it. Windows start every second: those starting
// at 51 s to 61 s hold some of the stall, so eleven windows fail, and
// together they cover 51 s to 71 s.
func TestWindowedThresholdSeesAStallTheRunHides(t *testing.T) {
	w := newWindowRun(t, map[string][]ThresholdDef{
		"t": {{Source: "p(99)<500"}, windowed("p(99)<500", 10*time.Second)},
	})
	w.feed(w.f.t, 0, 2*time.Minute, stall)
	rep := w.e.EvaluateThresholds(2*time.Minute, true)
	results := rep.Results("t")
	if len(results) != 2 {
		t.Fatalf("results: %+v", results)
	}
	whole, win := results[0], results[1]
	if !whole.OK || whole.Window != 0 || math.Abs(whole.Value-10) > 0.01 {
		t.Errorf("the whole run's p99: %+v, want 10 ms and a pass", whole)
	}
	if win.OK || win.Window != 10*time.Second {
		t.Fatalf("the windowed p99 passed: %+v", win)
	}
	// Windows start at 0, 1, ..., 110 s: 111 of them.
	if win.Windows != 111 || win.FailedWindows != 11 {
		t.Errorf("windows %d, failed %d; want 111 and 11", win.Windows, win.FailedWindows)
	}
	if want := []WindowSpan{{51 * time.Second, 71 * time.Second}}; !slices.Equal(win.Failing, want) {
		t.Errorf("failing spans %v, want %v", win.Failing, want)
	}
	// Every failing window's p99 is a stall value, 2000 ms (the exact
	// max clamps the middle of its bucket); the first is reported.
	if win.Value != 2000 || win.Worst != (WindowSpan{51 * time.Second, 61 * time.Second}) {
		t.Errorf("worst window %v with p99 %v, want 51s–1m1s with 2000", win.Worst, win.Value)
	}
	if !rep.Failed() || rep.Abort() {
		t.Errorf("failed %v, abort %v; want a failure and no abort (no abortOnFail)", rep.Failed(), rep.Abort())
	}
}

// The windows of a Counter, a Rate and a Gauge hold exact counts: one
// second without samples takes exactly 100 off the count of the ten windows
// that hold it.
func TestWindowedCountsAreExact(t *testing.T) {
	w := newWindowRun(t, map[string][]ThresholdDef{
		"c": {windowed("count>=1000", 10*time.Second), windowed("rate>=100", 10*time.Second)},
		"r": {windowed("rate<0.2", 5*time.Second)},
		"g": {windowed("value<50", 3*time.Second)},
	})
	gap := func(at time.Duration) float64 {
		if at >= 30*time.Second && at < 31*time.Second {
			return math.NaN()
		}
		return 1
	}
	w.feed(w.f.c, 0, time.Minute, gap)
	// A fifth of r's samples are true, but all of them within 40–41 s.
	w.feed(w.f.r, 0, time.Minute, func(at time.Duration) float64 {
		if at >= 40*time.Second && at < 41*time.Second {
			return 1
		}
		return 0
	})
	// g is 100 between 20 and 20.5 s, 1 otherwise.
	w.feed(w.f.g, 0, time.Minute, func(at time.Duration) float64 {
		if at >= 20*time.Second && at < 20500*time.Millisecond {
			return 100
		}
		return 1
	})
	rep := w.e.EvaluateThresholds(time.Minute, true)

	count := result(t, rep, "c", "count>=1000")
	if count.Windows != 51 || count.FailedWindows != 10 || count.Value != 900 {
		t.Errorf("count: %d windows, %d failed, worst %v; want 51, 10 and exactly 900", count.Windows, count.FailedWindows, count.Value)
	}
	if want := []WindowSpan{{21 * time.Second, 40 * time.Second}}; !slices.Equal(count.Failing, want) {
		t.Errorf("count's failing spans %v, want %v", count.Failing, want)
	}
	if rate := result(t, rep, "c", "rate>=100"); rate.Value != 90 || rate.FailedWindows != 10 {
		t.Errorf("rate: worst %v in %d failing windows, want 90/s in 10", rate.Value, rate.FailedWindows)
	}
	// A 5 s window holding 40–41 s has 100 true samples of 500: 0.2.
	if r := result(t, rep, "r", "rate<0.2"); r.FailedWindows != 5 || r.Value != 0.2 ||
		!slices.Equal(r.Failing, []WindowSpan{{36 * time.Second, 45 * time.Second}}) {
		t.Errorf("rate: %+v; want 5 failing windows over 36–45 s with 0.2", r)
	}
	// A Gauge's value in a window is its last sample's there: the gauge is
	// 100 only within 20–20.5 s, where no window ends, so every window
	// sees 1.
	if g := result(t, rep, "g", "value<50"); !g.OK || g.Windows != 58 || g.Value != 1 {
		t.Errorf("gauge: %+v; want 58 passing windows with value 1", g)
	}
}

// A window without samples is not judged, except a Counter's, whose count
// is then 0.
func TestEmptyWindows(t *testing.T) {
	w := newWindowRun(t, map[string][]ThresholdDef{
		"c": {windowed("count>0", 10*time.Second)},
		"t": {windowed("p(99)<500", 10*time.Second)},
	})
	one := func(time.Duration) float64 { return 1 }
	w.feed(w.f.c, 0, 10*time.Second, one)
	w.feed(w.f.t, 0, 10*time.Second, one)
	w.feed(w.f.c, 30*time.Second, 40*time.Second, one)
	w.feed(w.f.t, 30*time.Second, 40*time.Second, one)
	rep := w.e.EvaluateThresholds(40*time.Second, true)
	// Windows start at 0..30 s; those starting at 10 to 20 s hold nothing.
	c := result(t, rep, "c", "count>0")
	if c.Windows != 31 || c.FailedWindows != 11 || c.Value != 0 ||
		!slices.Equal(c.Failing, []WindowSpan{{10 * time.Second, 30 * time.Second}}) {
		t.Errorf("counter: %+v; want 11 of 31 windows failing over 10–30 s", c)
	}
	if tr := result(t, rep, "t", "p(99)<500"); !tr.OK || tr.Windows != 20 {
		t.Errorf("trend: %+v; want 20 judged windows, all passing", tr)
	}
}

// During the run a window is judged WindowGrace after its end, and
// abortOnFail acts on the first failing window that ends at or after
// delayAbortEval.
func TestWindowedAbortOnFail(t *testing.T) {
	for _, c := range []struct {
		delay time.Duration
		// abortAt is the first evaluation (every 2 s) that aborts: the
		// first failing window ends at 61 s and is judged from 63 s; with
		// a delay of 70 s, the first that counts ends at 70 s.
		abortAt time.Duration
	}{{0, 64 * time.Second}, {70 * time.Second, 72 * time.Second}} {
		def := ThresholdDef{Source: "p(99)<500", Window: 10 * time.Second, AbortOnFail: true, DelayAbortEval: c.delay}
		w := newWindowRun(t, map[string][]ThresholdDef{"t": {def}})
		var abortAt time.Duration
		for at := time.Duration(0); at < 2*time.Minute; at += 2 * time.Second {
			w.feed(w.f.t, at, at+2*time.Second, stall)
			if w.e.EvaluateThresholds(at+2*time.Second, false).Abort() {
				abortAt = at + 2*time.Second
				break
			}
		}
		if abortAt != c.abortAt {
			t.Errorf("delayAbortEval %s: aborted at %s, want %s", c.delay, abortAt, c.abortAt)
		}
	}
}

// A sample that reaches the engine after every window holding it was
// judged is counted as late and left out of the windows; one within the
// grace is in its window.
func TestLateSamples(t *testing.T) {
	w := newWindowRun(t, map[string][]ThresholdDef{"t": {windowed("max<100", time.Second)}})
	w.feed(w.f.t, 0, 5*time.Second, func(time.Duration) float64 { return 1 })
	// Windows ending by 8 s − WindowGrace = 6 s are judged: 0..4 s.
	if r := result(t, w.e.EvaluateThresholds(8*time.Second, false), "t", "max<100"); r.Windows != 5 {
		t.Fatalf("judged %d windows by 8 s, want 5", r.Windows)
	}
	// At 8 s, a slow value of 3.5 s arrives (late), then one of 6.5 s (in
	// time for window 6–7 s).
	w.e.Ingest([]Sample{
		{Metric: w.f.t, Tags: EmptyTags, Time: w.origin.Add(3500 * time.Millisecond), Value: 1000},
		{Metric: w.f.t, Tags: EmptyTags, Time: w.origin.Add(6500 * time.Millisecond), Value: 1000},
	})
	r := result(t, w.e.EvaluateThresholds(8*time.Second, true), "t", "max<100")
	if r.Late != 1 || r.FailedWindows != 1 || !slices.Equal(r.Failing, []WindowSpan{{6 * time.Second, 7 * time.Second}}) {
		t.Errorf("late %d, failing %v; want 1 late sample and window 6–7 s failing", r.Late, r.Failing)
	}
}

// A run shorter than its window is judged once, on what it lasted: a
// Counter's rate is per second of the run.
func TestRunShorterThanItsWindow(t *testing.T) {
	w := newWindowRun(t, map[string][]ThresholdDef{"c": {windowed("rate>150", time.Minute)}})
	w.feed(w.f.c, 0, 20*time.Second, func(time.Duration) float64 { return 1 })
	r := result(t, w.e.EvaluateThresholds(20*time.Second, true), "c", "rate>150")
	if r.Windows != 1 || r.Value != 100 || r.OK || r.Worst != (WindowSpan{0, time.Minute}) {
		t.Errorf("%+v; want one window, 100/s, failing", r)
	}
}

// The results a report holds do not change when later windows are judged.
func TestWindowResultsAreSnapshots(t *testing.T) {
	w := newWindowRun(t, map[string][]ThresholdDef{"t": {windowed("max<100", time.Second)}})
	slow := func(time.Duration) float64 { return 1000 }
	w.feed(w.f.t, 0, 2*time.Second, slow)
	early := result(t, w.e.EvaluateThresholds(10*time.Second, false), "t", "max<100")
	w.feed(w.f.t, 10*time.Second, 11*time.Second, slow)
	w.feed(w.f.t, 2*time.Second, 3*time.Second, slow) // late
	late := result(t, w.e.EvaluateThresholds(11*time.Second, true), "t", "max<100")
	if want := []WindowSpan{{0, 2 * time.Second}}; !slices.Equal(early.Failing, want) {
		t.Errorf("the earlier result changed to %v, want %v", early.Failing, want)
	}
	if want := []WindowSpan{{0, 2 * time.Second}, {10 * time.Second, 11 * time.Second}}; !slices.Equal(late.Failing, want) {
		t.Errorf("failing %v, want %v", late.Failing, want)
	}
	if obs := w.e.Observed(); len(obs) != 1 || len(obs[0].Thresholds) != 1 || obs[0].Thresholds[0].FailedWindows != 3 {
		t.Errorf("Observed: %+v", obs)
	}
}

// Windowed thresholds on a submetric see only its samples.
func TestWindowedSubmetric(t *testing.T) {
	w := newWindowRun(t, map[string][]ThresholdDef{"t{name:slow}": {windowed("max<100", 5*time.Second)}})
	slow, fast := EmptyTags.With("name", "slow"), EmptyTags.With("name", "fast")
	at := w.origin.Add(2 * time.Second)
	w.e.Ingest([]Sample{
		{Metric: w.f.t, Tags: fast, Time: at, Value: 1000},
		{Metric: w.f.t, Tags: slow, Time: at, Value: 50},
		{Metric: w.f.t, Tags: slow, Time: at.Add(5 * time.Second), Value: 500},
	})
	r := result(t, w.e.EvaluateThresholds(10*time.Second, true), "t{name:slow}", "max<100")
	// The final evaluation judges the windows 0–5 s to 5–10 s, those that
	// began and ended within the run's ten seconds.
	if r.FailedWindows != 3 || r.Value != 500 || r.Windows != 6 {
		t.Errorf("%+v; want 3 of 6 windows failing on the 500 ms sample alone", r)
	}
}

func TestWindowTooShort(t *testing.T) {
	f := newThresholdFixture(t)
	_, err := NewEngine(f.reg, EngineOptions{Thresholds: map[string][]ThresholdDef{"t": {windowed("p(99)<5", 500*time.Millisecond)}}})
	if err == nil || !strings.Contains(err.Error(), `thresholds.t: the window of "p(99)<5" must be at least 1s, got 500ms`) {
		t.Errorf("err = %v", err)
	}
}

// Thresholds of one key with the same window share its steps, whatever
// nanoseconds the division into steps leaves.
func TestWindowsAreShared(t *testing.T) {
	f := newThresholdFixture(t)
	odd := time.Second + 1
	th, err := NewThresholds(f.reg, map[string][]ThresholdDef{"t": {
		windowed("p(99)<5", 7*time.Second), windowed("avg<5", 7*time.Second),
		windowed("max<5", odd), windowed("min<5", odd),
	}})
	if err != nil {
		t.Fatal(err)
	}
	wins := th.sets[0].wins
	if len(wins) != 2 || len(wins[0].items) != 2 || len(wins[1].items) != 2 {
		t.Fatalf("%d window states, want 2 of 2 thresholds each", len(wins))
	}
	if r := wins[1].items[0].last; r.Window != time.Second {
		t.Errorf("the odd window is reported as %s, want the 1s its steps make", r.Window)
	}
}
