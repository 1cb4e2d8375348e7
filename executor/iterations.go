package executor

import (
	"encoding/json"
	"time"

	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/executor/segment"
)

// IterationsConfig is what the two iterations executors share: VUs VUs run
// Iterations iterations (in all, or each) unless Limit passes first.
type IterationsConfig struct {
	Scenario   *Scenario
	VUs        int64
	Iterations int64
	// Limit is the maxDuration option: no iteration starts after it.
	Limit time.Duration
	// ExpectedInterval, when on, back-fills corrected_latency (docs/DESIGN.md §2.3).
	ExpectedInterval ExpectedInterval
	// stripe maps the instance's iterations to global indices (nil: the
	// whole test).
	stripe *segment.Tuple
}

// iterationsOptions are the JSON options of the iterations executors.
type iterationsOptions struct {
	BaseOptions
	VUs              *int64             `json:"vus"`
	Iterations       *int64             `json:"iterations"`
	MaxDuration      *duration.Duration `json:"maxDuration"`
	ExpectedInterval *ExpectedInterval  `json:"expectedInterval"`
}

// parseIterations decodes and validates the options of an iterations
// executor; check adds the executor's own rule on vus and iterations.
func parseIterations(name string, raw json.RawMessage, check func(c *IterationsConfig) error) (IterationsConfig, error) {
	var o iterationsOptions
	s, err := DecodeScenario(name, raw, &o)
	if err != nil {
		return IterationsConfig{}, err
	}
	c := IterationsConfig{Scenario: s}
	if c.VUs, err = countOption(name, "vus", o.VUs, 1); err != nil {
		return c, err
	}
	if c.Iterations, err = countOption(name, "iterations", o.Iterations, 1); err != nil {
		return c, err
	}
	if err := check(&c); err != nil {
		return c, err
	}
	if c.Limit, err = durationOption(name, "maxDuration", o.MaxDuration, defaultMaxDuration); err != nil {
		return c, err
	}
	if err = fitsHardStop(s, "maxDuration", c.Limit); err != nil {
		return c, err
	}
	c.ExpectedInterval = expectedIntervalOption(o.ExpectedInterval)
	return c, nil
}

// DefaultExpectedInterval gives a scenario that set no expectedInterval
// def, or off: the iterations executors run a fixed, often small, number
// of iterations (the 1 × 1 of a bare script, smoke tests), too few for an
// estimate, and jslib/intended.js builds its scenario on
// shared-iterations and records corrected_latency itself.
func (c *IterationsConfig) DefaultExpectedInterval(def ExpectedInterval) {
	c.ExpectedInterval = withDefault(c.ExpectedInterval, def, IntervalOff)
}

// BackFillInterval is the scenario's expectedInterval.
func (c *IterationsConfig) BackFillInterval() ExpectedInterval { return c.ExpectedInterval }

// Base returns the common options.
func (c *IterationsConfig) Base() *Scenario { return c.Scenario }

// MaxVUs is the number of VUs.
func (c *IterationsConfig) MaxVUs() int { return int(c.VUs) }

// InitialVUs is the number of VUs.
func (c *IterationsConfig) InitialVUs() int { return int(c.VUs) }

// MaxDuration is maxDuration plus gracefulStop.
func (c *IterationsConfig) MaxDuration() time.Duration {
	return c.Limit + c.Scenario.GracefulStop
}

// Model is ModelClosed.
func (c *IterationsConfig) Model() Model { return ModelClosed }

func (c *IterationsConfig) newLoop(deps Deps) *ClosedLoop {
	return NewClosedLoop(deps, c.Scenario, c.Limit, int(c.VUs), c.ExpectedInterval, c.stripe)
}
