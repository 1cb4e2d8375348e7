package engine

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/metrics"
)

// The run warns once its series pass 100,000, and again only once they
// have doubled, as k6 does.
func TestSeriesWarning(t *testing.T) {
	reg := metrics.NewRegistry()
	a := reg.MustNew("series_warn_a", metrics.Counter, metrics.Default)
	b := reg.MustNew("series_warn_b", metrics.Counter, metrics.Default)
	e, err := metrics.NewEngine(reg, metrics.EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var keep []*metrics.TagSet // held, so that none is collected and counted again
	urls := 0
	add := func(n int) {
		batch := make([]metrics.Sample, 0, 2*n)
		for range n {
			tags := metrics.EmptyTags.With("url", "http://series-warn.test/"+strconv.Itoa(urls))
			urls++
			keep = append(keep, tags)
			batch = append(batch, metrics.Sample{Metric: a, Tags: tags, Time: time.Now(), Value: 1},
				metrics.Sample{Metric: b, Tags: tags, Time: time.Now(), Value: 1})
		}
		e.Ingest(batch)
	}
	var warnings []string
	warn := func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }
	w := newSeriesWatch()
	add(metrics.SeriesWarnAt / 2) // exactly at the limit: no warning
	w.check(warn)
	if len(warnings) != 0 {
		t.Fatalf("warned at the limit: %q", warnings)
	}
	add(1)
	w.check(warn)
	w.check(warn)
	if len(warnings) != 1 || !strings.Contains(warnings[0], "100002 distinct time series") {
		t.Fatalf("warnings %q, want one naming 100002 series", warnings)
	}
	add(metrics.SeriesWarnAt / 2) // 200,002: past the doubled limit
	w.check(warn)
	if len(warnings) != 2 || !strings.Contains(warnings[1], "200002 distinct time series") {
		t.Fatalf("warnings %q, want a second naming 200002 series", warnings)
	}
	_ = keep
}

// A watch the run never started (setup failed before the scenarios) does
// nothing when the end of the run checks it; it once looped forever.
func TestSeriesWatchNotStarted(t *testing.T) {
	var w seriesWatch
	warned := false
	w.check(func(string, ...any) { warned = true })
	if warned {
		t.Error("a watch never started warned")
	}
}
