package jsmod

import (
	"time"

	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/metrics"
)

// RecordLatency records the corrected_latency of one request a module
// made in the current iteration (docs/DESIGN.md §2.2): d is the request's
// own time, from when it was issued to when its answer was in, end is
// that answer's moment and tags are the tags of the request's own duration
// metric, so corrected_latency{name:login} selects what
// http_req_duration{name:login} does. How late the iteration started is
// added in an open model; a back-filling closed model back-fills d. In
// setup and teardown it records nothing. Every module that makes requests
// calls it once per request, built-in or extension alike; the time the
// script spends between requests is never in it.
//
// It records past the gate of State.Recorder (Measured): the request was
// answered, so its user's wait is measured even when the VU records it
// after an interruption.
func RecordLatency(st *modules.State, tags *metrics.TagSet, end time.Time, d time.Duration) {
	if st == nil || st.Builtin == nil || st.Recorder == nil {
		return
	}
	st.Latency.Record(Measured(st), st.Builtin.CorrectedLatency, tags, end, d)
}

// RecordInterrupted records the corrected_latency of a request that was
// still waiting for its answer when the iteration was cut off at stop
// (the hard stop or an abort): it was issued at sent and is charged up to
// stop, tagged outcome=interrupted. The interruption does not drop this
// sample as it drops the k6 metrics recorded after it: the charge is for
// what the interruption cut off.
func RecordInterrupted(st *modules.State, tags *metrics.TagSet, sent, stop time.Time) {
	if st == nil || st.Builtin == nil || st.Recorder == nil {
		return
	}
	st.Latency.Interrupted(Measured(st), st.Builtin.CorrectedLatency, tags, sent, stop)
}

// Measured is the recorder for the samples of work that ended before the
// current iteration was interrupted, such as a request answered before
// the hard stop that the VU records after it: State.Recorder drops what
// it gets after the interruption, as k6 drops what is pushed on a done
// context, but k6 pushes a request's samples when its answer comes, so
// they are kept. Everything else a module records goes to State.Recorder.
func Measured(st *modules.State) metrics.Recorder {
	if g, ok := st.Recorder.(modules.GatedRecorder); ok {
		return g.Ungated()
	}
	return st.Recorder
}
