package js_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/js/jstest"
	"github.com/metronome-load/metronome/metrics"

	_ "github.com/metronome-load/metronome/js/modules/http"
)

// BenchmarkVURunEmptyIteration measures the runtime's own cost per
// iteration: an empty default function on a cancellable context, as the
// executors call it.
func BenchmarkVURunEmptyIteration(b *testing.B) {
	benchIterations(b, `export default function () {}`)
}

// BenchmarkVURunCheckIteration is an iteration with one check and one
// custom metric sample, the typical per-iteration work outside HTTP.
func BenchmarkVURunCheckIteration(b *testing.B) {
	benchIterations(b, `
import { check } from "k6";
import { Trend } from "k6/metrics";
const t = new Trend("t_latency");
export default function () {
	check(200, { "status is 200": (s) => s === 200 });
	t.add(1.5);
}`)
}

// BenchmarkVURunModuleReads is an iteration that reads exports of Go
// modules through their default-export objects, as http.get(...) does at
// every call: what the VU's lookup of a made export costs.
func BenchmarkVURunModuleReads(b *testing.B) {
	benchIterations(b, `
import http from "k6/http";
import k6 from "k6";
export default function () {
	for (let i = 0; i < 10; i++) { http.get; http.request; http.url; k6.check; k6.sleep; }
}`)
}

// benchIterations runs script's default function on one VU, b.N times, on
// a cancellable context as the executors call it.
func benchIterations(b *testing.B, script string) {
	r := jstest.Load(b, map[string]string{"script.js": script}, nil)
	vu, err := r.Script.NewVU(context.Background(), 1, metrics.RecorderFunc(func(metrics.Sample) {}))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	it := executor.Iteration{Scenario: jstest.DefaultScenario}
	b.ReportAllocs()
	for b.Loop() {
		if res := vu.Run(ctx, it); res.Outcome != executor.Completed {
			b.Fatal(res.Outcome)
		}
	}
}

// smallScript is a typical small test script for the memory measurement;
// it sends one request per iteration when __ENV.BASE_URL is set.
const smallScript = `
import http from "k6/http";
import { check, group, sleep } from "k6";
import { Counter, Trend } from "k6/metrics";
import exec from "k6/execution";

export const options = { vus: 1000, duration: "1m", thresholds: { checks: ["rate>0.99"] } };
const pages = new Counter("pages");
const latency = new Trend("page_latency", true);
const base = __ENV.BASE_URL;

export default function () {
	group("home", () => {
		const started = Date.now();
		const res = base ? http.get(base + "/") : { status: 200, body: "ok" };
		pages.add(1, { path: "/" });
		latency.add(Date.now() - started);
		check(res, { "status is 200": (r) => r.status === 200, "has body": (r) => r.body.length > 0 });
	});
	if (exec.vu.iterationInScenario > 1e9) sleep(1);
}`

// BenchmarkVUHeap reports the live heap each idle VU holds (KB/VU) after
// its init context and one iteration of a small script: the number that
// decides how many VUs fit in memory. The http variant sends a request to
// a loopback server in that iteration, so each VU also holds its
// keep-alive connection.
func BenchmarkVUHeap(b *testing.B) {
	b.Run("no-request", func(b *testing.B) { benchVUHeap(b, nil) })
	b.Run("http", func(b *testing.B) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte("hello"))
		}))
		defer srv.Close()
		benchVUHeap(b, map[string]string{"BASE_URL": srv.URL})
	})
}

func benchVUHeap(b *testing.B, env map[string]string) {
	r := jstest.Load(b, map[string]string{"script.js": smallScript}, &jstest.Config{Env: env})
	const n = 200
	noop := metrics.RecorderFunc(func(metrics.Sample) {})
	it := executor.Iteration{Scenario: jstest.DefaultScenario}
	var perVU float64
	for b.Loop() {
		vus := make([]executor.VU, 0, n)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range n {
			vu, err := r.Script.NewVU(context.Background(), uint64(i+1), noop)
			if err != nil {
				b.Fatal(err)
			}
			if res := vu.Run(context.Background(), it); res.Outcome != executor.Completed {
				b.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
			}
			vus = append(vus, vu)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perVU = float64(after.HeapAlloc-before.HeapAlloc) / n / 1024
		runtime.KeepAlive(vus)
	}
	b.ReportMetric(perVU, "KB/VU")
}

// BenchmarkVURunLatencyTrendIteration is BenchmarkVURunCheckIteration's
// iteration with its Trend one of time, named in latencyTrends, in an
// open-model iteration: its sample also records corrected_latency, the
// whole cost of the option; "unset" is the same script without it.
func BenchmarkVURunLatencyTrendIteration(b *testing.B) {
	script := `
import { check } from "k6";
import { Trend } from "k6/metrics";
const t = new Trend("t_latency", true);
export default function () {
	check(200, { "status is 200": (s) => s === 200 });
	t.add(1.5);
}`
	for _, c := range []struct {
		name   string
		trends []string
	}{{"unset", nil}, {"set", []string{"t_latency"}}} {
		b.Run(c.name, func(b *testing.B) {
			r := jstest.Load(b, map[string]string{"script.js": script}, &jstest.Config{Options: &config.Options{LatencyTrends: c.trends}})
			var n int
			vu, err := r.Script.NewVU(context.Background(), 1, metrics.RecorderFunc(func(s metrics.Sample) {
				if s.Metric == r.Builtin.CorrectedLatency {
					n++
				}
			}))
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			b.ReportAllocs()
			for b.Loop() {
				now := time.Now()
				if res := vu.Run(ctx, executor.Iteration{Scenario: jstest.DefaultScenario, Intended: now}); res.Outcome != executor.Completed {
					b.Fatal(res.Outcome)
				}
			}
			if (n > 0) != (c.trends != nil) {
				b.Fatalf("%d corrected_latency samples", n)
			}
		})
	}
}
