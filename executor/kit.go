package executor

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// This file is the open-model half of the executor kit, the public API an
// extension builds a new arrival process on (the closed-model half is
// kit_closed.go). An executor of a new arrival process is a Timetable, a
// config that embeds ArrivalConfig, a Description and a Parse; the arrival
// loop, the VU budget, queue-or-drop, the drop and interruption charges,
// the account and execution segments come with ArrivalConfig.

// Model says how a scenario decides when iterations start, which decides
// how the summary accounts for it (docs/DESIGN.md §2.4).
type Model uint8

// The models. In a closed model a VU starts its next iteration when its
// previous one ends, so a slow target slows the load; corrected_latency is
// at most back-filled. In an open model every iteration has an intended
// start that does not depend on the target, and lateness is measured from
// it; the executor reports an Account.
const (
	ModelClosed Model = iota
	ModelOpen
)

// String returns "closed" or "open".
func (m Model) String() string {
	if m == ModelOpen {
		return "open"
	}
	return "closed"
}

// Timetable is an open-model arrival process: the intended start of every
// arrival as an offset from the scenario start. Offsets must not decrease
// with the index. A Timetable is safe for concurrent use; the arrival loop
// walks it with Walkers of its own.
type Timetable interface {
	// Offset returns the intended start of arrival i (0-based) and false
	// when the timetable has no arrival i.
	Offset(i int64) (time.Duration, bool)
	// Walk returns a Walker at the start of the timetable.
	Walk() Walker
	// Duration is the regular duration: no arrival is intended after it.
	// After it an executor that drops starts nothing; one that queues
	// drains its backlog for up to gracefulStop.
	Duration() time.Duration
	// Count is the number of arrivals, or -1 when it is not known without
	// walking the whole timetable.
	Count() int64
}

// Walker reads a Timetable for one goroutine. Its Offset is cheap when the
// indices asked for do not decrease (a Poisson process draws each arrival
// once); it need not be safe for concurrent use.
type Walker interface {
	Offset(i int64) (time.Duration, bool)
}

// Walk returns a Cursor: a Schedule is the Timetable of the built-in
// arrival processes.
func (s *Schedule) Walk() Walker { return s.Cursor() }

// Policy says what happens to an arrival that comes due while every VU the
// scenario may hold is busy.
type Policy uint8

// The policies. Drop is k6's: the arrival never starts; it adds to
// dropped_iterations and is charged to corrected_latency{outcome:dropped}
// from its intended start to the moment a VU became free (or the regular
// duration ended). Queue is metronome's: the arrival waits in a FIFO
// backlog, more VUs are initialised up to maxVUs, and the wait counts in
// its schedule_lag and corrected_latency; what still waits at the hard
// stop is dropped, charged up to then.
const (
	Drop Policy = iota
	Queue
)

// String returns "drop" or "queue".
func (p Policy) String() string {
	if p == Queue {
		return "queue"
	}
	return "drop"
}

// The built-in arrival processes. Each builds the Schedule of one
// scenario; the arrival-rate executors are these processes with options
// parsing around them.
type (
	// Constant spaces Rate arrivals per TimeUnit evenly over Duration,
	// exactly: arrival i is due at ⌊i·TimeUnit/Rate⌋ (intended-arrival-rate).
	Constant struct {
		Rate               int64
		TimeUnit, Duration time.Duration
	}
	// K6Constant is Constant with k6's arithmetic (constant-arrival-rate):
	// arrival i is due at i·P, the period P = TimeUnit/Rate truncated to
	// whole nanoseconds.
	K6Constant struct {
		Rate               int64
		TimeUnit, Duration time.Duration
	}
	// Ramping takes the rate linearly from StartRate through each stage's
	// target; arrival i (0-based) is due when the area under the rate
	// reaches i+1. K6Arithmetic selects k6's floating-point form
	// (ramping-arrival-rate) over the one that keeps precision when the
	// rate changes slowly (intended-arrival-rate).
	Ramping struct {
		StartRate    int64
		TimeUnit     time.Duration
		Stages       []RateStage
		K6Arithmetic bool
	}
	// Poisson makes the arrivals of a constant rate (Rate, Duration) or of
	// a ramp (StartRate, Stages) a Poisson process: the gaps are
	// exponential draws from a generator seeded with Seed, so equal seeds
	// give equal timetables.
	Poisson struct {
		Rate               int64
		TimeUnit, Duration time.Duration
		StartRate          int64
		Stages             []RateStage
		Seed               uint64
	}
)

// Schedule checks the process and returns its timetable.
func (p Constant) Schedule() (*Schedule, error) {
	return NewSchedule(ScheduleSpec{TimeUnit: p.TimeUnit, Rate: p.Rate, Duration: p.Duration})
}

// Schedule checks the process and returns its timetable.
func (p K6Constant) Schedule() (*Schedule, error) {
	return NewSchedule(ScheduleSpec{TimeUnit: p.TimeUnit, Rate: p.Rate, Duration: p.Duration, K6Arithmetic: true})
}

// Schedule checks the process and returns its timetable.
func (p Ramping) Schedule() (*Schedule, error) {
	if len(p.Stages) == 0 {
		return nil, errors.New("a ramp needs at least one stage")
	}
	return NewSchedule(ScheduleSpec{TimeUnit: p.TimeUnit, StartRate: p.StartRate, Stages: p.Stages, K6Arithmetic: p.K6Arithmetic})
}

// Schedule checks the process and returns its timetable.
func (p Poisson) Schedule() (*Schedule, error) {
	return NewSchedule(ScheduleSpec{TimeUnit: p.TimeUnit, Rate: p.Rate, Duration: p.Duration,
		StartRate: p.StartRate, Stages: p.Stages, Arrivals: ArrivalsPoisson, Seed: p.Seed})
}

// NewArrivalConfig returns the open-model part of a scenario config:
// arrivals follow t, run on at most maxVUs VUs of which preAllocatedVUs are
// initialised before the scenario starts (the rest in the background when
// arrivals find every VU busy), and policy says what happens to an arrival
// that finds no free VU. Errors are about the values, not option paths:
// an executor's Parse checks its options first and names them.
func NewArrivalConfig(sc *Scenario, t Timetable, preAllocatedVUs, maxVUs int, policy Policy) (ArrivalConfig, error) {
	switch {
	case sc == nil || t == nil:
		return ArrivalConfig{}, errors.New("an arrival config needs a scenario and a timetable")
	case preAllocatedVUs < 0 || maxVUs < preAllocatedVUs:
		return ArrivalConfig{}, fmt.Errorf("scenarios.%s: need 0 ≤ preAllocatedVUs ≤ maxVUs, got %d and %d", sc.Name, preAllocatedVUs, maxVUs)
	case policy > Queue:
		return ArrivalConfig{}, fmt.Errorf("scenarios.%s: unknown policy %d", sc.Name, policy)
	case t.Duration() < 0 || t.Duration() > math.MaxInt64-sc.GracefulStop:
		return ArrivalConfig{}, fmt.Errorf("scenarios.%s: the timetable's duration %s does not fit with gracefulStop", sc.Name, t.Duration())
	}
	return ArrivalConfig{scenario: sc, schedule: t, preAllocated: preAllocatedVUs, maxVUs: maxVUs, queue: policy == Queue}, nil
}

// Model is ModelOpen.
func (c *ArrivalConfig) Model() Model { return ModelOpen }

// Timetable returns the scenario's arrival process.
func (c *ArrivalConfig) Timetable() Timetable { return c.schedule }

// Policy says what happens to an arrival that finds every VU busy.
func (c *ArrivalConfig) Policy() Policy {
	if c.queue {
		return Queue
	}
	return Drop
}

// Describe is a banner line: what, then the VU budget, exec and
// gracefulStop in parentheses, as the built-in arrival executors print
// them: "replaying 100 arrivals over 2s (maxVUs: 1-5, gracefulStop: 30s)".
func (c *ArrivalConfig) Describe(what string) string { return what + c.arrivalInfo() }

// Segment returns the config as the instance of the execution segment t
// runs it: its share of the VU budget and the arrival indices of its
// stripe, at their global times. A config that embeds ArrivalConfig
// supports segments by implementing Segmenter with it.
func (c ArrivalConfig) Segment(t *Tuple) ArrivalConfig {
	if t != nil {
		segmentArrivals(&c, t)
	}
	return c
}

// Numbered returns the config with its arrivals numbered from first:
// arrival i of the timetable runs as the scenario's iteration first+i
// (exec.scenario.iterationInTest), and the instance's own arrivals count
// from firstLocal (iterationInInstance). An executor that runs timetables
// one after another, as capacity-search runs its steps, numbers each
// after the last; a single timetable counts from 0.
func (c ArrivalConfig) Numbered(first, firstLocal int64) ArrivalConfig {
	c.first, c.firstLocal = first, firstLocal
	return c
}

// Segmenter is implemented by the configs of extension executors that
// support execution segments; Segmented calls it.
type Segmenter interface {
	// Segmented returns a copy of the config as the instance of t runs
	// it, leaving the config itself unchanged.
	Segmented(t *Tuple) (Config, error)
}

// peakPerSecond is the highest arrival rate of t, per second, as far as it
// is known: a Schedule's peak, a timetable's PeakRate, or its mean rate.
func peakPerSecond(t Timetable) float64 {
	switch p := t.(type) {
	case *Schedule:
		sp := p.Spec()
		return arrivalRatePerSecond(sp.peakRate(), sp.TimeUnit)
	case interface{ PeakRate() float64 }:
		return p.PeakRate()
	}
	if n, d := t.Count(), t.Duration(); n > 0 && d > 0 {
		return float64(n) / d.Seconds()
	}
	return 0
}

// Schedule builds the schedule spec describes: a ScheduleSpec is the
// general form of the built-in arrival processes.
func (spec ScheduleSpec) Schedule() (*Schedule, error) { return NewSchedule(spec) }
