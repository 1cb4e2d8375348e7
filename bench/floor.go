//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// floorWorkers matches openScript's preAllocatedVUs.
const floorWorkers = 50

// floorResult is what the floor client prints: its schedule lag in
// milliseconds and its own CPU time.
type floorResult struct {
	Intended  int64   `json:"intended"`
	Completed int64   `json:"completed"`
	Med       float64 `json:"med"`
	P90       float64 `json:"p90"`
	P99       float64 `json:"p99"`
	P999      float64 `json:"p999"`
	Max       float64 `json:"max"`
	CPU       float64 `json:"cpu_seconds"`
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
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				done.Add(1)
			}
		})
	}
	wg.Wait()
	slices.Sort(lags)
	q := func(p float64) float64 {
		return float64(lags[int(p*float64(n-1))]) / float64(time.Millisecond)
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	res := floorResult{Intended: n, Completed: done.Load(), Med: q(0.5), P90: q(0.9), P99: q(0.99), P999: q(0.999),
		Max: q(1), CPU: float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9}
	return json.NewEncoder(os.Stdout).Encode(res)
}

// measureFloor runs floorClient at the open model's rate and duration, so
// that measureOpen's schedule_lag can be read against what this machine
// allows any Go generator sharing it with the server.
func (b *bench) measureFloor(ctx context.Context) error {
	d := b.dur(30 * time.Second)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, d+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, "-floor", b.target, "-floor-rate", fmt.Sprint(openRate), "-floor-duration", d.String())
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	load := loadAvg()
	b.logf("floor: load average %s; %s", load, strings.Join(cmd.Args, " "))
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("floor client: %v: %s", err, errOut.String())
	}
	var res floorResult
	if err := json.Unmarshal([]byte(out.String()), &res); err != nil {
		return fmt.Errorf("floor client printed %q: %v", out.String(), err)
	}
	b.add(row{Measure: "floor: bare Go client, schedule lag p(99)", Value: res.P99, Unit: "ms",
		Note: fmt.Sprintf("med %.3f, p90 %.3f, p99.9 %.3f, max %.3f ms; %d of %d completed; load %s",
			res.Med, res.P90, res.P999, res.Max, res.Completed, res.Intended, load)})
	if res.Completed > 0 {
		b.add(row{Measure: "floor: bare Go client CPU per iteration", Value: res.CPU * 1e6 / float64(res.Completed), Unit: "µs"})
	}
	return nil
}
