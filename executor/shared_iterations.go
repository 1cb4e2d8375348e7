package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/metronome-load/metronome/duration"
)

// SharedIterationsName is the executor name scripts use.
const SharedIterationsName = "shared-iterations"

func init() {
	Register(Type{Name: SharedIterationsName, Parse: parseSharedIterations})
}

// SharedIterationsConfig is a parsed shared-iterations scenario: VUs VUs
// take turns at one pool of Iterations iterations until all were started
// or Limit passed.
type SharedIterationsConfig struct {
	Scenario   *Scenario
	VUs        int64
	Iterations int64
	// Limit is the maxDuration option: no iteration starts after it.
	Limit time.Duration
	// ExpectedInterval, when set, back-fills corrected_latency (DESIGN §2.3).
	ExpectedInterval time.Duration
}

type sharedIterationsOptions struct {
	BaseOptions
	VUs              *int64             `json:"vus"`
	Iterations       *int64             `json:"iterations"`
	MaxDuration      *duration.Duration `json:"maxDuration"`
	ExpectedInterval *duration.Duration `json:"expectedInterval"`
}

func parseSharedIterations(name string, raw json.RawMessage) (Config, error) {
	var o sharedIterationsOptions
	if err := decodeClosedOptions(name, raw, &o); err != nil {
		return nil, err
	}
	s, err := o.Scenario(name)
	if err != nil {
		return nil, err
	}
	c := &SharedIterationsConfig{Scenario: s}
	if c.VUs, err = countOption(name, "vus", o.VUs, 1); err != nil {
		return nil, err
	}
	if c.Iterations, err = countOption(name, "iterations", o.Iterations, 1); err != nil {
		return nil, err
	}
	if c.Iterations < c.VUs {
		return nil, fmt.Errorf("scenarios.%s.iterations: must be at least the number of VUs (%d), got %d", name, c.VUs, c.Iterations)
	}
	if c.Limit, err = durationOption(name, "maxDuration", o.MaxDuration, defaultMaxDuration); err != nil {
		return nil, err
	}
	if err = fitsHardStop(s, "maxDuration", c.Limit); err != nil {
		return nil, err
	}
	if c.ExpectedInterval, err = expectedIntervalOption(name, o.ExpectedInterval); err != nil {
		return nil, err
	}
	return c, nil
}

// Base returns the common options.
func (c *SharedIterationsConfig) Base() *Scenario { return c.Scenario }

// MaxVUs is the number of VUs.
func (c *SharedIterationsConfig) MaxVUs() int { return int(c.VUs) }

// InitialVUs is the number of VUs.
func (c *SharedIterationsConfig) InitialVUs() int { return int(c.VUs) }

// MaxDuration is maxDuration plus gracefulStop.
func (c *SharedIterationsConfig) MaxDuration() time.Duration {
	return c.Limit + c.Scenario.GracefulStop
}

// Description is the banner line.
func (c *SharedIterationsConfig) Description() string {
	return fmt.Sprintf("%d iterations shared among %d VUs", c.Iterations, c.VUs) +
		bannerFacts(c.Scenario, c.ExpectedInterval, "maxDuration: "+c.Limit.String())
}

// New builds the executor.
func (c *SharedIterationsConfig) New(deps Deps) Executor {
	return &sharedIterations{cfg: c, run: newClosedRun(deps, c.Scenario, c.Limit, c.ExpectedInterval, int(c.VUs))}
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
