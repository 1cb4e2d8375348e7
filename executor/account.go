package executor

import "time"

// OnTimeTolerance is how late an open-model iteration may start and still
// count as started on time in the scenario's Account. One millisecond is
// the accuracy wrk2 claims for its own pacing and the threshold beyond
// which Perf Analyzer calls a request delayed; a lag below it is the cost
// of handing the iteration to a VU, not a sign that the generator fell
// behind.
const OnTimeTolerance = time.Millisecond

// Account is the end-of-test account of one open-model scenario
// (docs/DESIGN.md §2.4). Every arrival that became due ends exactly once, so
// Intended == Completed + Interrupted + Dropped and
// Intended == OnTime + Late + Dropped once the scenario has finished.
type Account struct {
	// Intended counts the arrivals whose intended start came during the
	// run (the whole schedule, unless the test was aborted).
	Intended int64
	// OnTime and Late split the arrivals that started by their schedule
	// lag: at most OnTimeTolerance, or more.
	OnTime, Late int64
	// LateForVU counts the Late arrivals that came due before the VU that
	// ran them was free (every VU was busy with an earlier one: the
	// backlog, or too few VUs). The other Late arrivals had a free VU in
	// time and started late because its goroutine woke late: a timer that
	// fired late, or no core free to run it.
	LateForVU int64
	// Completed arrivals ran to the end (an exception still counts);
	// Interrupted ones were cut off by the hard stop.
	Completed, Interrupted int64
	// Dropped arrivals never started.
	Dropped int64
	// PeakBacklog is the most arrivals that were due and waiting for a VU
	// at once (intended-arrival-rate only; the k6 executors drop instead).
	PeakBacklog int64
}
