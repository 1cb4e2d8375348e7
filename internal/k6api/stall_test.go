package k6api_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/stallserver"
)

// The stall experiment through an extension (issue 36): the probe's get
// (testdata/xk6probe) talks HTTP through State.Dialer and pushes its own
// Trend, probe_op_duration, from its goroutine with PushIfNotDone, as
// xk6-redis-like extensions do. stall.js names that Trend in
// latencyTrends and runs R = 200 operations/s for D = 11 s on 4 VUs
// against a server that freezes S = 500 ms every P = 5 s.
const (
	stallRate    = 200
	stallRun     = 11 * time.Second
	stallVUs     = 4
	stallSlowCut = 100 * time.Millisecond
	// stallLateAllowance is how late a loaded machine may start an arrival
	// (the e2e stall experiments' burst allowance).
	stallLateAllowance = 40 * time.Millisecond
	stallTrend         = "probe_op_duration"
	stallSubTrend      = "corrected_latency{metric:probe_op_duration}"
)

var stallEvery = stallserver.Schedule{Length: 500 * time.Millisecond, Period: 5 * time.Second, First: 2 * time.Second}

// opPoint is one probe_op_duration sample of the JSON output.
type opPoint struct {
	end time.Time
	d   time.Duration
}

// opPoints reads the probe_op_duration points of a JSON output file.
func opPoints(t *testing.T, path string) []opPoint {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ps []opPoint
	for _, l := range lines(string(b)) {
		var p struct {
			Type   string `json:"type"`
			Metric string `json:"metric"`
			Data   struct {
				Time  time.Time `json:"time"`
				Value float64   `json:"value"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if p.Type == "Point" && p.Metric == stallTrend {
			ps = append(ps, opPoint{p.Data.Time, time.Duration(p.Data.Value * float64(time.Millisecond))})
		}
	}
	return ps
}

// testStall runs stall.js with bin against a stall server and checks
// corrected_latency{metric:probe_op_duration} and the raw Trend against
// the stall arithmetic.
//
// Corrected: the N = R·D arrivals span D = 11 s ≥ 2P + S, so at least two
// whole stalls fall among them. An arrival intended x into a stall is
// answered no earlier than the stall's end, so its corrected latency is
// at least S − x, however late its VU sent it: two stalls give 2·R·x
// arrivals of at least S − x. k6's p(99) interpolates at rank 0.99·(N−1),
// so it is at least S − x once ⌈0.01·N⌉ + 1 values are: x = that many
// half of them per stall, one arrival more for the
// rounding, over R: 65 ms, and p(99) ≥ 435 ms. No machine load lowers
// it: load only answers later. Nor is any arrival charged much more than
// the stall: after it, the R·S = 100 arrivals it held back wait for the 4
// VUs, which take d each (the operations' p90) while R more arrive per
// second, so the backlog drains in R·S·d / (4 − R·d); an arrival is
// answered at most that, an operation and the start allowance of the
// e2e stall tests after the stall's end.
//
// Raw: the 4 VUs are idle almost always (R·d/4 with d a few ms), so each
// stall holds the first operation of each VU and no more (a held VU is
// busy until the stall ends); the 100 arrivals it held back run after it,
// fast, from the queue. So at most 4 slow operations per stall the run
// touches, plus those a loaded machine makes slow away from any stall
// (counted here from the points): when that many fit above rank
// 0.99·(N−1), p(99) is one of the fast operations, under 100 ms.
func testStall(t *testing.T, bin string) {
	if testing.Short() {
		t.Skip("runs an 11 s load in real time")
	}
	srv := stallserver.New(stallEvery)
	if err := srv.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	export, points := filepath.Join(dir, "summary.json"), filepath.Join(dir, "points.json")
	r := run(t, bin, nil, "run", "-q", "--summary-export", export, "-o", "json="+points,
		"-e", "TARGET="+srv.URL(), "-e", "RATE="+strconv.Itoa(stallRate), "-e", "DURATION="+stallRun.String(),
		"-e", "VUS="+strconv.Itoa(stallVUs), "stall.js")
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.output)
	}
	sum := exported(t, export)
	stat := func(metric, s string) float64 {
		v, ok := sum[metric][s].(float64)
		if !ok {
			t.Fatalf("the summary has no %s %s: %v", metric, s, sum[metric])
		}
		return v
	}
	n := stat(stallTrend, "count")
	if want := float64(stallRate) * stallRun.Seconds(); n != want {
		t.Errorf("%s count = %v, want one per arrival: %v", stallTrend, n, want)
	}
	if c := stat(stallSubTrend, "count"); c != n {
		t.Errorf("%s count = %v, want one per operation: %v", stallSubTrend, c, n)
	}

	need := math.Ceil(0.01*n) + 1
	x := time.Duration((math.Ceil(need/2) + 1) / stallRate * float64(time.Second)) // whole arrivals per stall
	floor := stallEvery.Length - x
	corrected := stat(stallSubTrend, "p(99)")
	if corrected < ms(floor) {
		t.Errorf("%s p(99) = %.1f ms, want at least the stall less %v: %.1f ms", stallSubTrend, corrected, x, ms(floor))
	}

	// Slow operations, and which of them no stall explains.
	ops := opPoints(t, points)
	if float64(len(ops)) != n {
		t.Fatalf("%d %s points, the summary counts %v", len(ops), stallTrend, n)
	}
	durs := make([]time.Duration, len(ops))
	for i, o := range ops {
		durs[i] = o.d
	}
	slices.Sort(durs)
	d, period := durs[len(durs)*9/10], time.Second/stallRate
	if stallVUs*period <= d {
		t.Fatalf("operations take %v (p90): %d VUs cannot keep up with one arrival every %v", d, stallVUs, period)
	}
	drain := time.Duration(float64(stallRate) * stallEvery.Length.Seconds() * float64(d) / (stallVUs - float64(d)/float64(period)))
	ceiling := stallEvery.Length + drain + d + stallLateAllowance
	if corrected > ms(ceiling) {
		t.Errorf("%s p(99) = %.1f ms, want at most the stall, the %v its backlog takes to drain, an operation and %v: %.1f ms",
			stallSubTrend, corrected, drain.Round(time.Millisecond), stallLateAllowance, ms(ceiling))
	}
	slow, load := 0, 0
	first, last := ops[0].end, ops[0].end
	for _, o := range ops {
		first, last = minTime(first, o.end.Add(-o.d)), maxTime(last, o.end)
		if o.d <= stallSlowCut {
			continue
		}
		slow++
		if !stalledDuring(srv.Started(), o.end.Add(-o.d), o.end) {
			load++
		}
	}
	stalls := stallsTouching(srv.Started(), first, last)
	lo, hi := stallVUs*(stalls-1), stallVUs*stalls+load
	raw := stat(stallTrend, "p(99)")
	t.Logf("%s: %d of %v operations over %v (%d by load), %d stalls × %d VUs; p(90) %v, p(99) %.1f ms; %s p(99) %.1f ms (accepted %.1f…%.1f)",
		stallTrend, slow, n, stallSlowCut, load, stalls, stallVUs, d, raw, stallSubTrend, corrected, ms(floor), ms(ceiling))
	if slow < lo || slow > hi {
		t.Errorf("%d operations over %v, want one per VU per stall within [%d, %d]", slow, stallSlowCut, lo, hi)
	}
	if fastRank := int(n) - 1 - int(math.Ceil(0.99*(n-1))); hi <= fastRank {
		if raw > ms(stallSlowCut) {
			t.Errorf("%s p(99) = %.1f ms, want under %v: at most %d of %v operations are slow", stallTrend, raw, stallSlowCut, hi, n)
		}
	} else {
		t.Logf("the machine's load allows %d slow operations, more than the %d that keep p(99) among the fast ones: not checking it", hi, fastRank)
	}
}

// stalledDuring tells whether a stall of stallEvery, counted from start,
// overlaps [from, to].
func stalledDuring(start, from, to time.Time) bool {
	for k := time.Duration(0); ; k++ {
		s := start.Add(stallEvery.First + k*stallEvery.Period)
		if s.After(to) {
			return false
		}
		if s.Add(stallEvery.Length).After(from) {
			return true
		}
	}
}

// stallsTouching counts the stalls that overlap [from, to].
func stallsTouching(start, from, to time.Time) int {
	c := 0
	for k := time.Duration(0); ; k++ {
		s := start.Add(stallEvery.First + k*stallEvery.Period)
		if s.After(to) {
			return c
		}
		if s.Add(stallEvery.Length).After(from) {
			c++
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
