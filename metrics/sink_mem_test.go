package metrics

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/testkit/memstat"
)

// maxQuietTrendBytes is the documented bound (docs/performance.md) on
// what a Trend with few values costs, its engine state included.
const maxQuietTrendBytes = 10 << 10

// Thousands of custom Trends with two values each (one with a negative
// value too) cost at most maxQuietTrendBytes each, engine state and
// sinks included: a trend's memory follows what it holds, not the ~250 KB
// of a dense histogram. Measured over 2,000 metrics the bound is 20 MB,
// far above the few KB a collection can leave either way.
func TestQuietTrendsAreSmall(t *testing.T) {
	const n = 2000
	reg := NewRegistry()
	ms := make([]*Metric, n)
	for i := range ms {
		ms[i] = reg.MustNew("tr"+strconv.Itoa(i), Trend, Time)
	}
	now := time.Unix(10, 0)
	before := memstat.LiveHeap()
	e, err := NewEngine(reg, EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	batch := make([]Sample, 0, 3)
	for i, m := range ms {
		batch = append(batch[:0], Sample{Metric: m, Value: float64(i % 100), Time: now}, Sample{Metric: m, Value: 1500, Time: now})
		if i%10 == 0 {
			batch = append(batch, Sample{Metric: m, Value: -3, Time: now})
		}
		e.Ingest(batch)
	}
	after := memstat.LiveHeap()
	runtime.KeepAlive(e)
	per := (int64(after) - int64(before)) / n
	t.Logf("%d bytes per trend of 2 or 3 values", per)
	if per > maxQuietTrendBytes {
		t.Errorf("%d bytes per trend of 2 or 3 values, want at most %d", per, maxQuietTrendBytes)
	}
	if s := e.Sink("tr7").(*TrendSink); s.Count() != 2 || s.Max() != 1500 || s.Percentile(50) != 753.5 {
		t.Errorf("tr7: count %d max %v med %v", s.Count(), s.Max(), s.Percentile(50))
	}
}
