package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/executor/segment"
)

// ConstantVUsName is the executor name scripts use.
const ConstantVUsName = "constant-vus"

func init() {
	Register(Type{Name: ConstantVUsName, Parse: parseConstantVUs})
}

// ConstantVUsConfig is a parsed constant-vus scenario: VUs VUs loop
// iterations back to back for Duration.
type ConstantVUsConfig struct {
	Scenario *Scenario
	VUs      int64
	Duration time.Duration
	// ExpectedInterval, when on, back-fills corrected_latency (docs/DESIGN.md §2.3).
	ExpectedInterval ExpectedInterval
	// stripe is the instance's execution segment (nil: the whole test).
	stripe *segment.Tuple
}

type constantVUsOptions struct {
	BaseOptions
	VUs              *int64             `json:"vus"`
	Duration         *duration.Duration `json:"duration"`
	ExpectedInterval *ExpectedInterval  `json:"expectedInterval"`
}

func parseConstantVUs(name string, raw json.RawMessage) (Config, error) {
	var o constantVUsOptions
	s, err := DecodeScenario(name, raw, &o)
	if err != nil {
		return nil, err
	}
	c := &ConstantVUsConfig{Scenario: s}
	if c.VUs, err = countOption(name, "vus", o.VUs, 1); err != nil {
		return nil, err
	}
	if c.Duration, err = durationOption(name, "duration", o.Duration, 0); err != nil {
		return nil, err
	}
	if err = fitsHardStop(s, "duration", c.Duration); err != nil {
		return nil, err
	}
	c.ExpectedInterval = expectedIntervalOption(o.ExpectedInterval)
	return c, nil
}

// DefaultExpectedInterval gives a scenario that set no expectedInterval
// def, or auto: constant-vus is the loop most k6 scripts are, and auto
// only adds corrected_latency, which k6 does not have.
func (c *ConstantVUsConfig) DefaultExpectedInterval(def ExpectedInterval) {
	c.ExpectedInterval = withDefault(c.ExpectedInterval, def, IntervalAuto)
}

// BackFillInterval is the scenario's expectedInterval.
func (c *ConstantVUsConfig) BackFillInterval() ExpectedInterval { return c.ExpectedInterval }

// Base returns the common options.
func (c *ConstantVUsConfig) Base() *Scenario { return c.Scenario }

// Model is ModelClosed.
func (c *ConstantVUsConfig) Model() Model { return ModelClosed }

// MaxVUs is the number of VUs.
func (c *ConstantVUsConfig) MaxVUs() int { return int(c.VUs) }

// InitialVUs is the number of VUs.
func (c *ConstantVUsConfig) InitialVUs() int { return int(c.VUs) }

// MaxDuration is duration plus gracefulStop.
func (c *ConstantVUsConfig) MaxDuration() time.Duration {
	return c.Duration + c.Scenario.GracefulStop
}

// Description is the banner line.
func (c *ConstantVUsConfig) Description() string {
	return fmt.Sprintf("%d looping VUs for %s", c.VUs, c.Duration) + bannerFacts(c.Scenario, c.ExpectedInterval)
}

// New builds the executor.
func (c *ConstantVUsConfig) New(deps Deps) Executor {
	return &constantVUs{cfg: c, loop: NewClosedLoop(deps, c.Scenario, c.Duration, int(c.VUs), c.ExpectedInterval, c.stripe)}
}

// Segmented holds the instance's share of the VUs; its VUs take the
// global numbers of its stripe.
func (c *ConstantVUsConfig) Segmented(t *segment.Tuple) (Config, error) {
	cp := *c
	cp.VUs, cp.stripe = t.Scale(c.VUs), t
	return &cp, nil
}

type constantVUs struct {
	cfg  *ConstantVUsConfig
	loop *ClosedLoop
}

func (e *constantVUs) Progress() Progress { return e.loop.Progress() }

// BackFillAccount is the loop's (see BackFillAccounter).
func (e *constantVUs) BackFillAccount() BackFillAccount { return e.loop.BackFillAccount() }

// Run starts every VU at once, each looping iterations until the duration
// has passed: the kit's closed loop as it is.
func (e *constantVUs) Run(ctx context.Context) error {
	return e.loop.Run(ctx, int(e.cfg.VUs), nil)
}
