package executor_test

import (
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
	"github.com/metronome-load/metronome/metrics"
)

func droppedCharges(h *arrivalHarness) []float64 {
	return h.pool.Rec.Of(h.m.CorrectedLatency, metrics.EmptyTags.With("outcome", "dropped"))
}

// k6's drop semantics with metronome's charge: one VU, 10 arrivals/s for
// 1s, 250 ms of work. Arrival 0 runs 0–250 ms, so 1 (100 ms) and 2 (200 ms)
// find no idle VU and are dropped; the VU is free at 250 ms, which charges
// them 150 and 50 ms. Arrival 3 (300 ms) runs to 550 ms and 4, 5 are
// dropped, charged at 550 ms; 6 runs to 850 ms and 7, 8 are charged
// there; 9 (900 ms) completes in the graceful stop.
func TestConstantArrivalRateDrops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newArrivalHarness(executortest.Constant(250*time.Millisecond), 1)
		cfg := arrivalParse(t, `{"executor":"constant-arrival-rate","rate":10,"timeUnit":"1s","duration":"1s","preAllocatedVUs":1}`)
		a, took := h.run(t, t.Context(), cfg)
		if a.Intended != 10 || a.Completed != 4 || a.Dropped != 6 || a.OnTime != 4 || a.PeakBacklog != 0 {
			t.Errorf("account %+v, want 10 intended, 4 completed on time, 6 dropped, no backlog", a)
		}
		if took != 1150*time.Millisecond {
			t.Errorf("Run returned at %v, want when arrival 9 ends (1.15s)", took)
		}
		var started []int64
		for _, c := range h.pool.Calls() {
			started = append(started, c.Iteration.Index)
		}
		slices.Sort(started)
		if !slices.Equal(started, []int64{0, 3, 6, 9}) {
			t.Errorf("started %v, want [0 3 6 9]", started)
		}
		if got, want := droppedCharges(h), []float64{150, 50, 150, 50, 150, 50}; !slices.Equal(got, want) {
			t.Errorf("drops charged %v ms, want %v", got, want)
		}
		// dropped_iterations: one sample of 1 per drop, at the arrival's
		// time, when it found the VU busy (as k6 counts it, not when the VU
		// became free), tagged with the executor-level tags only.
		var at []time.Duration
		for _, s := range h.pool.Rec.Samples() {
			if s.Metric == h.m.DroppedIterations {
				if s.Value != 1 {
					t.Errorf("dropped_iterations sample of %v, want 1", s.Value)
				}
				at = append(at, s.Time.Sub(h.t0))
			}
		}
		ms := time.Millisecond
		if want := []time.Duration{100 * ms, 200 * ms, 400 * ms, 500 * ms, 700 * ms, 800 * ms}; !slices.Equal(at, want) {
			t.Errorf("dropped_iterations at %v, want %v", at, want)
		}
		if len(h.warnings()) != 1 {
			t.Errorf("warnings %q, want one: the VU budget (1) is exhausted", h.warnings())
		}
	})
}

// A drop that no VU frees up for before the regular end is charged up to
// the regular end: with 2s of work, arrivals 1 … 9 (100 … 900 ms) are all
// charged at 1s, but each is counted in dropped_iterations at its own time,
// as k6 counts it: a VU stalled for the whole scenario does not hold back
// the count (and a threshold on it) until the end.
func TestConstantArrivalRateDropsChargedAtEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newArrivalHarness(executortest.Constant(2*time.Second), 1)
		cfg := arrivalParse(t, `{"executor":"constant-arrival-rate","rate":10,"duration":"1s","preAllocatedVUs":1}`)
		a, took := h.run(t, t.Context(), cfg)
		if a.Completed != 1 || a.Dropped != 9 || took != 2*time.Second {
			t.Errorf("account %+v after %v, want 1 completed, 9 dropped, done at 2s", a, took)
		}
		if got, want := droppedCharges(h), []float64{900, 800, 700, 600, 500, 400, 300, 200, 100}; !slices.Equal(got, want) {
			t.Errorf("drops charged %v ms, want %v", got, want)
		}
		var at []time.Duration
		for _, s := range h.pool.Rec.Samples() {
			if s.Metric == h.m.DroppedIterations {
				at = append(at, s.Time.Sub(h.t0))
			}
		}
		var want []time.Duration
		for i := range 9 {
			want = append(want, time.Duration(i+1)*100*time.Millisecond)
		}
		if !slices.Equal(at, want) {
			t.Errorf("dropped_iterations at %v, want each at its arrival's time %v", at, want)
		}
	})
}

// Mid-test VU allocation as k6 does it: after a drop, one new VU is
// initialised in the background, and it serves only later arrivals.
// 10/s, 250 ms of work, preAllocatedVUs 1, initialisation 30 ms:
//   - maxVUs 3: arrival 1 (100 ms) is dropped and a VU joins at 130 ms
//     (charge 30 ms); arrival 4 (400 ms) finds both busy (until 450 and
//     550 ms), is dropped, and the third VU joins at 430 ms (charge 30 ms).
//     Three VUs then keep up.
//   - maxVUs 2: the same until arrival 4, which exhausts the budget (one
//     warning) and is charged until a VU frees at 450 ms (50 ms); arrival
//     7 (700 ms) is dropped too and charged until 750 ms (50 ms).
func TestConstantArrivalRateGrowsVUs(t *testing.T) {
	for _, tc := range []struct {
		maxVUs   string
		made     uint64
		charges  []float64
		warnings int
	}{
		{"3", 3, []float64{30, 30}, 0},
		{"2", 2, []float64{30, 50, 50}, 1},
	} {
		t.Run("maxVUs="+tc.maxVUs, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newArrivalHarness(executortest.Constant(250*time.Millisecond), 1)
				h.pool.InitDelay = 30 * time.Millisecond
				cfg := arrivalParse(t, `{"executor":"constant-arrival-rate","rate":10,"duration":"1s","preAllocatedVUs":1,"maxVUs":`+tc.maxVUs+`}`)
				a, _ := h.run(t, t.Context(), cfg)
				if h.pool.Made() != tc.made || a.Dropped != int64(len(tc.charges)) {
					t.Errorf("made %d VUs, account %+v; want %d VUs, %d dropped", h.pool.Made(), a, tc.made, len(tc.charges))
				}
				if got := droppedCharges(h); !slices.Equal(got, tc.charges) {
					t.Errorf("drops charged %v ms, want %v", got, tc.charges)
				}
				w := h.warnings()
				if len(w) != tc.warnings || (len(w) == 1 && !strings.Contains(w[0], "insufficient VUs, reached 2 active VUs")) {
					t.Errorf("warnings %q, want %d about insufficient VUs", w, tc.warnings)
				}
			})
		})
	}
}

// creepingClock is the bubble's clock seen by a process that takes time to
// look at it: every reading is a microsecond later than the one before, as
// on a real machine where goroutines are scheduled and code runs between
// two readings. Its timers are the bubble's.
type creepingClock struct{ reads atomic.Int64 }

func (c *creepingClock) Now() time.Time {
	return time.Now().Add(time.Duration(c.reads.Add(1)) * time.Microsecond)
}

func (c *creepingClock) NewTimer(d time.Duration) clock.Timer { return clock.Real.NewTimer(d) }

// TestArrivalRateFirstArrivalNotDropped: k6 drops an arrival only when no
// VU is idle at its time. With five idle VUs the first arrival (t = 0) must
// start even though the VUs' goroutines read the clock a little after the
// scenario began; so must every later one, as each VU is free long before
// its next arrival. Checked for both of k6's arrival-rate executors.
func TestArrivalRateFirstArrivalNotDropped(t *testing.T) {
	for _, js := range []string{
		`{"executor":"constant-arrival-rate","rate":10,"timeUnit":"1s","duration":"1s","preAllocatedVUs":5}`,
		`{"executor":"ramping-arrival-rate","startRate":10,"timeUnit":"1s","preAllocatedVUs":5,"stages":[{"duration":"1s","target":10}]}`,
	} {
		t.Run(strings.Split(js, `"`)[3], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newArrivalHarness(executortest.Constant(time.Millisecond), 5)
				h.deps.Clock = &creepingClock{}
				cfg := arrivalParse(t, js)
				ex := cfg.New(h.deps)
				if err := ex.Run(t.Context()); err != nil {
					t.Fatal(err)
				}
				a := ex.(executor.Accounter).Account()
				if a.Completed != 10 || a.Dropped != 0 || len(h.pool.Rec.Of(h.m.DroppedIterations, nil)) != 0 {
					t.Errorf("account %+v, %d dropped_iterations samples; want 10 completed, none dropped",
						a, len(h.pool.Rec.Of(h.m.DroppedIterations, nil)))
				}
				var started []int64
				for _, c := range h.pool.Calls() {
					started = append(started, c.Iteration.Index)
				}
				slices.Sort(started)
				if !slices.Equal(started, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
					t.Errorf("started arrivals %v, want 0 … 9", started)
				}
			})
		})
	}
}
