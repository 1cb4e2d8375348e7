package engine

import (
	"testing"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/health"
	"github.com/metronome-load/metronome/metrics"
)

// BenchmarkHealthInterval is what one health interval costs the run: a
// reading of the process's counters, the interval's generator_* samples
// recorded, flushed and ingested, and the tally. It is paid once per
// health.Period on the vus gauge's tick, whatever the rate; docs/metrics.md
// divides it by the CPU an iteration costs.
func BenchmarkHealthInterval(b *testing.B) {
	reg := metrics.NewRegistry()
	r := &testRun{reg: reg, builtin: metrics.RegisterBuiltin(reg), runTags: metrics.EmptyTags, clock: clock.Real}
	var err error
	if r.engine, err = metrics.NewEngine(reg, metrics.EngineOptions{}); err != nil {
		b.Fatal(err)
	}
	r.monitor = r.newMonitor()
	rec := metrics.NewBuffer(func(batch []metrics.Sample) {
		r.engine.Ingest(batch)
		metrics.ReleaseBatch(batch)
	})
	r.tickHealth(rec)
	b.ReportAllocs()
	for b.Loop() {
		r.tickHealth(rec)
		rec.Flush()
	}
}

// BenchmarkMeterAdd is what an open capacity-search span adds to the
// ingestion of each sample: a batch of one iteration's samples of an HTTP
// request, of which four go to the span.
func BenchmarkMeterAdd(b *testing.B) {
	reg := metrics.NewRegistry()
	r := &testRun{reg: reg, builtin: metrics.RegisterBuiltin(reg), systemTags: map[string]bool{"scenario": true}}
	r.monitor = health.NewMonitor(clock.Real, &health.Runtime{}, nil)
	m := r.newMeter("api", nil)
	m.Begin(clock.Real.Now())
	bt := r.builtin
	tags := metrics.NewTags(map[string]string{"scenario": "api", "name": "http://x/", "status": "200"})
	at := clock.Real.Now()
	var batch []metrics.Sample
	for _, mt := range []*metrics.Metric{bt.HTTPReqs, bt.HTTPReqFailed, bt.HTTPReqDuration, bt.HTTPReqBlocked,
		bt.HTTPReqConnecting, bt.HTTPReqTLSHandshaking, bt.HTTPReqSending, bt.HTTPReqWaiting, bt.HTTPReqReceiving,
		bt.CorrectedLatency, bt.DataSent, bt.DataReceived, bt.IterationDuration, bt.Iterations, bt.ScheduleLag} {
		batch = append(batch, metrics.Sample{Metric: mt, Tags: tags, Time: at, Value: 1})
	}
	b.ReportAllocs()
	for b.Loop() {
		r.meters.add(batch)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(batch)), "ns/sample")
}
