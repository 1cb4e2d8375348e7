package executor_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
)

func TestSharedIterations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(executortest.Constant(time.Second))
		cfg := mustParse(t, `{"executor":"shared-iterations","vus":3,"iterations":10}`)
		ex, took := h.run(t, context.Background(), cfg)
		calls := h.pool.Calls()
		checkCalls(t, calls, cfg)
		if len(calls) != 10 || h.count(h.m.Iterations) != 10 || h.count(h.m.IterationDuration) != 10 {
			t.Fatalf("%d iterations, want 10", len(calls))
		}
		// Three VUs take 3, 3, 3 and then 1 iteration of a second each, in
		// index order, so iteration i starts at ⌊i/3⌋ seconds.
		for _, c := range calls {
			if want := time.Duration(c.Iteration.Index/3) * time.Second; h.at(c.Start) != want || c.Outcome != executor.Completed {
				t.Errorf("iteration %d started at %v (%v), want %v", c.Iteration.Index, h.at(c.Start), c.Outcome, want)
			}
		}
		if took != 4*time.Second {
			t.Errorf("Run took %v, want 4s: it must end once the iterations are done", took)
		}
		if n := h.count(h.m.DroppedIterations); n != 0 {
			t.Errorf("%d dropped_iterations samples with nothing dropped", n)
		}
		if _, maxOut := h.pool.Out(); maxOut != 3 {
			t.Errorf("held at most %d VUs, want 3", maxOut)
		}
		p := ex.Progress()
		if p.Completed != 10 || p.Interrupted != 0 || p.Dropped != 0 || p.MaxVUs != 3 || p.Total != 10*time.Minute+30*time.Second {
			t.Errorf("progress %+v", p)
		}
		if got := h.deps.State.IterationsCompleted.Load(); got != 10 {
			t.Errorf("State.IterationsCompleted = %d, want 10", got)
		}
	})
}

// TestSharedIterationsFasterVUsDoMore gives iteration 0 a long run: the
// other VU must take all the remaining iterations meanwhile.
func TestSharedIterationsFasterVUsDoMore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		work := func(it executor.Iteration, _ time.Time) time.Duration {
			if it.Index == 0 {
				return 10 * time.Second
			}
			return time.Second
		}
		h := newHarness(work)
		h.pool.Preallocate(2)
		_, took := h.run(t, context.Background(), mustParse(t, `{"executor":"shared-iterations","vus":2,"iterations":6}`))
		perVU := map[uint64]int{}
		for _, c := range h.pool.Calls() {
			perVU[c.VU]++
		}
		if len(perVU) != 2 || (perVU[1] != 1 && perVU[1] != 5) || perVU[1]+perVU[2] != 6 {
			t.Errorf("iterations per VU %v, want one VU with 1 and the other with 5", perVU)
		}
		if took != 10*time.Second {
			t.Errorf("Run took %v, want 10s", took)
		}
	})
}

// TestSharedIterationsDropped stops a run at maxDuration with iterations
// left: one dropped_iterations sample of iterations − attempted, with the
// executor-level tags, at the end.
func TestSharedIterationsDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(executortest.Constant(700 * time.Millisecond))
		cfg := mustParse(t, `{"executor":"shared-iterations","vus":4,"iterations":100,"maxDuration":"2s"}`)
		ex, took := h.run(t, context.Background(), cfg)
		// Each VU starts at 0, 0.7 and 1.4s; the fourth start (2.1s) is
		// after maxDuration, so 12 of 100 iterations were attempted.
		const attempted = 4 * 3
		if len(h.pool.Calls()) != attempted {
			t.Fatalf("%d iterations ran, want %d", len(h.pool.Calls()), attempted)
		}
		var drops int
		for _, s := range h.pool.Rec.Samples() {
			if s.Metric != h.m.DroppedIterations {
				continue
			}
			drops++
			if s.Value != 100-attempted || s.Tags != h.deps.Tags || h.at(s.Time) != 2100*time.Millisecond {
				t.Errorf("dropped_iterations sample %v at %v tags %v; want %d at 2.1s with %v",
					s.Value, h.at(s.Time), s.Tags, 100-attempted, h.deps.Tags)
			}
		}
		if drops != 1 {
			t.Errorf("%d dropped_iterations samples, want 1", drops)
		}
		if took != 2100*time.Millisecond {
			t.Errorf("Run took %v, want 2.1s", took)
		}
		if p := ex.Progress(); p.Dropped != 100-attempted || p.Completed != attempted {
			t.Errorf("progress %+v", p)
		}
	})
}
