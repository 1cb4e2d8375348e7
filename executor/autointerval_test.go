package executor_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
	"github.com/metronome-load/metronome/internal/testkit/proptest"
	"github.com/metronome-load/metronome/metrics"
)

var backfilledTags = metrics.EmptyTags.With("backfilled", "true")

// medianOf is the median of vs (the mean of the two middle values for an
// even count), computed by sorting a copy.
func medianOf(vs []time.Duration) time.Duration {
	s := slices.Clone(vs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 0 {
		return s[m-1] + (s[m]-s[m-1])/2
	}
	return s[m]
}

// The estimate is the median of the last CadenceWindow observations,
// raised to CadenceFloor, from the CadenceMinIterations-th observation on:
// checked against a sort after every observation of random sequences with
// many repeated values, as a slow stall or a burst of fast iterations
// produces them.
func TestCadenceIsTheMedianOfTheWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2^proptest.Seed(t)))
	for seq := range 200 {
		var c executor.Cadence
		var seen []time.Duration
		for k := range 1 + rng.IntN(200) {
			var d time.Duration
			switch rng.IntN(4) {
			case 0:
				d = time.Duration(rng.IntN(5)) * time.Millisecond
			case 1:
				d = time.Duration(rng.IntN(300)) * time.Microsecond
			default:
				d = time.Duration(rng.Int64N(int64(time.Second)))
			}
			est, ok := c.Estimate()
			if n := len(seen); ok != (n >= executor.CadenceMinIterations) {
				t.Fatalf("sequence %d, after %d observations: estimate available = %v", seq, n, ok)
			}
			if ok {
				window := seen[max(0, len(seen)-executor.CadenceWindow):]
				if want := max(medianOf(window), executor.CadenceFloor); est != want {
					t.Fatalf("sequence %d, observation %d: estimate %v, want the window's median %v", seq, k, est, want)
				}
			}
			c.Observe(d)
			seen = append(seen, d)
		}
	}
}

// A stall costs a closed-loop VU one slow iteration: however slow, it
// leaves the median of a full window where it was, and even a run of
// CadenceWindow/2 − 1 of them does.
func TestCadenceIgnoresStalls(t *testing.T) {
	var c executor.Cadence
	for range executor.CadenceWindow {
		c.Observe(10 * time.Millisecond)
	}
	for range executor.CadenceWindow/2 - 1 {
		c.Observe(time.Hour)
	}
	if est, _ := c.Estimate(); est != 10*time.Millisecond {
		t.Errorf("estimate after %d stalls in a window of %d: %v, want 10ms", executor.CadenceWindow/2-1, executor.CadenceWindow, est)
	}
	// A lasting change of cadence moves it once it fills half the window.
	for range executor.CadenceWindow/2 + 1 {
		c.Observe(20 * time.Millisecond)
	}
	if est, _ := c.Estimate(); est != 20*time.Millisecond {
		t.Errorf("estimate after the cadence changed to 20ms for more than half a window: %v", est)
	}
}

func TestCadenceDoesNotAllocate(t *testing.T) {
	var c executor.Cadence
	var i int
	if n := testing.AllocsPerRun(1000, func() {
		c.Observe(time.Duration(i%97) * time.Millisecond)
		c.Estimate()
		i++
	}); n != 0 {
		t.Errorf("Observe + Estimate: %v allocations, want 0", n)
	}
}

func TestBackFilled(t *testing.T) {
	for _, c := range []struct {
		d, interval time.Duration
		want        int64
	}{
		{512500 * time.Microsecond, 12500 * time.Microsecond, 40},
		{25 * time.Millisecond, 12500 * time.Microsecond, 1},
		{24999 * time.Microsecond, 12500 * time.Microsecond, 0},
		{time.Second, 0, 0},
		{1100 * time.Millisecond, 100 * time.Millisecond, 10},
	} {
		var rec executortest.Recorder
		m := metrics.RegisterBuiltin(metrics.NewRegistry()).CorrectedLatency
		executor.BackFill(&rec, m, metrics.EmptyTags, time.Time{}, c.d, c.interval)
		n := int64(len(rec.Of(m, backfilledTags)))
		if got := executor.BackFilled(c.d, c.interval); got != c.want || got != n {
			t.Errorf("BackFilled(%v, %v) = %d, BackFill recorded %d; want %d", c.d, c.interval, got, n, c.want)
		}
	}
}

// The text forms of expectedInterval, in a scenario and test-wide.
func TestParseExpectedInterval(t *testing.T) {
	for _, c := range []struct {
		in   string
		want executor.ExpectedInterval
		err  string
	}{
		{"auto", executor.ExpectedInterval{Mode: executor.IntervalAuto}, ""},
		{" AUTO ", executor.ExpectedInterval{Mode: executor.IntervalAuto}, ""},
		{"off", executor.ExpectedInterval{Mode: executor.IntervalOff}, ""},
		{"0", executor.ExpectedInterval{Mode: executor.IntervalOff}, ""},
		{"12.5ms", executor.ExpectedInterval{Mode: executor.IntervalFixed, Fixed: 12500 * time.Microsecond}, ""},
		{"250", executor.ExpectedInterval{Mode: executor.IntervalFixed, Fixed: 250 * time.Millisecond}, ""},
		{"-1s", executor.ExpectedInterval{}, "must not be negative, got -1s"},
		{"sometimes", executor.ExpectedInterval{}, `must be "auto", "off" or a duration such as "10ms", got "sometimes"`},
		{"", executor.ExpectedInterval{}, `must be "auto", "off" or a duration such as "10ms", got ""`},
	} {
		got, err := executor.ParseExpectedInterval(c.in)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	// In a scenario, a number is milliseconds as for every duration.
	cv := mustParse(t, `{"executor":"constant-vus","duration":"1m","expectedInterval":12.5}`).(*executor.ConstantVUsConfig)
	if cv.ExpectedInterval.Fixed != 12500*time.Microsecond {
		t.Errorf("expectedInterval 12.5 gave %+v, want 12.5ms", cv.ExpectedInterval)
	}
}

// A scenario that sets expectedInterval keeps it; one that does not takes
// the run's default, or its executor's: auto for the looping executors,
// off for the iterations executors.
func TestDefaultExpectedInterval(t *testing.T) {
	auto := executor.ExpectedInterval{Mode: executor.IntervalAuto}
	off := executor.ExpectedInterval{Mode: executor.IntervalOff}
	fixed := executor.ExpectedInterval{Mode: executor.IntervalFixed, Fixed: 5 * time.Millisecond}
	interval := func(c executor.Config) executor.ExpectedInterval {
		switch c := c.(type) {
		case *executor.ConstantVUsConfig:
			return c.ExpectedInterval
		case *executor.RampingVUsConfig:
			return c.ExpectedInterval
		case *executor.SharedIterationsConfig:
			return c.ExpectedInterval
		case *executor.PerVUIterationsConfig:
			return c.ExpectedInterval
		}
		t.Fatalf("%T is not a closed-model config", c)
		return executor.ExpectedInterval{}
	}
	for _, c := range []struct {
		js        string
		def, want executor.ExpectedInterval
	}{
		{`{"executor":"constant-vus","duration":"1m"}`, executor.ExpectedInterval{}, auto},
		{`{"executor":"ramping-vus","stages":[{"duration":"1m","target":2}]}`, executor.ExpectedInterval{}, auto},
		{`{"executor":"shared-iterations"}`, executor.ExpectedInterval{}, off},
		{`{"executor":"per-vu-iterations"}`, executor.ExpectedInterval{}, off},
		{`{"executor":"constant-vus","duration":"1m"}`, off, off},
		{`{"executor":"per-vu-iterations"}`, auto, auto},
		{`{"executor":"shared-iterations"}`, fixed, fixed},
		{`{"executor":"constant-vus","duration":"1m","expectedInterval":"off"}`, auto, off},
		{`{"executor":"ramping-vus","stages":[{"duration":"1m","target":2}],"expectedInterval":"5ms"}`, auto, fixed},
		{`{"executor":"per-vu-iterations","expectedInterval":"auto"}`, executor.ExpectedInterval{}, auto},
	} {
		cfg := mustParse(t, c.js)
		cm, ok := cfg.(executor.ClosedModel)
		if !ok {
			t.Fatalf("%s: %T does not implement ClosedModel", c.js, cfg)
		}
		cm.DefaultExpectedInterval(c.def)
		if got := interval(cfg); got != c.want {
			t.Errorf("%s with default %q: expectedInterval %q, want %q", c.js, c.def, got, c.want)
		}
	}
	if d := mustParse(t, `{"executor":"constant-vus","duration":"1m","expectedInterval":"auto"}`).Description(); d != "1 looping VUs for 1m0s (expectedInterval: auto, gracefulStop: 30s)" {
		t.Errorf("banner %q", d)
	}
	for _, js := range []string{
		`{"executor":"constant-arrival-rate","rate":1,"duration":"1s","preAllocatedVUs":1}`,
		`{"executor":"intended-arrival-rate","rate":1,"duration":"1s","preAllocatedVUs":1}`,
	} {
		if _, ok := mustParse(t, js).(executor.ClosedModel); ok {
			t.Errorf("%s: an open-model config takes a closed-model default", js)
		}
	}
}

// docs/DESIGN.md §7's closed loop (fixture_closed_test.go) with
// expectedInterval 'auto': its one VU's iterations start 12.5 ms apart
// until the one that meets the freeze, so from its sixth iteration on its
// estimate is exactly the true 12.5 ms, and the back-fill is the hand-set
// interval's to the sample: the same 449 corrected_latency values, 39 of
// them back-filled. The five iterations before the estimate back-fill
// nothing (none of them is slow), and the account says so.
func TestFrozenServerClosedModelAuto(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hf, _ := runFrozenClosed(t, `{"executor":"constant-vus","vus":1,"duration":"5625ms","expectedInterval":"12.5ms"}`)
		fixed := hf.pool.Rec.Samples()
		ha, _ := runFrozenClosed(t, `{"executor":"constant-vus","vus":1,"duration":"5625ms","expectedInterval":"auto"}`)
		auto := ha.pool.Rec.Samples()
		if len(auto) != len(fixed) {
			t.Fatalf("auto recorded %d samples, the hand-set interval %d", len(auto), len(fixed))
		}
		for k := range auto {
			a, f := auto[k], fixed[k]
			if a.Metric.Name != f.Metric.Name || a.Tags != f.Tags || a.Value != f.Value || a.Time.Sub(ha.t0) != f.Time.Sub(hf.t0) {
				t.Fatalf("sample %d: auto %s=%v %v, hand-set %s=%v %v", k, a.Metric.Name, a.Value, a.Tags, f.Metric.Name, f.Value, f.Tags)
			}
		}
		if n := len(ha.pool.Rec.Of(ha.m.CorrectedLatency, backfilledTags)); n != 39 {
			t.Errorf("%d back-filled samples, want 39", n)
		}
		acc := ha.fill
		want := executor.BackFillAccount{
			Interval: executor.ExpectedInterval{Mode: executor.IntervalAuto},
			Requests: fixtureIters, Backfilled: 39, Unestimated: executor.CadenceMinIterations,
			Estimates: []time.Duration{12500 * time.Microsecond},
		}
		if !equalAccounts(acc, want) {
			t.Errorf("account %+v, want %+v", acc, want)
		}
		if acc := hf.fill; !equalAccounts(acc, executor.BackFillAccount{
			Interval: executor.ExpectedInterval{Mode: executor.IntervalFixed, Fixed: 12500 * time.Microsecond},
			Requests: fixtureIters, Backfilled: 39,
		}) {
			t.Errorf("hand-set account %+v", acc)
		}
	})
}

func equalAccounts(a, b executor.BackFillAccount) bool {
	return a.Interval == b.Interval && a.Requests == b.Requests && a.Backfilled == b.Backfilled &&
		a.Unestimated == b.Unestimated && slices.Equal(a.Estimates, b.Estimates)
}

// The same closed loop with a think time that varies from iteration to
// iteration, uniformly between 1.5 and 3.5 ms (seeded by the iteration
// index, so both runs see the same times): the iterations take 11.5 to
// 13.5 ms, 12.5 ms on average. The estimate is a median of 32 such
// durations, whose standard error is √(π/2)·σ/√32 = 0.128 ms for the
// uniform's σ = 2/√12 ms; the test allows three of those, 0.4 ms, and so
// the back-fill of the stalled iteration (about 512 ms) may differ from the
// true interval's by its count at 12.1 or 12.9 ms.
func TestFrozenServerClosedModelAutoJitter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		run := func(js string) (*harness, executor.BackFillAccount) {
			h := newHarness(nil)
			server := frozenServer(h.t0)
			h.pool.Work = func(it executor.Iteration, start time.Time) time.Duration {
				rng := rand.New(rand.NewPCG(uint64(it.Index), 16))
				return server(it, start) + 1500*time.Microsecond + time.Duration(rng.IntN(2001))*time.Microsecond
			}
			h.run(t, context.Background(), mustParse(t, js))
			return h, h.fill
		}
		hf, fixed := run(`{"executor":"constant-vus","vus":1,"duration":"5625ms","expectedInterval":"12.5ms"}`)
		ha, auto := run(`{"executor":"constant-vus","vus":1,"duration":"5625ms","expectedInterval":"auto"}`)

		slowest := func(h *harness) time.Duration {
			var d time.Duration
			for _, c := range h.pool.Calls() {
				d = max(d, c.End.Sub(c.Start))
			}
			return d
		}
		d := slowest(ha)
		if d != slowest(hf) || d < 500*time.Millisecond {
			t.Fatalf("the slowest iterations took %v and %v; want the same, over 500 ms", d, slowest(hf))
		}
		if len(auto.Estimates) != 1 {
			t.Fatalf("estimates %v, want one VU's", auto.Estimates)
		}
		const tol = 400 * time.Microsecond
		if est := auto.Estimates[0]; est < 12500*time.Microsecond-tol || est > 12500*time.Microsecond+tol {
			t.Errorf("estimate %v, want 12.5ms ± %v", est, tol)
		}
		lo, hi := executor.BackFilled(d, 12500*time.Microsecond+tol), executor.BackFilled(d, 12500*time.Microsecond-tol)
		t.Logf("stalled iteration %v: back-filled %d with the true interval, %d with the estimate %v (allowed %d…%d)",
			d, fixed.Backfilled, auto.Backfilled, auto.Estimates[0], lo, hi)
		if fixed.Backfilled != executor.BackFilled(d, 12500*time.Microsecond) {
			t.Errorf("the hand-set interval back-filled %d samples, want %d", fixed.Backfilled, executor.BackFilled(d, 12500*time.Microsecond))
		}
		if auto.Backfilled < lo || auto.Backfilled > hi {
			t.Errorf("auto back-filled %d samples, want %d…%d", auto.Backfilled, lo, hi)
		}
		if n := int64(len(ha.pool.Rec.Of(ha.m.CorrectedLatency, backfilledTags))); n != auto.Backfilled {
			t.Errorf("%d samples tagged backfilled=true, the account says %d", n, auto.Backfilled)
		}
	})
}

// A VU whose iterations sleep is estimated from its whole cadence, think
// time included — the interval at which it would have sent had the target
// not stalled — not from its requests, and the think time is in no value.
// One VU of constant-vus: a 2 ms request, then 98 ms of think time; the
// target freezes from 5 s to 6 s. Iteration k starts at 100k ms;
// iteration 50 starts at 5 s and its request is answered at 6.002 s:
// 1,002 ms, back-filled with 902, 802, …, 102 ms (9 samples), the requests
// a user pacing at 100 ms would have sent during the freeze. Estimated
// from the 2 ms requests it would have been 500 samples.
func TestAutoIntervalIncludesThinkTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(nil)
		freezeFrom, freezeTo := h.t0.Add(5*time.Second), h.t0.Add(6*time.Second)
		h.pool.Work = func(_ executor.Iteration, sent time.Time) time.Duration {
			wait := time.Duration(0)
			if !sent.Before(freezeFrom) && sent.Before(freezeTo) {
				wait = freezeTo.Sub(sent)
			}
			return wait + 2*time.Millisecond
		}
		h.pool.Think = executortest.Constant(98 * time.Millisecond)
		h.run(t, context.Background(), mustParse(t, `{"executor":"constant-vus","vus":1,"duration":"10s","expectedInterval":"auto"}`))
		acc := h.fill
		// 51 iterations up to the stalled one, then from 6.1 s every 100 ms
		// while they start before 10 s: 39 more.
		if !equalAccounts(acc, executor.BackFillAccount{
			Interval: executor.ExpectedInterval{Mode: executor.IntervalAuto}, Requests: 90,
			Backfilled: 9, Unestimated: executor.CadenceMinIterations, Estimates: []time.Duration{100 * time.Millisecond},
		}) {
			t.Errorf("account %+v, want 90 requests, 9 back-filled, 5 unestimated, an estimate of 100ms", acc)
		}
		filled := h.pool.Rec.Of(h.m.CorrectedLatency, backfilledTags)
		want := []float64{902, 802, 702, 602, 502, 402, 302, 202, 102}
		if !slices.Equal(filled, want) {
			t.Errorf("back-filled %v, want %v", filled, want)
		}
		if m := slices.Max(h.pool.Rec.Of(h.m.CorrectedLatency, nil)); m != 1002 {
			t.Errorf("largest corrected_latency %v ms, want the stalled request's 1002 (no think time)", m)
		}
	})
}

// ramping-vus VUs that join and leave mid-run each estimate their own
// cadence, and a VU that meets a stall before it has an estimate
// back-fills nothing for it. startVUs 1, then 1 → 3 over 2 s (VU 2 joins
// at 1 s, VU 3 at 2 s), 3 for 2 s, 3 → 1 over 2 s (VU 3 leaves at 5 s;
// the 1 of the last step falls on the end, 6 s). The VUs think 10, 20 and
// 40 ms; the target freezes from 2.1 s to 2.6 s, and an iteration that
// starts then waits for the thaw.
//   - VU 1 (iterations at 10k ms) starts one at 2.1 s that ends at 2.61 s:
//     510 ms, 50 samples at 10 ms.
//   - VU 2 (at 1 s + 20k ms) likewise: 520 ms, 25 samples at 20 ms.
//   - VU 3 (at 2 s + 40k ms) meets the freeze in its fourth iteration,
//     2.12 s to 2.64 s, with three behind it: no estimate, nothing
//     back-filled.
//
// Every VU has 5 iterations without an estimate: 15.
func TestAutoIntervalRampingVUs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(nil)
		freezeFrom, freezeTo := h.t0.Add(2100*time.Millisecond), h.t0.Add(2600*time.Millisecond)
		think := map[uint64]time.Duration{1: 10 * time.Millisecond, 2: 20 * time.Millisecond, 3: 40 * time.Millisecond}
		h.pool.VUWork = func(vu uint64, _ executor.Iteration, start time.Time) time.Duration {
			wait := time.Duration(0)
			if !start.Before(freezeFrom) && start.Before(freezeTo) {
				wait = freezeTo.Sub(start)
			}
			return wait + think[vu]
		}
		h.run(t, context.Background(), mustParse(t, `{"executor":"ramping-vus","startVUs":1,"stages":[
			{"duration":"2s","target":3},{"duration":"2s","target":3},{"duration":"2s","target":1}],"expectedInterval":"auto"}`))
		calls := h.pool.Calls()
		joined := map[uint64]time.Duration{}
		left := map[uint64]time.Duration{}
		for _, c := range calls {
			if at, ok := joined[c.VU]; !ok || h.at(c.Start) < at {
				joined[c.VU] = h.at(c.Start)
			}
			left[c.VU] = max(left[c.VU], h.at(c.End))
		}
		if joined[1] != 0 || joined[2] != time.Second || joined[3] != 2*time.Second || left[3] > 5040*time.Millisecond || left[1] != 6*time.Second {
			t.Fatalf("VUs joined at %v and left at %v; want 0, 1s, 2s and VU 3 gone by 5.04s", joined, left)
		}
		acc := h.fill
		if acc.Backfilled != 75 || acc.Unestimated != 15 || acc.Requests != int64(len(calls)) ||
			!slices.Equal(acc.Estimates, []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond}) {
			t.Errorf("account %+v; want 75 back-filled, 15 unestimated, %d iterations, estimates 10ms 20ms 40ms", acc, len(calls))
		}
		filled := h.pool.Rec.Of(h.m.CorrectedLatency, backfilledTags)
		if n, s := len(filled), sum(filled); n != 75 || s != 10*50*51/2+20*25*26/2 {
			t.Errorf("%d back-filled samples summing to %v ms; want 75 (500…10 by 10, 500…20 by 20) summing to %d",
				n, s, 10*50*51/2+20*25*26/2)
		}
		if n := len(h.pool.Rec.Of(h.m.CorrectedLatency, nil)) - len(filled); n != len(calls) {
			t.Errorf("%d measured corrected_latency samples for %d iterations", n, len(calls))
		}
	})
}

// Against a target that never stalls, the back-fill stays (almost) empty.
// With a steady 10 ms cadence nothing is back-filled. With a jittery one,
// 8 ms plus an exponential delay of mean 2 ms, the median is 8 + 2·ln 2 =
// 9.39 ms and only iterations of at least twice the estimate add a sample:
// a delay over 10.8 ms, e^(−5.39) = 0.46% of iterations, each adding one
// (two would need a delay over 20 ms, 0.005%). The test allows 1%. Each
// VU's estimate is the median of its last 32 durations, whose standard
// error is 1/(2·f(m)·√32) = 0.35 ms for the density f(m) = 0.25/ms at the
// median; the test allows three of those.
func TestAutoIntervalNeverStalling(t *testing.T) {
	for _, c := range []struct {
		name        string
		work        func(vu uint64, it executor.Iteration) time.Duration
		median, tol time.Duration
		most        float64 // back-filled samples per iteration
	}{
		{"steady", func(uint64, executor.Iteration) time.Duration { return 10 * time.Millisecond }, 10 * time.Millisecond, 0, 0},
		{"jittery", func(vu uint64, it executor.Iteration) time.Duration {
			rng := rand.New(rand.NewPCG(vu, uint64(it.Index)))
			return 8*time.Millisecond + time.Duration(rng.ExpFloat64()*2000)*time.Microsecond
		}, 9386 * time.Microsecond, 1060 * time.Microsecond, 0.01},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(nil)
				h.pool.VUWork = func(vu uint64, it executor.Iteration, _ time.Time) time.Duration { return c.work(vu, it) }
				h.run(t, context.Background(), mustParse(t, `{"executor":"constant-vus","vus":4,"duration":"30s","expectedInterval":"auto"}`))
				acc := h.fill
				share := float64(acc.Backfilled) / float64(acc.Requests)
				t.Logf("%d requests, %d back-filled (%.2f%%), estimates %v", acc.Requests, acc.Backfilled, 100*share, acc.Estimates)
				if share > c.most {
					t.Errorf("%d back-filled samples for %d requests (%.2f%%), want at most %.0f%%", acc.Backfilled, acc.Requests, 100*share, 100*c.most)
				}
				if len(acc.Estimates) != 4 {
					t.Fatalf("estimates %v, want 4", acc.Estimates)
				}
				for _, est := range acc.Estimates {
					if est < c.median-c.tol || est > c.median+c.tol {
						t.Errorf("estimate %v, want the cadence's median %v ± %v", est, c.median, c.tol)
					}
				}
			})
		})
	}
}

// Off is off: a scenario with expectedInterval 'off' records no
// corrected_latency, and its back-fill account counts nothing.
func TestExpectedIntervalOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(executortest.Constant(300 * time.Millisecond))
		h.run(t, context.Background(), mustParse(t, `{"executor":"constant-vus","duration":"2s","expectedInterval":"off"}`))
		if n := h.count(h.m.CorrectedLatency); n != 0 {
			t.Errorf("%d corrected_latency samples with expectedInterval off", n)
		}
		if !equalAccounts(h.fill, executor.BackFillAccount{Interval: executor.ExpectedInterval{Mode: executor.IntervalOff}}) {
			t.Errorf("the account counted something: %+v", h.fill)
		}
	})
}

// The accounting a back-filling scenario adds to each iteration allocates
// nothing, whether it back-fills or not (the recorder here keeps nothing).
func TestClosedBackFillDoesNotAllocate(t *testing.T) {
	deps, _ := executortest.NewPool(nil, nil).Deps(metrics.NewRegistry())
	deps.State = &executor.State{}
	tags := metrics.EmptyTags.With("scenario", "default")
	tags.With("backfilled", "true")
	vu := &accountVU{buf: metrics.NewBuffer(func(batch []metrics.Sample) { metrics.ReleaseBatch(batch) }), m: deps.Metrics.CorrectedLatency, tags: tags}
	for _, interval := range []executor.ExpectedInterval{
		{Mode: executor.IntervalAuto},
		{Mode: executor.IntervalFixed, Fixed: 10 * time.Millisecond},
	} {
		t0 := time.Now()
		clk := clock.NewManual(t0)
		deps.Clock = clk
		account := executor.ClosedBackFill(deps, interval)
		var i int64
		n := testing.AllocsPerRun(2000, func() {
			d := 10 * time.Millisecond
			if i%50 == 49 {
				d = 95 * time.Millisecond // back-fills 8 samples
			}
			start := t0.Add(time.Duration(i) * 100 * time.Millisecond)
			clk.Advance(start.Sub(clk.Now()))
			vu.next = executor.Result{Start: start, End: start.Add(d), Tags: tags}
			account(vu, executor.Iteration{Index: i})
			vu.buf.FlushIfOlder(start.Add(d))
			i++
		})
		if n != 0 {
			t.Errorf("%s: %v allocations per iteration, want 0", interval, n)
		}
	}
}

// recVU is a VU whose iteration is one request that takes the whole of
// next, the result the caller made; it records into an
// executortest.Recorder.
type recVU struct {
	rec  *executortest.Recorder
	m    *metrics.Metric
	next executor.Result
}

func (v *recVU) ID() uint64                 { return 1 }
func (v *recVU) Recorder() metrics.Recorder { return v.rec }
func (v *recVU) Run(_ context.Context, it executor.Iteration) executor.Result {
	res := v.next
	it.Latency(res.Start).Record(v.rec, v.m, res.Tags, res.End, res.End.Sub(res.Start))
	return res
}

// Only normal iterations feed the estimate: a burst of iterations that
// threw an exception early (1 ms instead of 10) leaves it at 10 ms, so a
// 100 ms iteration afterwards adds 9 samples, not 99. Iterations that
// throw are still back-filled against the estimate.
func TestAutoIntervalIgnoresFailedIterations(t *testing.T) {
	deps, m := executortest.NewPool(nil, nil).Deps(metrics.NewRegistry())
	deps.State = &executor.State{}
	vu := &recVU{rec: &executortest.Recorder{}, m: m.CorrectedLatency}
	at := time.Unix(0, 0)
	clk := clock.NewManual(at)
	deps.Clock = clk
	account := executor.ClosedBackFill(deps, executor.ExpectedInterval{Mode: executor.IntervalAuto})
	run := func(d time.Duration, out executor.Outcome) {
		clk.Advance(at.Sub(clk.Now()))
		vu.next = executor.Result{Outcome: out, Start: at, End: at.Add(d), Tags: metrics.EmptyTags}
		account(vu, executor.Iteration{})
		at = at.Add(d)
	}
	for range 10 {
		run(10*time.Millisecond, executor.Completed)
	}
	for range 20 {
		run(time.Millisecond, executor.Failed)
	}
	run(100*time.Millisecond, executor.Completed)
	if n := len(vu.rec.Of(m.CorrectedLatency, backfilledTags)); n != 9 {
		t.Errorf("%d samples back-filled for a 100 ms iteration after failed 1 ms ones, want 9 (estimate 10 ms)", n)
	}
	run(50*time.Millisecond, executor.Failed)
	if n := len(vu.rec.Of(m.CorrectedLatency, backfilledTags)); n != 9+4 {
		t.Errorf("%d samples back-filled after a 50 ms iteration that threw, want 9 + 4", n)
	}
}
