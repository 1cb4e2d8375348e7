package schedule

import (
	"errors"
	"time"
)

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
	return New(Spec{TimeUnit: p.TimeUnit, Rate: p.Rate, Duration: p.Duration})
}

// Schedule checks the process and returns its timetable.
func (p K6Constant) Schedule() (*Schedule, error) {
	return New(Spec{TimeUnit: p.TimeUnit, Rate: p.Rate, Duration: p.Duration, K6Arithmetic: true})
}

// Schedule checks the process and returns its timetable.
func (p Ramping) Schedule() (*Schedule, error) {
	if len(p.Stages) == 0 {
		return nil, errors.New("a ramp needs at least one stage")
	}
	return New(Spec{TimeUnit: p.TimeUnit, StartRate: p.StartRate, Stages: p.Stages, K6Arithmetic: p.K6Arithmetic})
}

// Schedule checks the process and returns its timetable.
func (p Poisson) Schedule() (*Schedule, error) {
	return New(Spec{TimeUnit: p.TimeUnit, Rate: p.Rate, Duration: p.Duration,
		StartRate: p.StartRate, Stages: p.Stages, Arrivals: ArrivalsPoisson, Seed: p.Seed})
}

// Schedule builds the schedule spec describes: a Spec is the general form
// of the built-in arrival processes.
func (spec Spec) Schedule() (*Schedule, error) { return New(spec) }

// PeakRate is the highest rate of a schedule spec, per its time unit.
func (spec Spec) PeakRate() int64 {
	if len(spec.Stages) == 0 {
		return spec.Rate
	}
	peak := spec.StartRate
	for _, st := range spec.Stages {
		peak = max(peak, st.Target)
	}
	return peak
}
