package hdrlog

import (
	"bufio"
	"fmt"
	"io"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
)

// requestBatch is what the engine hands an output for n requests over
// names endpoints of one scenario, spread over one second from start:
// each request's duration, waiting time, counter and corrected_latency,
// and each iteration's schedule_lag and iteration_duration.
func requestBatch(b *metrics.Builtin, start time.Time, n, names int) []metrics.Sample {
	iter := metrics.NewTags(map[string]string{"scenario": "api"})
	batch := make([]metrics.Sample, 0, 6*n)
	for i := range n {
		tags := metrics.NewTags(map[string]string{"scenario": "api", "name": fmt.Sprint("https://example.test/item/", i%names),
			"method": "GET", "status": "200", "expected_response": "true", "proto": "HTTP/1.1"})
		at := start.Add(time.Duration(i) * time.Second / time.Duration(n))
		v := 1 + float64(i%997)/10
		batch = append(batch,
			metrics.Sample{Metric: b.HTTPReqs, Tags: tags, Time: at, Value: 1},
			metrics.Sample{Metric: b.HTTPReqDuration, Tags: tags, Time: at, Value: v},
			metrics.Sample{Metric: b.HTTPReqWaiting, Tags: tags, Time: at, Value: v * 0.9},
			metrics.Sample{Metric: b.CorrectedLatency, Tags: tags, Time: at, Value: v + 2},
			metrics.Sample{Metric: b.ScheduleLag, Tags: iter, Time: at, Value: 2},
			metrics.Sample{Metric: b.IterationDuration, Tags: iter, Time: at, Value: v + 0.1})
	}
	return batch
}

// benchOutput is an output whose log goes nowhere, driven without its
// goroutine.
func benchOutput(b testing.TB, start time.Time) *Output {
	o, err := New(output.Params{Arg: "-", Stdout: io.Discard, Now: func() time.Time { return start }})
	if err != nil {
		b.Fatal(err)
	}
	out := o.(*Output)
	out.base = start
	out.buf = bufio.NewWriter(io.Discard)
	out.log = hdrhistogram.NewHistogramLogWriter(out.buf)
	return out
}

// BenchmarkIngest measures the recording path per sample: 1,000 requests
// over 10 names in one interval, which stays open: the steady state of a
// busy series.
func BenchmarkIngest(b *testing.B) {
	bi := metrics.RegisterBuiltin(metrics.NewRegistry())
	start := time.Unix(1_700_000_000, 0)
	batch := requestBatch(bi, start, 1000, 10)
	o := benchOutput(b, start)
	// Until every series' histogram has its storage for good.
	for range 30 {
		o.ingest(batch)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		o.ingest(batch)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/sample")
}

// BenchmarkInterval measures one interval from its first sample to its
// line in the log: 1,000 requests over 10 names recorded, then written.
func BenchmarkInterval(b *testing.B) {
	bi := metrics.RegisterBuiltin(metrics.NewRegistry())
	start := time.Unix(1_700_000_000, 0)
	batch := requestBatch(bi, start, 1000, 10)
	o := benchOutput(b, start)
	o.ingest(batch)
	o.writeClosed(time.Time{})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		// Each round is the next interval of the run.
		for k := range batch {
			batch[k].Time = batch[k].Time.Add(time.Second)
		}
		o.ingest(batch)
		o.writeClosed(time.Time{})
	}
}

// BenchmarkIntervalAtCap measures writing one interval at the names cap
// (K6_HDRLOG_MAX_NAMES, 50 by default): 150 requests over 50 names, about
// 100 series, each written with its histogram.
func BenchmarkIntervalAtCap(b *testing.B) {
	bi := metrics.RegisterBuiltin(metrics.NewRegistry())
	start := time.Unix(1_700_000_000, 0)
	batch := requestBatch(bi, start, 3*metrics.MaxBreakdownValues, metrics.MaxBreakdownValues)
	o := benchOutput(b, start)
	o.ingest(batch)
	o.writeClosed(time.Time{})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for k := range batch {
			batch[k].Time = batch[k].Time.Add(time.Second)
		}
		b.StopTimer()
		o.ingest(batch)
		b.StartTimer()
		o.writeClosed(time.Time{})
	}
	b.ReportMetric(float64(len(o.tags)), "series")
}
