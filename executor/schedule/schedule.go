// Package schedule is the arithmetic of open-model arrival processes: the
// intended start of every arrival of a scenario as an offset from its
// start, computed from the index alone so that nothing drifts over long
// runs (docs/DESIGN.md §2.1). A Timetable is what the arrival-rate
// executors walk; a Schedule is the Timetable of the built-in processes
// (constant, ramping, k6's arithmetic, Poisson). It imports nothing but the
// standard library, so that it can be tested and reused alone.
package schedule

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"sync"
	"time"
)

// Arrivals says how an open-model schedule spreads its arrivals.
type Arrivals uint8

// The arrival processes. ArrivalsUniform spaces arrivals evenly, as k6 and
// wrk2 do; ArrivalsPoisson makes them a Poisson process with the same rate,
// drawn from a seeded generator so that a run can be repeated exactly.
const (
	ArrivalsUniform Arrivals = iota
	ArrivalsPoisson
)

// String returns the option value that selects a.
func (a Arrivals) String() string {
	if a == ArrivalsPoisson {
		return "poisson"
	}
	return "uniform"
}

// RateStage is one step of a ramping arrival rate: the rate goes linearly to
// Target (iterations per time unit) over Duration.
type RateStage struct {
	Duration time.Duration
	Target   int64
}

// Spec describes an arrival schedule: a constant Rate for Duration,
// or a rate ramped from StartRate through Stages. Rates are iterations per
// TimeUnit.
type Spec struct {
	TimeUnit time.Duration
	// Rate and Duration describe a constant rate; they are used when Stages
	// is empty.
	Rate     int64
	Duration time.Duration
	// StartRate and Stages describe a piecewise linear rate.
	StartRate int64
	Stages    []RateStage

	Arrivals Arrivals
	// Seed seeds the Poisson process; schedules with equal specs and seeds
	// are identical.
	Seed uint64

	// K6Arithmetic reproduces k6's arithmetic to the nanosecond: a constant
	// rate uses the period timeUnit/rate truncated to whole nanoseconds and
	// multiplied by the index, a ramp uses k6's floating-point closed form.
	// Without it a constant rate is computed exactly (⌊i·timeUnit/rate⌋,
	// so rate·duration/timeUnit arrivals fit in duration whatever the
	// rounding of the period) and a ramp uses a form of the same closed form
	// that does not lose precision when the rate changes slowly.
	K6Arithmetic bool
}

// maxArrivals bounds the size of a schedule: ramp indices are exact in a
// float64 below it, and Poisson sums stay far from overflowing.
const maxArrivals = 1 << 40

// poissonFrac is the number of fractional bits of the fixed-point sum of a
// Poisson schedule's exponential draws. Summing integers keeps the sum free
// of accumulated rounding however long the schedule is; the quantisation of
// each draw (2⁻²⁵ on average) is unbiased.
const poissonFrac = 24

// Schedule is the intended arrival schedule of an open-model scenario
// (docs/DESIGN.md §2.1): iteration i is intended to start t_i = Λ⁻¹(x_i) after the
// scenario start, where Λ is the integral of the rate and x_i is i for an
// evenly spaced constant rate (first arrival at 0), i+1 for an evenly spaced
// ramp (first arrival when the area under the rate reaches 1, as k6), or the
// sum of i+1 draws of Exp(1) for Poisson arrivals.
//
// Offsets are whole nanoseconds computed from the index alone (or from the
// integer sum of the draws), so nothing drifts over long runs. A Schedule is
// safe for concurrent use; for a sequential walk a Cursor avoids the lock
// that Poisson schedules take.
type Schedule struct {
	spec     Spec
	duration time.Duration // the regular duration

	// constant rate
	period time.Duration // k6's truncated period (K6Arithmetic)

	// ramp
	ramp      []scheduleStage
	totalArea float64

	count        int64 // arrivals in the regular duration (uniform arrivals)
	countOnce    sync.Once
	poissonCount int64 // the same for Poisson arrivals, set by countOnce

	mu     sync.Mutex // guards shared
	shared Cursor
}

// scheduleStage is one stage of a ramp with its rates in iterations per
// nanosecond and its place on the time and area axes.
type scheduleStage struct {
	start  time.Duration
	dur    float64 // nanoseconds
	r0, r1 float64 // iterations per nanosecond at the stage's start and end
	c0, c1 float64 // area before and after the stage
}

// New checks spec and returns its schedule.
func New(spec Spec) (*Schedule, error) {
	if spec.TimeUnit <= 0 {
		return nil, errors.New("timeUnit must be greater than 0")
	}
	if spec.Arrivals > ArrivalsPoisson {
		return nil, fmt.Errorf("unknown arrival process %d", spec.Arrivals)
	}
	s := &Schedule{spec: spec}
	tu := float64(spec.TimeUnit)
	if len(spec.Stages) == 0 {
		switch {
		case spec.Rate <= 0:
			return nil, errors.New("rate must be greater than 0")
		case spec.Rate > int64(spec.TimeUnit):
			return nil, errors.New("rate must not exceed one iteration per nanosecond")
		case spec.Duration <= 0:
			return nil, errors.New("duration must be greater than 0")
		}
		s.duration = spec.Duration
		s.totalArea = float64(spec.Duration) * float64(spec.Rate) / tu
		if s.totalArea > maxArrivals {
			return nil, fmt.Errorf("the schedule would hold more than %d arrivals", int64(maxArrivals))
		}
		if spec.K6Arithmetic {
			// The rational timeUnit/rate rounded to a float64 and
			// truncated, which is what a division of the exact float64
			// operands gives.
			s.period = time.Duration(tu / float64(spec.Rate))
		}
	} else {
		if spec.StartRate < 0 || spec.StartRate > int64(spec.TimeUnit) {
			return nil, errors.New("startRate must be between 0 and one iteration per nanosecond")
		}
		from := float64(spec.StartRate) / tu
		var at time.Duration
		var area float64
		for k, st := range spec.Stages {
			if st.Duration < 0 || st.Target < 0 {
				return nil, fmt.Errorf("stage %d has a negative duration or target", k)
			}
			if st.Target > int64(spec.TimeUnit) {
				return nil, fmt.Errorf("stage %d: target must not exceed one iteration per nanosecond", k)
			}
			if st.Duration > math.MaxInt64-at {
				return nil, errors.New("the stages are too long")
			}
			to := float64(st.Target) / tu
			d := float64(st.Duration)
			rs := scheduleStage{start: at, dur: d, r0: from, r1: to, c0: area}
			area += d * (from + to) / 2
			rs.c1 = area
			s.ramp = append(s.ramp, rs)
			at += st.Duration
			from = to
		}
		if at <= 0 {
			return nil, errors.New("the stages must last longer than 0s")
		}
		if area > maxArrivals {
			return nil, fmt.Errorf("the schedule would hold more than %d arrivals", int64(maxArrivals))
		}
		s.duration = at
		s.totalArea = area
	}
	if spec.Arrivals == ArrivalsUniform {
		s.count = s.uniformCount()
	}
	s.shared.reset(s)
	return s, nil
}

// uniformCount is the number of evenly spaced arrivals in the regular
// duration: offsets in [0, duration) for a constant rate, in (0, duration]
// for a ramp (an arrival exactly at a stage's end belongs to that stage).
func (s *Schedule) uniformCount() int64 {
	switch {
	case s.ramp != nil && s.spec.K6Arithmetic:
		// k6 sums the stages' areas in floating point, so a rate·duration
		// of 1980 may hold 1979 arrivals; reproduce that.
		return int64(math.Floor(s.totalArea))
	case s.ramp != nil:
		// Σ dur·(from + to) / (2·timeUnit), exactly.
		num, term := new(big.Int), new(big.Int)
		from := s.spec.StartRate
		for _, st := range s.spec.Stages {
			term.SetInt64(from)
			term.Add(term, big.NewInt(st.Target))
			term.Mul(term, big.NewInt(int64(st.Duration)))
			num.Add(num, term)
			from = st.Target
		}
		num.Quo(num, new(big.Int).Mul(big.NewInt(2), big.NewInt(int64(s.spec.TimeUnit))))
		return num.Int64()
	case s.spec.K6Arithmetic:
		return int64((s.duration-1)/s.period) + 1
	default:
		// #{i ≥ 0 : i·timeUnit < duration·rate} = ⌊(duration·rate − 1)/timeUnit⌋ + 1
		hi, lo := bits.Mul64(uint64(s.duration), uint64(s.spec.Rate))
		lo, borrow := bits.Sub64(lo, 1, 0)
		hi -= borrow
		q, _ := bits.Div64(hi, lo, uint64(s.spec.TimeUnit)) // hi < timeUnit: bounded by maxArrivals
		return int64(q) + 1
	}
}

// Duration is the schedule's regular duration: the constant rate's duration
// or the sum of the stages.
func (s *Schedule) Duration() time.Duration { return s.duration }

// Spec returns the spec the schedule was built from.
func (s *Schedule) Spec() Spec { return s.spec }

// Count is the number of arrivals intended within the regular duration:
// Offset(i) is defined exactly for 0 ≤ i < Count(). For Poisson arrivals
// the first call walks the whole schedule once.
func (s *Schedule) Count() int64 {
	if s.spec.Arrivals == ArrivalsUniform {
		return s.count
	}
	s.countOnce.Do(func() {
		c := s.Cursor()
		var i int64
		for {
			if _, ok := c.Offset(i); !ok {
				break
			}
			i++
		}
		s.poissonCount = i
	})
	return s.poissonCount
}

// Offset returns t_i, the intended start of iteration i as an offset from
// the scenario start, and false when i is outside the schedule. For Poisson
// arrivals it walks a shared cursor under a lock, so it is amortised O(1)
// for ascending indices; a dispatcher should hold its own Cursor.
func (s *Schedule) Offset(i int64) (time.Duration, bool) {
	if s.spec.Arrivals == ArrivalsPoisson {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.shared.Offset(i)
	}
	var c Cursor
	c.reset(s)
	return c.Offset(i)
}

// Cursor returns a new cursor at the start of the schedule.
func (s *Schedule) Cursor() *Cursor {
	c := &Cursor{}
	c.reset(s)
	return c
}

// Cursor walks a schedule. Offset is O(1) (amortised, for Poisson
// arrivals) when the indices asked for do not decrease; asking for an
// earlier index restarts a Poisson walk from the beginning. A Cursor is not
// safe for concurrent use.
type Cursor struct {
	s     *Schedule
	stage int // the ramp stage of the last offset

	// Poisson: n draws taken so far, their fixed-point sum x, and the
	// generator positioned after them.
	n   int64
	x   uint64
	rng rand.PCG
	// end is the first index known to lie beyond the schedule, or -1.
	end int64
}

func (c *Cursor) reset(s *Schedule) {
	c.s = s
	c.stage = 0
	c.n, c.x, c.end = 0, 0, -1
	if s.spec.Arrivals == ArrivalsUniform {
		c.end = s.count
	}
	// The second PCG word is a fixed constant, so that the seed alone
	// selects the stream.
	c.rng.Seed(s.spec.Seed, 0x6d65_7472_6f6e_6f6d)
}

// Offset returns t_i and whether i lies within the schedule.
func (c *Cursor) Offset(i int64) (time.Duration, bool) {
	s := c.s
	if i < 0 || (c.end >= 0 && i >= c.end) {
		return 0, false
	}
	if s.spec.Arrivals == ArrivalsUniform {
		switch {
		case s.ramp != nil:
			return c.rampOffset(float64(i + 1))
		case s.spec.K6Arithmetic:
			return time.Duration(i) * s.period, true
		default:
			hi, lo := bits.Mul64(uint64(i), uint64(s.spec.TimeUnit))
			q, _ := bits.Div64(hi, lo, uint64(s.spec.Rate)) // i < count keeps q < duration
			return time.Duration(q), true
		}
	}
	t, ok := c.poissonOffset(i)
	if !ok && (c.end < 0 || i < c.end) {
		// Offsets grow with the index, so every later one is out too.
		c.end = i
	}
	return t, ok
}

// poissonOffset advances the draws to index i (restarting if i is behind)
// and maps their sum through Λ⁻¹.
func (c *Cursor) poissonOffset(i int64) (time.Duration, bool) {
	s := c.s
	if i+1 < c.n {
		end := c.end
		c.reset(s)
		c.end = end
	}
	for c.n <= i {
		// Exp(1) by inversion of a uniform draw in [0, 1); 53 bits keep
		// the logarithm finite (at most 36.8).
		u := float64(c.rng.Uint64()>>11) * 0x1p-53
		e := -math.Log1p(-u)
		c.x += uint64(e*(1<<poissonFrac) + 0.5)
		c.n++
	}
	if s.ramp != nil {
		x := float64(c.x) / (1 << poissonFrac)
		if x >= s.totalArea {
			return 0, false
		}
		return c.rampOffset(x)
	}
	// t = ⌊x·timeUnit/rate⌋ with x = c.x/2^poissonFrac, in 128-bit integers.
	hi, lo := bits.Mul64(c.x, uint64(s.spec.TimeUnit))
	lo = lo>>poissonFrac | hi<<(64-poissonFrac)
	hi >>= poissonFrac
	if hi >= uint64(s.spec.Rate) {
		return 0, false
	}
	q, _ := bits.Div64(hi, lo, uint64(s.spec.Rate))
	if q >= uint64(s.duration) {
		return 0, false
	}
	return time.Duration(q), true
}

// rampOffset solves Λ(t) = x on the ramp: within the stage holding x
// (c0 < x ≤ c1), the offset y into the stage satisfies
// r0·y + (r1 − r0)·y²/(2·dur) = x − c0.
func (c *Cursor) rampOffset(x float64) (time.Duration, bool) {
	st := c.s.ramp
	if c.stage >= len(st) || x <= st[c.stage].c0 {
		c.stage = 0
	}
	for c.stage < len(st) && x > st[c.stage].c1 {
		c.stage++
	}
	if c.stage == len(st) {
		// Only rounding of the stages' float areas gets here, for an
		// arrival that exactly closes the last stage.
		return c.s.duration, true
	}
	g := &st[c.stage]
	a := x - g.c0
	var y float64
	switch {
	case g.r0 == g.r1:
		y = a / g.r1
	case c.s.spec.K6Arithmetic:
		y = (g.r0*g.dur - math.Sqrt(max(0, g.dur*(g.r0*g.r0*g.dur+2*a*(g.r1-g.r0))))) / (g.r0 - g.r1)
	default:
		// The same root, rationalised so that nothing cancels when r1 is
		// close to r0. The denominator is positive: a > 0, and r0 = 0
		// implies r1 > 0.
		y = min(2*a/(g.r0+math.Sqrt(max(0, g.r0*g.r0+2*a*(g.r1-g.r0)/g.dur))), g.dur)
	}
	return g.start + time.Duration(y), true
}
