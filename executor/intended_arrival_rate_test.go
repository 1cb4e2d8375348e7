package executor_test

import (
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
	"github.com/metronome-load/metronome/metrics"
)

// lindley returns the start and end of each arrival served FIFO by one VU:
// s_i = max(t_i, e_{i−1}), e_i = s_i + w_i.
func lindley(t0 time.Time, offsets []time.Duration, work func(i int) time.Duration) (starts, ends []time.Time) {
	var free time.Time
	for i, off := range offsets {
		s := t0.Add(off)
		if free.After(s) {
			s = free
		}
		free = s.Add(work(i))
		starts = append(starts, s)
		ends = append(ends, free)
	}
	return starts, ends
}

// Catch-up after a stall: one VU, 100 arrivals/s, 1 ms of work, except
// arrival 20 (due at 200 ms) which takes 305 ms. Arrivals 21 … 50 pile up
// in the backlog (peak 30 at 500 ms), start back to back from 505 ms, and
// the schedule is caught up by arrival 54 (due at 540 ms); nothing is
// dropped and the schedule is not shifted: each start is the FIFO
// single-server recursion.
func TestIntendedCatchUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		work := func(i int) time.Duration {
			if i == 20 {
				return 305 * time.Millisecond
			}
			return time.Millisecond
		}
		h := newArrivalHarness(func(it executor.Iteration, _ time.Time) time.Duration { return work(int(it.Index)) }, 1)
		cfg := arrivalParse(t, `{"executor":"intended-arrival-rate","rate":100,"duration":"1s","preAllocatedVUs":1}`)
		ex := cfg.New(h.deps)
		midc := make(chan executor.Progress, 1)
		time.AfterFunc(405*time.Millisecond, func() { midc <- ex.Progress() })
		errc := make(chan error, 1)
		go func() { errc <- ex.Run(t.Context()) }()
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		// Arrivals 21 … 40 (210 … 400 ms) wait at 405 ms.
		mid := <-midc
		if mid.Backlog != 20 || mid.ActiveVUs != 1 || mid.Elapsed != 405*time.Millisecond {
			t.Errorf("progress at 405ms: %+v, want backlog 20, 1 active VU, elapsed 405ms", mid)
		}
		a := ex.(executor.Accounter).Account()
		if a.Intended != 100 || a.Completed != 100 || a.Dropped != 0 || a.PeakBacklog != 30 {
			t.Errorf("account %+v, want 100 completed, none dropped, peak backlog 30", a)
		}

		offs := executortest.Offsets(scheduleOf(cfg))
		starts, _ := lindley(h.t0, offs, work)
		calls := callsByIndex(h.pool)
		late := 0
		for i, want := range starts {
			if got := calls[int64(i)].Start; !got.Equal(want) {
				t.Errorf("arrival %d started at %v, want %v", i, got.Sub(h.t0), want.Sub(h.t0))
			}
			if want.Sub(h.t0.Add(offs[i])) > executor.OnTimeTolerance {
				late++
			}
		}
		if int64(late) != a.Late || a.OnTime != 100-a.Late {
			t.Errorf("account %+v, want %d late by the recursion", a, late)
		}
		if !calls[54].Start.Equal(h.t0.Add(540*time.Millisecond)) || calls[53].Start.Equal(h.t0.Add(530*time.Millisecond)) {
			t.Errorf("caught up at arrival %v, want at 54 (540ms) and not before", calls[54].Start.Sub(h.t0))
		}
		// Each late start is charged as lag: schedule_lag of arrival 21
		// (due 210 ms, started 505 ms) is 295 ms, and corrected_latency =
		// schedule_lag + iteration_duration for every arrival.
		lags := h.pool.Rec.Sum(h.m.ScheduleLag, nil)
		var wantLag float64
		for i, s := range starts {
			wantLag += metrics.Milliseconds(s.Sub(h.t0.Add(offs[i])))
		}
		if d := lags - wantLag; d > 1e-6 || d < -1e-6 {
			t.Errorf("schedule_lag sums to %v ms, want %v", lags, wantLag)
		}
		cl := h.pool.Rec.Sum(h.m.CorrectedLatency, nil)
		id := h.pool.Rec.Sum(h.m.IterationDuration, nil)
		if d := cl - (lags + id); d > 1e-6 || d < -1e-6 {
			t.Errorf("corrected_latency %v ≠ schedule_lag %v + iteration_duration %v", cl, lags, id)
		}
	})
}

// The drain during gracefulStop: one VU, 10 arrivals/s for 1s, 310 ms of
// work, gracefulStop 1s. FIFO starts are 0, 310, …, 1860 ms; at 900 ms
// arrivals 3 … 9 wait (peak backlog 7). At the hard stop (2s) arrival 6
// (due 600 ms, started 1860 ms) is interrupted and charged 1400 ms, arrivals
// 7 … 9 are still waiting and are dropped, charged 2000 ms minus their
// intended times.
func TestIntendedDrainAndHardStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newArrivalHarness(executortest.Constant(310*time.Millisecond), 1)
		cfg := arrivalParse(t, `{"executor":"intended-arrival-rate","rate":10,"duration":"1s","preAllocatedVUs":1,"gracefulStop":"1s"}`)
		a, took := h.run(t, t.Context(), cfg)
		if took != 2*time.Second {
			t.Errorf("Run took %v, want the hard stop at 2s", took)
		}
		if a.Completed != 6 || a.Interrupted != 1 || a.Dropped != 3 || a.OnTime != 1 || a.Late != 6 || a.PeakBacklog != 7 {
			t.Errorf("account %+v, want 6 completed, 1 interrupted, 3 dropped, 1 on time, 6 late, peak backlog 7", a)
		}
		cut := h.pool.Rec.Of(h.m.CorrectedLatency, metrics.EmptyTags.With("outcome", "interrupted"))
		if len(cut) != 1 || cut[0] != 1400 {
			t.Errorf("interrupted charged %v, want [1400]", cut)
		}
		dropped := h.pool.Rec.Of(h.m.CorrectedLatency, metrics.EmptyTags.With("outcome", "dropped"))
		want := []float64{1300, 1200, 1100}
		if len(dropped) != len(want) {
			t.Fatalf("dropped charged %v, want %v", dropped, want)
		}
		for i := range want {
			if dropped[i] != want[i] {
				t.Errorf("dropped charged %v, want %v", dropped, want)
			}
		}
		// The backlog drained after the regular end: arrival 4 started at
		// 1240 ms, past the 1s duration.
		if c := callsByIndex(h.pool)[4]; c.Start.Sub(h.t0) != 1240*time.Millisecond {
			t.Errorf("arrival 4 started at %v, want 1.24s (drain after the regular end)", c.Start.Sub(h.t0))
		}
	})
}

// With a backlog and room under maxVUs, new VUs are initialised in the
// background, several at once; the dispatcher keeps the schedule
// meanwhile (no drops), and a warning says when maxVUs is reached.
func TestIntendedGrowsVUs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newArrivalHarness(executortest.Constant(95*time.Millisecond), 0)
		h.pool.InitDelay = 100 * time.Millisecond
		cp := &arrivalCountingPool{Pool: h.pool}
		h.deps.Pool = cp
		// 100/s with 95 ms of work needs 10 VUs; maxVUs allows 6.
		cfg := arrivalParse(t, `{"executor":"intended-arrival-rate","rate":100,"duration":"1s","preAllocatedVUs":0,"maxVUs":6}`)
		a, _ := h.run(t, t.Context(), cfg)
		if a.Dropped != 0 || a.Completed != 100 {
			t.Errorf("account %+v, want all 100 completed (the backlog drains in gracefulStop)", a)
		}
		if h.pool.Made() != 6 {
			t.Errorf("initialised %d VUs, want maxVUs = 6", h.pool.Made())
		}
		if cp.peak < 2 && cp.peak < maxProcs() {
			t.Errorf("at most %d initialisations at once, want them in parallel", cp.peak)
		}
		w := h.warnings()
		if len(w) != 1 || !strings.Contains(w[0], "scenarios.test") || !strings.Contains(w[0], "6 VUs") {
			t.Errorf("warnings %q, want one naming the scenario and maxVUs", w)
		}
	})
}

func maxProcs() int { return max(1, runtime.GOMAXPROCS(0)) }
