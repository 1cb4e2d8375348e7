package js

import (
	"time"

	"github.com/metronome-load/metronome/metrics"
)

// The two ways a VU hands on the samples its recorder buffers, asked here
// and nowhere else. The VU does not keep the answer: a field more would
// move every VU to a larger size class (see TestVUFitsItsSizeClass), and
// the question costs one interface check per iteration.

// agedFlusher is a recorder that can hand on only the samples past its
// buffer's age limit (metrics.Buffer).
type agedFlusher interface{ FlushIfOlder(now time.Time) }

// flusher is a recorder that buffers samples (metrics.VURecorder).
type flusher interface{ Flush() }

// flushAged ends an iteration: rec hands on the samples past its age
// limit, so that thresholds see a quiet VU's samples while fresher ones
// ride with the next iteration's; a recorder that cannot tell their age
// hands on all of them.
func flushAged(rec metrics.Recorder, now time.Time) {
	switch f := rec.(type) {
	case agedFlusher:
		f.FlushIfOlder(now)
	case flusher:
		f.Flush()
	}
}

// flushAll ends setup(), teardown() and handleSummary(): rec hands on
// every sample it holds.
func flushAll(rec metrics.Recorder) {
	if f, ok := rec.(flusher); ok {
		f.Flush()
	}
}
