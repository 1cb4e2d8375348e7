package executor

import (
	"context"
	"time"
)

// ClosedBackFill returns how a closed-model scenario that back-fills with
// interval runs and accounts for one iteration (closedRun.iterate), for
// the benchmark and the allocation test: it sets the iteration's back-fill
// state, runs it on the VU and accounts for it (as iteration it.LocalIndex
// of it.Scenario). Each VU passed in keeps
// its own estimate while it is the last one seen.
func ClosedBackFill(deps Deps, interval ExpectedInterval) func(VU, Iteration) bool {
	r := newClosedRun(deps, &Scenario{Name: "default"}, time.Hour, interval, 1)
	var w *closedVU
	return func(vu VU, it Iteration) bool {
		if w == nil || w.VU != vu {
			w = &closedVU{VU: vu}
		}
		if it.Scenario != nil {
			r.scenario = it.Scenario
		}
		run, fill := r.ready(w)
		it.BackFill = fill
		done := r.Completed.Load()
		r.account(w, it.LocalIndex, fill, run.Run(context.Background(), it))
		return r.Completed.Load() > done
	}
}
