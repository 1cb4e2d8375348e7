package executor

import (
	"encoding/json"
	"fmt"

	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/executor/schedule"
	"github.com/metronome-load/metronome/executor/segment"
)

// ConstantArrivalRateName is the executor name scripts use.
const ConstantArrivalRateName = "constant-arrival-rate"

func init() {
	Register(Type{Name: ConstantArrivalRateName, Parse: parseConstantArrivalRate})
}

// constantArrivalRateOptions are the JSON options of constant-arrival-rate.
type constantArrivalRateOptions struct {
	BaseOptions
	Rate            *int64             `json:"rate"`
	TimeUnit        *duration.Duration `json:"timeUnit"`
	Duration        *duration.Duration `json:"duration"`
	PreAllocatedVUs *int64             `json:"preAllocatedVUs"`
	MaxVUs          *int64             `json:"maxVUs"`
}

// ConstantArrivalRateConfig is a parsed constant-arrival-rate scenario:
// k6's executor, unchanged in behaviour. Iteration i is due at i·P, with
// the period P = timeUnit/rate truncated to whole nanoseconds; an arrival
// that finds no idle VU is dropped. metronome adds the measurement: started
// iterations emit schedule_lag and corrected_latency, and a dropped one is
// charged up to the moment the next VU became free (or the regular
// duration ended).
type ConstantArrivalRateConfig struct{ ArrivalConfig }

func parseConstantArrivalRate(name string, raw json.RawMessage) (Config, error) {
	var o constantArrivalRateOptions
	sc, err := DecodeScenario(name, raw, &o)
	if err != nil {
		return nil, err
	}
	p := ArrivalOptions{Scenario: name}
	unit, err := p.TimeUnit(o.TimeUnit)
	if err != nil {
		return nil, err
	}
	rate, err := p.rate(o.Rate, unit)
	if err != nil {
		return nil, err
	}
	d, err := p.duration(o.Duration)
	if err != nil {
		return nil, err
	}
	pre, maxVUs, err := p.VUs(o.PreAllocatedVUs, o.MaxVUs, false)
	if err != nil {
		return nil, err
	}
	c, err := p.config(sc, schedule.K6Constant{Rate: rate, TimeUnit: unit, Duration: d}, pre, maxVUs, false)
	if err != nil {
		return nil, err
	}
	return &ConstantArrivalRateConfig{c}, nil
}

// Description is the banner line, as k6 prints it:
// "1000.00 iterations/s for 30s (maxVUs: 10-50, gracefulStop: 30s)". In an
// execution segment the rate is the instance's: its share of maxVUs, the
// stripe of arrivals it runs (k6 v2.2.0 prints the same).
func (c *ConstantArrivalRateConfig) Description() string {
	sp := c.Schedule().Spec()
	return fmt.Sprintf("%.2f iterations/s for %s%s", arrivalRatePerSecond(sp.Rate, sp.TimeUnit)*c.stripeShare(), sp.Duration, c.arrivalInfo())
}

// Segmented gives the instance its share of the VU budget and its stripe
// of the arrivals, through the kit's ArrivalConfig.Segment as an
// extension's arrival executor does.
func (c *ConstantArrivalRateConfig) Segmented(t *segment.Tuple) (Config, error) {
	cp := *c
	cp.ArrivalConfig = c.ArrivalConfig.Segment(t)
	return &cp, nil
}
