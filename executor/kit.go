package executor

import (
	"errors"
	"fmt"
	"math"

	"github.com/metronome-load/metronome/executor/schedule"
	"github.com/metronome-load/metronome/executor/segment"
)

// This file is the open-model half of the executor kit, the public API an
// extension builds a new arrival process on (the closed-model half is
// kit_closed.go). An executor of a new arrival process is a
// schedule.Timetable, a config that embeds ArrivalConfig, a Description
// and a Parse; the arrival loop, the VU budget, queue-or-drop, the drop
// and interruption charges, the account and execution segments come with
// ArrivalConfig.

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

// NewArrivalConfig returns the open-model part of a scenario config:
// arrivals follow t, run on at most maxVUs VUs of which preAllocatedVUs are
// initialised before the scenario starts (the rest in the background when
// arrivals find every VU busy), and policy says what happens to an arrival
// that finds no free VU. Errors are about the values, not option paths:
// an executor's Parse checks its options first and names them.
func NewArrivalConfig(sc *Scenario, t schedule.Timetable, preAllocatedVUs, maxVUs int, policy Policy) (ArrivalConfig, error) {
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
func (c *ArrivalConfig) Timetable() schedule.Timetable { return c.schedule }

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
// implements Config.Segmented with it, as the built-in arrival executors
// do.
func (c ArrivalConfig) Segment(t *segment.Tuple) ArrivalConfig {
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

// peakPerSecond is the highest arrival rate of t, per second, as far as it
// is known: a Schedule's peak, a timetable's PeakRate, or its mean rate.
func peakPerSecond(t schedule.Timetable) float64 {
	switch p := t.(type) {
	case *schedule.Schedule:
		sp := p.Spec()
		return arrivalRatePerSecond(sp.PeakRate(), sp.TimeUnit)
	case interface{ PeakRate() float64 }:
		return p.PeakRate()
	}
	if n, d := t.Count(), t.Duration(); n > 0 && d > 0 {
		return float64(n) / d.Seconds()
	}
	return 0
}
