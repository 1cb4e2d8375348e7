package executor

import "github.com/metronome-load/metronome/executor/schedule"

// This file names every optional ability a scenario's Config or Executor
// may have beyond the two contracts, each an interface that says when it
// is asked, and Ask, the one place that asks for them. The run, the
// options and the offline tools learn what a scenario can do through Ask
// only, so an extension's executor gets every one of them (an account,
// the summary's "queues" wording, a capacity report) by implementing the
// interface, exactly as a built-in does.

// ClosedModel is implemented by the configs of the closed-model executors
// that can back-fill corrected_latency (docs/DESIGN.md §2.4). It is asked
// when the options are read, to give the scenarios that set no
// expectedInterval the run's default, and at the end of a test (and of a
// merge or an audit), to tell which scenarios back-filled.
type ClosedModel interface {
	// DefaultExpectedInterval sets the expectedInterval of a scenario
	// that set none: to def, or, when def is unset too, to the executor's
	// own default — auto for constant-vus and ramping-vus, off for the
	// iterations executors.
	DefaultExpectedInterval(def ExpectedInterval)
	// BackFillInterval is the scenario's expectedInterval.
	BackFillInterval() ExpectedInterval
}

// Scheduled is implemented by the configs of open-model scenarios whose
// arrivals follow a rate Schedule (the built-in arrival processes). It is
// asked when the options are read, to refuse a rate above what one
// scenario can schedule, and by an audit, to rebuild the intended starts.
// Schedule returns nil for a timetable that is not a rate Schedule.
type Scheduled interface {
	Schedule() *schedule.Schedule
}

// ArrivalPolicy is implemented by the configs of open-model scenarios: what
// happens to an arrival that finds every VU busy. It is asked at the end
// of a test, so that the summary words the arrivals left over as a queue
// that never drained (Queue) rather than as dropped iterations (Drop).
type ArrivalPolicy interface {
	Policy() Policy
}

// CapacitySearch is implemented by the configs of scenarios that overload
// the server on purpose to find its capacity. It is asked at the end of a
// test: the summary leaves out the warning about dropped arrivals (the
// search's steps account for them) and labels the capacity report with
// the Objective, the threshold each step had to meet on corrected_latency,
// as written ("p(99)<50").
type CapacitySearch interface {
	Objective() string
}

// VUStaged is implemented by the configs whose VU count follows stages
// (ramping-vus). It is asked when the options are read, so that a VU
// count over the limit is reported at the stage that asks for it.
type VUStaged interface {
	VUStages() []VUStage
}

// Accounter is implemented by the executors of open-model scenarios. It is
// asked at every tick of the generator's health monitor, for the arrivals
// that started late so far, and at the end of the test, for the account
// the summary prints and the result file keeps. It is safe to call from
// any goroutine; the account is final once Run has returned.
type Accounter interface {
	Account() Account
}

// BackFillAccounter is implemented by the executors of closed-model
// scenarios (the ClosedLoop provides it). It is asked at the end of the
// test, once Run has returned, for the back-fill account the summary
// prints and the result file keeps; an account whose Interval is not
// enabled says the scenario did not back-fill.
//
// Accounts come back one way, pulled: the open-model account has to be
// readable while the scenario runs (the health monitor asks it at every
// tick), so the back-fill account is pulled too, and Deps carries only
// what goes into an executor.
type BackFillAccounter interface {
	BackFillAccount() BackFillAccount
}

// CapacityReporter is implemented by the executors of scenarios that
// search for the server's capacity. It is asked at the end of the test,
// once Run has returned, for the report the summary prints.
type CapacityReporter interface {
	CapacityReport() CapacityReport
}

// CapacityReport is where a capacity search ended.
type CapacityReport struct {
	// Limit is "server" when the search found the server's capacity,
	// "generator" when the generator was the limit (then Capacity is only
	// a lower bound), "none" when every step met the objective.
	Limit string
	// Capacity is the highest rate per second that met the objective, 0
	// for none; FailedAt the lowest that failed, 0 for none.
	Capacity, FailedAt float64
	// Verdict is the search's one-sentence result.
	Verdict string
	// Warning, when not empty, is why the result does not measure the
	// server (the generator was the limit); the summary lists it among
	// its warnings.
	Warning string
	Steps   []CapacityStep
}

// CapacityStep is one step of a capacity search.
type CapacityStep struct {
	// Rate is the step's arrival rate per second.
	Rate float64
	// Objective is corrected_latency's value of the objective's
	// aggregation; then the p50 and p99 of corrected_latency and of the
	// requests' own durations (0 when they recorded none), in ms.
	Objective                  float64
	CorrectedP50, CorrectedP99 float64
	RawP50, RawP99             float64
	ErrorRate                  float64
	// CPU is the generator's CPU share (NaN where unknown), SchedP99 its
	// p99 goroutine scheduling latency over the step, in ms.
	CPU, SchedP99 float64
	// Verdict is "met", "server" or "generator"; Why says what failed.
	Verdict, Why string
}

// Abilities are the optional abilities of one scenario: each field is the
// scenario's config or executor as that interface, nil when it does not
// have the ability.
type Abilities struct {
	// Of the config.
	Closed   ClosedModel
	Schedule Scheduled
	Policy   ArrivalPolicy
	Search   CapacitySearch
	VUStages VUStaged
	// Of the executor.
	Account  Accounter
	BackFill BackFillAccounter
	Capacity CapacityReporter
}

// Ask returns the optional abilities of a scenario's config and of its
// executor; either may be nil (before the scenario starts there is no
// executor, and an executor may be asked on its own). It is the one place
// that asks a config or an executor what it can do.
func Ask(cfg Config, ex Executor) Abilities {
	var a Abilities
	if cfg != nil {
		a.Closed, _ = cfg.(ClosedModel)
		a.Schedule, _ = cfg.(Scheduled)
		a.Policy, _ = cfg.(ArrivalPolicy)
		a.Search, _ = cfg.(CapacitySearch)
		a.VUStages, _ = cfg.(VUStaged)
	}
	if ex != nil {
		a.Account, _ = ex.(Accounter)
		a.BackFill, _ = ex.(BackFillAccounter)
		a.Capacity, _ = ex.(CapacityReporter)
	}
	return a
}

// Queues reports whether the scenario's arrivals that find every VU busy
// wait for one (Queue) rather than being dropped.
func (a Abilities) Queues() bool { return a.Policy != nil && a.Policy.Policy() == Queue }

// BackFills reports whether the scenario is closed-model and back-fills
// corrected_latency: its expectedInterval, after defaults, is on.
func (a Abilities) BackFills() bool { return a.Closed != nil && a.Closed.BackFillInterval().Enabled() }

// RateSchedule returns the scenario's rate Schedule, nil when it has none.
func (a Abilities) RateSchedule() *schedule.Schedule {
	if a.Schedule == nil {
		return nil
	}
	return a.Schedule.Schedule()
}

// EndAccount returns, once the scenario's Run has returned, the account
// of its arrivals (open: nil when the executor keeps none) and its
// back-fill account (the zero value when it did not back-fill).
func (a Abilities) EndAccount() (open *Account, fill BackFillAccount) {
	if a.Account != nil {
		acc := a.Account.Account()
		open = &acc
	}
	if a.BackFill != nil {
		if f := a.BackFill.BackFillAccount(); f.Interval.Enabled() {
			fill = f
		}
	}
	return open, fill
}
