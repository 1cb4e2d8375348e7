package hdrlog

import (
	"io"
	"time"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
)

// Writer writes the interval log of samples that are all at hand rather
// than arriving during a run (metronome audit's log of a recorded k6 run),
// in the calling goroutine: nothing is queued, so nothing can be dropped.
// The log is the output's, series, intervals and caps alike.
type Writer struct {
	o *Output
	// latest is the time of the latest sample added: intervals that ended
	// a grace before it are written and their memory reused.
	latest time.Time
}

// NewWriter starts a log on w whose intervals count from start. logf
// receives what the output would report at the end of a run (values
// skipped or clamped, names folded); env holds the output's K6_HDRLOG_*
// settings.
func NewWriter(w io.Writer, start time.Time, env map[string]string, logf func(string, ...any)) (*Writer, error) {
	out, err := New(output.Params{Arg: "-", Stdout: w, Env: env, Logf: logf, Now: func() time.Time { return start }})
	if err != nil {
		return nil, err
	}
	o := out.(*Output)
	if err := o.header(); err != nil {
		return nil, err
	}
	return &Writer{o: o, latest: start}, nil
}

// Add logs a batch. Samples should come in time order: one older than the
// intervals still open (those that ended less than 2 s, or one interval,
// before the latest sample) goes to the oldest open interval, as a late
// sample of a live run does.
func (w *Writer) Add(batch []metrics.Sample) {
	w.o.ingest(batch)
	for i := range batch {
		if t := batch[i].Time; t.After(w.latest) {
			w.latest = t
		}
	}
	w.o.writeClosed(w.latest)
}

// Close writes the intervals still open and returns the first error met
// while writing.
func (w *Writer) Close() error {
	w.o.writeClosed(time.Time{})
	return w.o.finish(false)
}
