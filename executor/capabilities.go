package executor

import "slices"

// Capabilities is what a loaded test script offers the run. The engine
// asks for it once, when it prepares the run, rather than probing the
// script piecemeal.
type Capabilities struct {
	// Setup, Teardown and HandleSummary tell whether the script exports
	// setup(), teardown() and handleSummary().
	Setup, Teardown, HandleSummary bool
	// Functions are the names of the functions the script exports,
	// sorted: what a scenario's exec may name.
	Functions []string
	// ConnectRun, when not nil, connects the script's VUs to the run
	// before any VU is made: state holds the instance-wide counters of
	// k6/execution's exec.instance, abort and fail implement
	// exec.test.abort() and exec.test.fail(), and progress reports a
	// scenario's progress (0–1) for exec.scenario.progress. abort's
	// argument is the whole line the run ends with, as k6 logs it ("test
	// aborted: reason at default (file:///…)"); fail's is the line each call
	// logs, as k6 does ("test marked as failed: reason").
	ConnectRun func(state *State, abort, fail func(reason string), progress func(scenario string) float64)
	// SetSetupData, when not nil, hands setup()'s JSON result (or the
	// data given through the REST API) to the VUs.
	SetSetupData func(data []byte)
}

// Exports tells whether the script exports a function called name.
func (c Capabilities) Exports(name string) bool {
	_, ok := slices.BinarySearch(c.Functions, name)
	return ok
}
