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
func RecordLatency(st *modules.State, tags *metrics.TagSet, end time.Time, d time.Duration) {
	if st == nil || st.Builtin == nil || st.Recorder == nil {
		return
	}
	st.Latency.Record(st.Recorder, st.Builtin.CorrectedLatency, tags, end, d)
}

// RecordInterrupted records the corrected_latency of a request that was
// still waiting for its answer when the iteration was cut off at stop
// (the hard stop or an abort): it was issued at sent and is charged up to
// stop, tagged outcome=interrupted.
func RecordInterrupted(st *modules.State, tags *metrics.TagSet, sent, stop time.Time) {
	if st == nil || st.Builtin == nil || st.Recorder == nil {
		return
	}
	st.Latency.Interrupted(st.Recorder, st.Builtin.CorrectedLatency, tags, sent, stop)
}
