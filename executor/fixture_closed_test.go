package executor_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
	"github.com/metronome-load/metronome/metrics"
)

// docs/DESIGN.md §7, closed model. The server is frozenServer (arrival_test.go):
// one FIFO server, 10 ms of service, frozen from t = 1.0 s to 1.5 s. One VU
// of constant-vus loops over the open-model run's span, 450 × 12.5 ms =
// 5.625 s. Each iteration sends one request (the fake's "HTTP request": its
// latency is the server's answer time, 10 ms when healthy) and then thinks
// 2.5 ms, so a healthy iteration lasts 12.5 ms, the open model's interval.
//
// The arithmetic, in ms from the start:
//   - iteration k starts at 12.5k while the server is healthy; iteration 80
//     starts at exactly 1000, inside the freeze: its request waits until
//     1500 and is answered at 1510 (510 ms), the iteration ends at 1512.5
//     (512.5 ms). No other request meets the freeze;
//   - iteration 81 + j starts at 1512.5 + 12.5j; the last start before the
//     regular end (5625) is j = 328, at 5612.5, ending at 5625. So the loop
//     runs 81 + 329 = 410 iterations, 40 fewer than the open model's 450:
//     the 500 ms of freeze at 12.5 ms per iteration. All complete; Run
//     returns at 5625.
const (
	fixtureThink    = 2500 * time.Microsecond
	fixtureIters    = 410
	fixtureSlowIter = 80
	fixtureSlowReq  = 510.0 // ms
	fixtureSlowDur  = 512.5 // ms
)

// fixtureTolerance is the trend's documented precision (metrics.TrendSink):
// every value read from the histogram is within 0.05% (+ 0.0005 units) of
// the exact one, and so is any interpolation between two such values.
func fixtureTolerance(want float64) float64 { return want*0.0005 + 0.0005 }

func trendOf(vs []float64) *metrics.TrendSink {
	s := metrics.NewTrendSink()
	for _, v := range vs {
		s.AddValue(v)
	}
	return s
}

func countOver(vs []float64, limit float64) int {
	n := 0
	for _, v := range vs {
		if v > limit {
			n++
		}
	}
	return n
}

// runFrozenClosed runs the closed loop js against the frozen server and
// returns the harness, whose deps.BackFillAccount holds the back-fill
// account, and each request's latency in ms, in order.
func runFrozenClosed(t *testing.T, js string) (*harness, []float64) {
	t.Helper()
	h := newHarness(nil)
	h.deps.BackFillAccount = &executor.BackFillAccount{}
	server := frozenServer(h.t0)
	var mu sync.Mutex
	var reqs []float64
	h.pool.Work = func(it executor.Iteration, start time.Time) time.Duration {
		answered := server(it, start)
		mu.Lock()
		reqs = append(reqs, metrics.Milliseconds(answered))
		mu.Unlock()
		return answered + fixtureThink
	}
	_, took := h.run(t, context.Background(), mustParse(t, js))
	if took != 5625*time.Millisecond {
		t.Errorf("Run took %v, want the regular end 5.625s (the last iteration ends on it)", took)
	}
	calls := h.pool.Calls()
	if len(calls) != fixtureIters || len(reqs) != fixtureIters || h.count(h.m.Iterations) != fixtureIters {
		t.Fatalf("%d iterations run, %d requests, %d iterations samples; want %d", len(calls), len(reqs), h.count(h.m.Iterations), fixtureIters)
	}
	for k, c := range calls {
		want := time.Duration(k) * 12500 * time.Microsecond
		if k > fixtureSlowIter {
			want = 1512500*time.Microsecond + time.Duration(k-fixtureSlowIter-1)*12500*time.Microsecond
		}
		if c.Iteration.Index != int64(k) || h.at(c.Start) != want || c.Outcome != executor.Completed {
			t.Fatalf("iteration %d: %+v started at %v, want index %d completed from %v", k, c.Iteration, h.at(c.Start), k, want)
		}
	}
	return h, reqs
}

// Without expectedInterval the closed loop hides the freeze: 409 requests
// of 10 ms and one of 510 ms. The request p99 sits at rank 0.99·409 =
// 404.91 of the sorted latencies, deep in the 10 ms ones, and one sample
// is over 100 ms; iteration_duration is the same picture shifted by the
// think time (p99 12.5 ms, max 512.5 ms). The closed model emits no
// corrected_latency.
func TestFrozenServerClosedModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, reqs := runFrozenClosed(t, `{"executor":"constant-vus","vus":1,"duration":"5625ms"}`)
		for k, v := range reqs {
			want := 10.0
			if k == fixtureSlowIter {
				want = fixtureSlowReq
			}
			if v != want {
				t.Errorf("request %d took %v ms, want %v", k, v, want)
			}
		}
		req := trendOf(reqs)
		if p99 := req.Percentile(99); p99 < 10-fixtureTolerance(10) || p99 > 10+fixtureTolerance(10) {
			t.Errorf("request p99 %v ms, want 10 to the histogram's precision", p99)
		}
		if n := countOver(reqs, 100); n != 1 || req.Max() != fixtureSlowReq {
			t.Errorf("%d requests over 100 ms, max %v; want exactly one, of 510 ms", n, req.Max())
		}

		durs := h.pool.Rec.Of(h.m.IterationDuration, nil)
		it := trendOf(durs)
		if p99 := it.Percentile(99); p99 < 12.5-fixtureTolerance(12.5) || p99 > 12.5+fixtureTolerance(12.5) {
			t.Errorf("iteration_duration p99 %v ms, want 12.5 to the histogram's precision", p99)
		}
		if n := countOver(durs, 100); n != 1 || it.Max() != fixtureSlowDur || it.Min() != 12.5 {
			t.Errorf("%d iterations over 100 ms, min %v, max %v; want one, 12.5 and 512.5", n, it.Min(), it.Max())
		}
		if n := h.count(h.m.CorrectedLatency); n != 0 {
			t.Errorf("%d corrected_latency samples without expectedInterval, want none", n)
		}
	})
}

// With expectedInterval 12.5 ms, Account back-fills each iteration's
// duration d as HdrHistogram's recordValueWithExpectedInterval does: d,
// then d − 12.5k while ≥ 12.5. The 12.5 ms iterations add nothing (12.5 −
// 12.5 = 0); the 512.5 ms one adds 512.5 − 12.5k for k = 1 … 40, i.e.
// 500, 487.5, …, 12.5: exactly 40 samples, the 40 iterations the freeze
// cost the loop. corrected_latency then holds 410 + 40 = 450 samples, the
// open model's count. Sorted (0-based ranks): 410 × 12.5 (ranks 0 … 409,
// one of them back-filled), 25 + 12.5j at rank 410 + j (j = 0 … 38, up to
// 500), and 512.5 at rank 449. p99 is at rank 0.99·449 = 444.51, between
// j = 34 (450 ms) and j = 35 (462.5 ms): 450 + 0.51·12.5 = 456.375 ms.
// 33 samples exceed 100 ms (112.5 … 500, and 512.5), against the open
// model's 164: the back-fill assumes each missed request would have waited
// 12.5 ms less than the one before, while the real queue drains at only
// 2.5 ms per request (12.5 ms between arrivals, 10 ms of service).
//
// docs/DESIGN.md §7 says "~40 samples and p99 ≈ 445 ms". The count is exact; the
// exact p99 is 2.5% above DESIGN's figure. The tail descends in 12.5 ms steps,
// and the 99th percentile of 450 samples falls between the 6th and 5th
// largest, 450 and 462.5 ms: 456.375 ms by k6's interpolation (asserted
// here), 462.5 ms by HdrHistogram's getValueAtPercentile (the 446th
// value). Back-filling the request's 510 ms instead of the iteration's
// 512.5 ms gives 39 samples (497.5 … 22.5) and, at rank 0.99·448 = 443.52
// of 449, p99 = 447.5 + 0.52·12.5 = 454 ms (asserted below). 445 ms itself
// is only an order statistic of a variant model: with the think time
// before the request, the frozen request takes 507.5 ms, the loop runs 411
// iterations, back-filling the requests adds 39 samples (495 … 20), and the
// sample at rank ⌊0.99·449⌋ = 444 is 445 ms (451.375 ms interpolated).
func TestFrozenServerClosedModelBackFilled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, reqs := runFrozenClosed(t, `{"executor":"constant-vus","vus":1,"duration":"5625ms","expectedInterval":"12.5ms"}`)
		all := h.pool.Rec.Of(h.m.CorrectedLatency, nil)
		filled := h.pool.Rec.Of(h.m.CorrectedLatency, metrics.EmptyTags.With("backfilled", "true"))
		if len(all) != fixtureIters+40 || len(filled) != 40 {
			t.Fatalf("%d corrected_latency samples, %d back-filled; want 450 and 40", len(all), len(filled))
		}
		for k, v := range filled {
			if want := fixtureSlowDur - 12.5*float64(k+1); v != want {
				t.Errorf("back-filled sample %d = %v ms, want %v", k, v, want)
			}
		}
		// The measured samples are the iteration durations themselves.
		if m, d := h.pool.Rec.Sum(h.m.CorrectedLatency, nil)-sum(filled), sum(h.pool.Rec.Of(h.m.IterationDuration, nil)); m != d {
			t.Errorf("measured corrected_latency sums to %v ms, iteration_duration to %v", m, d)
		}
		cl := trendOf(all)
		const wantP99 = 456.375
		if p99 := cl.Percentile(99); p99 < wantP99-fixtureTolerance(wantP99) || p99 > wantP99+fixtureTolerance(wantP99) {
			t.Errorf("corrected_latency p99 %v ms, want %v to the histogram's precision", p99, wantP99)
		}
		if n := countOver(all, 100); n != 33 || cl.Max() != fixtureSlowDur {
			t.Errorf("%d corrected_latency samples over 100 ms, max %v; want 33 and 512.5", n, cl.Max())
		}

		// The request-level reading of DESIGN's sentence, back-filling the
		// 510 ms request instead of the 512.5 ms iteration.
		var rec executortest.Recorder
		for _, v := range reqs {
			executor.BackFill(&rec, h.m.CorrectedLatency, h.pool.Tags, h.t0, time.Duration(v*float64(time.Millisecond)), 12500*time.Microsecond)
		}
		byReq := rec.Of(h.m.CorrectedLatency, nil)
		if n := len(byReq) - len(reqs); n != 39 {
			t.Errorf("back-filling the requests adds %d samples, want 39", n)
		}
		const wantReqP99 = 454.0
		if p99 := trendOf(byReq).Percentile(99); p99 < wantReqP99-fixtureTolerance(wantReqP99) || p99 > wantReqP99+fixtureTolerance(wantReqP99) {
			t.Errorf("request-level back-filled p99 %v ms, want %v", p99, wantReqP99)
		}
	})
}

func sum(vs []float64) float64 {
	var t float64
	for _, v := range vs {
		t += v
	}
	return t
}
