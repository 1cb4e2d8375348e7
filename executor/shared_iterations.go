package executor

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/metronome-load/metronome/executor/segment"
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
	return &sharedIterations{cfg: c, loop: c.newLoop(deps)}
}

// Segmented holds the instance's share of the VUs and of the iterations,
// striped as k6 stripes them: by the VU count. An instance with no share
// of the VUs runs no iterations.
func (c *SharedIterationsConfig) Segmented(t *segment.Tuple) (Config, error) {
	cp := *c
	cp.VUs = t.Scale(c.VUs)
	rt, ok := t.Resegment(c.VUs)
	if !ok {
		cp.Iterations, cp.stripe = 0, nil
		return &cp, nil
	}
	cp.Iterations, cp.stripe = rt.Scale(c.Iterations), rt
	return &cp, nil
}

type sharedIterations struct {
	cfg  *SharedIterationsConfig
	loop *ClosedLoop
}

func (e *sharedIterations) Progress() Progress { return e.loop.Progress() }

// BackFillAccount is the loop's (see BackFillAccounter).
func (e *sharedIterations) BackFillAccount() BackFillAccount { return e.loop.BackFillAccount() }

// Run starts every VU at once; each checks that maxDuration has not passed,
// takes the next number from the shared counter and runs that iteration,
// until the numbers run out. Numbers never taken are reported as one
// dropped_iterations sample at the end.
func (e *sharedIterations) Run(ctx context.Context) error {
	l := e.loop
	l.Begin(ctx)
	total := e.cfg.Iterations
	l.Go(int(e.cfg.VUs), func(hard context.Context, _ int, vu VU) {
		for l.CanStart() {
			i := l.NextIndex()
			if i >= total {
				return
			}
			l.Iterate(hard, vu, i)
		}
	})
	l.Wait()
	if left := total - min(l.Claimed(), total); left > 0 {
		l.Drop(l.run.deps.Clock.Now(), left)
	}
	return l.Finish()
}
