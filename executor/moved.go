package executor

import (
	"math/big"

	"github.com/metronome-load/metronome/executor/schedule"
	"github.com/metronome-load/metronome/executor/segment"
)

// The arrival arithmetic moved to package executor/schedule (issue 30); these
// names keep extensions written against executor building for one release.
type (
	// Deprecated: use schedule.Timetable.
	Timetable = schedule.Timetable
	// Deprecated: use schedule.Walker.
	Walker = schedule.Walker
	// Deprecated: use schedule.Schedule.
	Schedule = schedule.Schedule
	// Deprecated: use schedule.Spec.
	ScheduleSpec = schedule.Spec
	// Deprecated: use schedule.Cursor.
	Cursor = schedule.Cursor
	// Deprecated: use schedule.Arrivals.
	Arrivals = schedule.Arrivals
	// Deprecated: use schedule.RateStage.
	RateStage = schedule.RateStage
	// Deprecated: use schedule.Constant.
	Constant = schedule.Constant
	// Deprecated: use schedule.K6Constant.
	K6Constant = schedule.K6Constant
	// Deprecated: use schedule.Ramping.
	Ramping = schedule.Ramping
	// Deprecated: use schedule.Poisson.
	Poisson = schedule.Poisson
)

// Deprecated: use schedule.ArrivalsUniform and schedule.ArrivalsPoisson.
const (
	ArrivalsUniform = schedule.ArrivalsUniform
	ArrivalsPoisson = schedule.ArrivalsPoisson
)

// NewSchedule checks spec and returns its schedule.
//
// Deprecated: use schedule.New.
func NewSchedule(spec ScheduleSpec) (*Schedule, error) { return schedule.New(spec) }

// Execution segments moved to package executor/segment (issue 30); these
// names keep extensions written against executor building for one release.
type (
	// Deprecated: use segment.Segment.
	Segment = segment.Segment
	// Deprecated: use segment.Tuple.
	Tuple = segment.Tuple
)

// ParseSegment reads an --execution-segment value.
//
// Deprecated: use segment.Parse.
func ParseSegment(s string) (Segment, error) { return segment.Parse(s) }

// ParseSequence reads an --execution-segment-sequence value.
//
// Deprecated: use segment.ParseSequence.
func ParseSequence(s string) ([]*big.Rat, error) { return segment.ParseSequence(s) }

// NewTuple places seg in seq.
//
// Deprecated: use segment.NewTuple.
func NewTuple(seg Segment, seq []*big.Rat) (*Tuple, error) { return segment.NewTuple(seg, seq) }

// Segmenter was how an extension's config offered execution segments.
//
// Deprecated: Segmented is part of Config now; every config implements it.
type Segmenter interface {
	Segmented(t *segment.Tuple) (Config, error)
}
