package e2e

import (
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// The stall experiment on an operation metronome does not know (issue 36,
// item 4): stall/optrend.js times each operation with its own Trend,
// op_duration, named in latencyTrends, at R = 200 operations/s on only 4
// VUs against the server that freezes S = 500 ms every 3 s. The VUs see
// what a closed loop sees: each stall holds each VU's one operation, 4 per
// stall, under 1 % of the 1,200, so op_duration's p(99) is the
// operations' own few milliseconds. corrected_latency{metric:op_duration}
// charges every arrival the stall held back, waiting at the server or for
// a VU, by the same stall arithmetic as the HTTP experiment (p(99) about
// 470 ms here).
//
// Tolerances are those of the HTTP experiment (stall_test.go), with one
// addition: after a stall the R·S = 100 arrivals it held back wait for the
// 4 VUs, which take d each (an operation's duration, their p90) while R
// more arrive per second: the backlog drains in R·S·d / (4 − R·d), and an
// arrival may be answered that much later than the stall's end. That time
// is added to the burst allowance, which only widens the upper bounds.
func TestStallLatencyTrend(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 6 s load in real time")
	}
	const vus = 4
	const sub = "corrected_latency{metric:op_duration}"
	dir := t.TempDir()
	jsonPath, exp := filepath.Join(dir, "out.json"), filepath.Join(dir, "summary.json")
	srv := startStallServer(t)
	r := metronome(t, runSpec{args: []string{"run", "-q", "-o", "json=" + jsonPath, "--summary-export", exp,
		"-e", "TARGET=" + srv.URL(), "-e", "RATE=" + strconv.Itoa(stallRate), "-e", "DURATION=" + stallDuration.String(),
		"-e", "VUS=" + strconv.Itoa(vus), script("stall/optrend.js")}})
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	arrivals, total, lines := scheduledArrivalsTagged(t, jsonPath, time.Millisecond, "metric", "op_duration")
	raw := readRaw(t, lines, "op_duration")
	if len(raw.requests) != total {
		t.Fatalf("%d op_duration samples, want one per arrival: %d", len(raw.requests), total)
	}

	// How long the VUs take to drain a stall's backlog.
	durs := make([]float64, len(raw.requests))
	for i, x := range raw.requests {
		durs[i] = ms(x.d)
	}
	slices.Sort(durs)
	d := k6Percentile(durs, 0.90)
	period := ms(time.Second / stallRate)
	if float64(vus)*period <= d {
		t.Fatalf("operations take %.1f ms (p90): %d VUs cannot keep up with one arrival every %.1f ms", d, vus, period)
	}
	held := float64(perStall(stallSchedule.Length))
	drain := time.Duration(held * d / (float64(vus) - d/period) * float64(time.Millisecond))
	t.Logf("operations take %.2f ms (p90); %d VUs drain a stall's %.0f held arrivals in %v", d, vus, held, drain.Round(time.Millisecond))

	want := checkStalledArrivals(t, sub+" points", srv, arrivals, total, burstAllowance+drain, raw)
	e := readExport(t, exp)
	if n := e.num(t, sub, "count"); n != float64(total) {
		t.Errorf("%s count = %v, want one per arrival: %d", sub, n, total)
	}
	checkP99(t, sub, e.num(t, sub, "p(99)"), want)

	// The Trend itself: one slow operation per VU per stall. A held VU is
	// busy until the stall ends, so no VU is held twice by one stall; and
	// the 4 VUs are idle most of the time (200/s × d / 4), so the first
	// arrivals of a stall take each of them — all of them but in a stall
	// the schedule's end cuts short, which may hold fewer. Load far from
	// the stalls adds what the run's raw measures show there.
	slowRaw := 0
	for _, x := range raw.requests {
		if x.d > slowCut {
			slowRaw++
		}
	}
	lo := vus * (want.stalls - 1)
	hi := vus*want.stalls + want.load
	rawP99 := e.num(t, "op_duration", "p(99)")
	t.Logf("op_duration: %d of %d operations over 100 ms (%d VUs × %d stalls, accepted %d…%d), p(99) %.1f ms; %s p(99) %.1f ms",
		slowRaw, total, vus, want.stalls, lo, hi, rawP99, sub, e.num(t, sub, "p(99)"))
	if slowRaw < lo || slowRaw > hi {
		t.Errorf("%d operations over 100 ms, want %d (one per VU per stall) within [%d, %d]", slowRaw, vus*want.stalls, lo, hi)
	}
	// k6's p(99) of n values interpolates at rank 0.99·(n−1): it is one
	// of the fast ones while at most n − 1 − ⌈0.99·(n−1)⌉ are slow.
	if fastRank := total - 1 - int(math.Ceil(0.99*float64(total-1))); hi <= fastRank {
		if rawP99 > float64(slowCut/time.Millisecond) {
			t.Errorf("op_duration p(99) = %.1f ms, want under 100 ms: at most %d of %d operations are slow", rawP99, hi, total)
		}
	} else {
		t.Logf("the machine's load allows %d slow operations, more than the %d that keep p(99) among the fast ones: not checking it", hi, fastRank)
	}
}
