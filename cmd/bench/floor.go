//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/metronome-load/metronome/internal/http1"
)

// floorWorkers matches openScript's VUs and wrk2's connections.
const floorWorkers = 50

// floorResult is what the floor client prints: its schedule lag and its
// corrected latency (response end minus intended start) in milliseconds,
// and its own CPU time.
type floorResult struct {
	Intended  int64   `json:"intended"`
	Completed int64   `json:"completed"`
	Med       float64 `json:"med"`
	P90       float64 `json:"p90"`
	P99       float64 `json:"p99"`
	P999      float64 `json:"p999"`
	Max       float64 `json:"max"`
	// Corrected percentiles: 50, 99, 99.9 and 100.
	CorrectedMed  float64 `json:"corrected_med"`
	CorrectedP99  float64 `json:"corrected_p99"`
	CorrectedP999 float64 `json:"corrected_p999"`
	CorrectedMax  float64 `json:"corrected_max"`
	CPU           float64 `json:"cpu_seconds"`
}

// floorClient is the least a Go generator can do on the open model's
// schedule: floorWorkers goroutines claim arrivals in order, sleep until
// each one's intended time on a Go timer and GET target through net/http
// with keep-alive — no JavaScript, no metrics, no VU growth. It runs in a
// process of its own, as metronome does, and prints a floorResult.
func floorClient(target string, rate int, d time.Duration) error {
	if rate <= 0 || d <= 0 {
		return fmt.Errorf("-floor-rate and -floor-duration must be greater than 0")
	}
	n := int64(float64(rate) * d.Seconds())
	period := time.Second / time.Duration(rate)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: floorWorkers}}
	lags := make([]time.Duration, n)
	corrected := make([]time.Duration, n)
	var next, done atomic.Int64
	start := time.Now().Add(50 * time.Millisecond)
	var wg sync.WaitGroup
	for range floorWorkers {
		wg.Go(func() {
			t := time.NewTimer(time.Hour)
			defer t.Stop()
			for {
				i := next.Add(1) - 1
				if i >= n {
					return
				}
				at := start.Add(time.Duration(i) * period)
				if w := time.Until(at); w > 0 {
					t.Reset(w)
					<-t.C
				}
				lags[i] = time.Since(at)
				resp, err := client.Get(target)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
					done.Add(1)
				}
				corrected[i] = time.Since(at)
			}
		})
	}
	wg.Wait()
	slices.Sort(lags)
	slices.Sort(corrected)
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	res := floorResult{Intended: n, Completed: done.Load(),
		Med: quantileMs(lags, 0.5), P90: quantileMs(lags, 0.9), P99: quantileMs(lags, 0.99),
		P999: quantileMs(lags, 0.999), Max: quantileMs(lags, 1),
		CorrectedMed: quantileMs(corrected, 0.5), CorrectedP99: quantileMs(corrected, 0.99),
		CorrectedP999: quantileMs(corrected, 0.999), CorrectedMax: quantileMs(corrected, 1),
		CPU: float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9}
	return json.NewEncoder(os.Stdout).Encode(res)
}

// quantileMs is the q quantile (0…1) of sorted durations in milliseconds:
// the value at rank ⌈q·n⌉ (nearest rank, no interpolation), as an
// HdrHistogram picks it.
func quantileMs(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	rank := int(math.Ceil(q * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return float64(sorted[rank-1]) / float64(time.Millisecond)
}

// runFloor runs floorClient as a child process at rate for d.
func (b *bench) runFloor(ctx context.Context, rate int, d time.Duration) (*floorResult, *procResult, error) {
	return runSelf[floorResult](ctx, b, fmt.Sprintf("floor-%d", rate), d,
		"-floor", b.target, "-floor-rate", fmt.Sprint(rate), "-floor-duration", d.String())
}

// runSelf runs this program as the child process name, with args, for
// about d, and decodes the result it prints as a T.
func runSelf[T any](ctx context.Context, b *bench, name string, d time.Duration, args ...string) (*T, *procResult, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	pr, err := b.spawn(ctx, name, d+time.Minute, self, args...)
	if err != nil {
		return nil, nil, err
	}
	var res T
	if err := json.Unmarshal([]byte(pr.Stdout), &res); err != nil {
		return nil, nil, fmt.Errorf("%s printed %q: %v", name, pr.Stdout, err)
	}
	return &res, pr, nil
}

// closedFloorResult is what the closed-loop floor client prints.
type closedFloorResult struct {
	Iterations int64   `json:"iterations"`
	PerSecond  float64 `json:"per_second"`
}

// closedFloorClient is the least metronome's own HTTP client costs in the
// closed loop: closedVUs goroutines GET target back to back through one
// http1.Transport, the one under k6/http, and read each body — no
// JavaScript, no VUs, no samples. What metronome spends above it per
// iteration is the script, the k6/http binding and the metrics; what it
// spends above wrk is Go's and the HTTP client's. It writes a
// closedFloorResult to w.
func closedFloorClient(w io.Writer, target string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("-floor-duration must be greater than 0")
	}
	tr := http1.New(http1.Config{MaxIdlePerHost: closedVUs})
	if _, err := http.NewRequest(http.MethodGet, target, nil); err != nil {
		return err
	}
	var (
		n        atomic.Int64
		failOnce sync.Once
		failed   error
	)
	start := time.Now()
	end := start.Add(d)
	var wg sync.WaitGroup
	for range closedVUs {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodGet, target, nil)
			for time.Now().Before(end) {
				resp, err := tr.RoundTrip(req)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
				}
				if err != nil {
					failOnce.Do(func() { failed = err })
					return
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	if failed != nil {
		return failed
	}
	return json.NewEncoder(w).Encode(closedFloorResult{
		Iterations: n.Load(), PerSecond: float64(n.Load()) / time.Since(start).Seconds()})
}

// runClosedFloor runs closedFloorClient as a child process for d.
func (b *bench) runClosedFloor(ctx context.Context, d time.Duration) (*closedFloorResult, *procResult, error) {
	return runSelf[closedFloorResult](ctx, b, "closed-floor", d,
		"-floor", b.target, "-floor-closed", "-floor-duration", d.String())
}
