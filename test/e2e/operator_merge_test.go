package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/testkit/promtest"
)

// The schedule the merge tests split: 60 arrivals/s for 2.5 s. k6's
// period is 1s/60 truncated to whole nanoseconds (16,666,666 ns), so the
// arrivals are the indices i with i·period < 2.5 s: 0 to 150.
const (
	splitPeriod   = time.Second / 60
	splitDuration = 2500 * time.Millisecond
	splitArrivals = int((splitDuration + splitPeriod - 1) / splitPeriod)
)

// splitScript runs the schedule against $TARGET, sending each arrival's
// global index, and records how much of its corrected latency the server's
// hold does not explain (see splitRuns for why).
const splitScript = `import http from 'k6/http';
import exec from 'k6/execution';
import { Trend } from 'k6/metrics';
const excess = new Trend('excess', true);
export const options = {
  summaryTrendStats: ['min', 'max', 'p(50)', 'p(90)', 'p(99)'],
  scenarios: { s: { executor: 'constant-arrival-rate', rate: 60, timeUnit: '1s',
    duration: '2500ms', preAllocatedVUs: 30, maxVUs: 30 } },
};
export default function () {
  const res = http.get(__ENV.TARGET + '?i=' + exec.scenario.iterationInTest);
  excess.add(Date.now() - exec.scenario.intendedStartTime - Number(res.headers['X-Delay-Ms']));
}
`

// holdMs is how long the server holds the answer to global arrival i: 10
// to 199 ms in a scrambled order, so that the percentiles depend on which
// arrivals ran and lie far apart compared with the client's noise.
func holdMs(i int) int { return 10 + i*37%64*3 }

// holdServer is a loopback server that holds the answer to ?i=N for
// holdMs(N) and remembers the indices each path asked for.
type holdServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen map[string][]int
}

func newHoldServer(t *testing.T) *holdServer {
	h := &holdServer{seen: map[string][]int{}}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i, err := strconv.Atoi(r.URL.Query().Get("i"))
		if err != nil || i < 0 {
			http.Error(w, "want ?i=<index>", http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.seen[r.URL.Path] = append(h.seen[r.URL.Path], i)
		h.mu.Unlock()
		d := holdMs(i)
		time.Sleep(time.Duration(d) * time.Millisecond)
		w.Header().Set("X-Delay-Ms", strconv.Itoa(d))
		_, _ = w.Write([]byte("ok\n"))
	}))
	t.Cleanup(h.Close)
	return h
}

// indices returns the sorted indices the server saw on path.
func (h *holdServer) indices(path string) []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Sorted(slices.Values(h.seen[path]))
}

// splitResult is what splitRuns measured.
type splitResult struct {
	dir string
	// single is the summary export of the single instance, parts those
	// of the segment instances; stdout their banners, the single
	// instance's first.
	single export
	parts  []export
	stdout []string
	// codes are the runs' exit codes, the single instance's first.
	codes []int
	// holds are the server's holds of every arrival, sorted (ms): the
	// distribution corrected_latency would have with no lag and no
	// client time.
	holds []float64
	// slack bounds, for every arrival of every run, corrected_latency
	// minus the server's hold (ms); see splitRuns.
	slack float64
}

// splitRuns replays k6-operator's protocol for three segment instances of
// splitScript and, side by side, runs the single instance of the same
// schedule: all four start paused, are resumed one after the other by
// PATCH /v1/status, and hit a loopback server whose hold depends only on
// the arrival's global index. extra are flags for every run, "{name}" in
// them replaced by a per-run path prefix in the test's directory; env is
// extra environment; each run gets --tag testid=single or testid=split.
//
// Why the runs can be compared at all: arrival i's corrected latency is
// c_i = d_i + x_i, where d_i = holdMs(i) is the server's hold (the same in
// both runs, since it depends only on i) and x_i ≥ 0 is the rest: the
// start's schedule_lag plus the client's own time (connect, send, read,
// JS). The script measures x_i as excess_i = Date.now() − intended − d_i
// at the end of its function; Date.now() truncates to the millisecond and
// the VU stamps the iteration's end a moment after the function returns,
// so x_i ≤ excess_i + 1 ms + 2 ms (the 2 ms covers that return, which the
// script cannot see; it takes microseconds when no GC pause hits it). So
// with X = max excess + 3 ms over every run, every c_i lies in
// [d_i, d_i + X]. Shifting each value by an amount in [0, X] moves each of
// its order statistics, and so every interpolated percentile, by an amount
// in [0, X]: each run's percentiles lie between those of the holds and the
// holds plus X, and the single run's and the merged ones differ by at most
// X. (excess_i ≥ schedule_lag_i − 1 ms, so X also bounds the measured
// schedule_lag; the tests check that too.)
func splitRuns(t *testing.T, extra []string, env []string) splitResult {
	t.Helper()
	return splitRunsOf(t, splitSpec{parts: 3, script: splitScript, extra: extra, env: env})
}

// splitSpec is what splitRunsOf runs: a script of splitScript's schedule
// split over parts instances, every run ending with one of the exit codes
// codes (0 when none are given).
type splitSpec struct {
	parts      int
	script     string
	extra, env []string
	codes      []int
}

// splitRunsOf is splitRuns for any script of the same schedule and any
// number of segment instances, i1 to i<parts>, each with the instance_id
// tag k6-operator gives it.
func splitRunsOf(t *testing.T, spec splitSpec) splitResult {
	t.Helper()
	srv := newHoldServer(t)
	res := splitResult{dir: t.TempDir()}
	js := filepath.Join(res.dir, "split.js")
	if err := os.WriteFile(js, []byte(spec.script), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	runs := []struct{ name, target, testid string }{{"single", "/single", "single"}}
	point := func(i int) string {
		switch i {
		case 0:
			return "0"
		case spec.parts:
			return "1"
		}
		return fmt.Sprintf("%d/%d", i, spec.parts)
	}
	var segs, seq []string
	for i := range spec.parts {
		runs = append(runs, struct{ name, target, testid string }{fmt.Sprintf("i%d", i+1), "/split", "split"})
		segs = append(segs, point(i)+":"+point(i+1))
		seq = append(seq, point(i))
	}
	seq = append(seq, "1")
	res.parts, res.stdout = make([]export, spec.parts), make([]string, spec.parts+1)
	var ins []*instance
	for k, r := range runs {
		args := []string{"run", "--address=" + anyPort, "--paused",
			"--tag", "testid=" + r.testid, "-e", "TARGET=" + srv.URL + r.target,
			"--summary-export", filepath.Join(res.dir, r.name+".json")}
		if k > 0 {
			args = append(args, "--execution-segment="+segs[k-1], "--execution-segment-sequence="+strings.Join(seq, ","),
				"--tag", fmt.Sprintf("instance_id=%d", k))
		}
		for _, e := range spec.extra {
			args = append(args, strings.ReplaceAll(e, "{name}", filepath.Join(res.dir, r.name)))
		}
		ins = append(ins, spawn(t, ctx, spec.env, append(args, js)...))
	}
	for _, in := range ins {
		in.waitPaused(t)
	}
	for _, in := range ins {
		in.patch(t, `{"paused":false,"stopped":false}`)
	}
	for k, in := range ins {
		want := spec.codes
		if want == nil {
			want = []int{0}
		}
		code := in.wait(t)
		if !slices.Contains(want, code) {
			t.Fatalf("%s exited %d, want one of %v\nstderr:\n%s", runs[k].name, code, want, in.stderr.String())
		}
		res.codes = append(res.codes, code)
		res.stdout[k] = in.stdout.String()
		e := readExport(t, filepath.Join(res.dir, runs[k].name+".json"))
		if k == 0 {
			res.single = e
		} else {
			res.parts[k-1] = e
		}
		if _, ok := e.Metrics["dropped_iterations"]; ok && e.num(t, "dropped_iterations", "count") > 0 {
			t.Fatalf("%s dropped iterations: a dropped arrival has no server hold to compare", runs[k].name)
		}
		res.slack = math.Max(res.slack, e.num(t, "excess", "max")+3)
		t.Logf("%s: excess p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms", runs[k].name,
			e.num(t, "excess", "p(50)"), e.num(t, "excess", "p(90)"), e.num(t, "excess", "p(99)"), e.num(t, "excess", "max"))
	}

	// Both sides ran exactly the global indices 0..150, each once.
	want := make([]int, splitArrivals)
	for i := range want {
		want[i] = i
		res.holds = append(res.holds, float64(holdMs(i)))
	}
	slices.Sort(res.holds)
	for _, path := range []string{"/single", "/split"} {
		if got := srv.indices(path); !slices.Equal(got, want) {
			t.Fatalf("%s: the server saw indices %v, want each of 0..%d once", path, got, splitArrivals-1)
		}
	}
	return res
}

// pct is k6's percentile estimator on sorted values: linear interpolation
// between the closest ranks at h = p/100·(n−1).
func pct(sorted []float64, p float64) float64 {
	h := p / 100 * float64(len(sorted)-1)
	lo := math.Floor(h)
	hi := math.Min(lo+1, float64(len(sorted)-1))
	return sorted[int(lo)] + (sorted[int(hi)]-sorted[int(lo)])*(h-lo)
}

// hdrRes is how far a value read back from metronome's HdrHistogram logs
// can be from the exact one: one bucket (3 significant digits, so at most
// 1/1024 of the value) plus its 1 µs unit, in ms.
func hdrRes(v float64) float64 { return v/1024 + 0.001 }

// mergedSummary runs metronome merge --json on files and returns the
// summaries by metric.
func mergedSummary(t *testing.T, files ...string) map[string]mergeSummary {
	t.Helper()
	r := metronome(t, runSpec{args: append([]string{"merge", "--json", "--metric", "corrected_latency,schedule_lag"}, files...)})
	if r.code != 0 {
		t.Fatalf("merge: exit %d\n%s", r.code, r.stderr)
	}
	var all []mergeSummary
	if err := json.Unmarshal([]byte(r.stdout), &all); err != nil {
		t.Fatalf("merge --json: %v\n%s", err, r.stdout)
	}
	out := map[string]mergeSummary{}
	for _, s := range all {
		if _, dup := out[s.Metric]; dup || s.Labels != "scenario=s" {
			t.Fatalf("merge: unexpected distribution %q %q\n%s", s.Metric, s.Labels, r.stdout)
		}
		out[s.Metric] = s
	}
	return out
}

type mergeSummary struct {
	Metric      string             `json:"metric"`
	Labels      string             `json:"labels"`
	Count       int64              `json:"count"`
	Max         float64            `json:"max"`
	Percentiles map[string]float64 `json:"percentiles"`
}

// Three segment instances started the operator's way and one instance of
// the same schedule, each writing an HdrHistogram log: the merged logs of
// the three hold exactly the single instance's arrivals, and their
// corrected_latency percentiles are the single instance's within the
// tolerance splitRuns derives.
func TestOperatorMergedHdrLogsMatchSingleRun(t *testing.T) {
	r := splitRuns(t, []string{"-o", "hdrlog=" + "{name}.hlog"}, nil)
	log := func(name string) string { return filepath.Join(r.dir, name+".hlog") }
	single := mergedSummary(t, log("single"))
	merged := mergedSummary(t, log("i1"), log("i2"), log("i3"))

	// Counts are exact: 151 arrivals on one instance, 151 on three.
	for _, m := range []string{"corrected_latency", "schedule_lag"} {
		if single[m].Count != int64(splitArrivals) || merged[m].Count != int64(splitArrivals) {
			t.Errorf("%s: %d values on one instance, %d merged from three; want %d each",
				m, single[m].Count, merged[m].Count, splitArrivals)
		}
	}
	var perInstance float64
	for _, e := range r.parts {
		perInstance += e.num(t, "iterations", "count")
	}
	if perInstance != float64(splitArrivals) || r.single.num(t, "iterations", "count") != float64(splitArrivals) {
		t.Errorf("iterations: %v summed over the instances, %v on one; want %d", perInstance, r.single.num(t, "iterations", "count"), splitArrivals)
	}
	// The tolerance X bounds the measured schedule_lag too (see splitRuns).
	lag := math.Max(single["schedule_lag"].Max, merged["schedule_lag"].Max)
	if lag > r.slack+hdrRes(lag) {
		t.Errorf("schedule_lag reached %.3f ms, beyond the measured slack X = %.3f ms: the excess trend misses the lag", lag, r.slack)
	}
	t.Logf("X = %.3f ms (max schedule_lag %.3f ms)", r.slack, lag)

	c1, c3 := single["corrected_latency"], merged["corrected_latency"]
	for _, p := range []struct {
		name string
		p    float64
	}{{"p50", 50}, {"p90", 90}, {"p99", 99}, {"max", 100}} {
		one, three := c1.Percentiles[p.name], c3.Percentiles[p.name]
		if p.name == "max" {
			one, three = c1.Max, c3.Max
		}
		hold := pct(r.holds, p.p)
		t.Logf("%s: holds %.3f ms, one instance %.3f ms, three merged %.3f ms", p.name, hold, one, three)
		for _, v := range []struct {
			run string
			v   float64
		}{{"one instance", one}, {"three merged", three}} {
			if v.v < hold-hdrRes(hold) || v.v > hold+r.slack+hdrRes(hold+r.slack) {
				t.Errorf("%s corrected_latency %s = %.3f ms, outside [%.3f, %.3f]: the holds' %s and the holds' plus X",
					v.run, p.name, v.v, hold, hold+r.slack, p.name)
			}
		}
		if d := math.Abs(one - three); d > r.slack+hdrRes(one)+hdrRes(three) {
			t.Errorf("corrected_latency %s: one instance %.3f ms, three merged %.3f ms: %.3f ms apart, more than X = %.3f ms",
				p.name, one, three, d, r.slack)
		}
	}

	// Each instance's banner says it runs a third, at a third of the rate
	// (k6 v2.2.0 prints the same: 30 VUs split 10 + 10 + 10).
	for k := 1; k <= 3; k++ {
		if !strings.Contains(r.stdout[k], "scenarios: (33.33%) 1 scenario, 10 max VUs") ||
			!strings.Contains(r.stdout[k], "s: 20.00 iterations/s for 2.5s (maxVUs: 10,") {
			t.Errorf("instance %d's banner does not show its third:\n%s", k, r.stdout[k])
		}
	}
	if !strings.Contains(r.stdout[0], "scenarios: (100.00%) 1 scenario, 30 max VUs") ||
		!strings.Contains(r.stdout[0], "s: 60.00 iterations/s for 2.5s") {
		t.Errorf("the single instance's banner:\n%s", r.stdout[0])
	}
}

// The same with the Prometheus output: the three instances push native
// histograms, and their sum in PromQL gives the single instance's
// percentiles within a native histogram's bucket and the tolerance X.
func TestOperatorPrometheusNativeSumMatchesSingleRun(t *testing.T) {
	prom := promtest.Start(t)
	r := splitRuns(t, []string{"-o", "experimental-prometheus-rw"}, []string{
		"K6_PROMETHEUS_RW_SERVER_URL=" + prom.WriteURL(),
		"K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=true",
		"K6_PROMETHEUS_RW_PUSH_INTERVAL=1s",
	})
	at := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	query := func(expr string) float64 {
		t.Helper()
		res, err := prom.Query(ctx, expr, at)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Series) != 1 || len(res.Series[0].Points) != 1 {
			t.Fatalf("%s: %+v, want one value\nprometheus log:\n%s", expr, res, prom.Log())
		}
		return res.Series[0].Points[0].V
	}
	sel := func(testid string) string {
		return fmt.Sprintf(`sum(k6_corrected_latency_seconds{testid=%q})`, testid)
	}
	if n := query(`count(count by (instance_id) (k6_corrected_latency_seconds{testid="split"}))`); n != 3 {
		t.Errorf("%v instances pushed corrected_latency, want 3", n)
	}
	for _, id := range []string{"single", "split"} {
		if n := query("histogram_count(" + sel(id) + ")"); n != float64(splitArrivals) {
			t.Errorf("histogram_count for %s = %v, want %d", id, n, splitArrivals)
		}
	}
	// PromQL takes the value of rank ⌈q·n⌉ (1-based) and interpolates in
	// the schema-3 bucket holding it, whose bounds are within a factor
	// w = 2^(1/8) of that value. That value is the hold of the same rank
	// plus something in [0, X] (see splitRuns), in either run.
	w := math.Exp2(1.0 / 8)
	for _, q := range []float64{0.5, 0.9, 0.99} {
		k := int(math.Ceil(q*float64(splitArrivals))) - 1
		hold, x := r.holds[k], r.slack
		one := query(fmt.Sprintf("histogram_quantile(%g, %s)", q, sel("single"))) * 1000
		three := query(fmt.Sprintf("histogram_quantile(%g, %s)", q, sel("split"))) * 1000
		t.Logf("p%g: hold %.3f ms, X %.3f ms; PromQL one instance %.3f ms, three summed %.3f ms", q*100, hold, x, one, three)
		for _, v := range []float64{one, three} {
			if v < hold/w || v > (hold+x)*w {
				t.Errorf("p%g = %.3f ms, outside [%.3f, %.3f] (hold/w, (hold+X)·w)", q*100, v, hold/w, (hold+x)*w)
			}
		}
		// The two estimates differ by at most a bucket and X.
		if ratio := three / one; ratio > w*(hold+x)/hold || ratio < hold/((hold+x)*w) {
			t.Errorf("p%g: three summed %.3f ms against one instance %.3f ms: more than a bucket and X apart", q*100, three, one)
		}
	}
}
