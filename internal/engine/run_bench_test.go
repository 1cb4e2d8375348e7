//go:build unix

package engine_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/metronome-load/metronome/builtin"
	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/internal/engine"
	"github.com/metronome-load/metronome/internal/js"
)

// These benchmarks run whole tests through engine.Run with the real
// JavaScript runtime, so that `go test -cpuprofile` shows where a run
// spends its time (the metronome binary takes no profiling flag):
//
//	go test -run '^$' -bench RunGet -benchtime 200000x -cpuprofile cpu.prof ./internal/engine
//
// The target is a net/http server in the test process, whose goroutines
// then appear in the profile (under net/http.(*conn).serve); set
// METRONOME_BENCH_TARGET to the URL of a server in another process to keep
// the profile to the generator alone. cmd/bench/README.md has the method.

const benchGetScript = `import http from 'k6/http';
export default function () { http.get(__ENV.TARGET); }
`

// BenchmarkRunGet runs b.N one-GET iterations (at least 50) shared by 50
// VUs, k6's shared-iterations executor, and reports iterations per second and the
// process's CPU time per iteration (cpu-µs/op, the server's included when
// it runs in this process).
func BenchmarkRunGet(b *testing.B) {
	target := benchTarget(b)
	iters := max(b.N, 50)
	opts := fmt.Sprintf(`{"scenarios": {"get": {"executor": "shared-iterations", "vus": 50, "iterations": %d, "maxDuration": "10m"}}}`, iters)
	cpu0, start := cpuTime(), time.Now()
	sum := runBench(b, benchGetScript, opts, map[string]string{"TARGET": target})
	elapsed, cpu := time.Since(start), cpuTime()-cpu0
	if n := sum.metric("iterations", "count"); int(n) != iters {
		b.Fatalf("ran %v iterations, want %d", n, iters)
	}
	b.ReportMetric(float64(iters)/elapsed.Seconds(), "iters/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(iters), "cpu-µs/op")
}

// BenchmarkRunOpen runs the open model: intended-arrival-rate at 10,000
// arrivals/s for b.N/10,000 seconds (at least one) against the same
// target, and reports the CPU time per iteration and schedule_lag's p(99)
// and max in milliseconds.
func BenchmarkRunOpen(b *testing.B) {
	const rate = 10_000
	target := benchTarget(b)
	secs := max(1, b.N/rate)
	opts := fmt.Sprintf(`{"scenarios": {"open": {"executor": "intended-arrival-rate", "rate": %d, "timeUnit": "1s",
		"duration": "%ds", "preAllocatedVUs": 50, "maxVUs": 200, "gracefulStop": "10s"}},
		"summaryTrendStats": ["p(99)", "max", "count"]}`, rate, secs)
	cpu0 := cpuTime()
	sum := runBench(b, benchGetScript, opts, map[string]string{"TARGET": target})
	cpu := cpuTime() - cpu0
	n := sum.metric("iterations", "count")
	if want := float64(rate * secs); n < 0.99*want {
		b.Errorf("completed %v iterations of %v intended", n, want)
	}
	b.ReportMetric(float64(cpu.Microseconds())/n, "cpu-µs/op")
	b.ReportMetric(sum.metric("schedule_lag", "p(99)"), "lag-p99-ms")
	b.ReportMetric(sum.metric("schedule_lag", "max"), "lag-max-ms")
}

// BenchmarkHealthCost measures what measuring the generator's health
// costs an iteration (issue 26 wants under 1 %): pairs of identical
// open-model runs of one GET per iteration, one with the health
// measurement and one without, in alternating order, each timed in CPU
// from the moment its VUs are initialised (it waits paused until then and
// is resumed through the REST API) to its end. Per rate it reports each
// side's median CPU per iteration, the ratio of the medians and the
// median of each pair's ratio, and logs every run. Each run's CPU is
// bracketed by collections, so that no run pays for another's garbage. It runs its pairs whatever b.N is (use -benchtime 1x); with
// METRONOME_BENCH_TARGET the CPU is the generator's alone:
//
//	METRONOME_BENCH_TARGET=http://127.0.0.1:8080/ go test -run '^$' -bench HealthCost -benchtime 1x -v ./internal/engine
func BenchmarkHealthCost(b *testing.B) {
	const pairs, secs = 9, 4
	target := benchTarget(b)
	for _, rate := range []int{100, 2000} {
		b.Run(fmt.Sprintf("rate=%d", rate), func(b *testing.B) {
			opts := fmt.Sprintf(`{"scenarios": {"open": {"executor": "intended-arrival-rate", "rate": %d, "timeUnit": "1s",
				"duration": "%ds", "preAllocatedVUs": 20, "maxVUs": 200}}, "summaryTrendStats": ["count"]}`, rate, secs)
			var with, without, ratios []float64
			for i := range 2 * pairs {
				off := (i%2 == 1) != (i/2%2 == 1) // on, off; off, on; ...
				var tweak []func(*engine.Config)
				if off {
					tweak = append(tweak, engine.HealthOff)
				}
				cpu, n := runResumed(b, benchGetScript, opts, map[string]string{"TARGET": target}, tweak...)
				if want := float64(rate * secs); n < 0.99*want {
					b.Fatalf("completed %v iterations of %v intended", n, want)
				}
				perIter := float64(cpu.Nanoseconds()) / 1000 / n
				if off {
					without = append(without, perIter)
				} else {
					with = append(with, perIter)
				}
				b.Logf("run %2d, health %-5v: %.2f cpu-µs/op", i+1, !off, perIter)
				if i%2 == 1 {
					ratios = append(ratios, with[len(with)-1]/without[len(without)-1])
				}
			}
			w, wo := median(with), median(without)
			b.ReportMetric(w, "cpu-µs/op-health")
			b.ReportMetric(wo, "cpu-µs/op-without")
			b.ReportMetric(w/wo, "ratio")
			b.ReportMetric(median(ratios), "pair-ratio")
		})
	}
}

// runResumed runs script as runBench does, paused until its VUs are
// initialised, and returns the process's CPU time from its resumption to
// its end and the iterations it completed.
func runResumed(b *testing.B, script, opts string, env map[string]string, tweak ...func(*engine.Config)) (time.Duration, float64) {
	b.Helper()
	addrs := make(chan string, 1)
	resumed := make(chan time.Duration, 1)
	go func() {
		addr := <-addrs
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			resp, err := http.Get("http://" + addr + "/v1/status")
			if err != nil {
				continue
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(body), `"status":4`) {
				continue
			}
			runtime.GC()
			cpu := cpuTime()
			req, _ := http.NewRequest(http.MethodPatch, "http://"+addr+"/v1/status",
				strings.NewReader(`{"data":{"type":"status","id":"default","attributes":{"paused":false}}}`))
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
			resumed <- cpu
			return
		}
		b.Error("the run never reported being paused before its start")
		close(resumed)
	}()
	sum := runBench(b, script, opts, env, append([]func(*engine.Config){func(c *engine.Config) {
		c.Address, c.Paused = "127.0.0.1:0", true
		c.APIAddr = func(a string) { addrs <- a }
	}}, tweak...)...)
	runtime.GC()
	end := cpuTime()
	return end - <-resumed, sum.metric("iterations", "count")
}

// median is the median of vs, which it sorts.
func median(vs []float64) float64 {
	slices.Sort(vs)
	if n := len(vs); n%2 == 0 {
		return (vs[n/2-1] + vs[n/2]) / 2
	}
	return vs[len(vs)/2]
}

var peakHeap = flag.String("peakheap", "", "BenchmarkRunSleepingVUs writes a heap profile to this file three seconds into its run")

// BenchmarkRunSleepingVUs runs 1,000 VUs that sleep one second per
// iteration for five seconds and reports, at the busiest moment, the Go
// heap and goroutine stacks in use, per VU. It runs that one test whatever
// b.N is (use -benchtime 1x). With -peakheap=FILE it also writes a heap
// profile three seconds in, when every VU has run a few iterations.
func BenchmarkRunSleepingVUs(b *testing.B) {
	const vus = 1000
	script := `import { sleep } from 'k6';
export default function () { sleep(1); }
`
	opts := fmt.Sprintf(`{"scenarios": {"sleep": {"executor": "constant-vus", "vus": %d, "duration": "5s"}}}`, vus)
	done := make(chan struct{})
	peak := make(chan runtime.MemStats, 1)
	go func() {
		var hi, ms runtime.MemStats
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		profileAt := time.Now().Add(3 * time.Second)
		for {
			select {
			case <-done:
				peak <- hi
				return
			case <-t.C:
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse+ms.StackInuse > hi.HeapInuse+hi.StackInuse {
				hi = ms
			}
			if *peakHeap != "" && time.Now().After(profileAt) {
				profileAt = time.Now().Add(time.Hour)
				if err := writeHeapProfile(*peakHeap); err != nil {
					b.Error(err)
				}
			}
		}
	}()
	runBench(b, script, opts, nil)
	close(done)
	hi := <-peak
	b.ReportMetric(float64(hi.HeapInuse)/(1<<20), "heap-MB")
	b.ReportMetric(float64(hi.StackInuse)/(1<<20), "stack-MB")
	b.ReportMetric(float64(hi.HeapInuse+hi.StackInuse)/vus/1024, "KB/VU")
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// benchTarget returns METRONOME_BENCH_TARGET, or the URL of a loopback
// server that writes a short body and lives as long as b.
func benchTarget(b *testing.B) string {
	if t := os.Getenv("METRONOME_BENCH_TARGET"); t != "" {
		return t
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	}))
	b.Cleanup(srv.Close)
	return srv.URL + "/"
}

// benchSummary is a decoded --summary-export file.
type benchSummary struct {
	Metrics map[string]map[string]any `json:"metrics"`
}

// metric returns a numeric value of the export, 0 when it is absent.
func (s *benchSummary) metric(name, key string) float64 {
	v, _ := s.Metrics[name][key].(float64)
	return v
}

// runBench loads script with env as __ENV, runs it with the option tier
// opts over the script's own, as the CLI would, and returns the summary
// export. In a benchmark it runs with the timer on: the run is what is
// measured. tweak, when given, adjusts the run's config.
func runBench(b testing.TB, script, opts string, env map[string]string, tweak ...func(*engine.Config)) *benchSummary {
	b.Helper()
	dir := b.TempDir()
	path := filepath.Join(dir, "script.js")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		b.Fatal(err)
	}
	s, err := js.Load(path, js.LoadOptions{Env: env, Stderr: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	scriptTier, err := config.Parse(s.Options(), "script options")
	if err != nil {
		b.Fatal(err)
	}
	benchTier, err := config.Parse([]byte(opts), "benchmark options")
	if err != nil {
		b.Fatal(err)
	}
	o, err := config.Consolidate(scriptTier, benchTier)
	if err != nil {
		b.Fatal(err)
	}
	export := filepath.Join(dir, "summary.json")
	cfg := engine.Config{
		Script: s, ScriptPath: path, Options: o, SummaryExport: export, SummaryMode: "compact",
		Quiet: true, Stdout: io.Discard, Stderr: io.Discard,
	}
	for _, t := range tweak {
		t(&cfg)
	}
	if err := engine.Run(context.Background(), cfg); err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(export)
	if err != nil {
		b.Fatal(err)
	}
	var sum benchSummary
	if err := json.Unmarshal(data, &sum); err != nil {
		b.Fatal(err)
	}
	return &sum
}

// cpuTime is the user plus system CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
