package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/metronome-load/metronome/executor"
)

// scheduleCase is one schedule, written once for jslib/intended.js and
// once for the Go schedule. intended.js implements k6's arrival-rate
// arithmetic (constant-arrival-rate's truncated period,
// ramping-arrival-rate's floating-point closed form), which the Go
// schedule reproduces with K6Arithmetic.
type scheduleCase struct {
	name string
	js   map[string]any
	spec executor.ScheduleSpec
}

var scheduleCases = []scheduleCase{
	{
		// Period 1s/7 = 142857142.857… ns, truncated.
		name: "constant 7/s for 30m",
		js:   map[string]any{"rate": 7, "timeUnit": "1s", "duration": "30m"},
		spec: executor.ScheduleSpec{TimeUnit: time.Second, Rate: 7, Duration: 30 * time.Minute},
	},
	{
		name: "constant 999/min for 12m",
		js:   map[string]any{"rate": 999, "timeUnit": "1m", "duration": "12m"},
		spec: executor.ScheduleSpec{TimeUnit: time.Minute, Rate: 999, Duration: 12 * time.Minute},
	},
	{
		// Up, flat, a jump (a stage of 0s), down, up, down to 0.
		name: "ramp in seconds",
		js: map[string]any{"timeUnit": "1s", "startRate": 0, "stages": []map[string]any{
			{"duration": "5s", "target": 500}, {"duration": "4s", "target": 500}, {"duration": "0s", "target": 800},
			{"duration": "3s", "target": 100}, {"duration": "10s", "target": 900}, {"duration": "2s", "target": 0}}},
		spec: executor.ScheduleSpec{TimeUnit: time.Second, StartRate: 0, Stages: []executor.RateStage{
			{Duration: 5 * time.Second, Target: 500}, {Duration: 4 * time.Second, Target: 500}, {Duration: 0, Target: 800},
			{Duration: 3 * time.Second, Target: 100}, {Duration: 10 * time.Second, Target: 900}, {Duration: 2 * time.Second, Target: 0}}},
	},
	{
		// Rates per minute: areas that are not whole in floating point.
		name: "ramp per minute",
		js: map[string]any{"timeUnit": "1m", "startRate": 120, "stages": []map[string]any{
			{"duration": "20s", "target": 33000}, {"duration": "10s", "target": 33000}, {"duration": "45s", "target": 6000}}},
		spec: executor.ScheduleSpec{TimeUnit: time.Minute, StartRate: 120, Stages: []executor.RateStage{
			{Duration: 20 * time.Second, Target: 33000}, {Duration: 10 * time.Second, Target: 33000}, {Duration: 45 * time.Second, Target: 6000}}},
	},
	{
		// 11/s for 5s has an area of 55 in exact arithmetic but of
		// 54.99999… in k6's floating point: 54 arrivals.
		name: "flat ramp 11/s for 5s",
		js:   map[string]any{"timeUnit": "1s", "startRate": 11, "stages": []map[string]any{{"duration": "5s", "target": 11}}},
		spec: executor.ScheduleSpec{TimeUnit: time.Second, StartRate: 11, Stages: []executor.RateStage{{Duration: 5 * time.Second, Target: 11}}},
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
		s, err := executor.NewSchedule(spec)
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
		"-e", "VUS=" + strconv.Itoa(stallVUs), filepath.Join("..", "examples", "intended-stock-k6.js")}})
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0 (the example's threshold corrected_latency p(99)<1000 fails when the intended "+
			"times are wrong, e.g. when exec.scenario.startTime is not the scenario's start)\nstderr:\n%s", r.code, r.stderr)
	}
	// The samples are stamped when the script adds them, a little after
	// it read Date.now() for the end: the intended times reconstructed
	// from them lie on the 5 ms grid within the jitter allowance.
	arrivals, total := scheduledArrivals(t, jsonPath, stallJitter)
	want := checkStalledArrivals(t, "intended.js corrected_latency", srv, arrivals, total, burstAllowance)

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
// scenario start (k6 took ~0.7 ms per leftover iteration).
const k6DropsCode = 0

// Arrivals left over when the schedule and its grace have passed are
// charged by the first iteration that starts after that, tagged
// outcome=dropped: one sample each, charged from the moment a VU became
// free (a lower bound), in metronome as in stock k6, where teardown() may
// not read exec.instance.
//
// The arithmetic: 100 arrivals over 1 s (one every 10 ms), one VU with
// 50 ms iterations and no grace. The VU takes arrivals one after the
// other, each when the one before ended, for as long as it becomes free
// before the schedule's end at 1 s: at most 20 (it is free at 50 ms, 100
// ms, … at the earliest), fewer when iterations run long on a loaded
// machine. The first time it becomes free after 1 s it charges all the
// others, each with that moment minus its intended start.
func TestIntendedJSChargesDropped(t *testing.T) {
	t.Parallel()
	eachRunner(t, func(t *testing.T, rn runner) {
		jsonPath := filepath.Join(t.TempDir(), "out.json")
		r := rn.run(t, runSpec{args: []string{"run", "-q", "-o", "json=" + jsonPath, script("intended/drops.js")}})
		if r.code != k6DropsCode {
			t.Fatalf("%s exited %d, want %d as k6 did\nstderr:\n%s", rn.name, r.code, k6DropsCode, r.stderr)
		}
		checkIntendedDrops(t, rn.name, readJSONOutput(t, jsonPath))
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
	if len(done) > 21 {
		t.Errorf("%d arrivals completed; one VU with 50 ms iterations can take at most 20 in 1 s (21 with Date.now()'s millisecond)", len(done))
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
	// Arrival 0 started on time, so its intended start is the scenario's
	// start (to Date.now()'s millisecond). A sample's timestamp, the end
	// of its iteration or the moment of its charge, trails the moment the
	// script read the clock by up to stamp (the runtime stamps it a little
	// later); so does the intended start rebuilt from it. Measured from
	// arrival 0's, itself rebuilt, a rebuilt intended start lies on the
	// 10 ms grid within stamp and Date.now()'s millisecond either way.
	const stamp = 10 * time.Millisecond
	start := done[0].intended
	end := func(a arrival) time.Duration { return a.intended.Add(a.latency).Sub(start) }
	// The VU took the last completed arrival while the schedule ran, and
	// was free again only after it: it stopped taking arrivals exactly at
	// the schedule's end, whatever the machine's speed.
	free := end(done[len(done)-1])
	if len(done) > 1 {
		if took := end(done[len(done)-2]); took >= time.Second+stamp {
			t.Errorf("the VU took its last arrival when it became free at %v, after the schedule's end (1 s)", took)
		}
	}
	if free < time.Second-2*time.Millisecond {
		t.Errorf("the VU was free at %v, before the schedule's end (1 s), yet took no more arrivals", free)
	}
	// Each drop is charged when the VU became free after the schedule's
	// end, and at most 200 ms later: the leftover iterations that charge
	// them one by one take well under a millisecond each (k6 ~0.7 ms).
	var first, last time.Duration
	for i, a := range dropped {
		want := start.Add(time.Duration(len(done)+i) * 10 * time.Millisecond)
		if shift := a.intended.Sub(want); shift.Abs() > stamp+2*time.Millisecond {
			t.Errorf("dropped arrival %d: intended start rebuilt %v off its schedule", len(done)+i, shift)
		}
		at := end(a)
		if at < free-stamp || at > free+200*time.Millisecond {
			t.Errorf("dropped arrival %d charged %v at %v after the start, want between %v, when the VU became free, and 200 ms later",
				len(done)+i, a.latency, at, free)
		}
		if i == 0 || at < first {
			first = at
		}
		last = max(last, at)
	}
	t.Logf("%s: %d arrivals completed, %d charged as dropped between %v and %v after the start",
		who, len(done), len(dropped), first.Round(time.Millisecond), last.Round(time.Millisecond))
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
