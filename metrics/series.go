package metrics

import "sync/atomic"

// SeriesWarnAt is the number of distinct time series (metric and tag set
// pairs) past which a run warns that its tags are too varied, as k6 does
// at the same count; the warning repeats each time the count doubles.
const SeriesWarnAt = 100_000

// seriesSeen counts the time series the engines of this process ingested.
var seriesSeen atomic.Int64

// SeriesSeen returns how many distinct time series (metric and tag set
// pairs) the engines of this process have ingested. It is a lower bound:
// metrics whose IDs are equal modulo 64 count once per tag set, and a tag
// set collected once nothing held it counts again when it comes back. It
// costs one atomic load per sample, where an exact set would cost a map
// lookup.
func SeriesSeen() int64 { return seriesSeen.Load() }

// seeSeries counts the series of m and t if it is new.
func seeSeries(m *Metric, t *TagSet) {
	bit := uint64(1) << (uint(m.ID) % 64)
	for {
		old := t.series.Load()
		if old&bit != 0 {
			return
		}
		if t.series.CompareAndSwap(old, old|bit) {
			seriesSeen.Add(1)
			return
		}
	}
}
