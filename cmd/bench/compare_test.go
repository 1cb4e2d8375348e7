//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// The wrk2 samples were recorded on this project's machine against a Go
// loopback server: wrk2 -t2 -c50 -d12s -R<rate> --latency -U.
func TestParseWrk2Corrected(t *testing.T) {
	for _, tc := range []struct {
		file              string
		requests          int64
		elapsed           time.Duration
		perSec            float64
		corrected, uncorr map[float64]float64
	}{
		{
			file: "wrk2-2000-U.txt", requests: 22958, elapsed: 12010 * time.Millisecond, perSec: 1912.28,
			corrected: map[float64]float64{50: 1.71, 75: 2.75, 90: 5.73, 99: 24.08, 99.9: 41.15, 99.99: 42.21, 99.999: 42.21, 100: 42.21},
			uncorr:    map[float64]float64{50: 0.430, 75: 0.777, 90: 1.40, 99: 5.03, 99.9: 5.90, 99.99: 9.26, 99.999: 9.26, 100: 9.26},
		},
		{
			file: "wrk2-5000-U.txt", requests: 59683, elapsed: 11990 * time.Millisecond, perSec: 4978.66,
			corrected: map[float64]float64{50: 404.99, 75: 711.68, 90: 828.93, 99: 926.21, 99.9: 990.72, 99.99: 1020, 99.999: 1030, 100: 1030},
			uncorr:    map[float64]float64{50: 1.28, 75: 5.35, 90: 14.85, 99: 33.57, 99.9: 64.25, 99.99: 66.43, 99.999: 76.61, 100: 76.61},
		},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res, err := parseWrk(readTestdata(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != tc.requests || res.Elapsed != tc.elapsed || res.RequestsPerSec != tc.perSec {
				t.Errorf("requests %d in %s, %g/s; want %d in %s, %g/s", res.Requests, res.Elapsed, res.RequestsPerSec, tc.requests, tc.elapsed, tc.perSec)
			}
			checkPercentiles(t, "corrected", res.Latency, tc.corrected)
			checkPercentiles(t, "uncorrected", res.Uncorrected, tc.uncorr)
			if res.SocketErrors != 0 || res.Non2xx != 0 {
				t.Errorf("socket errors %d, non-2xx %d; want none", res.SocketErrors, res.Non2xx)
			}
		})
	}
}

func checkPercentiles(t *testing.T, what string, got, want map[float64]float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d percentiles %v, want %d", what, len(got), got, len(want))
	}
	for p, v := range want {
		if g, ok := got[p]; !ok || math.Abs(g-v) > 1e-9*v {
			t.Errorf("%s p%g = %g (present %v), want %g ms", what, p, g, ok, v)
		}
	}
}

func TestParseWrkDebian(t *testing.T) {
	res, err := parseWrk(readTestdata(t, "wrk-latency.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 27790 || res.Elapsed != 3050*time.Millisecond || res.RequestsPerSec != 9122.02 {
		t.Errorf("got %d in %s, %g/s", res.Requests, res.Elapsed, res.RequestsPerSec)
	}
	checkPercentiles(t, "latency", res.Latency, map[float64]float64{50: 3.87, 75: 10.85, 90: 19.27, 99: 52.36})
	if len(res.Uncorrected) != 0 {
		t.Errorf("uncorrected %v, want none from wrk", res.Uncorrected)
	}

	res, err = parseWrk(readTestdata(t, "wrk.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 43585 || res.RequestsPerSec != 20675.95 || len(res.Latency) != 0 {
		t.Errorf("got %d, %g/s, latency %v", res.Requests, res.RequestsPerSec, res.Latency)
	}
}

func TestParseWrkErrors(t *testing.T) {
	res, err := parseWrk(readTestdata(t, "wrk2-timeouts.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if res.SocketErrors != 4 || res.Requests != 8 {
		t.Errorf("socket errors %d, requests %d; want 4 timeouts and 8 requests", res.SocketErrors, res.Requests)
	}
	if res.Latency[100] != 2810 {
		t.Errorf("corrected max %g ms, want 2810 (2.81s)", res.Latency[100])
	}

	res, err = parseWrk(readTestdata(t, "wrk2-non2xx.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Non2xx != 199 || res.Requests != 199 || len(res.Latency) != 0 {
		t.Errorf("non-2xx %d of %d, latency %v; want 199 of 199 and no distribution", res.Non2xx, res.Requests, res.Latency)
	}

	// A refused connection makes wrk2 print one line and no summary: that
	// is not a result.
	if _, err := parseWrk(readTestdata(t, "wrk2-refused.txt")); err == nil {
		t.Error("parsing wrk2's connection-refused output succeeded, want an error")
	}
	if _, err := parseWrk("  Latency Distribution (HdrHistogram - Recorded Latency)\n 50.000%  1.71xs\n  1 requests in 1.00s, 1KB read\n"); err == nil {
		t.Error("a percentile without a known unit parsed, want an error")
	}
}

func TestParseWrkTime(t *testing.T) {
	for in, want := range map[string]float64{"87.00us": 0.087, "404.99ms": 404.99, "1.02s": 1020, "1.50m": 90000, "2.00h": 7.2e6} {
		if got, err := parseWrkTime(in); err != nil || math.Abs(got-want) > 1e-9*want {
			t.Errorf("parseWrkTime(%q) = %g, %v; want %g", in, got, err, want)
		}
	}
	for _, in := range []string{"12", "ms", "1.0xs"} {
		if _, err := parseWrkTime(in); err == nil {
			t.Errorf("parseWrkTime(%q) succeeded, want an error", in)
		}
	}
}

// The k6 sample is k6 v2.2.0's --summary-export of a 3 s, 50-VU one-GET
// run; the metronome sample is handleSummary's data of the open-model
// script at 500/s for 2 s.
func TestSummaries(t *testing.T) {
	var k6 loadResult
	if err := json.Unmarshal([]byte(readTestdata(t, "k6-summary-export.json")), &k6.Summary); err != nil {
		t.Fatal(err)
	}
	if n, err := k6.mustMetric("iterations", "count"); err != nil || n != 9139 {
		t.Errorf("k6 iterations %g, %v; want 9139", n, err)
	}
	if r, err := k6.mustMetric("iterations", "rate"); err != nil || math.Abs(r-3042.1661599306844) > 1e-9 {
		t.Errorf("k6 rate %g, %v", r, err)
	}
	if f, ok := k6.metric("http_req_failed", "value"); !ok || f != 0 {
		t.Errorf("k6 http_req_failed %g, %v; want 0", f, ok)
	}

	var open map[string]any
	if err := json.Unmarshal([]byte(readTestdata(t, "metronome-open-summary.json")), &open); err != nil {
		t.Fatal(err)
	}
	r, err := openFigures(open, 999_999)
	if err != nil {
		t.Fatal(err)
	}
	want := openRun{p50: 0.517, p99: 34.32078, p999: 51.95527919000034, completed: 100, lagP99: 20.250699999999995}
	if r != want {
		t.Errorf("open figures %+v, want %+v", r, want)
	}
	delete(open["metrics"].(map[string]any), "corrected_latency")
	if _, err := openFigures(open, 1000); err == nil || !strings.Contains(err.Error(), "corrected_latency") {
		t.Errorf("without corrected_latency: %v, want an error naming it", err)
	}
}

func TestMedianRatioGoals(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median of 3,1,2 = %g", m)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median of 4,1,3,2 = %g", m)
	}
	if m := median(nil); !math.IsNaN(m) {
		t.Errorf("median of nothing = %g, want NaN", m)
	}

	// CPU per iteration: 13 µs against k6's 55 µs is below a quarter.
	r := compare("cpu", "µs", []float64{20, 12, 13}, "k6", []float64{54, 55, 58}, goalCPU)
	if r.Value != 13 || *r.PeerValue != 55 || math.Abs(*r.Ratio-13.0/55) > 1e-12 || !*r.Pass {
		t.Errorf("cpu row %+v", r)
	}
	r = compare("cpu", "µs", []float64{20, 14, 15}, "k6", []float64{54, 55, 58}, goalCPU)
	if *r.Pass {
		t.Errorf("14/55 passed the 1/4 target: %+v", r)
	}
	// Against wrk: at most twice; and the open model's CPU per request at
	// most 1.3 times the closed loop's.
	if r := compare("cpu", "µs", []float64{18}, "wrk", []float64{9}, goalCPUWrk); !*r.Pass {
		t.Error("twice wrk's CPU failed the 2× target")
	}
	if r := compare("cpu", "µs", []float64{18.1}, "wrk", []float64{9}, goalCPUWrk); *r.Pass {
		t.Error("above twice wrk's CPU passed the 2× target")
	}
	if r := compare("open cpu", "µs", []float64{26}, "closed", []float64{20}, goalOpenCPU); !*r.Pass {
		t.Error("1.3 times the closed loop's CPU failed the 1.3× target")
	}
	if r := compare("open cpu", "µs", []float64{27}, "closed", []float64{20}, goalOpenCPU); *r.Pass {
		t.Error("1.35 times the closed loop's CPU passed the 1.3× target")
	}
	// p99 equal to wrk2's meets "≤ wrk2's"; above it does not.
	if r := compare("p99", "ms", []float64{2.3}, "wrk2", []float64{2.3}, goalP99); !*r.Pass {
		t.Error("p99 equal to wrk2's failed")
	}
	if r := compare("p99", "ms", []float64{2.4}, "wrk2", []float64{2.3}, goalP99); *r.Pass {
		t.Error("p99 above wrk2's passed")
	}
	// Completion is judged on metronome's own figure.
	if r := compare("done", "%", []float64{100, 99.9, 100}, "wrk2", []float64{99}, goalCompleted); !*r.Pass {
		t.Error("median 100 % failed the completion target")
	}
	if r := compare("done", "%", []float64{99.9, 99.9, 100}, "wrk2", []float64{100}, goalCompleted); *r.Pass {
		t.Error("median 99.9 % passed the completion target")
	}
	// A peer at 0 gives no ratio and a failed target rather than +Inf.
	if r := compare("x", "ms", []float64{1}, "wrk2", []float64{0}, goalP99); r.Ratio != nil || *r.Pass {
		t.Errorf("peer 0: ratio %v pass %v", r.Ratio, *r.Pass)
	}
}

func TestRotation(t *testing.T) {
	gens := []string{"metronome", "wrk2", "floor"}
	first := map[string]int{}
	for rep := range 3 {
		order := rotation(gens, rep)
		if len(order) != 3 {
			t.Fatalf("rotation %d: %v", rep, order)
		}
		first[order[0]]++
	}
	for _, g := range gens {
		if first[g] != 1 {
			t.Errorf("%s ran first %d times in 3 repetitions, want once: %v", g, first[g], first)
		}
	}
}

func TestPrintTable(t *testing.T) {
	rep := report{GoVersion: "go1.x", CPUs: 2, LoadStart: "1.00", LoadEnd: "2.00", Scale: 1, Reps: 3,
		Peers: []string{"k6: /bin/k6", "wrk2: absent"}}
	rep.Rows = []row{
		compare("closed: CPU per iteration", "µs", []float64{18}, "k6", []float64{54}, goalCPU),
		compare("open 20000/s: corrected p99", "ms", []float64{7.1}, "wrk2", []float64{2.3}, goalP99),
		{Measure: "trend: RSS growth", Value: 0.5, Unit: "MB", Target: "< 10 MB", Pass: boolp(true)},
	}
	var out bytes.Buffer
	printTable(&out, rep)
	lines := strings.Split(out.String(), "\n")
	find := func(prefix string) []string {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return strings.Fields(l)
			}
		}
		t.Fatalf("no line starting %q in:\n%s", prefix, out.String())
		return nil
	}
	if f := find("measure"); strings.Join(f, " ") != "measure metronome peer ratio target met? note" {
		t.Errorf("header %q", f)
	}
	cpu := strings.Join(find("closed: CPU"), " ")
	if !strings.Contains(cpu, "18.0 µs k6 54.0 µs 0.333 ≤ 1/4 of k6's FAIL") {
		t.Errorf("cpu line %q", cpu)
	}
	p99 := strings.Join(find("open 20000/s"), " ")
	if !strings.Contains(p99, "7.100 ms wrk2 2.300 ms 3.09 ≤ wrk2's FAIL") {
		t.Errorf("p99 line %q", p99)
	}
	if tr := strings.Join(find("trend:"), " "); !strings.Contains(tr, "0.500 MB - - < 10 MB pass") {
		t.Errorf("trend line %q", tr)
	}
	if !strings.Contains(out.String(), "wrk2: absent") {
		t.Error("the peers' lines are missing")
	}
}

func TestQuantileMs(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 1000; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for q, want := range map[float64]float64{0.5: 500, 0.99: 990, 0.999: 999, 1: 1000, 0: 1} {
		if got := quantileMs(d, q); got != want {
			t.Errorf("q%g = %g, want %g", q, got, want)
		}
	}
	if !math.IsNaN(quantileMs(nil, 0.5)) {
		t.Error("quantile of nothing is not NaN")
	}
}
