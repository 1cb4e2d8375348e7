//go:build unix

package executor_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/metrics"
)

// BenchmarkAccount measures what the corrected measurement costs per
// iteration on the real metrics path: an iteration that makes one request
// (Iteration.Latency records its corrected_latency) and Deps.Account
// recording into a VU's metrics.Buffer, whose batches go through a channel
// to one goroutine that runs metrics.Engine.Ingest and gives the batch
// back, as the engine's ingest loop does. The open variants set
// Iteration.Intended, so the request records corrected_latency and Account
// schedule_lag besides iteration_duration and iterations (4 samples
// instead of 2); the difference between a pair is the cost of the
// measurement.
//
// The "get" variants also record the eleven samples one k6/http request
// emits, so that a pair shows the difference against the whole metrics
// cost of a one-GET iteration. After each iteration's samples the VU's
// buffer gets FlushIfOlder, as the JavaScript VU calls it at the end of
// each Run; the "flush-each" variants call Flush instead, handing over a
// small batch per iteration, to show what that would cost. The
// "backfill" variants are closed iterations of a scenario with an
// expectedInterval far above their duration: one more sample each, the
// request's corrected_latency, as in the bench program's end-to-end A/B
// check. The "auto" variants account closed iterations the way a
// scenario with expectedInterval 'auto' does (executor.ClosedBackFill):
// the same one sample more, plus the VU's cadence estimate (the
// iterations, 40–55 µs, never reach twice it, so nothing is back-filled).
//
// Besides ns/op (wall time of one goroutine driving iterations while the
// ingest goroutine runs beside it), each variant reports cpu-ns/op: the
// process's user+system CPU time per iteration, ingest and GC included,
// which is what an iteration takes away from a saturated machine.
func BenchmarkAccount(b *testing.B) {
	for _, bc := range []struct {
		name                  string
		http, open, flushEach bool
		interval              time.Duration
		auto                  bool
	}{
		{"bare/closed", false, false, false, 0, false},
		{"bare/open", false, true, false, 0, false},
		{"bare/closed/backfill", false, false, false, time.Hour, false},
		{"bare/closed/auto", false, false, false, 0, true},
		{"get/closed", true, false, false, 0, false},
		{"get/open", true, true, false, 0, false},
		{"get/closed/backfill", true, false, false, time.Hour, false},
		{"get/closed/auto", true, false, false, 0, true},
		{"get/closed/flush-each", true, false, true, 0, false},
		{"get/open/flush-each", true, true, true, 0, false},
	} {
		b.Run(bc.name, func(b *testing.B) { benchAccount(b, bc.http, bc.open, bc.flushEach, bc.interval, bc.auto) })
	}
}

// accountVU is a VU whose iteration is one request that takes the whole
// iteration: Run records the request's corrected_latency, as a module
// does, and returns next, a result the caller made.
type accountVU struct {
	buf  *metrics.Buffer
	m    *metrics.Metric
	tags *metrics.TagSet
	next executor.Result
}

func (v *accountVU) ID() uint64                 { return 1 }
func (v *accountVU) Recorder() metrics.Recorder { return v.buf }
func (v *accountVU) Run(_ context.Context, it executor.Iteration) executor.Result {
	res := v.next
	it.Latency(res.Start).Record(v.buf, v.m, v.tags, res.End, res.End.Sub(res.Start))
	return res
}

func benchAccount(b *testing.B, withHTTP, open, flushEach bool, interval time.Duration, auto bool) {
	reg := metrics.NewRegistry()
	bi := metrics.RegisterBuiltin(reg)
	// The submetrics the engine package creates for one open-model scenario
	// called "default" (engine.summarySubmetrics), and the one for the
	// expected_response system tag: the same for both variants, so that the
	// difference includes matching the added samples against them.
	eng, err := metrics.NewEngine(reg, metrics.EngineOptions{
		ExpectedResponseSubmetric: true,
		Submetrics: []string{
			"corrected_latency{backfilled:true}",
			"http_req_duration{scenario:default}",
			"corrected_latency{scenario:default}",
		},
	})
	if err != nil {
		b.Fatal(err)
	}

	batches := make(chan []metrics.Sample, 4096)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for batch := range batches {
			eng.Ingest(batch)
			metrics.ReleaseBatch(batch)
		}
	}()
	vu := &accountVU{buf: metrics.NewBuffer(func(batch []metrics.Sample) { batches <- batch }), m: bi.CorrectedLatency}

	iterTags := metrics.NewTags(map[string]string{"scenario": "default", "group": ""})
	reqTags := iterTags.Merge(metrics.NewTags(map[string]string{
		"method": "GET", "url": "http://127.0.0.1:8080/", "name": "http://127.0.0.1:8080/",
		"status": "200", "proto": "HTTP/1.1", "expected_response": "true",
	}))
	httpMetrics := []*metrics.Metric{
		bi.HTTPReqs, bi.HTTPReqDuration, bi.HTTPReqBlocked, bi.HTTPReqConnecting,
		bi.HTTPReqTLSHandshaking, bi.HTTPReqSending, bi.HTTPReqWaiting, bi.HTTPReqReceiving,
		bi.HTTPReqFailed, bi.DataSent, bi.DataReceived,
	}
	clk := clock.NewManual(time.Now())
	deps := executor.Deps{Metrics: bi, IterationTags: iterTags, State: &executor.State{}, Clock: clk}
	sc := &executor.Scenario{Name: "default", Executor: executor.IntendedArrivalRateName}
	vu.tags = iterTags
	if withHTTP {
		vu.tags = reqTags
	}
	fill := &executor.BackFiller{Interval: interval}
	account := func(vu executor.VU, it executor.Iteration) bool {
		if interval > 0 {
			it.BackFill = fill
		}
		return deps.Account(vu, it, vu.Run(context.Background(), it))
	}
	if auto {
		account = executor.ClosedBackFill(deps, executor.ExpectedInterval{Mode: executor.IntervalAuto})
	}

	// Iterations follow each other every 50µs of sample time, each taking
	// 40µs and starting 3µs after its intended time, so values vary a little
	// and the buffer's age rule behaves as in a real run.
	t0 := clk.Now()
	const step = 50 * time.Microsecond
	cpu0 := cpuTime()
	var i int64
	for b.Loop() {
		intended := t0.Add(time.Duration(i) * step)
		start := intended.Add(3*time.Microsecond + time.Duration(i&7)*time.Microsecond)
		end := start.Add(40*time.Microsecond + time.Duration(i&15)*time.Microsecond)
		if withHTTP {
			for k, m := range httpMetrics {
				vu.buf.Record(metrics.Sample{Metric: m, Tags: reqTags, Time: end, Value: float64(k) + float64(i&31)/8})
			}
		}
		if flushEach {
			vu.buf.Flush()
		} else {
			vu.buf.FlushIfOlder(end)
		}
		it := executor.Iteration{Scenario: sc, Index: i, LocalIndex: i}
		if open {
			it.Intended = intended
		}
		clk.Advance(start.Sub(clk.Now()))
		vu.next = executor.Result{Outcome: executor.Completed, Start: start, End: end, Tags: iterTags}
		account(vu, it)
		i++
	}
	vu.buf.Flush()
	close(batches)
	<-done
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	if got := deps.State.IterationsCompleted.Load(); got != int64(b.N) {
		b.Fatalf("accounted %d iterations, want %d", got, b.N)
	}
}

// cpuTime is the user plus system CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
