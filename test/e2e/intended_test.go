package e2e

import (
	"crypto/tls"
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
	"sync/atomic"
	"testing"
	"time"

	"github.com/metronome-load/metronome/executor/schedule"
)

// scheduleCase is one schedule, written once for jslib/intended.js and
// once for the Go schedule. intended.js implements k6's arrival-rate
// arithmetic (constant-arrival-rate's truncated period,
// ramping-arrival-rate's floating-point closed form), which the Go
// schedule reproduces with K6Arithmetic.
type scheduleCase struct {
	name string
	js   map[string]any
	spec schedule.Spec
}

var scheduleCases = []scheduleCase{
	{
		// Period 1s/7 = 142857142.857… ns, truncated.
		name: "constant 7/s for 30m",
		js:   map[string]any{"rate": 7, "timeUnit": "1s", "duration": "30m"},
		spec: schedule.Spec{TimeUnit: time.Second, Rate: 7, Duration: 30 * time.Minute},
	},
	{
		name: "constant 999/min for 12m",
		js:   map[string]any{"rate": 999, "timeUnit": "1m", "duration": "12m"},
		spec: schedule.Spec{TimeUnit: time.Minute, Rate: 999, Duration: 12 * time.Minute},
	},
	{
		// Up, flat, a jump (a stage of 0s), down, up, down to 0.
		name: "ramp in seconds",
		js: map[string]any{"timeUnit": "1s", "startRate": 0, "stages": []map[string]any{
			{"duration": "5s", "target": 500}, {"duration": "4s", "target": 500}, {"duration": "0s", "target": 800},
			{"duration": "3s", "target": 100}, {"duration": "10s", "target": 900}, {"duration": "2s", "target": 0}}},
		spec: schedule.Spec{TimeUnit: time.Second, StartRate: 0, Stages: []schedule.RateStage{
			{Duration: 5 * time.Second, Target: 500}, {Duration: 4 * time.Second, Target: 500}, {Duration: 0, Target: 800},
			{Duration: 3 * time.Second, Target: 100}, {Duration: 10 * time.Second, Target: 900}, {Duration: 2 * time.Second, Target: 0}}},
	},
	{
		// Rates per minute: areas that are not whole in floating point.
		name: "ramp per minute",
		js: map[string]any{"timeUnit": "1m", "startRate": 120, "stages": []map[string]any{
			{"duration": "20s", "target": 33000}, {"duration": "10s", "target": 33000}, {"duration": "45s", "target": 6000}}},
		spec: schedule.Spec{TimeUnit: time.Minute, StartRate: 120, Stages: []schedule.RateStage{
			{Duration: 20 * time.Second, Target: 33000}, {Duration: 10 * time.Second, Target: 33000}, {Duration: 45 * time.Second, Target: 6000}}},
	},
	{
		// 11/s for 5s has an area of 55 in exact arithmetic but of
		// 54.99999… in k6's floating point: 54 arrivals.
		name: "flat ramp 11/s for 5s",
		js:   map[string]any{"timeUnit": "1s", "startRate": 11, "stages": []map[string]any{{"duration": "5s", "target": 11}}},
		spec: schedule.Spec{TimeUnit: time.Second, StartRate: 11, Stages: []schedule.RateStage{{Duration: 5 * time.Second, Target: 11}}},
	},
}

// intended.js computes, in metronome's JavaScript runtime and in k6's, the
// same intended offsets as the Go schedule with k6's arithmetic, to the
// nanosecond, for the first 10,000 arrivals (all of them in a schedule
// that holds fewer), and the same arrival count.
func TestIntendedJSScheduleMatchesGo(t *testing.T) {
	t.Parallel()
	eachRunner(t, testIntendedJSSchedule)
}

func testIntendedJSSchedule(t *testing.T, rn runner) {
	const n = 10_000
	specs := make([]map[string]any, len(scheduleCases))
	for i, c := range scheduleCases {
		specs[i] = c.js
	}
	raw, err := json.Marshal(specs)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "offsets.json")
	r := rn.run(t, runSpec{args: []string{"run", "-q", "-e", "SPECS=" + string(raw), "-e", "N=10000", "-e", "OUT=" + out,
		script("intended/schedule.js")}})
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the script's offsets: %v", err)
	}
	var got []struct {
		Count   int64   `json:"count"`
		Offsets []int64 `json:"offsets"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("the script's offsets: %v", err)
	}
	if len(got) != len(scheduleCases) {
		t.Fatalf("the script computed %d schedules, want %d", len(got), len(scheduleCases))
	}
	for k, c := range scheduleCases {
		spec := c.spec
		spec.K6Arithmetic = true
		s, err := schedule.New(spec)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		js := got[k]
		if js.Count != s.Count() {
			t.Errorf("%s: intended.js counts %d arrivals, the Go schedule %d", c.name, js.Count, s.Count())
		}
		m := min(n, s.Count())
		if len(js.Offsets) != int(min(n, js.Count)) {
			t.Fatalf("%s: the script wrote %d offsets for %d arrivals", c.name, len(js.Offsets), js.Count)
		}
		if int64(len(js.Offsets)) < m {
			t.Fatalf("%s: %d JS offsets, want %d", c.name, len(js.Offsets), m)
		}
		bad := 0
		for i := range m {
			want, ok := s.Offset(i)
			if !ok {
				t.Fatalf("%s: Go offset %d out of the schedule", c.name, i)
			}
			if time.Duration(js.Offsets[i]) != want {
				if bad++; bad <= 5 {
					t.Errorf("%s: arrival %d: intended.js %dns, Go %dns", c.name, i, js.Offsets[i], int64(want))
				}
			}
		}
		if bad > 5 {
			t.Errorf("%s: %d of %d offsets differ", c.name, bad, m)
		}
	}
}

// The example for stock k6 users, run through metronome against the stall
// server: intended.js's corrected_latency follows the same stall arithmetic
// as metronome's own open model (tolerances in stall_test.go; the
// library's clock is Date.now(), whose millisecond is inside the 10 ms
// jitter allowance).
func TestIntendedJSStall(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 6 s load in real time")
	}
	eachRunner(t, testIntendedJSStall)
}

func testIntendedJSStall(t *testing.T, rn runner) {
	dir := t.TempDir()
	jsonPath, exp := filepath.Join(dir, "out.json"), filepath.Join(dir, "summary.json")
	srv := startStallServer(t)
	r := rn.run(t, runSpec{args: []string{"run", "-q", "-o", "json=" + jsonPath, "--summary-export", exp,
		"--summary-trend-stats", "avg,min,med,max,p(90),p(95),p(99),count",
		"-e", "TARGET=" + srv.URL(), "-e", "RATE=" + strconv.Itoa(stallRate), "-e", "DURATION=" + stallDuration.String(),
		"-e", "VUS=" + strconv.Itoa(stallVUs), filepath.Join("..", "..", "examples", "intended-stock-k6.js")}})
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0 (the example's threshold corrected_latency p(99)<1000 fails when the intended "+
			"times are wrong, e.g. when exec.scenario.startTime is not the scenario's start)\nstderr:\n%s", r.code, r.stderr)
	}
	// The samples are stamped when the script adds them, a little after
	// it read Date.now() for the end: the intended times reconstructed
	// from them lie on the 5 ms grid within the jitter allowance.
	arrivals, total, lines := scheduledArrivals(t, jsonPath, stallJitter)
	want := checkStalledArrivals(t, "intended.js corrected_latency", srv, arrivals, total, burstAllowance, readRaw(t, lines, "http_req_duration"))

	e := readExport(t, exp)
	checkP99(t, "intended.js corrected_latency", e.num(t, "corrected_latency", "p(99)"), want)
	t.Logf("http_req_duration p(99) = %.1f ms; schedule_lag p(99) = %.1f ms",
		e.num(t, "http_req_duration", "p(99)"), e.num(t, "schedule_lag", "p(99)"))
	if n := e.num(t, "schedule_lag", "count"); n != float64(total) {
		t.Errorf("schedule_lag count = %v, want %d", n, total)
	}
	if n := e.num(t, "iterations", "count"); n != float64(total) {
		t.Errorf("iterations = %v, want %d", n, total)
	}
}

// k6DropsCode is the exit code of real k6 v2.2.0 on
// testdata/intended/drops.js (recorded 2026-12-01 on this project's 2-core
// machine; TestIntendedJSChargesDropped/k6 re-runs it when K6_BINARY is
// set), which also gave 100 corrected_latency samples, 20 from completed arrivals
// and 80 tagged outcome=dropped; dropped_iterations 80; iterations 100, 80
// of them tagged outcome=dropped; the drops charged 1024–1083 ms after the
// scenario start (k6 took ~0.7 ms per leftover iteration). With a request
// in each iteration (per-request corrected_latency), three runs at a load
// average of 16 completed 20, 19 and 20 arrivals, the drops charged
// 1021–1057 ms after the start.
var k6DropsRecorded = struct {
	code, completed, dropped int
}{code: 0, completed: 20, dropped: 80}

// Arrivals left over when the schedule and its grace have passed are
// charged by the first iteration that starts after that, tagged
// outcome=dropped: one sample each, charged from the moment a VU became
// free (a lower bound), in metronome as in stock k6, where teardown() may
// not read exec.instance.
//
// The arithmetic: 100 arrivals over 1 s (one every 10 ms), one VU with
// iterations of 50 ms that send a request, and no grace. The VU starts
// arrivals at 0, 50, …, 950 ms: 20 of them, each recording its request.
// The runtime's own time around each iteration (starting it, the sleep's
// timer) pushes the later ones back, and a loaded machine further, so
// the count is checked against the run's own iteration times
// (checkBackToBack). The VU is free again at the end of the last, just
// after 1 s, and charges the others then, each with that moment minus
// its intended start.
func TestIntendedJSChargesDropped(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	eachRunner(t, func(t *testing.T, rn runner) {
		_, lines := runWithJSON(t, rn, k6DropsRecorded.code, "intended/drops.js", "TARGET="+tg.URL)
		checkIntendedDrops(t, rn.name, lines)
	})
}

func checkIntendedDrops(t *testing.T, who string, lines []jsonLine) {
	t.Helper()
	arrivals := arrivalsFromJSON(t, lines)
	var done, dropped []arrival
	for _, a := range arrivals {
		switch a.outcome {
		case "":
			done = append(done, a)
		case "dropped":
			dropped = append(dropped, a)
		default:
			t.Errorf("corrected_latency sample with outcome %q", a.outcome)
		}
	}
	if len(done)+len(dropped) != 100 {
		t.Errorf("%d completed and %d dropped arrivals, want 100 in all", len(done), len(dropped))
	}
	// At most 20 in 1 s (21 with Date.now()'s millisecond). How many
	// fewer a loaded machine leaves is checked below from the run's own
	// iterations: the VU worked back to back until the schedule ended.
	if len(done) < 1 || len(done) > 21 {
		t.Errorf("%d arrivals completed, want 1–21 (one VU, 50 ms each, for 1 s)", len(done))
	}
	if d := len(done) - k6DropsRecorded.completed; d < -2 || d > 1 {
		t.Logf("%s completed %d arrivals, k6 v2.2.0 %d when recorded", who, len(done), k6DropsRecorded.completed)
	}
	var iterations, iterDropped, droppedIters float64
	for _, l := range lines {
		if l.Type != "Point" {
			continue
		}
		switch l.Metric {
		case "iterations":
			iterations += *l.Data.Value
			if l.Data.Tags["outcome"] == "dropped" {
				iterDropped += *l.Data.Value
			}
		case "dropped_iterations":
			droppedIters += *l.Data.Value
		}
	}
	if iterations != 100 || iterDropped != float64(len(dropped)) || droppedIters != float64(len(dropped)) {
		t.Errorf("iterations %v (%v tagged outcome=dropped), dropped_iterations %v; want 100, %d and %d",
			iterations, iterDropped, droppedIters, len(dropped), len(dropped))
	}
	if len(done) == 0 || len(dropped) == 0 {
		t.FailNow()
	}
	// A completed arrival's sample less its value is its intended start,
	// late by the time from the iteration's start to sending its request
	// and by the moment the runtime stamped the sample after the answer
	// (a VU's first request takes a few ms more: the library's first
	// calls); the median over them, less each one's place on the 10 ms
	// grid, is the scenario's start. Each drop is charged from the moment
	// the VU became free: after the schedule's 1 s, and at most one
	// iteration (50 ms) later, plus 150 ms for a loaded machine and for
	// k6's cost per leftover iteration. Its intended start, rebuilt from
	// the sample, lies on the 10 ms grid: within Date.now()'s millisecond,
	// and up to 10 ms late, because the runtime stamps the sample a little
	// after the script read the clock.
	ts := make([]time.Time, len(done))
	for i, a := range done {
		ts[i] = a.intended
	}
	grid, _ := onGrid(ts, 10*time.Millisecond)
	start := grid[0]
	var first, last time.Duration
	for i, a := range dropped {
		want := start.Add(time.Duration(len(done)+i) * 10 * time.Millisecond)
		if shift := a.intended.Sub(want); shift < -2*time.Millisecond || shift > 10*time.Millisecond {
			t.Errorf("dropped arrival %d: intended start rebuilt %v off its schedule", len(done)+i, shift)
		}
		at := a.intended.Add(a.latency).Sub(start)
		if at < 998*time.Millisecond || at > 1200*time.Millisecond {
			t.Errorf("dropped arrival %d charged %v at %v after the start, want between 1 s and 1.2 s",
				len(done)+i, a.latency, at)
		}
		if i == 0 || at < first {
			first = at
		}
		last = max(last, at)
	}
	t.Logf("%s: %d arrivals completed, %d charged as dropped between %v and %v after the start",
		who, len(done), len(dropped), first.Round(time.Millisecond), last.Round(time.Millisecond))
	checkBackToBack(t, lines, start, len(done))
}

// checkBackToBack checks that drops.js's one VU, always behind its
// schedule, worked back to back until the schedule's 1 s ended and no
// longer: the count of completed arrivals follows from the run's own
// iteration times, however a loaded machine stretched them. Each
// completed iteration's iteration_duration point gives its end (the
// point's time) and start (less its value); the largest pause between
// two of them is how long this run took to start an arrival that was
// due, so the VU must have been busy until within that pause of 1 s, and
// the last completed iteration must have started before 1 s. The median
// pause is held to the run's median timer lateness.
func checkBackToBack(t *testing.T, lines []jsonLine, start time.Time, done int) {
	t.Helper()
	type span struct{ from, to time.Time }
	var iters []span
	for _, l := range lines {
		if l.Type != "Point" || l.Metric != "iteration_duration" || l.Data.Tags["outcome"] == "dropped" {
			continue
		}
		end, err := time.Parse(time.RFC3339Nano, l.Data.Time)
		if err != nil {
			t.Fatalf("iteration_duration point time %q: %v", l.Data.Time, err)
		}
		iters = append(iters, span{end.Add(-time.Duration(*l.Data.Value * float64(time.Millisecond))), end})
	}
	if len(iters) != done {
		t.Fatalf("%d completed iteration_duration points for %d completed arrivals", len(iters), done)
	}
	slices.SortFunc(iters, func(a, b span) int { return a.from.Compare(b.from) })
	// Point times and Date.now() are whole milliseconds in k6's output.
	const stamp = 2 * time.Millisecond
	var pauses, overshoots []time.Duration
	for i, it := range iters {
		// An iteration sleeps until 50 ms after its start: what it ran
		// over is the machine's timer lateness in this run.
		overshoots = append(overshoots, it.to.Sub(it.from)-50*time.Millisecond)
		if i > 0 {
			pauses = append(pauses, it.from.Sub(iters[i-1].to))
		}
	}
	slices.Sort(pauses)
	slices.Sort(overshoots)
	pause := slices.Max(append(pauses, 0))
	// The VU starts the next due arrival as soon as it is free: a typical
	// pause is no longer than a typical timer lateness (a load spike moves
	// one pause, not the median), so a dispatch that idles between
	// iterations fails here rather than only showing as fewer arrivals.
	if len(pauses) > 0 {
		if med, over := pauses[len(pauses)/2], overshoots[len(overshoots)/2]; med > max(over, 0)+stallJitter {
			t.Errorf("the median pause between iterations is %v, above the median timer lateness %v plus %v: the VU idled while arrivals were due",
				med, over, stallJitter)
		}
	}
	lastFrom, lastTo := iters[len(iters)-1].from.Sub(start), iters[len(iters)-1].to.Sub(start)
	t.Logf("%d iterations back to back, the longest pause %v, the median timer lateness %v; the last ran from %v to %v after the start",
		done, pause, overshoots[len(overshoots)/2], lastFrom.Round(time.Millisecond), lastTo.Round(time.Millisecond))
	if lastFrom >= time.Second+stamp {
		t.Errorf("the last completed iteration started %v after the start, after the schedule's 1 s", lastFrom)
	}
	if lastTo+pause+stamp < time.Second {
		t.Errorf("the VU was free %v after the start, %v before the schedule ended, while arrivals were due (the longest pause between iterations was %v)",
			lastTo, time.Second-lastTo, pause)
	}
}

// The schedule counts from exec.scenario.startTime, which is when the
// scenario started, after setup(): a setup() of 1 s makes no arrival late.
func TestIntendedJSAfterSetup(t *testing.T) {
	t.Parallel()
	eachRunner(t, func(t *testing.T, rn runner) {
		tg := newTarget(t)
		exp := filepath.Join(t.TempDir(), "summary.json")
		r := rn.run(t, runSpec{args: []string{"run", "-q", "--summary-export", exp, "-e", "TARGET=" + tg.URL, script("intended/setup.js")}})
		if r.code != 0 {
			t.Fatalf("%s exited %d, want 0\nstderr:\n%s", rn.name, r.code, r.stderr)
		}
		checkIntendedAfterSetup(t, readExport(t, exp))
	})
}

func checkIntendedAfterSetup(t *testing.T, e export) {
	if n := e.num(t, "iterations", "count"); n != 50 {
		t.Errorf("iterations = %v, want 50", n)
	}
	// A request to an idle loopback server takes about a millisecond;
	// 100 ms is far above any jitter and far below setup's 1 s.
	if lag := e.num(t, "schedule_lag", "max"); lag > 100 {
		t.Errorf("schedule_lag max = %.1f ms, want < 100 ms: the schedule must start with the scenario, after setup() (1 s)", lag)
	}
}

// thinkTime is the sleep of testdata/intended/think.js between its two
// requests.
const thinkTime = 50 * time.Millisecond

// k6ThinkRecorded is what real k6 v2.2.0 gave for testdata/intended/think.js
// against the stall server (TestIntendedJSThinkTime/k6 re-runs it when k6
// is present): the p99 of corrected_latency over both requests, in ms.
// Recorded 2026-12-01 on this project's 2-core machine at a load average
// of 4: 479.3 ms (arithmetic 467.6 ms), first requests over 100 ms 165
// (arithmetic 160), second requests over 100 ms 20 (20), at or over the
// 50 ms sleep 24 (20). Three other runs at load averages of 5–8 gave
// 476.7, 477.7 and 481.1 ms; at 15–16, 477.0–489.1 ms; above 18, k6's
// VUs started late (schedule_lag p99 200–400 ms) and its p99 rose to
// 500–750 ms.
var k6ThinkRecorded = struct{ p99 float64 }{p99: 479.3}

// intended.js records corrected_latency per request, with the request's
// own time plus its iteration's lag and none of the script's sleep(): the
// same numbers as metronome's own intended-arrival-rate executor gives
// for the same iteration. think.js sends two requests per arrival with
// 50 ms of sleep between them, against the stall server: the arithmetic
// of stall_test.go, request by request, says what each is charged; the
// p99 over both requests is within 5 % of metronome's own and of real
// k6 v2.2.0's. The 5 % is issue 22's requirement, not a tolerance from
// the arithmetic: on this 2-core machine the three agreed within 2 % at
// load averages of 4–8 and mostly within 5 % up to about 16; above that
// the JavaScript timers that start intended.js's iterations run late (in
// k6 more than in metronome) and the comparison fails together with the
// stall tolerances.
func TestIntendedJSThinkTime(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 6 s loads in real time")
	}
	eachRunner(t, func(t *testing.T, rn runner) {
		// Each run is held to the stall arithmetic request by request
		// (runThink); the 5 % between runs is not arithmetic but a load
		// spike in one run moves its p99 alone, so a comparison that
		// misses is made again with fresh runs, up to three times. A
		// per-iteration measure (sleep in the value) misses by far more,
		// every time.
		var misses []string
		for attempt := 1; attempt <= 3; attempt++ {
			got := runThink(t, rn, false)
			miss := within5(t, rn.name+" intended.js", got, "k6 v2.2.0 intended.js (recorded)", k6ThinkRecorded.p99)
			if miss == "" && rn.name == "metronome" {
				miss = within5(t, "metronome intended.js", got, "metronome intended-arrival-rate", runThink(t, rn, true))
			}
			if miss == "" {
				return
			}
			misses = append(misses, fmt.Sprintf("attempt %d: %s", attempt, miss))
		}
		t.Errorf("three attempts missed:\n%s", strings.Join(misses, "\n"))
	})
}

// within5 says how got misses being within 5 % of want, or "" when it is.
func within5(t *testing.T, what string, got float64, against string, want float64) string {
	t.Helper()
	t.Logf("%s corrected p(99) = %.1f ms, %s %.1f ms (%+.1f %%)", what, got, against, want, 100*(got-want)/want)
	if math.Abs(got-want) > 0.05*want {
		return fmt.Sprintf("%s corrected p(99) = %.1f ms, want within 5 %% of %s: %.1f ms", what, got, against, want)
	}
	return ""
}

// runThink runs think.js (through metronome's own executor when native
// is set) against a fresh stall server, holds each request's
// corrected_latency to the stall arithmetic and returns its p(99) over
// both requests, in ms.
func runThink(t *testing.T, rn runner, native bool) float64 {
	t.Helper()
	dir := t.TempDir()
	jsonPath, exp := filepath.Join(dir, "out.json"), filepath.Join(dir, "summary.json")
	srv := startStallServer(t)
	nativeEnv := "0"
	if native {
		nativeEnv = "1"
	}
	r := rn.run(t, runSpec{args: []string{"run", "-q", "-o", "json=" + jsonPath, "--summary-export", exp,
		"-e", "TARGET=" + srv.URL(), "-e", "RATE=" + strconv.Itoa(stallRate), "-e", "DURATION=" + stallDuration.String(),
		"-e", "VUS=" + strconv.Itoa(stallVUs), "-e", "NATIVE=" + nativeEnv, script("intended/think.js")}})
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	lines := readJSONOutput(t, jsonPath)
	total := int(stallRate * stallDuration / time.Second)
	first, second := arrivalsNamed(t, lines, "first"), arrivalsNamed(t, lines, "second")
	if len(first) != total || len(second) != total {
		t.Fatalf("%d first and %d second requests recorded corrected_latency, want %d each", len(first), len(second), total)
	}
	if n := len(arrivalsNamed(t, lines, "")); n != 2*total {
		t.Errorf("%d corrected_latency samples, want one per request: %d", n, 2*total)
	}
	// The iterations start on the 5 ms grid, and the first request is
	// sent as its iteration starts: its point's time less its value is
	// the arrival's intended time, give or take the moment the runtime
	// took to stamp the point after the answer.
	period := time.Second / stallRate
	starts := intendedStarts(t, lines)
	if len(starts) != total {
		t.Errorf("%d iterations recorded schedule_lag, want %d", len(starts), total)
	}
	if _, dev := onGrid(starts, period); dev > stallJitter {
		t.Errorf("the iterations' intended starts stray up to %v from a 5 ms grid (tolerance %v)", dev, stallJitter)
	}
	if dev := onSchedule(first, period); dev > stallJitter {
		t.Logf("the first requests' points stray up to %v from the grid", dev.Round(time.Microsecond))
	}
	raw := readRaw(t, lines, "http_req_duration")
	want1 := checkStalledArrivals(t, "first request", srv, first, total, burstAllowance, raw)

	// The second request leaves when the first was answered (at the end
	// of the stall it met, or at once) plus the sleep, and meets the rest
	// of the stall it is sent into, if any. The sleep is in no value: a
	// per-iteration measure would put every second request over 50 ms.
	ideal := make([]float64, 0, 2*total)
	want2 := stallExpectation{stalls: want1.stalls, burst: burstAllowance}
	overThink, wantOverThink := 0, 0
	for _, a := range first {
		d1 := idealLatency(srv, a.intended)
		d2 := idealLatency(srv, a.intended.Add(d1+thinkTime))
		ideal = append(ideal, ms(d1), ms(d2))
		if d2 > slowCut {
			want2.slow++
		}
		if d2 >= thinkTime {
			wantOverThink++
		}
	}
	slow2 := 0
	load := stallNoise(srv, burstAllowance)
	for i, a := range second {
		if a.latency > slowCut {
			slow2++
		}
		if a.latency >= thinkTime {
			overThink++
		}
		// Sent when the first was answered, after the sleep.
		d1 := idealLatency(srv, first[i].intended)
		load.add(first[i].intended.Add(d1+thinkTime), a.latency)
	}
	want2.load, _ = load.bound(t, "second request", raw)
	checkSlowCount(t, "second request", slow2, want2, total)
	// A loaded machine delays more requests past 50 ms than past 100 ms:
	// 10 % of them are allowed on top of the arithmetic and its edges.
	// Were the sleep counted, all of them would be over.
	hi := wantOverThink + want1.stalls*(perStall(stallJitter)+perStall(stallJitter+burstAllowance)) + total/10
	t.Logf("second request: %d of %d at or over the 50 ms sleep; the stall arithmetic says %d, accepted up to %d",
		overThink, total, wantOverThink, hi)
	if overThink > hi {
		t.Errorf("%d of %d second requests were charged 50 ms or more, want at most %d: the sleep before them is not latency",
			overThink, total, hi)
	}

	slices.Sort(ideal)
	want := stallExpectation{p99: k6Percentile(ideal, 0.99), burst: burstAllowance, late: want1.late}
	e := readExport(t, exp)
	p99 := e.num(t, "corrected_latency", "p(99)")
	checkP99(t, "corrected_latency over both requests", p99, want)
	t.Logf("http_req_duration p(99) = %.1f ms; schedule_lag p(99) = %.1f ms",
		e.num(t, "http_req_duration", "p(99)"), e.num(t, "schedule_lag", "p(99)"))
	return p99
}

// intendedStarts returns the intended starts of the iterations of a JSON
// output, sorted: exact from metronome's own samples, else from
// intended.js's schedule_lag points (iterationLags).
func intendedStarts(t *testing.T, lines []jsonLine) []time.Time {
	t.Helper()
	lags, _ := iterationLags(t, lines)
	return starts(lags)
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Every request sent through intended.js's http records one
// corrected_latency sample with exactly the tags the runtime put on its
// http_req_duration (k6's, in k6; metronome's, in metronome), worth the
// request's own time (http_req_duration plus the wait for a connection)
// plus the iteration's schedule_lag. The exceptions are the ones the
// library documents: the hop a redirect adds records nothing (k6 records
// a duration for it), nor does a request that never reached the network.
func TestIntendedJSRequestTags(t *testing.T) {
	t.Parallel()
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, "/?redirected", http.StatusFound)
		case "/missing":
			http.NotFound(w, r)
		default:
			_, _ = w.Write([]byte("ok\n"))
		}
	})
	plain, tls := httptest.NewServer(handler), httptest.NewTLSServer(handler)
	t.Cleanup(plain.Close)
	t.Cleanup(tls.Close)
	eachRunner(t, func(t *testing.T, rn runner) {
		// k6's default system tags, then a few, with ip, which is off by
		// default.
		for _, tags := range []string{"", "name,url,method,status,ip,scenario,tls_version"} {
			_, lines := runWithJSON(t, rn, 0, "intended/tags.js", "TARGET="+plain.URL, "TLS_TARGET="+tls.URL, "SYSTEM_TAGS="+tags)
			checkRequestTags(t, lines)
		}
	})
}

// pointsByTags groups the JSON output's points of one arrival: [metric][tag
// set, as JSON with sorted keys] is the metric's values with those tags, in
// the order they were recorded; lag is the one schedule_lag sample, and t
// fails unless there is exactly one.
func pointsByTags(t *testing.T, lines []jsonLine) (points map[string]map[string][]float64, lag float64) {
	t.Helper()
	points = map[string]map[string][]float64{}
	var lags []float64
	for _, l := range lines {
		if l.Type != "Point" {
			continue
		}
		if l.Metric == "schedule_lag" {
			lags = append(lags, *l.Data.Value)
			continue
		}
		k, err := json.Marshal(l.Data.Tags) // sorted keys
		if err != nil {
			t.Fatal(err)
		}
		if points[l.Metric] == nil {
			points[l.Metric] = map[string][]float64{}
		}
		points[l.Metric][string(k)] = append(points[l.Metric][string(k)], *l.Data.Value)
	}
	if len(lags) != 1 {
		t.Fatalf("%d schedule_lag samples, want 1 (one arrival)", len(lags))
	}
	return points, lags[0]
}

// requestsInTagsJS is the number of requests tags.js sends that reach the
// network, counting a redirected one once.
const requestsInTagsJS = 23

func checkRequestTags(t *testing.T, lines []jsonLine) {
	t.Helper()
	values, lag := pointsByTags(t, lines)
	corrected, duration := values["corrected_latency"], values["http_req_duration"]
	hops := 0
	for k, v := range duration {
		if strings.Contains(k, `"status":"3`) {
			hops += len(v)
			continue
		}
		if len(v) != 1 {
			t.Errorf("tags.js sent %d requests with the tags %s; each should be unique", len(v), k)
		}
		if _, ok := corrected[k]; !ok {
			t.Errorf("http_req_duration %s has no corrected_latency with the same tags", k)
		}
	}
	if hops != 1 {
		t.Errorf("%d redirect hops recorded http_req_duration, want 1", hops)
	}
	if len(corrected) != requestsInTagsJS {
		t.Errorf("corrected_latency has %d tag sets, want one per request that reached the network: %d", len(corrected), requestsInTagsJS)
	}
	for k, v := range corrected {
		d, ok := duration[k]
		if !ok {
			t.Errorf("corrected_latency %s has no http_req_duration with the same tags", k)
			continue
		}
		if len(v) != 1 || len(d) != 1 {
			t.Errorf("%s: %d corrected_latency and %d http_req_duration samples, want 1 each", k, len(v), len(d))
			continue
		}
		wait := max(values["http_req_blocked"][k][0], values["http_req_connecting"][k][0]+values["http_req_tls_handshaking"][k][0])
		if want := d[0] + wait + lag; math.Abs(v[0]-want) > 1e-6 {
			t.Errorf("%s: corrected_latency %.6f ms, want http_req_duration %.6f + wait for a connection %.6f + lag %.0f = %.6f",
				k, v[0], d[0], wait, lag, want)
		}
	}
}

// intended.js keeps the tags of a VU's responses to plain requests by URL
// and reuses them only for a response they fit: shapes.js requests the
// same URLs twice over with another method, other params, a status that
// changes, another response callback, another TLS version and in a batch,
// and each
// tag set must have as many corrected_latency samples as http_req_duration
// ones, each worth the request's own time plus the lag.
func TestIntendedJSRepeatedRequestTags(t *testing.T) {
	t.Parallel()
	var flips, handshakes atomic.Int64
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			http.NotFound(w, r)
		case "/flip":
			// Two statuses that are no error, so that k6 sets no
			// error_code: the tags kept for one must not serve the other.
			if flips.Add(1)%2 == 0 {
				w.WriteHeader(http.StatusCreated)
			}
		default:
			// Each HTTPS request comes on a new connection, whose
			// handshake alternates TLS 1.2 and 1.3.
			if r.TLS != nil {
				w.Header().Set("Connection", "close")
			}
			_, _ = w.Write([]byte("ok\n"))
		}
	})
	plain := httptest.NewServer(handler)
	t.Cleanup(plain.Close)
	tlsSrv := httptest.NewUnstartedServer(handler)
	tlsSrv.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		c := tlsSrv.TLS.Clone()
		c.GetConfigForClient = nil
		c.MaxVersion = tls.VersionTLS13
		if handshakes.Add(1)%2 == 0 {
			c.MaxVersion = tls.VersionTLS12
		}
		return c, nil
	}}
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	eachRunner(t, func(t *testing.T, rn runner) {
		for _, tags := range []string{"", "name,url,method,status,ip,tls_version,expected_response"} {
			_, lines := runWithJSON(t, rn, 0, "intended/shapes.js", "TARGET="+plain.URL, "TLS_TARGET="+tlsSrv.URL, "SYSTEM_TAGS="+tags)
			checkRepeatedRequestTags(t, lines)
		}
	})
}

// requestsInShapesJS is the number of requests shapes.js sends.
const requestsInShapesJS = 2*12 + 4

func checkRepeatedRequestTags(t *testing.T, lines []jsonLine) {
	t.Helper()
	points, lag := pointsByTags(t, lines)
	corrected, duration := points["corrected_latency"], points["http_req_duration"]
	n := 0
	for k, d := range duration {
		n += len(d)
		c := corrected[k]
		if len(c) != len(d) {
			t.Errorf("%s: %d corrected_latency and %d http_req_duration samples, want as many", k, len(c), len(d))
			continue
		}
		for i := range d {
			wait := max(points["http_req_blocked"][k][i], points["http_req_connecting"][k][i]+points["http_req_tls_handshaking"][k][i])
			if want := d[i] + wait + lag; math.Abs(c[i]-want) > 1e-6 {
				t.Errorf("%s, request %d: corrected_latency %.6f ms, want http_req_duration %.6f + wait for a connection %.6f + lag %.0f = %.6f",
					k, i, c[i], d[i], wait, lag, want)
			}
		}
	}
	for k, c := range corrected {
		if _, ok := duration[k]; !ok {
			t.Errorf("corrected_latency %s (%d samples) has no http_req_duration with the same tags", k, len(c))
		}
	}
	if n != requestsInShapesJS {
		t.Errorf("%d http_req_duration samples, want one per request of shapes.js: %d", n, requestsInShapesJS)
	}
}

// The previous release's usage, wrap() around requests sent through
// k6/http, keeps its per-iteration corrected_latency for one release: 10
// arrivals, each charged end − intended start with its 50 ms of sleep,
// and one warning that says what to change.
func TestIntendedJSLegacyIteration(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	eachRunner(t, func(t *testing.T, rn runner) {
		r, lines := runWithJSON(t, rn, 0, "intended/legacy.js", "TARGET="+tg.URL)
		arrivals := arrivalsFromJSON(t, lines)
		if len(arrivals) != 10 {
			t.Errorf("%d corrected_latency samples, want one per arrival: 10", len(arrivals))
		}
		for i, a := range arrivals {
			if a.latency < thinkTime {
				t.Errorf("arrival %d charged %v, want at least the iteration's 50 ms of sleep", i, a.latency)
			}
		}
		if n := strings.Count(r.stderr, "the per-iteration fallback goes in the next release"); n != 1 {
			t.Errorf("the fallback warning appears %d times, want once\nstderr:\n%s", n, r.stderr)
		}
	})
}

// A request sent from a callback of a wrapped iteration, after its
// function returned, records corrected_latency like one sent from the
// function, and does not stop the test as a request of a function that
// wrap() does not pace does.
func TestIntendedJSCallback(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	eachRunner(t, func(t *testing.T, rn runner) {
		_, lines := runWithJSON(t, rn, 0, "intended/callback.js", "TARGET="+tg.URL)
		if n := len(arrivalsNamed(t, lines, "then")); n != 2 {
			t.Errorf("%d corrected_latency samples tagged name=then, want one per arrival: 2", n)
		}
	})
}

// A user's mistakes with intended.js stop the test with one sentence that
// says what to change: a scenario of intendedScenario() whose function
// wrap() does not pace (exec.test.abort: exit code 108), and a response
// callback made by k6/http, whose statuses the library cannot read (an
// init error, exit code 107, in setResponseCallback; an abort, 108, in a
// request's params). Exit codes as k6 v2.2.0 gave them.
func TestIntendedJSMisuse(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	cases := []struct {
		script, where string
		code          int
		says          string
	}{
		{"intended/unwrapped.js", "", 108, "was made by intendedScenario() but runs a function that wrap() does not pace"},
		{"intended/foreign_callback.js", "init", 107, "setResponseCallback got a response callback that intended.js did not make"},
		{"intended/foreign_callback.js", "params", 108, "params.responseCallback got a response callback that intended.js did not make"},
	}
	eachRunner(t, func(t *testing.T, rn runner) {
		for _, c := range cases {
			r := rn.run(t, runSpec{args: []string{"run", "-q", "-e", "TARGET=" + tg.URL, "-e", "WHERE=" + c.where, script(c.script)}})
			if r.code != c.code || !strings.Contains(r.stderr, c.says) {
				t.Errorf("%s %s: %s exited %d, want %d and a message with %q\nstderr:\n%s",
					c.script, c.where, rn.name, r.code, c.code, c.says, r.stderr)
			}
		}
	})
	// Each runner sends the first request of the unwrapped scenario and
	// of the params case, and no more.
	if n := tg.requests.Load(); n > 4 {
		t.Errorf("the target served %d requests; each misuse should stop the test at its first", n)
	}
}

// runWithJSON runs a script of testdata through rn with a JSON output and
// the environment variables env (NAME=VALUE), fails the test unless it
// exits with code, and returns the run and the output's lines.
func runWithJSON(t *testing.T, rn runner, code int, name string, env ...string) (run, []jsonLine) {
	t.Helper()
	jsonPath := filepath.Join(t.TempDir(), "out.json")
	args := []string{"run", "-q", "-o", "json=" + jsonPath}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	r := rn.run(t, runSpec{args: append(args, script(name))})
	if r.code != code {
		t.Fatalf("%s exited %d, want %d\nstderr:\n%s", rn.name, r.code, code, r.stderr)
	}
	return r, readJSONOutput(t, jsonPath)
}
