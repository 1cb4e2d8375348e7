package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/metronome-load/metronome/executor/segment"
)

// PerVUIterationsName is the executor name scripts use.
const PerVUIterationsName = "per-vu-iterations"

func init() {
	Register(Type{Name: PerVUIterationsName, Parse: parsePerVUIterations})
}

// PerVUIterationsConfig is a parsed per-vu-iterations scenario: each of
// VUs VUs runs Iterations iterations, unless Limit passes first.
type PerVUIterationsConfig struct{ IterationsConfig }

func parsePerVUIterations(name string, raw json.RawMessage) (Config, error) {
	c, err := parseIterations(name, raw, func(c *IterationsConfig) error {
		if c.Iterations > math.MaxInt64/c.VUs {
			return fmt.Errorf("scenarios.%s.iterations: %d iterations for each of %d VUs is too many", name, c.Iterations, c.VUs)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &PerVUIterationsConfig{c}, nil
}

// Description is the banner line.
func (c *PerVUIterationsConfig) Description() string {
	return fmt.Sprintf("%d iterations for each of %d VUs", c.Iterations, c.VUs) +
		bannerFacts(c.Scenario, c.ExpectedInterval, "maxDuration: "+c.Limit.String())
}

// New builds the executor.
func (c *PerVUIterationsConfig) New(deps Deps) Executor {
	return &perVUIterations{cfg: c, loop: c.newLoop(deps)}
}

// Segmented holds the instance's share of the VUs; its VUs take the
// global numbers of its stripe.
func (c *PerVUIterationsConfig) Segmented(t *segment.Tuple) (Config, error) {
	cp := *c
	cp.VUs, cp.stripe = t.Scale(c.VUs), t
	return &cp, nil
}

type perVUIterations struct {
	cfg  *PerVUIterationsConfig
	loop *ClosedLoop
}

func (e *perVUIterations) Progress() Progress { return e.loop.Progress() }

// BackFillAccount is the loop's (see BackFillAccounter).
func (e *perVUIterations) BackFillAccount() BackFillAccount { return e.loop.BackFillAccount() }

// unstarted is what one VU of a per-vu-iterations scenario left undone:
// n iterations, noticed at the given time.
type unstarted struct {
	at time.Time
	n  int64
}

// Run starts every VU at once, each running its own iterations back to
// back. A VU that finds maxDuration passed (or the test aborted) before its
// last iteration reports the rest as one dropped_iterations sample.
//
// A worker that is done keeps its VU until every worker has taken one:
// the iterations are bound to VUs, as in k6, so a script that keeps per-VU
// state (a login, cookies, data partitioned by __VU) sees exactly
// `iterations` iterations on each of `vus` distinct VUs, however fast an
// iteration is. Without that, a worker that finished early would hand its
// VU back to the pool and the next worker would take it again.
func (e *perVUIterations) Run(ctx context.Context) error {
	l := e.loop
	hard := l.Begin(ctx)
	clk := l.run.deps.Clock
	iters := e.cfg.Iterations
	left := make([]unstarted, e.cfg.VUs)
	var wg, taken sync.WaitGroup
	taken.Add(len(left))
	for w := range left {
		wg.Go(func() {
			vu, ok := l.Acquire()
			taken.Done()
			if !ok {
				left[w] = unstarted{clk.Now(), iters}
				return
			}
			defer func() {
				taken.Wait()
				l.Release(vu)
			}()
			for k := range iters {
				if !l.CanStart() {
					left[w] = unstarted{clk.Now(), iters - k}
					return
				}
				l.Iterate(hard, vu, l.NextIndex())
			}
		})
	}
	wg.Wait()
	// The samples are emitted here, on one goroutine, because the
	// executor-level recorder is not shared between VUs.
	for _, u := range left {
		if u.n > 0 {
			l.Drop(u.at, u.n)
		}
	}
	return l.Finish()
}
