package executor

import (
	"encoding/json"
	"fmt"
	"hash/fnv"

	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/executor/schedule"
	"github.com/metronome-load/metronome/executor/segment"
)

// IntendedArrivalRateName is the executor name scripts use.
const IntendedArrivalRateName = "intended-arrival-rate"

func init() {
	Register(Type{Name: IntendedArrivalRateName, Parse: parseIntendedArrivalRate})
}

// intendedArrivalRateOptions are the JSON options of intended-arrival-rate.
type intendedArrivalRateOptions struct {
	BaseOptions
	Rate            *int64             `json:"rate"`
	TimeUnit        *duration.Duration `json:"timeUnit"`
	Duration        *duration.Duration `json:"duration"`
	StartRate       *int64             `json:"startRate"`
	Stages          json.RawMessage    `json:"stages"`
	PreAllocatedVUs *int64             `json:"preAllocatedVUs"`
	MaxVUs          *int64             `json:"maxVUs"`
	Arrivals        *string            `json:"arrivals"`
	Seed            *int64             `json:"seed"`
}

// IntendedArrivalRateConfig is a parsed intended-arrival-rate scenario
// (docs/DESIGN.md §2.3), metronome's open-model executor. Its schedule is a
// constant rate or a k6-style ramp, with evenly spaced or Poisson arrivals.
// It never drops while the schedule runs: an arrival that finds every VU
// busy waits in a FIFO backlog and starts as soon as one is free, more VUs
// are initialised in the background up to maxVUs, and the wait is charged
// through schedule_lag and corrected_latency. After the regular duration
// the backlog keeps draining for up to gracefulStop; at the hard stop what
// still waits is dropped and what still runs is interrupted, both charged
// up to that moment.
type IntendedArrivalRateConfig struct{ ArrivalConfig }

// NewIntendedArrivalRate returns the config of an intended-arrival-rate
// scenario following spec. It checks only what the schedule needs; Parse
// applies the option rules. spec.K6Arithmetic is honoured as given.
func NewIntendedArrivalRate(sc *Scenario, spec schedule.Spec, preAllocatedVUs, maxVUs int) (*IntendedArrivalRateConfig, error) {
	if maxVUs == 0 {
		return nil, fmt.Errorf("maxVUs must be greater than 0")
	}
	c, err := ArrivalOptions{Scenario: sc.Name}.config(sc, spec, preAllocatedVUs, maxVUs, true)
	if err != nil {
		return nil, err
	}
	return &IntendedArrivalRateConfig{c}, nil
}

func parseIntendedArrivalRate(name string, raw json.RawMessage) (Config, error) {
	var o intendedArrivalRateOptions
	sc, err := DecodeScenario(name, raw, &o)
	if err != nil {
		return nil, err
	}
	p := ArrivalOptions{Scenario: name}
	spec := schedule.Spec{}
	if spec.TimeUnit, err = p.TimeUnit(o.TimeUnit); err != nil {
		return nil, err
	}
	constant := o.Rate != nil || o.Duration != nil
	ramp := o.StartRate != nil || arrivalGiven(o.Stages)
	switch {
	case constant && ramp:
		opt := "stages"
		if !arrivalGiven(o.Stages) {
			opt = "startRate"
		}
		return nil, p.Errorf(opt, "cannot be combined with rate and duration: give either rate and duration, or startRate and stages")
	case ramp:
		if spec.StartRate, spec.Stages, err = p.stages(o.StartRate, o.Stages, spec.TimeUnit); err != nil {
			return nil, err
		}
	default:
		if spec.Rate, err = p.rate(o.Rate, spec.TimeUnit); err != nil {
			return nil, err
		}
		if spec.Duration, err = p.duration(o.Duration); err != nil {
			return nil, err
		}
	}
	if o.Arrivals != nil {
		switch *o.Arrivals {
		case "uniform":
		case "poisson":
			spec.Arrivals = schedule.ArrivalsPoisson
		default:
			return nil, p.Errorf("arrivals", `must be "uniform" or "poisson", got %q`, *o.Arrivals)
		}
	}
	switch {
	case o.Seed != nil && spec.Arrivals != schedule.ArrivalsPoisson:
		return nil, p.Errorf("seed", `only applies to arrivals: "poisson"`)
	case o.Seed != nil:
		spec.Seed = uint64(*o.Seed)
	default:
		// A fixed default keeps runs repeatable and lets every instance of
		// a distributed test compute the same schedule; deriving it from
		// the name keeps two scenarios from sharing one.
		h := fnv.New64a()
		h.Write([]byte(name))
		spec.Seed = h.Sum64()
	}
	pre, maxVUs, err := p.VUs(o.PreAllocatedVUs, o.MaxVUs, true)
	if err != nil {
		return nil, err
	}
	c, err := p.config(sc, intendedProcess(spec), pre, maxVUs, true)
	if err != nil {
		return nil, err
	}
	return &IntendedArrivalRateConfig{c}, nil
}

// intendedProcess is the kit's arrival process that a parsed
// intended-arrival-rate spec describes.
func intendedProcess(s schedule.Spec) process {
	switch {
	case s.Arrivals == schedule.ArrivalsPoisson:
		return schedule.Poisson{Rate: s.Rate, TimeUnit: s.TimeUnit, Duration: s.Duration, StartRate: s.StartRate, Stages: s.Stages, Seed: s.Seed}
	case len(s.Stages) > 0:
		return schedule.Ramping{StartRate: s.StartRate, TimeUnit: s.TimeUnit, Stages: s.Stages}
	}
	return schedule.Constant{Rate: s.Rate, TimeUnit: s.TimeUnit, Duration: s.Duration}
}

// Description is the banner line, k6-style:
// "1000.00 iterations/s for 30s, poisson arrivals (maxVUs: 10-50, gracefulStop: 30s)".
func (c *IntendedArrivalRateConfig) Description() string {
	sp := c.Schedule().Spec()
	arrivals := ""
	if sp.Arrivals == schedule.ArrivalsPoisson {
		arrivals = ", poisson arrivals"
	}
	// In an execution segment, the instance's share: the stripe of
	// arrivals it runs.
	rate := arrivalRatePerSecond(sp.PeakRate(), sp.TimeUnit) * c.stripeShare()
	if len(sp.Stages) > 0 {
		return fmt.Sprintf("Up to %.2f iterations/s for %s over %d stages%s%s", rate, c.schedule.Duration(), len(sp.Stages), arrivals, c.arrivalInfo())
	}
	return fmt.Sprintf("%.2f iterations/s for %s%s%s", rate, sp.Duration, arrivals, c.arrivalInfo())
}

// Segmented gives the instance its share of the VU budget and its stripe
// of the arrivals, through the kit's ArrivalConfig.Segment.
func (c *IntendedArrivalRateConfig) Segmented(t *segment.Tuple) (Config, error) {
	cp := *c
	cp.ArrivalConfig = c.ArrivalConfig.Segment(t)
	return &cp, nil
}
