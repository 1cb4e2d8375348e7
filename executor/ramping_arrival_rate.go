package executor

import (
	"encoding/json"
	"fmt"

	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/executor/schedule"
	"github.com/metronome-load/metronome/executor/segment"
)

// RampingArrivalRateName is the executor name scripts use.
const RampingArrivalRateName = "ramping-arrival-rate"

func init() {
	Register(Type{Name: RampingArrivalRateName, Parse: parseRampingArrivalRate})
}

// rampingArrivalRateOptions are the JSON options of ramping-arrival-rate.
type rampingArrivalRateOptions struct {
	BaseOptions
	StartRate       *int64             `json:"startRate"`
	TimeUnit        *duration.Duration `json:"timeUnit"`
	Stages          json.RawMessage    `json:"stages"`
	PreAllocatedVUs *int64             `json:"preAllocatedVUs"`
	MaxVUs          *int64             `json:"maxVUs"`
}

// RampingArrivalRateConfig is a parsed ramping-arrival-rate scenario: k6's
// executor, unchanged in behaviour. The rate goes linearly from startRate
// through each stage's target; the i-th iteration (1-based) is due when the
// area under the rate reaches i, computed with k6's arithmetic. Drops and
// their measurement are those of constant-arrival-rate.
type RampingArrivalRateConfig struct{ ArrivalConfig }

func parseRampingArrivalRate(name string, raw json.RawMessage) (Config, error) {
	var o rampingArrivalRateOptions
	sc, err := DecodeScenario(name, raw, &o)
	if err != nil {
		return nil, err
	}
	p := ArrivalOptions{Scenario: name}
	unit, err := p.TimeUnit(o.TimeUnit)
	if err != nil {
		return nil, err
	}
	start, stages, err := p.stages(o.StartRate, o.Stages, unit)
	if err != nil {
		return nil, err
	}
	pre, maxVUs, err := p.VUs(o.PreAllocatedVUs, o.MaxVUs, false)
	if err != nil {
		return nil, err
	}
	c, err := p.config(sc, schedule.Ramping{StartRate: start, TimeUnit: unit, Stages: stages, K6Arithmetic: true}, pre, maxVUs, false)
	if err != nil {
		return nil, err
	}
	return &RampingArrivalRateConfig{c}, nil
}

// Description is the banner line, as k6 prints it:
// "Up to 50.00 iterations/s for 1m0s over 3 stages (maxVUs: 10-50, gracefulStop: 30s)".
// In an execution segment the peak is scaled by the segment's length, as
// k6 v2.2.0 prints it (the arrivals run are the stripe of maxVUs, as for
// constant-arrival-rate; the two differ when maxVUs does not split evenly).
func (c *RampingArrivalRateConfig) Description() string {
	sp := c.Schedule().Spec()
	return fmt.Sprintf("Up to %.2f iterations/s for %s over %d stages%s",
		arrivalRatePerSecond(sp.PeakRate(), sp.TimeUnit)*c.segmentShare(), c.schedule.Duration(), len(sp.Stages), c.arrivalInfo())
}

// Segmented gives the instance its share of the VU budget and its stripe
// of the arrivals, through the kit's ArrivalConfig.Segment.
func (c *RampingArrivalRateConfig) Segmented(t *segment.Tuple) (Config, error) {
	cp := *c
	cp.ArrivalConfig = c.ArrivalConfig.Segment(t)
	return &cp, nil
}
