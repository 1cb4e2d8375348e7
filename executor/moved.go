package executor

import "github.com/metronome-load/metronome/executor/schedule"

// The arrival arithmetic moved to package executor/schedule (issue 30). The
// names below keep extensions written against executor building for one
// release; new code uses package schedule.
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
