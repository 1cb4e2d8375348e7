package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
)

// SharedIterationsName is the executor name scripts use.
const SharedIterationsName = "shared-iterations"

func init() {
	Register(Type{Name: SharedIterationsName, Parse: parseSharedIterations})
}

// SharedIterationsConfig is a parsed shared-iterations scenario: VUs VUs
// take turns at one pool of Iterations iterations until all were started
// or Limit passed.
type SharedIterationsConfig struct{ IterationsConfig }

func parseSharedIterations(name string, raw json.RawMessage) (Config, error) {
	c, err := parseIterations(name, raw, func(c *IterationsConfig) error {
		if c.Iterations < c.VUs {
			return fmt.Errorf("scenarios.%s.iterations: must be at least the number of VUs (%d), got %d", name, c.VUs, c.Iterations)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &SharedIterationsConfig{c}, nil
}

// Description is the banner line.
func (c *SharedIterationsConfig) Description() string {
	return fmt.Sprintf("%d iterations shared among %d VUs", c.Iterations, c.VUs) +
		bannerFacts(c.Scenario, c.ExpectedInterval, "maxDuration: "+c.Limit.String())
}

// New builds the executor.
func (c *SharedIterationsConfig) New(deps Deps) Executor {
	return &sharedIterations{cfg: c, run: c.newRun(deps)}
}

type sharedIterations struct {
	cfg *SharedIterationsConfig
	run *closedRun
}

func (e *sharedIterations) Progress() Progress { return e.run.progress() }

// Run starts every VU at once; each checks that maxDuration has not passed,
// takes the next number from the shared counter and runs that iteration,
// until the numbers run out. Numbers never taken are reported as one
// dropped_iterations sample at the end.
func (e *sharedIterations) Run(ctx context.Context) error {
	r := e.run
	hard, stop, regularEnd := r.begin(ctx)
	defer stop()
	total := e.cfg.Iterations
	var wg sync.WaitGroup
	for range e.cfg.VUs {
		wg.Go(func() {
			vu, ok := r.acquire(hard, stop)
			if !ok {
				return
			}
			defer r.release(vu)
			for r.canStart(hard, regularEnd) {
				i := r.index.Add(1) - 1
				if i >= total {
					return
				}
				r.iterate(hard, vu, i)
			}
		})
	}
	wg.Wait()
	if left := total - min(r.index.Load(), total); left > 0 {
		r.drop(r.deps.Clock.Now(), left)
	}
	r.finish()
	return r.err
}
