//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/metronome-load/metronome/internal/testkit/memstat"
	"github.com/metronome-load/metronome/metrics"
)

// Targets: the trend's memory and the cost of the corrected measurement
// (docs/DESIGN.md §8); the comparisons with the peers have theirs in
// sidebyside.go.
const (
	targetTrendMB = 10
	targetCostPct = 5
	mb            = 1 << 20
	// budgetIteration is the CPU time one iteration may cost the machine
	// when the closed measure did not run: two cores at 31,400/s.
	budgetIteration = 2 * float64(time.Second) / 31_400
)

const getScript = `import http from 'k6/http';
export default function () { http.get(__ENV.TARGET); }
`

const sleepScript = `import { sleep } from 'k6';
export default function () { sleep(1); }
`

// closedScript is getScript as a constant-vus scenario which, when
// EXPECTED_INTERVAL is set, back-fills corrected_latency: with an interval
// far above any iteration's duration that is exactly one more sample per
// iteration, through the same Account call and metrics path.
const closedScript = `import http from 'k6/http';
const closed = { executor: 'constant-vus', vus: 50, duration: __ENV.DURATION };
if (__ENV.EXPECTED_INTERVAL) closed.expectedInterval = __ENV.EXPECTED_INTERVAL;
export const options = { scenarios: { closed }, summaryTrendStats: ['avg', 'p(95)', 'count'] };
export default function () { http.get(__ENV.TARGET); }
`

// measureTrend adds ten million samples to one Trend sink in this process
// and reports how much the resident set and the live heap grew. The values
// span nine decades, fractions and some negatives, so both histograms and
// all their buckets come into play: the worst case for memory.
func (b *bench) measureTrend(context.Context) error {
	const n = 10_000_000
	runtime.GC()
	debug.FreeOSMemory()
	rss0, err := memstat.RSS()
	if err != nil {
		return err
	}
	heap0 := memstat.LiveHeap()

	s := metrics.NewTrendSink()
	x := uint64(0x9e3779b97f4a7c15)
	start := time.Now()
	for range n {
		x = x*6364136223846793005 + 1442695040888963407
		u := float64(x>>11) / (1 << 53)
		v := math.Exp(math.Log(1e-3) + u*math.Log(1e9)) // 1µs … 1000s in ms
		if x&63 == 0 {
			v = -v
		}
		s.AddValue(v)
	}
	elapsed := time.Since(start)
	rss1, err := memstat.RSS()
	if err != nil {
		return err
	}
	heap1 := memstat.LiveHeap()
	runtime.KeepAlive(s)
	if s.Count() != n {
		return fmt.Errorf("the trend counted %d samples, want %d", s.Count(), n)
	}

	grew := float64(rss1-rss0) / mb
	b.add(row{Measure: "trend: RSS growth, 10M samples in one Trend", Value: grew, Unit: "MB",
		Target: fmt.Sprintf("< %d MB", targetTrendMB), Pass: boolp(grew < targetTrendMB)})
	b.add(row{Measure: "trend: live heap growth", Value: float64(int64(heap1)-int64(heap0)) / mb, Unit: "MB"})
	b.add(row{Measure: "trend: cost per sample (with making the value)", Value: float64(elapsed.Nanoseconds()) / n, Unit: "ns"})
	return nil
}

// measureCost relates what recording schedule_lag and corrected_latency
// costs to what an iteration costs end to end. The micro-benchmark
// executor.BenchmarkAccount gives the CPU time per iteration on the real
// metrics path with and without Iteration.Intended; the closed measure
// gives the CPU time of one iteration on the whole machine (metronome and
// server). A closed-loop A/B run, with and without a back-filled
// corrected_latency sample per iteration, checks the order of magnitude
// end to end.
func (b *bench) measureCost(ctx context.Context) error {
	micro, err := b.accountBenchmark(ctx)
	if err != nil {
		return err
	}
	for _, v := range []struct{ name, label string }{
		{"bare/closed", "cost: Account, closed iteration (2 samples)"},
		{"bare/open", "cost: Account, open iteration (4 samples)"},
		{"get/closed", "cost: one-GET iteration's metrics, closed"},
		{"get/open", "cost: one-GET iteration's metrics, open"},
		{"get/closed/backfill", "cost: same, closed, one back-filled sample (e2e B)"},
		{"get/closed/flush-each", "cost: same, closed, flushing every iteration"},
		{"get/open/flush-each", "cost: same, open, flushing every iteration"},
	} {
		if ns, ok := micro[v.name]; ok {
			b.add(row{Measure: v.label, Value: ns, Unit: "cpu-ns", Note: "median of 5, BenchmarkAccount/" + v.name})
		}
	}
	extra := max(micro["get/open"]-micro["get/closed"], micro["bare/open"]-micro["bare/closed"], 0)

	// CPU time of one iteration on the machine: measured in the closed
	// measure if it ran, else the budget of two cores at 31,400/s.
	perIter, basis := budgetIteration, "the budget of 2 cores at 31.4k/s"
	if b.iterationCPU > 0 {
		perIter, basis = b.iterationCPU, "median metronome + server CPU per iteration in the closed measure"
	}
	pct := 100 * extra / perIter
	b.add(row{Measure: "cost: corrected measurement, share of an iteration", Value: pct, Unit: "%",
		Target: fmt.Sprintf("< %d %%", targetCostPct), Pass: boolp(pct < targetCostPct),
		Note: fmt.Sprintf("%.0f ns more per open iteration / %.1f µs (%s)", extra, perIter/1e3, basis)})

	if b.pairs > 0 {
		return b.costEndToEnd(ctx)
	}
	return nil
}

// accountBenchmark runs executor.BenchmarkAccount and returns the median
// cpu-ns/op of each variant.
func (b *bench) accountBenchmark(ctx context.Context) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.goCmd, "test", "-run", "^$", "-bench", "^BenchmarkAccount$",
		"-benchtime", "200000x", "-count", "5", "./executor")
	cmd.Dir = b.repo
	b.logf("cost: load average %s; %s", loadAvg(), strings.Join(cmd.Args, " "))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	re := regexp.MustCompile(`^BenchmarkAccount/(\S+?)(?:-\d+)?\s+\d+\s+[\d.]+ ns/op\s+([\d.]+) cpu-ns/op`)
	all := map[string][]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			v, err := strconv.ParseFloat(m[2], 64)
			if err == nil {
				all[m[1]] = append(all[m[1]], v)
			}
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no BenchmarkAccount results in:\n%s", out)
	}
	med := map[string]float64{}
	for k, vs := range all {
		med[k] = median(vs)
	}
	return med, nil
}

// costEndToEnd alternates closed-loop runs without (A) and with (B) one
// back-filled corrected_latency sample per iteration, in ABBA order so
// that a drift of the machine's other load cancels, and reports the median
// difference in throughput and in metronome CPU per iteration.
func (b *bench) costEndToEnd(ctx context.Context) error {
	d := b.dur(10 * time.Second)
	var rateA, rateB, cpuA, cpuB []float64
	for p := range b.pairs {
		order := []bool{false, true}
		if p%2 == 1 {
			order = []bool{true, false}
		}
		for _, withSample := range order {
			name, args := "cost-a", []string{"-q", "-e", "DURATION=" + d.String(), "--summary-export", "cost.json"}
			if withSample {
				name, args = "cost-b", append(args, "-e", "EXPECTED_INTERVAL=1h")
			}
			res, err := b.run(ctx, load{name: name, script: closedScript, summary: "cost.json", args: args, limit: d + 90*time.Second})
			if err != nil {
				return err
			}
			count, err := res.mustMetric("iterations", "count")
			if err != nil {
				return err
			}
			rate, _ := res.metric("iterations", "rate")
			if corrected, _ := res.metric("corrected_latency", "count"); withSample && corrected != count {
				return fmt.Errorf("%s recorded %.0f corrected_latency samples for %.0f iterations, want one each", name, corrected, count)
			}
			cpu := float64(res.CPU.Nanoseconds()) / count
			if withSample {
				rateB, cpuB = append(rateB, rate), append(cpuB, cpu)
			} else {
				rateA, cpuA = append(rateA, rate), append(cpuA, cpu)
			}
		}
	}
	ra, rb, ca, cb := median(rateA), median(rateB), median(cpuA), median(cpuB)
	note := fmt.Sprintf("%d ABBA pairs of %s; runs A %s, B %s", b.pairs, d, join(rateA), join(rateB))
	b.add(row{Measure: "cost e2e: closed loop iterations/s, 2 samples (A)", Value: ra, Unit: "/s", Note: note})
	b.add(row{Measure: "cost e2e: closed loop iterations/s, +corrected_latency (B)", Value: rb, Unit: "/s"})
	b.add(row{Measure: "cost e2e: throughput change B vs A", Value: 100 * (rb - ra) / ra, Unit: "%",
		Note: "one extra sample; the open model adds two"})
	b.add(row{Measure: "cost e2e: metronome CPU per iteration B − A", Value: cb - ca, Unit: "ns",
		Note: fmt.Sprintf("runs A %s µs, B %s µs", joinMicros(cpuA), joinMicros(cpuB))})
	return nil
}

func join(vs []float64) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strings.Join(parts, "/")
}

func joinMicros(ns []float64) string {
	parts := make([]string, len(ns))
	for i, v := range ns {
		parts[i] = strconv.FormatFloat(v/1e3, 'f', 1, 64)
	}
	return strings.Join(parts, "/")
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
