package executor_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
)

func TestConstantVUs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const work = 300 * time.Millisecond
		h := newHarness(executortest.Constant(work))
		cfg := mustParse(t, `{"executor":"constant-vus","vus":5,"duration":"2s"}`)
		ex := cfg.New(h.deps)
		errc := make(chan error, 1)
		go func() { errc <- ex.Run(context.Background()) }()

		time.Sleep(time.Second)
		synctest.Wait()
		if p := ex.Progress(); p.ActiveVUs != 5 || p.Elapsed != time.Second || p.Done {
			t.Errorf("progress at 1s %+v, want 5 active VUs", p)
		}
		if n := h.deps.State.VUsActive.Load(); n != 5 {
			t.Errorf("State.VUsActive at 1s = %d, want 5", n)
		}
		if err := <-errc; err != nil {
			t.Fatal(err)
		}

		// Each VU loops back to back: starts at k·300ms while before 2s,
		// so k = 0…6, and the last ends at 2.1s.
		perVU := int(2*time.Second/work) + 1
		calls := h.pool.Calls()
		checkCalls(t, calls, cfg)
		starts := map[uint64][]time.Duration{}
		for _, c := range calls {
			starts[c.VU] = append(starts[c.VU], h.at(c.Start))
			if c.Outcome != executor.Completed {
				t.Errorf("iteration %+v not completed", c)
			}
		}
		for vu, s := range starts {
			for k, at := range s {
				if at != time.Duration(k)*work {
					t.Errorf("VU %d iteration %d started at %v, want %v", vu, k, at, time.Duration(k)*work)
				}
			}
			if len(s) != perVU {
				t.Errorf("VU %d ran %d iterations, want %d", vu, len(s), perVU)
			}
		}
		if len(starts) != 5 || h.count(h.m.Iterations) != 5*perVU {
			t.Errorf("%d VUs, %d iterations samples; want 5, %d", len(starts), h.count(h.m.Iterations), 5*perVU)
		}
		for _, v := range h.pool.Rec.Of(h.m.IterationDuration, nil) {
			if v != 300 {
				t.Fatalf("iteration_duration %v, want 300", v)
			}
		}
		p := ex.Progress()
		if !p.Done || p.Elapsed != time.Duration(perVU)*work || p.ActiveVUs != 0 || p.Completed != int64(5*perVU) {
			t.Errorf("final progress %+v", p)
		}
		if out, _ := h.pool.Out(); out != 0 || h.deps.State.VUsActive.Load() != 0 {
			t.Errorf("%d VUs out after Run", out)
		}
	})
}
