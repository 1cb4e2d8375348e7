package executor

import "time"

// ClosedBackFill returns the per-iteration accounting of a closed-model
// scenario that back-fills with interval, as closedRun.iterate runs it
// after each iteration, for the benchmark and the allocation test. Each VU
// passed in keeps its own estimate while it is the last one seen.
func ClosedBackFill(deps Deps, interval ExpectedInterval) func(VU, Iteration, Result) bool {
	r := newClosedRun(deps, &Scenario{Name: "default"}, time.Hour, interval, 1)
	var w *closedVU
	return func(vu VU, it Iteration, res Result) bool {
		if w == nil || w.VU != vu {
			w = &closedVU{VU: vu}
		}
		return r.backFill(w, it, res)
	}
}
