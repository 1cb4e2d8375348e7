package engine

import "github.com/metronome-load/metronome/metrics"

// seriesWatch warns, as k6 does, when a run's samples have made more
// distinct time series (metric and tag set pairs) than
// metrics.SeriesWarnAt, and again each time the count doubles: each series
// costs memory here and in every output, and a tag with a unique value per
// request (an ID, a full URL) makes one per request.
type seriesWatch struct {
	base, next int64
}

// newSeriesWatch starts counting from what the process has seen so far.
func newSeriesWatch() seriesWatch {
	return seriesWatch{base: metrics.SeriesSeen(), next: metrics.SeriesWarnAt}
}

// check calls warn once the count passed the next limit.
func (w *seriesWatch) check(warn func(format string, args ...any)) {
	n := metrics.SeriesSeen() - w.base
	if w.next == 0 || n <= w.next {
		return // not started (a run that ended before its scenarios), or within the limit
	}
	warn("the test has made %d distinct time series (metric and tag set pairs), more than %d: each costs memory in metronome and in every output; "+
		"keep values unique to a request (IDs, full URLs) out of tags, with the name tag or http.url for URLs (see docs/metrics.md#time-series)", n, w.next)
	for w.next < n {
		w.next *= 2
	}
}
