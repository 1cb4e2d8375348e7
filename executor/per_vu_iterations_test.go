package executor_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/executor/executortest"
)

func TestPerVUIterations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(executortest.Constant(time.Second))
		cfg := mustParse(t, `{"executor":"per-vu-iterations","vus":3,"iterations":4}`)
		ex, took := h.run(t, context.Background(), cfg)
		calls := h.pool.Calls()
		checkCalls(t, calls, cfg)
		starts := map[uint64][]time.Duration{}
		for _, c := range calls {
			starts[c.VU] = append(starts[c.VU], h.at(c.Start))
		}
		if len(starts) != 3 {
			t.Fatalf("%d VUs ran iterations, want 3", len(starts))
		}
		for vu, s := range starts {
			if len(s) != 4 {
				t.Errorf("VU %d ran %d iterations, want 4", vu, len(s))
				continue
			}
			for k, at := range s {
				if at != time.Duration(k)*time.Second {
					t.Errorf("VU %d iteration %d started at %v, want %ds", vu, k, at, k)
				}
			}
		}
		if took != 4*time.Second || h.count(h.m.Iterations) != 12 || h.count(h.m.DroppedIterations) != 0 {
			t.Errorf("took %v, %d iterations, %d drops; want 4s, 12, 0",
				took, h.count(h.m.Iterations), h.count(h.m.DroppedIterations))
		}
		if p := ex.Progress(); p.Completed != 12 || p.MaxVUs != 3 {
			t.Errorf("progress %+v", p)
		}
	})
}

// TestPerVUIterationsDropped: at maxDuration each VU with iterations left
// emits one dropped_iterations sample of what it left.
func TestPerVUIterationsDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(executortest.Constant(time.Second))
		cfg := mustParse(t, `{"executor":"per-vu-iterations","vus":2,"iterations":5,"maxDuration":"2500ms"}`)
		ex, took := h.run(t, context.Background(), cfg)
		// Each VU starts at 0, 1 and 2s and finds maxDuration passed at 3s.
		const ran, left = 3, 5 - 3
		if len(h.pool.Calls()) != 2*ran {
			t.Fatalf("%d iterations ran, want %d", len(h.pool.Calls()), 2*ran)
		}
		var drops int
		for _, s := range h.pool.Rec.Samples() {
			if s.Metric != h.m.DroppedIterations {
				continue
			}
			drops++
			if s.Value != left || s.Tags != h.deps.Tags || h.at(s.Time) != 3*time.Second {
				t.Errorf("dropped_iterations sample %v at %v tags %v; want %d at 3s with %v",
					s.Value, h.at(s.Time), s.Tags, left, h.deps.Tags)
			}
		}
		if drops != 2 {
			t.Errorf("%d dropped_iterations samples, want one per VU", drops)
		}
		if took != 3*time.Second {
			t.Errorf("Run took %v, want 3s", took)
		}
		if p := ex.Progress(); p.Dropped != 2*left {
			t.Errorf("progress %+v, want %d dropped", p, 2*left)
		}
	})
}

// TestPerVUIterationsBindsVUs: with iterations that take no time at all, a
// worker that finished could hand its VU back before the next worker took
// one, and one VU would run every iteration. k6 binds the iterations to
// VUs: each of the 3 VUs runs exactly 2, with __ITER 0 and 1 on each.
func TestPerVUIterationsBindsVUs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(executortest.Constant(0))
		h.pool.Preallocate(3)
		cfg := mustParse(t, `{"executor":"per-vu-iterations","vus":3,"iterations":2}`)
		h.run(t, context.Background(), cfg)
		perVU := map[uint64]int{}
		for _, c := range h.pool.Calls() {
			perVU[c.VU]++
		}
		if len(perVU) != 3 {
			t.Fatalf("iterations per VU %v, want 3 VUs with 2 each", perVU)
		}
		for vu, n := range perVU {
			if n != 2 {
				t.Errorf("VU %d ran %d iterations, want 2 (all: %v)", vu, n, perVU)
			}
		}
		if _, maxOut := h.pool.Out(); maxOut != 3 {
			t.Errorf("at most %d VUs out of the pool at once, want 3", maxOut)
		}
	})
}
