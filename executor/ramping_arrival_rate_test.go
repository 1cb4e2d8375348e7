package executor_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
)

// The executor starts each arrival of k6's ramp vector at its intended
// time, to the nanosecond, the last one exactly at the regular end (11s),
// and an idle VU serves them all.
func TestRampingArrivalRateRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newArrivalHarness(executortest.Constant(100*time.Millisecond), 1)
		cfg := arrivalParse(t, `{"executor":"ramping-arrival-rate","startRate":0,"timeUnit":"1s","preAllocatedVUs":1,
			"stages":[{"duration":"5s","target":1},{"duration":"1s","target":1},{"duration":"5s","target":0}]}`)
		a, took := h.run(t, t.Context(), cfg)
		if a.Intended != 6 || a.Completed != 6 || a.OnTime != 6 {
			t.Errorf("account %+v, want 6 arrivals, all on time", a)
		}
		if took != 11100*time.Millisecond {
			t.Errorf("Run took %v, want the last arrival's end (11.1s)", took)
		}
		calls := callsByIndex(h.pool)
		want := []time.Duration{3162, 4472, 5500, 6527, 7837, 11000}
		for i, w := range want {
			got := calls[int64(i)].Start.Sub(h.t0)
			off, _ := scheduleOf(cfg).Offset(int64(i))
			if got != off || got-w*time.Millisecond >= time.Millisecond || got-w*time.Millisecond <= -time.Millisecond {
				t.Errorf("arrival %d started at %v, want its offset %v ≈ %vms", i, got, off, w)
			}
		}
	})
}

// A ramp from 10/s over 1s: the first arrival comes when the area reaches
// 1 (100 ms), not at 0, and a slow VU makes the ramp drop as k6 does.
func TestRampingArrivalRateDrops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newArrivalHarness(executortest.Constant(150*time.Millisecond), 1)
		cfg := arrivalParse(t, `{"executor":"ramping-arrival-rate","startRate":10,"stages":[{"duration":"1s","target":10}],"preAllocatedVUs":1,"gracefulStop":"0s"}`)
		a, _ := h.run(t, t.Context(), cfg)
		// Arrivals at 100, 200, …, 1000 ms; each run blocks the next one:
		// 100 runs (to 250), 200 dropped (charged 50), 300 runs, 400
		// dropped, … 900 runs to 1050 and is cut at the hard stop (1s),
		// 1000 is dropped and charged at the regular end (0 ms).
		if a.Intended != 10 || a.Completed != 4 || a.Interrupted != 1 || a.Dropped != 5 {
			t.Errorf("account %+v, want 10 intended, 4 completed, 1 interrupted, 5 dropped", a)
		}
		if c := callsByIndex(h.pool)[0]; c.Start.Sub(h.t0) != 100*time.Millisecond {
			t.Errorf("first arrival at %v, want 100ms", c.Start.Sub(h.t0))
		}
		got := droppedCharges(h)
		want := []float64{50, 50, 50, 50, 0}
		if len(got) != len(want) {
			t.Fatalf("drops charged %v, want %v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("drops charged %v, want %v", got, want)
				break
			}
		}
	})
}

// A ramp whose rate stays at zero intends nothing; the scenario still
// lasts its stages.
func TestRampingArrivalRateEmpty(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newArrivalHarness(executortest.Constant(time.Millisecond), 2)
		cfg := arrivalParse(t, `{"executor":"ramping-arrival-rate","stages":[{"duration":"3s","target":0}],"preAllocatedVUs":2}`)
		a, took := h.run(t, t.Context(), cfg)
		if a != (executor.Account{}) || took != 3*time.Second || len(h.pool.Calls()) != 0 {
			t.Errorf("account %+v after %v, want nothing in 3s", a, took)
		}
	})
}
