package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/metronome-load/metronome/duration"
)

// PerVUIterationsName is the executor name scripts use.
const PerVUIterationsName = "per-vu-iterations"

func init() {
	Register(Type{Name: PerVUIterationsName, Parse: parsePerVUIterations})
}

// PerVUIterationsConfig is a parsed per-vu-iterations scenario: each of
// VUs VUs runs Iterations iterations, unless Limit passes first.
type PerVUIterationsConfig struct {
	Scenario   *Scenario
	VUs        int64
	Iterations int64
	// Limit is the maxDuration option: no iteration starts after it.
	Limit time.Duration
	// ExpectedInterval, when set, back-fills corrected_latency (DESIGN §2.3).
	ExpectedInterval time.Duration
}

type perVUIterationsOptions struct {
	BaseOptions
	VUs              *int64             `json:"vus"`
	Iterations       *int64             `json:"iterations"`
	MaxDuration      *duration.Duration `json:"maxDuration"`
	ExpectedInterval *duration.Duration `json:"expectedInterval"`
}

func parsePerVUIterations(name string, raw json.RawMessage) (Config, error) {
	var o perVUIterationsOptions
	if err := decodeClosedOptions(name, raw, &o); err != nil {
		return nil, err
	}
	s, err := o.Scenario(name)
	if err != nil {
		return nil, err
	}
	c := &PerVUIterationsConfig{Scenario: s}
	if c.VUs, err = countOption(name, "vus", o.VUs, 1); err != nil {
		return nil, err
	}
	if c.Iterations, err = countOption(name, "iterations", o.Iterations, 1); err != nil {
		return nil, err
	}
	if c.Iterations > math.MaxInt64/c.VUs {
		return nil, fmt.Errorf("scenarios.%s.iterations: %d iterations for each of %d VUs is too many", name, c.Iterations, c.VUs)
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
func (c *PerVUIterationsConfig) Base() *Scenario { return c.Scenario }

// MaxVUs is the number of VUs.
func (c *PerVUIterationsConfig) MaxVUs() int { return int(c.VUs) }

// InitialVUs is the number of VUs.
func (c *PerVUIterationsConfig) InitialVUs() int { return int(c.VUs) }

// MaxDuration is maxDuration plus gracefulStop.
func (c *PerVUIterationsConfig) MaxDuration() time.Duration {
	return c.Limit + c.Scenario.GracefulStop
}

// Description is the banner line.
func (c *PerVUIterationsConfig) Description() string {
	return fmt.Sprintf("%d iterations for each of %d VUs", c.Iterations, c.VUs) +
		bannerFacts(c.Scenario, c.ExpectedInterval, "maxDuration: "+c.Limit.String())
}

// New builds the executor.
func (c *PerVUIterationsConfig) New(deps Deps) Executor {
	return &perVUIterations{cfg: c, run: newClosedRun(deps, c.Scenario, c.Limit, c.ExpectedInterval, int(c.VUs))}
}

type perVUIterations struct {
	cfg *PerVUIterationsConfig
	run *closedRun
}

func (e *perVUIterations) Progress() Progress { return e.run.progress() }

// unstarted is what one VU of a per-vu-iterations scenario left undone:
// n iterations, noticed at the given time.
type unstarted struct {
	at time.Time
	n  int64
}

// Run starts every VU at once, each running its own iterations back to
// back. A VU that finds maxDuration passed (or the test aborted) before its
// last iteration reports the rest as one dropped_iterations sample.
func (e *perVUIterations) Run(ctx context.Context) error {
	r := e.run
	hard, stop, regularEnd := r.begin(ctx)
	defer stop()
	iters := e.cfg.Iterations
	left := make([]unstarted, e.cfg.VUs)
	var wg sync.WaitGroup
	for w := range left {
		wg.Go(func() {
			vu, ok := r.acquire(hard, stop)
			if !ok {
				left[w] = unstarted{r.deps.Clock.Now(), iters}
				return
			}
			defer r.release(vu)
			for k := range iters {
				if !r.canStart(hard, regularEnd) {
					left[w] = unstarted{r.deps.Clock.Now(), iters - k}
					return
				}
				r.iterate(hard, vu, r.index.Add(1)-1)
			}
		})
	}
	wg.Wait()
	// The samples are emitted here, on one goroutine, because the
	// executor-level recorder is not shared between VUs.
	for _, u := range left {
		if u.n > 0 {
			r.drop(u.at, u.n)
		}
	}
	r.finish()
	return r.err
}
