package executor

import (
	"fmt"
	"time"

	"github.com/metronome-load/metronome/executor/schedule"
	"github.com/metronome-load/metronome/executor/segment"
)

// ArrivalConfig is the open-model part of a scenario config, the kit's
// arrival loop with its options: the timetable of intended starts, the VU
// budget and what happens to an arrival that finds every VU busy. The
// arrival-rate executors embed it, and so can an extension's config (see
// NewArrivalConfig); it provides every Config method but Description.
type ArrivalConfig struct {
	scenario     *Scenario
	schedule     schedule.Timetable
	preAllocated int
	maxVUs       int
	// queue makes due arrivals that find no idle VU wait in a backlog
	// (intended-arrival-rate) instead of being dropped (k6's executors).
	queue bool
	// stripe holds the global arrival indices this instance runs (nil:
	// all of them); idle says it runs none (see Segmented).
	stripe *segment.Tuple
	idle   bool
	// segment is the length of the instance's execution segment, 0
	// without segments; the banner scales rates by it (see rateShare).
	segment float64
	// first and firstLocal number the arrivals (see Numbered).
	first, firstLocal int64
}

// Base returns the common options.
func (c *ArrivalConfig) Base() *Scenario { return c.scenario }

// MaxVUs is maxVUs.
func (c *ArrivalConfig) MaxVUs() int { return c.maxVUs }

// InitialVUs is preAllocatedVUs.
func (c *ArrivalConfig) InitialVUs() int { return c.preAllocated }

// MaxDuration is the schedule's duration plus gracefulStop.
func (c *ArrivalConfig) MaxDuration() time.Duration {
	return c.schedule.Duration() + c.scenario.GracefulStop
}

// Schedule returns the scenario's schedule when it is a rate Schedule (the
// built-in arrival processes), nil for another Timetable.
func (c *ArrivalConfig) Schedule() *schedule.Schedule {
	s, _ := c.schedule.(*schedule.Schedule)
	return s
}

// New builds the executor.
func (c *ArrivalConfig) New(deps Deps) Executor {
	return &arrivalExecutor{cfg: c, deps: deps}
}

// arrivalInfo is the parenthesised tail of an arrival-rate description.
func (c *ArrivalConfig) arrivalInfo() string {
	vus := fmt.Sprint(c.maxVUs)
	if c.preAllocated != c.maxVUs {
		vus = fmt.Sprintf("%d-%d", c.preAllocated, c.maxVUs)
	}
	exec := ""
	if c.scenario.Exec != "default" {
		exec = ", exec: " + c.scenario.Exec
	}
	return fmt.Sprintf(" (maxVUs: %s%s, gracefulStop: %s)", vus, exec, c.scenario.GracefulStop)
}

// stripeShare is the instance's part of the scenario's arrivals: 1
// without segments, 0 when its stripe of maxVUs is empty.
func (c *ArrivalConfig) stripeShare() float64 {
	switch {
	case c.segment == 0:
		return 1
	case c.idle:
		return 0
	}
	return c.stripe.Length()
}

// segmentShare is the length of the instance's segment, 1 without
// segments.
func (c *ArrivalConfig) segmentShare() float64 {
	if c.segment == 0 {
		return 1
	}
	return c.segment
}

// arrivalRatePerSecond is a rate per time unit expressed per second.
func arrivalRatePerSecond(rate int64, unit time.Duration) float64 {
	return float64(rate) * float64(time.Second) / float64(unit)
}
