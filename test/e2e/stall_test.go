package e2e

import (
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/stallserver"
)

// The stall experiment of docs/DESIGN.md §7, in real time: a server that answers
// at once but freezes S = 500 ms every 3 s, the first freeze 1.5 s after
// it starts, loaded at R = 200 arrivals/s for 6 s.
//
// The arithmetic: an arrival intended at t is answered when the stall it
// meets ends, so its corrected latency is (stall end − t), or about 0
// outside stalls. A stall delays S·R = 100 arrivals, of which those in its
// first S − 100 ms, R·0.4 s = 80, wait more than 100 ms. The run starts
// shortly after the server, so it meets the stalls at server times 1.5 s
// and 4.5 s (7.5 s too, should it start more than 1.5 s late); the test
// computes the expected numbers from each arrival's intended time rather
// than assuming where the stalls fall.
//
// Tolerances, stated once:
//   - Each stall has two edges where an arrival's class can flip: its start
//     (a request intended just before it reaches the server just after it)
//     and the 100 ms cut near its end. With up to J = 10 ms of timer and
//     dispatch jitter, R·J = 2 arrivals per edge: ±4 per stall.
//   - The R·S = 100 responses a stall holds are released at once. Through
//     the stall server, which runs inside this race-instrumented test
//     process, on a 2-core machine shared with other builds, the last of
//     them reaches metronome up to B = 40 ms after the stall's end
//     (measured: about 10 ms without -race, 25–38 ms with it). That only
//     adds latency: arrivals up to J + B before the 100 ms cut may be
//     pushed over it, so the upper bound allows R·J at a stall's start and
//     R·(J+B) at its cut, 12 per stall; and the p99 may be up to J + B
//     above the arithmetic's (but no more than J below it).
//   - A loaded machine can also make arrivals outside stalls late by more
//     than 100 ms. That too only adds slow arrivals. The test takes the
//     allowance from the run's raw measures, which the correction does not
//     make (loadNoise.bound): a corrected latency is a request's duration
//     plus its iteration's lateness, so an arrival far from the stalls
//     (not within J before one nor J + B after one) is over 100 ms only if
//     one of the two is over 50 ms; their count far from the stalls is
//     allowed on top, and more slow arrivals than that far from the stalls
//     fail the test (the correction charged what no one waited).
const (
	stallRate      = 200 // arrivals per second
	stallDuration  = 6 * time.Second
	stallVUs       = 150 // > R·S = 100 held at once
	stallJitter    = 10 * time.Millisecond
	burstAllowance = 40 * time.Millisecond
	slowCut        = 100 * time.Millisecond
)

var stallSchedule = stallserver.Schedule{Length: 500 * time.Millisecond, Period: 3 * time.Second, First: 1500 * time.Millisecond}

// startServer starts a stall server with schedule s on loopback.
func startServer(t *testing.T, s stallserver.Schedule) *stallserver.Server {
	t.Helper()
	srv := stallserver.New(s)
	if err := srv.Start("127.0.0.1:0"); err != nil {
		t.Fatalf("stall server: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// startStallServer starts a stall server on loopback right before a run,
// so that the run meets its stalls early on.
func startStallServer(t *testing.T) *stallserver.Server {
	t.Helper()
	return startServer(t, stallSchedule)
}

// arrival is one open-model arrival as an output recorded it.
type arrival struct {
	intended time.Time
	latency  time.Duration // corrected latency
	outcome  string        // "", "dropped" or "interrupted"
}

// arrivalsFromJSON reads the corrected_latency points of a JSON output,
// one per request: a point's time is when its answer came and its value
// that moment minus the intended start, give or take the script's own
// time before the request (these iterations send one request first).
func arrivalsFromJSON(t *testing.T, lines []jsonLine) []arrival {
	t.Helper()
	return arrivalsNamed(t, lines, "")
}

// arrivalsNamed is arrivalsFromJSON for the points tagged with the given
// name (all of them when name is ""): in an iteration of several requests,
// a point's time less its value is when its request was sent less its
// iteration's lag.
func arrivalsNamed(t *testing.T, lines []jsonLine, name string) []arrival {
	t.Helper()
	return arrivalsTagged(t, lines, "name", name)
}

// arrivalsTagged is arrivalsFromJSON for the points whose tag key holds
// value (all of them when value is "").
func arrivalsTagged(t *testing.T, lines []jsonLine, key, value string) []arrival {
	t.Helper()
	var out []arrival
	for _, l := range lines {
		if l.Type != "Point" || l.Metric != "corrected_latency" || (value != "" && l.Data.Tags[key] != value) {
			continue
		}
		end, err := time.Parse(time.RFC3339Nano, l.Data.Time)
		if err != nil {
			t.Fatalf("corrected_latency point time %q: %v", l.Data.Time, err)
		}
		lat := time.Duration(*l.Data.Value * float64(time.Millisecond))
		out = append(out, arrival{intended: end.Add(-lat), latency: lat, outcome: l.Data.Tags["outcome"]})
	}
	slices.SortFunc(out, func(a, b arrival) int { return a.intended.Compare(b.intended) })
	return out
}

// onSchedule replaces the arrivals' intended times, reconstructed from
// sample timestamps (which can trail the measured end of a request), by
// the schedule's: base + i·period, base being the median of the
// reconstructed offsets. It returns the largest correction it made.
func onSchedule(arrivals []arrival, period time.Duration) time.Duration {
	ts := make([]time.Time, len(arrivals))
	for i, a := range arrivals {
		ts[i] = a.intended
	}
	grid, worst := onGrid(ts, period)
	for i := range arrivals {
		arrivals[i].intended = grid[i]
	}
	return worst
}

// onGrid returns the grid base + i·period nearest the sorted times ts
// (base the median of their offsets from it) and the largest distance of
// a time from its grid point.
func onGrid(ts []time.Time, period time.Duration) ([]time.Time, time.Duration) {
	if len(ts) == 0 {
		return nil, 0
	}
	first := ts[0]
	offs := make([]time.Duration, len(ts))
	for i, at := range ts {
		offs[i] = at.Sub(first) - time.Duration(i)*period
	}
	slices.Sort(offs)
	base := first.Add(offs[len(offs)/2])
	grid := make([]time.Time, len(ts))
	var worst time.Duration
	for i := range ts {
		grid[i] = base.Add(time.Duration(i) * period)
		worst = max(worst, grid[i].Sub(ts[i]).Abs())
	}
	return grid, worst
}

// timing is one raw measure of a run: how long something took (a
// request's duration, an iteration's lateness) and when it began (the
// request's start, the iteration's intended start).
type timing struct {
	at time.Time
	d  time.Duration
}

// pointTime parses a JSON point's time.
func pointTime(t *testing.T, l jsonLine) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, l.Data.Time)
	if err != nil {
		t.Fatalf("%s point time %q: %v", l.Metric, l.Data.Time, err)
	}
	return at
}

// pointDuration is a JSON point's value, in milliseconds, as a duration.
func pointDuration(l jsonLine) time.Duration {
	return time.Duration(*l.Data.Value * float64(time.Millisecond))
}

// iterationLags reads every iteration's schedule_lag point of a JSON
// output as its lateness and intended start, sorted by the start, and
// says whether the starts are exact. metronome's schedule_lag and
// iteration_duration points of an iteration share its end time and tags,
// so end − duration − lag is exactly its intended start; a script's own
// schedule_lag (intended.js in stock k6) is added as soon as the script
// has read the clock at the iteration's start, so its time less its value
// is the intended start to Date.now()'s millisecond.
func iterationLags(t *testing.T, lines []jsonLine) (lags []timing, exact bool) {
	t.Helper()
	key := func(l jsonLine) string {
		k := l.Data.Time
		for _, name := range slices.Sorted(maps.Keys(l.Data.Tags)) {
			k += "\x00" + name + "=" + l.Data.Tags[name]
		}
		return k
	}
	durs := map[string][]time.Duration{}
	for _, l := range lines {
		if l.Type == "Point" && l.Metric == "iteration_duration" {
			durs[key(l)] = append(durs[key(l)], pointDuration(l))
		}
	}
	exact = true
	for _, l := range lines {
		if l.Type != "Point" || l.Metric != "schedule_lag" {
			continue
		}
		start, lag := pointTime(t, l).Add(-pointDuration(l)), pointDuration(l)
		if ds := durs[key(l)]; len(ds) > 0 {
			start, durs[key(l)] = start.Add(-ds[0]), ds[1:]
		} else {
			exact = false
		}
		lags = append(lags, timing{start, lag})
	}
	slices.SortFunc(lags, func(a, b timing) int { return a.at.Compare(b.at) })
	return lags, exact
}

// iterationStarts returns the exact intended starts of the completed
// iterations of a JSON output, sorted; nil when the output has no
// schedule_lag recorded beside an iteration_duration (stock k6 running
// intended.js, which records its own).
func iterationStarts(t *testing.T, lines []jsonLine) []time.Time {
	t.Helper()
	lags, exact := iterationLags(t, lines)
	if !exact {
		return nil
	}
	return starts(lags)
}

// starts returns when each timing began.
func starts(ts []timing) []time.Time {
	out := make([]time.Time, len(ts))
	for i, x := range ts {
		out[i] = x.at
	}
	return out
}

// rawRun is what a run measured raw, which the correction does not
// produce: each request's duration (its metric's points) and each
// iteration's lateness.
type rawRun struct{ requests, lags []timing }

// readRaw reads a run's raw measures from its JSON output; metric names
// the requests' duration (http_req_duration, grpc_req_duration,
// ws_connecting).
func readRaw(t *testing.T, lines []jsonLine, metric string) rawRun {
	t.Helper()
	var r rawRun
	for _, l := range lines {
		if l.Type == "Point" && l.Metric == metric {
			d := pointDuration(l)
			r.requests = append(r.requests, timing{pointTime(t, l).Add(-d), d})
		}
	}
	r.lags, _ = iterationLags(t, lines)
	return r
}

// idealLatency is the corrected latency the stall arithmetic gives an
// arrival intended at the given wall time: the rest of the stall it meets,
// or 0.
func idealLatency(srv *stallserver.Server, intended time.Time) time.Duration {
	off := intended.Sub(srv.Started())
	if end, ok := srv.Schedule.StallEnd(off); ok {
		return end - off
	}
	return 0
}

// k6Percentile is k6's estimator: linear interpolation between closest
// ranks of the sorted values.
func k6Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	h := p * float64(len(sorted)-1)
	lo, hi := math.Floor(h), math.Ceil(h)
	return sorted[int(lo)] + (sorted[int(hi)]-sorted[int(lo)])*(h-lo)
}

// stallExpectation is what the arithmetic says about a set of arrivals.
type stallExpectation struct {
	slow   int     // arrivals with an ideal latency over 100 ms
	stalls int     // stalls that delayed at least one arrival
	p99    float64 // ms, over the ideal latencies
	// burst is how much later than the arithmetic the protocol may
	// release the R·S held requests: burstAllowance for HTTP.
	burst time.Duration
	// load is how many slow arrivals the machine's load may add, late how
	// much later (ms) it may make one: from the run's raw measures far
	// from the stalls (loadNoise.bound).
	load int
	late float64
}

func expectStalls(srv *stallserver.Server, arrivals []arrival) stallExpectation {
	var e stallExpectation
	lat := make([]float64, len(arrivals))
	seen := map[time.Duration]bool{}
	for i, a := range arrivals {
		d := idealLatency(srv, a.intended)
		lat[i] = float64(d) / float64(time.Millisecond)
		if d > slowCut {
			e.slow++
		}
		if end, ok := srv.Schedule.StallEnd(a.intended.Sub(srv.Started())); ok {
			seen[end] = true
		}
	}
	e.stalls = len(seen)
	slices.Sort(lat)
	e.p99 = k6Percentile(lat, 0.99)
	return e
}

// scheduledArrivals reads a stall run's corrected_latency points from the
// JSON output at jsonPath and checks what every stall run promises: one
// point per intended arrival, every arrival started (enough VUs, the
// schedule still running), and intended times on the 5 ms grid within
// tol — exactly, from the iterations' own samples, where the output has
// schedule_lag, else from the points. It returns the arrivals, placed on
// the grid, and their intended number.
func scheduledArrivals(t *testing.T, jsonPath string, tol time.Duration) ([]arrival, int, []jsonLine) {
	t.Helper()
	return scheduledArrivalsTagged(t, jsonPath, tol, "", "")
}

// scheduledArrivalsTagged is scheduledArrivals for the corrected_latency
// points whose tag key holds value (all of them when value is "").
func scheduledArrivalsTagged(t *testing.T, jsonPath string, tol time.Duration, key, value string) ([]arrival, int, []jsonLine) {
	t.Helper()
	lines := readJSONOutput(t, jsonPath)
	arrivals := arrivalsTagged(t, lines, key, value)
	period := time.Second / stallRate
	total := int(stallRate * stallDuration / time.Second)
	if len(arrivals) != total {
		t.Fatalf("%d corrected_latency samples, want one per intended arrival: %d", len(arrivals), total)
	}
	for i, a := range arrivals {
		if a.outcome != "" {
			t.Errorf("arrival %d has outcome %q; every arrival should start while the schedule runs", i, a.outcome)
		}
	}
	starts := iterationStarts(t, lines)
	what := "the iterations' intended starts"
	if len(starts) == 0 {
		// The points are the requests': each also carries the script's
		// time before its request, as long again as the stamping delay
		// the tolerance allows for on a loaded machine.
		starts, what, tol = make([]time.Time, len(arrivals)), "the intended times the points give", 2*tol
		for i, a := range arrivals {
			starts[i] = a.intended
		}
	}
	if len(starts) != total {
		t.Fatalf("%d iterations, want %d", len(starts), total)
	}
	if _, dev := onGrid(starts, period); dev > tol {
		t.Errorf("%s stray up to %v from a 5 ms grid (tolerance %v)", what, dev, tol)
	}
	if dev := onSchedule(arrivals, period); dev > 0 {
		t.Logf("the requests' points stray up to %v from the grid (their answer's timestamp, the script's time before them)", dev.Round(time.Microsecond))
	}
	return arrivals, total, lines
}

// checkStalledArrivals holds a run's arrivals to the stall arithmetic: the
// run met at least two stalls, no arrival was answered before the stall it
// met ended, and the count over slowCut is the arithmetic's within the
// tolerances, burst being the protocol's late release of the held
// requests and raw the run's raw measures (loadNoise.bound). It returns
// the expectation for further checks.
func checkStalledArrivals(t *testing.T, what string, srv *stallserver.Server, arrivals []arrival, total int, burst time.Duration, raw rawRun) stallExpectation {
	t.Helper()
	want := expectStalls(srv, arrivals)
	want.burst = burst
	began := arrivals[0].intended.Sub(srv.Started())
	if want.stalls < 2 {
		t.Fatalf("the run began %v after the server and met %d stalls; the test needs 2", began, want.stalls)
	}
	t.Logf("the run began %v after the server started", began.Round(time.Millisecond))
	slow, early := 0, 0
	load := stallNoise(srv, burst)
	for _, a := range arrivals {
		if a.latency > slowCut {
			slow++
		}
		load.add(a.intended, a.latency)
		if least := load.leastHeld(a.intended, stallJitter); a.latency < least {
			if early++; early <= 3 {
				t.Errorf("arrival intended %v after the server start: corrected latency %v, but the stall held it at least %v",
					a.intended.Sub(srv.Started()), a.latency, least)
			}
		}
	}
	want.load, want.late = load.bound(t, what, raw)
	checkSlowCount(t, what, slow, want, total)
	return want
}

// loadNoise counts the arrivals that met no stall and were sent neither
// within J before one nor within J + burst after one (far from the
// stalls), and those of them slower than the slow cut. ideal is the stall
// arithmetic: how long the stalls hold a request sent at a given time.
type loadNoise struct {
	ideal        func(sent time.Time) time.Duration
	burst        time.Duration
	far, slowFar int
}

// leastHeld is the least the stalls surely held a request whose intended
// time is known to within j of sent: nothing when it may have left before
// a stall began (the intended times are estimated from the points, which
// trail the answers), else what is left of the stall j later.
func (n *loadNoise) leastHeld(sent time.Time, j time.Duration) time.Duration {
	if n.ideal(sent.Add(-j)) == 0 {
		return 0
	}
	return n.ideal(sent.Add(j))
}

// stallNoise is the loadNoise of a stall server's schedule.
func stallNoise(srv *stallserver.Server, burst time.Duration) *loadNoise {
	return &loadNoise{ideal: func(sent time.Time) time.Duration { return idealLatency(srv, sent) }, burst: burst}
}

// isFar reports whether a request sent at sent is far from every stall.
func (n *loadNoise) isFar(sent time.Time) bool {
	return n.ideal(sent) == 0 && n.ideal(sent.Add(stallJitter)) == 0 && n.ideal(sent.Add(-stallJitter-n.burst)) == 0
}

func (n *loadNoise) add(sent time.Time, latency time.Duration) {
	if !n.isFar(sent) {
		return
	}
	n.far++
	if latency > slowCut {
		n.slowFar++
	}
}

// bound is what the machine's load explains far from the stalls, from the
// run's raw measures, which the correction does not make: a corrected
// latency is its request's duration plus its iteration's lateness, so an
// arrival far from every stall is over the slow cut only if its request
// took more than half the cut or its iteration started more than half the
// cut late. It returns the count of such raw measures far from the stalls
// (the slow arrivals the machine may add), failing the test when more far
// arrivals were slow than that (the correction charged what no one
// waited), and, in ms, the p99 of the far latenesses plus that of the far
// requests' durations (how much later than the stall arithmetic load may
// make an arrival).
func (n *loadNoise) bound(t *testing.T, what string, raw rawRun) (count int, late float64) {
	t.Helper()
	var p99 float64
	for _, ts := range [][]timing{raw.requests, raw.lags} {
		var far []float64
		for _, x := range ts {
			if !n.isFar(x.at) {
				continue
			}
			if x.d > slowCut/2 {
				count++
			}
			far = append(far, ms(x.d))
		}
		slices.Sort(far)
		p99 += k6Percentile(far, 0.99)
	}
	if n.slowFar > count {
		t.Errorf("%s: %d of the %d arrivals far from any stall were over %v, but only %d of the run's raw measures there (request durations, iteration lateness) are over %v",
			what, n.slowFar, n.far, slowCut, count, slowCut/2)
	}
	return count, p99
}

// perStall is the number of arrivals in d at the stall rate.
func perStall(d time.Duration) int { return int(stallRate * d / time.Second) }

// checkSlowCount compares a measured count of slow arrivals with the
// arithmetic, within the tolerances stated above.
func checkSlowCount(t *testing.T, what string, got int, want stallExpectation, total int) {
	t.Helper()
	lo := want.slow - want.stalls*2*perStall(stallJitter)
	hi := want.slow + want.stalls*(perStall(stallJitter)+perStall(stallJitter+want.burst)) + want.load
	t.Logf("%s: %d of %d arrivals over 100 ms; the stall arithmetic says %d (%d stalls), load may add %d (raw measures over 50 ms far from them); accepted %d…%d",
		what, got, total, want.slow, want.stalls, want.load, lo, hi)
	if got < lo || got > hi {
		t.Errorf("%s: %d arrivals over 100 ms, want %d within [%d, %d] (edges of %d stalls, late release, machine load)",
			what, got, want.slow, lo, hi, want.stalls)
	}
}

// checkP99 compares a measured p99 with the arithmetic's. An arrival the
// loaded machine made late can be charged up to that much more than the
// stall held it, so the bound above adds want.late: the p99 of the run's
// raw request durations and iteration lateness far from the stalls, a
// millisecond or two on a quiet machine.
func checkP99(t *testing.T, what string, got float64, want stallExpectation) {
	t.Helper()
	j, b := float64(stallJitter/time.Millisecond), float64(want.burst/time.Millisecond)
	lo, hi := want.p99-j-0.0005*want.p99, want.p99+j+b+want.late+0.0005*want.p99
	t.Logf("%s p(99) = %.1f ms; the stall arithmetic says %.1f ms, far from the stalls %.1f ms; accepted %.1f…%.1f",
		what, got, want.p99, want.late, lo, hi)
	if got < lo || got > hi {
		t.Errorf("%s p(99) = %.1f ms, want %.1f within [%.1f, %.1f]", what, got, want.p99, lo, hi)
	}
}

// The open model charges every arrival a stall delayed: the count over
// 100 ms and the p99 of corrected_latency follow the stall arithmetic.
// With enough VUs every arrival starts on time and waits at the server.
func TestStallOpenModel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 6 s load in real time")
	}
	e, want := runOpenModel(t, stallVUs)
	// Nothing waits for a VU, so the requests are as slow as the arrivals.
	slow, fast := e.num(t, "slow_requests", "passes"), e.num(t, "slow_requests", "fails")
	checkSlowCount(t, "http_req_duration", int(slow), want, int(slow+fast))
}

// With fewer VUs than a stall holds requests (20 < R·S = 100), the
// arrivals a stall delays wait for a VU instead of at the server: the
// requests themselves show one slow request per VU per stall, as a closed
// loop would, while corrected_latency still charges every delayed arrival
// by the same stall arithmetic.
func TestStallOpenModelFewVUs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 6 s load in real time")
	}
	const vus = 20
	e, want := runOpenModel(t, vus)
	slowReqs := int(e.num(t, "slow_requests", "passes"))
	reqs := int(e.num(t, "slow_requests", "passes") + e.num(t, "slow_requests", "fails"))
	// The first 20 arrivals of a stall (its first 100 ms) take the VUs
	// and are held ≥ 400 ms; the rest wait for a VU and are answered at
	// once. Edges and load as for the arrivals.
	raw := vus * want.stalls
	lo := raw - want.stalls*2*perStall(stallJitter)
	hi := raw + want.stalls*2*perStall(stallJitter) + want.load
	t.Logf("http_req_duration: %d of %d requests over 100 ms; %d VUs × %d stalls = %d, accepted %d…%d",
		slowReqs, reqs, vus, want.stalls, raw, lo, hi)
	if slowReqs < lo || slowReqs > hi {
		t.Errorf("%d requests over 100 ms, want %d (one per VU per stall) within [%d, %d]", slowReqs, raw, lo, hi)
	}
	// The wait for a VU is schedule_lag: the last arrivals a stall holds
	// back wait for most of it.
	if lag := e.num(t, "schedule_lag", "max"); lag < 300 {
		t.Errorf("schedule_lag max = %.1f ms, want ≥ 300 ms: arrivals waited for a VU through the stall", lag)
	}
}

// runOpenModel runs stall/open.js with vus VUs against a fresh stall
// server, checks corrected_latency against the stall arithmetic and
// returns the summary export and the arithmetic's expectation.
func runOpenModel(t *testing.T, vus int) (export, stallExpectation) {
	t.Helper()
	dir := t.TempDir()
	jsonPath, exp := filepath.Join(dir, "out.json"), filepath.Join(dir, "summary.json")
	srv := startStallServer(t)
	r := metronome(t, runSpec{args: []string{"run", "-q", "-o", "json=" + jsonPath, "--summary-export", exp,
		"-e", "TARGET=" + srv.URL(), "-e", "RATE=" + strconv.Itoa(stallRate), "-e", "DURATION=" + stallDuration.String(),
		"-e", "VUS=" + strconv.Itoa(vus), script("stall/open.js")}})
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	// The intended times are the schedule's, every 5 ms from the start;
	// metronome stamps each sample with the iteration's end, so they
	// come back to the microsecond.
	arrivals, total, lines := scheduledArrivals(t, jsonPath, time.Millisecond)
	t.Logf("%d VUs", vus)
	want := checkStalledArrivals(t, "corrected_latency points", srv, arrivals, total, burstAllowance, readRaw(t, lines, "http_req_duration"))

	e := readExport(t, exp)
	if n := int(e.num(t, "slow_arrivals", "passes") + e.num(t, "slow_arrivals", "fails")); n != total {
		t.Errorf("slow_arrivals has %d samples, want %d", n, total)
	}
	// The script's own count uses Date.now(): whole milliseconds, inside
	// the jitter allowance.
	checkSlowCount(t, "the script's slow_arrivals", int(e.num(t, "slow_arrivals", "passes")), want, total)
	checkP99(t, "corrected_latency", e.num(t, "corrected_latency", "p(99)"), want)
	t.Logf("http_req_duration p(99) = %.1f ms, max %.1f ms; schedule_lag p(99) = %.1f ms, max %.1f ms",
		e.num(t, "http_req_duration", "p(99)"), e.num(t, "http_req_duration", "max"),
		e.num(t, "schedule_lag", "p(99)"), e.num(t, "schedule_lag", "max"))
	if n := e.num(t, "iterations", "count"); n != float64(total) {
		t.Errorf("iterations = %v, want %d", n, total)
	}
	return e, want
}

// A closed loop on the same server stops sending while it is frozen: each
// stall costs each VU one slow request, so the stall shows in the max but
// not in the p99.
func TestStallClosedModel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 6 s load in real time")
	}
	const vus = 2
	dir := t.TempDir()
	jsonPath, exp := filepath.Join(dir, "out.json"), filepath.Join(dir, "summary.json")
	srv := startStallServer(t)
	r := metronome(t, runSpec{args: []string{"run", "-q", "-o", "json=" + jsonPath, "--summary-export", exp,
		"-e", "TARGET=" + srv.URL(), "-e", "DURATION=" + stallDuration.String(), "-e", "VUS=" + strconv.Itoa(vus),
		script("stall/closed.js")}})
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	// The run's span from its requests: first start to last end; and the
	// slow requests the machine's load made far from any stall.
	var first, last time.Time
	load := stallNoise(srv, burstAllowance)
	var raw rawRun
	for _, l := range readJSONOutput(t, jsonPath) {
		if l.Type != "Point" || l.Metric != "http_req_duration" {
			continue
		}
		end, err := time.Parse(time.RFC3339Nano, l.Data.Time)
		if err != nil {
			t.Fatal(err)
		}
		took := time.Duration(*l.Data.Value * float64(time.Millisecond))
		start := end.Add(-took)
		load.add(start, took)
		raw.requests = append(raw.requests, timing{start, took})
		if first.IsZero() || start.Before(first) {
			first = start
		}
		if end.After(last) {
			last = end
		}
	}
	// Stalls that began while the VUs were sending and ended before the
	// run did hold every VU once; one cut off by the end of the run may
	// hold them for less than 100 ms.
	full, partial := 0, 0
	for k := 0; ; k++ {
		a := srv.Started().Add(stallSchedule.First + time.Duration(k)*stallSchedule.Period)
		if a.After(last) {
			break
		}
		switch {
		case a.Before(first):
		case a.Add(stallSchedule.Length).Before(last):
			full++
		default:
			partial++
		}
	}
	if full < 2 {
		t.Fatalf("the run (%v to %v after the server started) met %d whole stalls; the test needs 2",
			first.Sub(srv.Started()), last.Sub(srv.Started()), full)
	}
	e := readExport(t, exp)
	slow := int(e.num(t, "slow_requests", "passes"))
	reqs := int(e.num(t, "http_reqs", "count"))
	p99, max := e.num(t, "http_req_duration", "p(99)"), e.num(t, "http_req_duration", "max")
	t.Logf("closed loop, %d VUs: %d of %d requests over 100 ms (arithmetic: %d VUs × %d stalls = %d, + up to %d for a cut-off stall); p(99) %.1f ms, max %.1f ms",
		vus, slow, reqs, vus, full, vus*full, vus*partial, p99, max)
	// Under load a VU can also be slow outside a stall; allow what the
	// run's requests far from the stalls show, as for the open model.
	load2, _ := load.bound(t, "closed loop", raw)
	if lo, hi := vus*full, vus*(full+partial)+load2; slow < lo || slow > hi {
		t.Errorf("%d requests over 100 ms, want %d (one per VU per stall) within [%d, %d]", slow, vus*full, lo, hi)
	}
	// Every VU meets a stall within its 10 ms pause of the stall's start,
	// so the longest wait is close to the whole 500 ms.
	if min := float64(stallSchedule.Length/time.Millisecond) - 10 - float64(stallJitter/time.Millisecond); max < min {
		t.Errorf("http_req_duration max = %.1f ms, want ≥ %.0f ms: a VU caught at a stall's start waits it out", max, min)
	}
	if p99 >= float64(slowCut/time.Millisecond) {
		t.Errorf("http_req_duration p(99) = %.1f ms, want < 100 ms: %d slow requests of %d are under 1%%", p99, slow, reqs)
	}
	// With no expectedInterval set, constant-vus back-fills from each VU's
	// estimated cadence: every iteration is recorded, and each stall a VU
	// waited out adds samples on top.
	if filled := e.num(t, "corrected_latency", "count") - e.num(t, "iterations", "count"); filled < float64(vus*full) {
		t.Errorf("corrected_latency has %v samples more than iterations; want back-filled samples for each of the %d stalls each VU met", filled, full)
	}
}
