package engine

import (
	"time"

	"github.com/metronome-load/metronome/output"
	"github.com/metronome-load/metronome/summary"
)

// handSummary gives the summary to the outputs that want it.
func (r *testRun) handSummary(in *summary.Input) {
	for _, o := range r.outputs {
		if sr, ok := o.(output.SummaryReceiver); ok {
			sr.ReceiveSummary(in)
		}
	}
}

// handEnd gives the outputs that record the end of the run (the result
// file) its duration, setup() data, the accounts of the scenarios that
// started, the tally of the generator's health and the error that ended
// it early (runErr, else the abort reason).
func (r *testRun) handEnd(elapsed time.Duration, setupData []byte, runErr error) {
	if runErr == nil {
		runErr = r.abortError()
	}
	end := output.RunEnd{Elapsed: elapsed, SetupData: setupData, Health: r.health.snapshot(), Err: runErr}
	for _, sc := range r.scenarios {
		if !sc.started.Load() {
			continue
		}
		se := output.ScenarioEnd{Name: sc.cfg.Base().Name}
		open, fill := sc.can.EndAccount()
		if se.Open = open; open == nil && fill.Interval.Enabled() {
			se.BackFill = &fill
		}
		end.Scenarios = append(end.Scenarios, se)
	}
	for _, o := range r.outputs {
		if er, ok := o.(output.EndReceiver); ok {
			er.ReceiveEnd(end)
		}
	}
}
