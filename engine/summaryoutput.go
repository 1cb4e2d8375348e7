package engine

import "github.com/metronome-load/metronome/summary"

// summaryReceiver is implemented by outputs that show the end-of-test
// summary themselves, such as the web dashboard's HTML report. They get it
// after the run and before Stop.
type summaryReceiver interface {
	ReceiveSummary(in *summary.Input)
}

// handSummary gives the summary to the outputs that want it.
func (r *testRun) handSummary(in *summary.Input) {
	for _, o := range r.outputs {
		if sr, ok := o.(summaryReceiver); ok {
			sr.ReceiveSummary(in)
		}
	}
}
