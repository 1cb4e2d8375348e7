package executor_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
	"github.com/metronome-load/metronome/metrics"
)

// docs/DESIGN.md §7, closed model. The server is frozenServer (arrival_test.go):
// one FIFO server, 10 ms of service, frozen from t = 1.0 s to 1.5 s. One VU
// of constant-vus loops over the open-model run's span, 450 × 12.5 ms =
// 5.625 s. Each iteration sends one request (the fake's request: its
// latency is the server's answer time, 10 ms when healthy) and then thinks
// 2.5 ms, so a healthy iteration lasts 12.5 ms, the open model's interval.
//
// The arithmetic, in ms from the start:
//   - iteration k starts at 12.5k while the server is healthy; iteration 80
//     starts at exactly 1000, inside the freeze: its request waits until
//     1500 and is answered at 1510 (510 ms), the iteration ends at 1512.5.
//     No other request meets the freeze;
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

// runFrozenClosed runs the closed loop js against the frozen server, each
// iteration a request and then fixtureThink, and returns the harness,
// whose fill holds the back-fill account, and each
// request's latency in ms, in order.
func runFrozenClosed(t *testing.T, js string) (*harness, []float64) {
	t.Helper()
	h := newHarness(nil)
	server := frozenServer(h.t0)
	var mu sync.Mutex
	var reqs []float64
	h.pool.Work = func(it executor.Iteration, sent time.Time) time.Duration {
		answered := server(it, sent)
		mu.Lock()
		reqs = append(reqs, metrics.Milliseconds(answered))
		mu.Unlock()
		return answered
	}
	h.pool.Think = executortest.Constant(fixtureThink)
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

// With expectedInterval 12.5 ms each request's latency d is back-filled as
// HdrHistogram's recordValueWithExpectedInterval does: d, then d − 12.5k
// while ≥ 12.5. The think time is in no value: the 10 ms requests add
// nothing; the 510 ms one adds 497.5, 485, …, 22.5 — 39 samples, one
// fewer than the 40 iterations the freeze cost the loop, because the last
// remainder (10 ms) is below the interval. corrected_latency then holds
// 410 + 39 = 449 samples. Sorted (0-based ranks): 409 × 10 (ranks 0 …
// 408), 22.5 + 12.5j at rank 409 + j (j = 0 … 38, up to 497.5), and 510
// at rank 448. p99 is at rank 0.99·448 = 443.52, between j = 34 (447.5)
// and j = 35 (460): 447.5 + 0.52·12.5 = 454 ms. 33 samples exceed 100 ms
// (110 … 497.5, and 510), against the open model's 164: the back-fill
// assumes each missed request would have waited 12.5 ms less than the one
// before, while the real queue drains at only 2.5 ms per request.
func TestFrozenServerClosedModelBackFilled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, reqs := runFrozenClosed(t, `{"executor":"constant-vus","vus":1,"duration":"5625ms","expectedInterval":"12.5ms"}`)
		all := h.pool.Rec.Of(h.m.CorrectedLatency, nil)
		filled := h.pool.Rec.Of(h.m.CorrectedLatency, backfilledTags)
		if len(all) != fixtureIters+39 || len(filled) != 39 {
			t.Fatalf("%d corrected_latency samples, %d back-filled; want 449 and 39", len(all), len(filled))
		}
		for k, v := range filled {
			if want := fixtureSlowReq - 12.5*float64(k+1); v != want {
				t.Errorf("back-filled sample %d = %v ms, want %v", k, v, want)
			}
		}
		// The measured samples are the requests' latencies themselves:
		// the think time is in none of them.
		if m, r := h.pool.Rec.Sum(h.m.CorrectedLatency, nil)-sum(filled), sum(reqs); m != r {
			t.Errorf("measured corrected_latency sums to %v ms, the requests to %v", m, r)
		}
		cl := trendOf(all)
		if p50 := cl.Percentile(50); p50 < 10-fixtureTolerance(10) || p50 > 10+fixtureTolerance(10) {
			t.Errorf("corrected_latency p50 %v ms, want the requests' 10 (think time is not latency)", p50)
		}
		const wantP99 = 454.0
		if p99 := cl.Percentile(99); p99 < wantP99-fixtureTolerance(wantP99) || p99 > wantP99+fixtureTolerance(wantP99) {
			t.Errorf("corrected_latency p99 %v ms, want %v to the histogram's precision", p99, wantP99)
		}
		if n := countOver(all, 100); n != 33 || cl.Max() != fixtureSlowReq {
			t.Errorf("%d corrected_latency samples over 100 ms, max %v; want 33 and 510", n, cl.Max())
		}
		want := executor.BackFillAccount{
			Interval: executor.ExpectedInterval{Mode: executor.IntervalFixed, Fixed: 12500 * time.Microsecond},
			Requests: fixtureIters, Backfilled: 39,
		}
		if acc := h.fill; !equalAccounts(acc, want) {
			t.Errorf("account %+v, want %+v", acc, want)
		}
	})
}

// docs/DESIGN.md §7's reference table for the closed loop, exactly: one
// user sends, waits for the 10 ms reply, thinks 2.5 ms and sends again,
// 450 times (per-vu-iterations), against the frozen server. The VU thinks
// before each request, so its requests leave at 2.5 + 12.5k ms: request
// 80 leaves at 1002.5, inside the freeze, and is answered at 1510 —
// 507.5 ms — and iteration 81 starts at 1510. The raw latencies are 449 ×
// 10 ms and one 507.5 ms: p50 = p90 = p99 = 10.
//
// Back-filled per request with the interval 12.5 ms (hand-set, or 'auto',
// whose estimate is the VU's 12.5 ms between iteration starts from its
// sixth iteration on), the 507.5 ms request adds 495, 482.5, …, 20: 39
// samples by HdrHistogram's rule (values ≥ I), n = 489. (The table's
// fill-in also keeps the last remainder, 7.5, below I: n = 490; both give
// the same percentiles.) p50 = p90 = 10, max 507.5, 33 samples over
// 100 ms (507.5 and 495 … 107.5), and p99 is 445 by HdrHistogram's
// getValueAtPercentile (the value at count ⌊0.99·489 + 0.5⌋ = 484: 445)
// — the table's figure — and 446.5 by k6's interpolation (rank
// 0.99·488 = 483.12, between 445 and 457.5), which the summary prints.
func TestFrozenServerClosedModelReferenceTable(t *testing.T) {
	for _, interval := range []string{"12.5ms", "auto"} {
		t.Run(interval, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(frozenServer(time.Now()))
				h.pool.Think = executortest.Constant(fixtureThink)
				h.pool.ThinkFirst = true
				h.run(t, context.Background(), mustParse(t, `{"executor":"per-vu-iterations","vus":1,"iterations":450,"expectedInterval":"`+interval+`"}`))

				raw := measured(h)
				if len(raw) != 450 || countOver(raw, 100) != 1 || slices.Max(raw) != 507.5 {
					t.Fatalf("%d measured requests, %d over 100 ms, max %v; want 450, one, 507.5", len(raw), countOver(raw, 100), slices.Max(raw))
				}
				all := h.pool.Rec.Of(h.m.CorrectedLatency, nil)
				var want []float64
				for range 449 {
					want = append(want, 10)
				}
				for v := 20.0; v <= 495; v += 12.5 {
					want = append(want, v)
				}
				want = append(want, 507.5)
				got := slices.Sorted(slices.Values(all))
				if !slices.Equal(got, want) {
					t.Fatalf("corrected_latency holds %d samples %v…, want the %d of the table", len(got), got[max(0, len(got)-5):], len(want))
				}
				hist := hdrhistogram.New(1, 3_600_000_000, 3)
				for _, v := range all {
					_ = hist.RecordValue(int64(v * 1000)) // µs
				}
				for _, c := range []struct {
					p    float64
					want int64
				}{{50, 10_000}, {90, 10_000}, {99, 445_000}} {
					if v := hist.ValueAtPercentile(c.p); !hist.ValuesAreEquivalent(v, c.want) {
						t.Errorf("HdrHistogram p%v = %d µs, want %d", c.p, v, c.want)
					}
				}
				cl := trendOf(all)
				if p99 := cl.Percentile(99); p99 < 446.5-fixtureTolerance(446.5) || p99 > 446.5+fixtureTolerance(446.5) {
					t.Errorf("k6-interpolated p99 %v ms, want 446.5", p99)
				}
				if n := countOver(all, 100); n != 33 || cl.Max() != 507.5 {
					t.Errorf("%d over 100 ms, max %v; want 33 and 507.5", n, cl.Max())
				}
				for _, p := range []float64{50, 90} {
					if v := cl.Percentile(p); v < 10-fixtureTolerance(10) || v > 10+fixtureTolerance(10) {
						t.Errorf("p%v %v ms, want 10", p, v)
					}
				}
				if acc := h.fill; acc.Requests != 450 || acc.Backfilled != 39 {
					t.Errorf("account %+v, want 450 requests and 39 back-filled", acc)
				}
			})
		})
	}
}

// measured returns the corrected_latency samples the requests measured:
// those with exactly the fakes' tags, not backfilled=true.
func measured(h *harness) []float64 {
	var vs []float64
	for _, s := range h.pool.Rec.Samples() {
		if s.Metric == h.m.CorrectedLatency && s.Tags == h.pool.Tags {
			vs = append(vs, s.Value)
		}
	}
	return vs
}

func sum(vs []float64) float64 {
	var t float64
	for _, v := range vs {
		t += v
	}
	return t
}
