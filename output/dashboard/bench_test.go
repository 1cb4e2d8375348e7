package dashboard

import (
	"fmt"
	"testing"
	"time"

	"github.com/metronome-load/metronome/metrics"
)

// BenchmarkAggregatorAdd measures the dashboard's ingest per sample: the
// samples of 1,000 requests over 10 names of one scenario in one second
// (each request's duration, counters and corrected_latency, each
// iteration's schedule_lag and count), all in an interval that stays open.
func BenchmarkAggregatorAdd(b *testing.B) {
	bi := metrics.RegisterBuiltin(metrics.NewRegistry())
	iter := metrics.NewTags(map[string]string{"scenario": "api"})
	var batch []metrics.Sample
	for i := range 1000 {
		tags := metrics.NewTags(map[string]string{"scenario": "api", "name": fmt.Sprint("https://example.test/item/", i%10),
			"method": "GET", "status": "200", "expected_response": "true", "proto": "HTTP/1.1"})
		at := t0.Add(time.Duration(i) * time.Millisecond)
		v := 1 + float64(i%997)/10
		batch = append(batch,
			metrics.Sample{Metric: bi.HTTPReqs, Tags: tags, Time: at, Value: 1},
			metrics.Sample{Metric: bi.HTTPReqFailed, Tags: tags, Time: at, Value: 0},
			metrics.Sample{Metric: bi.HTTPReqDuration, Tags: tags, Time: at, Value: v},
			metrics.Sample{Metric: bi.CorrectedLatency, Tags: tags, Time: at, Value: v + 2},
			metrics.Sample{Metric: bi.ScheduleLag, Tags: iter, Time: at, Value: 2},
			metrics.Sample{Metric: bi.Iterations, Tags: iter, Time: at, Value: 1})
	}
	a := NewAggregator(t0, 10*time.Second)
	// Until every histogram has its storage for good.
	for range 30 {
		a.Add(batch)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		a.Add(batch)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/sample")
}
