package e2e

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// per-vu-iterations with vus 3 and iterations 2 and an empty iteration:
// k6 v2.2.0 logs __VU 1, 2 and 3, each with __ITER 0 and 1 (recorded
// 2026-12-01). metronome used to run all six on one VU (__ITER 0–5).
func TestPerVUIterationsPairs(t *testing.T) {
	t.Parallel()
	k6Recorded := map[string][]string{"1": {"0", "1"}, "2": {"0", "1"}, "3": {"0", "1"}}
	pair := regexp.MustCompile(`pair vu=(\d+) iter=(\d+)`)
	eachRunner(t, func(t *testing.T, rn runner) {
		r := rn.run(t, runSpec{args: []string{"run", "-q", script("parity/per_vu_pairs.js")}})
		if r.code != 0 {
			t.Fatalf("%s exited %d\nstderr:\n%s", rn.name, r.code, r.stderr)
		}
		got := map[string][]string{}
		for _, m := range pair.FindAllStringSubmatch(r.stderr, -1) {
			got[m[1]] = append(got[m[1]], m[2])
		}
		for _, iters := range got {
			slices.Sort(iters)
		}
		if fmt.Sprint(got) != fmt.Sprint(k6Recorded) {
			t.Errorf("%s ran __VU → __ITER %v; k6 v2.2.0 ran %v", rn.name, got, k6Recorded)
		}
	})
}

// k6 drops an arrival only when no VU is idle at its time: with 5 idle VUs
// and an empty iteration, k6 v2.2.0 dropped nothing (recorded 2026-12-01
// at 10/s; at 2/s for 2 s constant-arrival-rate ran 4 or 5 iterations,
// ramping-arrival-rate 4). metronome used to drop the arrival at t = 0.
//
// The counts are checked against each program's own schedule, by
// arithmetic. At 2/s for 2 s, constant-arrival-rate's arrivals are due at
// 0, 0.5, 1 and 1.5 s, and k6 adds one at exactly t = 2 s; k6's
// ramping-arrival-rate places them where the rate's area reaches 1, 2, …:
// 0.5, 1, 1.5 and 2 s. k6 waits for each on a timer in a select that also
// returns when the regular duration ends, so the arrival due at exactly
// the duration races that end: when both are ready Go's select picks one
// at random, which a loaded machine makes common (under -race on 2 cores
// k6 once ran 9 of its 10 at 10/s). So k6 runs the arrivals before the
// end, and that one or not. An arrival before the end is lost only if k6
// is more than 1/rate = 500 ms late. metronome's schedule has no such
// race: it runs its arrivals before the duration for constant-arrival-rate
// and, as k6 on an idle machine, the one at the duration for
// ramping-arrival-rate.
func TestArrivalRateKeepsFirstArrival(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		executor string
		// before are the arrivals due before the duration, atEnd those
		// due at exactly the duration in k6's schedule.
		before, atEnd, metronome float64
	}{
		{"constant-arrival-rate", 4, 1, 4},
		{"ramping-arrival-rate", 3, 1, 4},
	} {
		t.Run(tc.executor, func(t *testing.T) {
			eachRunner(t, func(t *testing.T, rn runner) {
				exp := filepath.Join(t.TempDir(), "summary.json")
				r := rn.run(t, runSpec{args: []string{"run", "-q", "--summary-export", exp, "-e", "EXECUTOR=" + tc.executor,
					script("parity/arrival_first.js")}})
				if r.code != 0 {
					t.Fatalf("%s exited %d\nstderr:\n%s", rn.name, r.code, r.stderr)
				}
				e := readExport(t, exp)
				lo, hi := tc.metronome, tc.metronome
				if rn.name == "k6" {
					lo, hi = tc.before, tc.before+tc.atEnd
				}
				if n := e.num(t, "iterations", "count"); n < lo || n > hi {
					t.Errorf("%s ran %v iterations, want %v to %v", rn.name, n, lo, hi)
				}
				if d, ok := e.Metrics["dropped_iterations"]; ok {
					t.Errorf("%s dropped iterations (%v); k6 v2.2.0 dropped none", rn.name, d["count"])
				}
			})
		})
	}
}

// A sample recorded at the start of a long iteration reaches the
// thresholds while the iteration still runs: Rate.add(false) then
// sleep(9) under an abortOnFail threshold. k6 v2.2.0 exits 99 after a
// test run of 2.0 s (recorded 2026-12-01): the first evaluation, at 2 s,
// sees the sample. metronome used to see it only when the iteration ended
// and stopped after 9.5 s. The bound is arithmetic, not a machine's speed:
// a run that stops before the iteration's 9 s are over saw the sample
// while it ran; one that saw it only at the iteration's end lasts at
// least 9 s. The run's duration is handleSummary's
// state.testRunDurationMs, which leaves out the process's start-up.
//
// The same holds when the iteration waits in its event loop (a 9 s
// setTimeout it awaits) instead of in sleep(); k6 v2.2.0's run then
// lasted 3.3 s.
func TestThresholdSeesRunningIteration(t *testing.T) {
	t.Parallel()
	for _, wait := range []string{"sleep", "timer"} {
		t.Run(wait, func(t *testing.T) {
			t.Parallel()
			eachRunner(t, func(t *testing.T, rn runner) { testThresholdSeesRunningIteration(t, rn, wait) })
		})
	}
}

func testThresholdSeesRunningIteration(t *testing.T, rn runner, wait string) {
	out := filepath.Join(t.TempDir(), "state.json")
	r := rn.run(t, runSpec{args: []string{"run", "-q", "-e", "WAIT=" + wait, "-e", "OUT=" + out, script("parity/abort_mid_iteration.js")}})
	if r.code != 99 {
		t.Fatalf("%s exited %d, want 99 as k6 v2.2.0\nstderr:\n%s", rn.name, r.code, r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("%s: handleSummary's file: %v\nstderr:\n%s", rn.name, err, r.stderr)
	}
	var state struct{ TestRunDurationMs float64 }
	if err := json.Unmarshal(b, &state); err != nil {
		t.Fatalf("%s: handleSummary's file %q: %v", rn.name, b, err)
	}
	if state.TestRunDurationMs >= 9000 {
		t.Errorf("%s stopped the test after %.0f ms, not before the iteration's 9 s ended: the threshold did not see the sample while the iteration ran",
			rn.name, state.TestRunDurationMs)
	}
	t.Logf("%s stopped the test after %.0f ms (process: %v)", rn.name, state.TestRunDurationMs, r.elapsed.Round(10*time.Millisecond))
}

// Remote modules over HTTPS through the binary, from a loopback TLS server
// whose certificate the process trusts through SSL_CERT_FILE (read by Go's
// crypto/x509, in metronome and k6 alike): a CommonJS bundle shaped like
// jslib.k6.io's k6chaijs, imported for its default export, and a module
// that cannot be fetched, which k6 v2.2.0 and metronome refuse with exit
// code 107 and a message naming its URL (recorded 2026-12-01).
func TestRemoteHTTPSImport(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/k6chaijs/index.js" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.default = { describe: function (name, fn) { fn(); return name; }, version: "chai-like" };`))
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	certFile := filepath.Join(dir, "ca.pem")
	pemCert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(certFile, pemCert, 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.js")
	bad := filepath.Join(dir, "bad.js")
	missing := srv.URL + "/k6chaijs/missing.js"
	files := map[string]string{
		good: `import chai from "` + srv.URL + `/k6chaijs/index.js";
export const options = { iterations: 1 };
export default function () { console.log("remote " + chai.version + " " + chai.describe("suite", () => {})); }`,
		bad: `import chai from "` + missing + `";
export default function () {}`,
	}
	for name, src := range files {
		if err := os.WriteFile(name, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"SSL_CERT_FILE=" + certFile}
	eachRunner(t, func(t *testing.T, rn runner) {
		r := rn.run(t, runSpec{args: []string{"run", "-q", good}, env: env})
		if r.code != 0 || !strings.Contains(r.stderr, "remote chai-like suite") {
			t.Errorf("%s exited %d; want 0 and the bundle's default export in use\nstderr:\n%s", rn.name, r.code, r.stderr)
		}
		r = rn.run(t, runSpec{args: []string{"run", "-q", bad}, env: env})
		if r.code != 107 || !strings.Contains(r.stderr, missing) {
			t.Errorf("%s exited %d; want 107 and an error naming %s\nstderr:\n%s", rn.name, r.code, missing, r.stderr)
		}
	})
}

// Output details as k6 v2.2.0 writes them with -o json (recorded
// 2026-12-01 for testdata/parity/output_details.js):
//   - vus_max is 8 in every sample: the ramp's peak 6 plus the later
//     scenario's 2, all initialised before the test;
//   - data_sent and data_received: one sample each per iteration
//     (interrupted ones included), setup and teardown, tagged with the iteration's group (""), not the group
//     the requests ran in ("::g1"), and ::setup / ::teardown outside the
//     scenarios;
//   - http_reqs in setup and teardown carry group ::setup / ::teardown.
func TestOutputDetailsAsK6(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	eachRunner(t, func(t *testing.T, rn runner) {
		jsonPath := filepath.Join(t.TempDir(), "out.json")
		r := rn.run(t, runSpec{args: []string{"run", "-q", "-o", "json=" + jsonPath, "-e", "TARGET=" + tg.URL,
			script("parity/output_details.js")}})
		if r.code != 0 {
			t.Fatalf("%s exited %d\nstderr:\n%s", rn.name, r.code, r.stderr)
		}
		var vusMax []float64
		data := map[string]int{}      // group of data_sent samples → count
		reqGroups := map[string]int{} // group of http_reqs samples → count
		iterations := 0
		for _, l := range readJSONOutput(t, jsonPath) {
			if l.Type != "Point" {
				continue
			}
			switch l.Metric {
			case "vus_max":
				vusMax = append(vusMax, *l.Data.Value)
			case "data_sent":
				data[l.Data.Tags["group"]]++
			case "http_reqs":
				reqGroups[l.Data.Tags["group"]]++
			case "iterations":
				iterations++
			}
		}
		if len(vusMax) == 0 || slices.Min(vusMax) != 8 || slices.Max(vusMax) != 8 {
			t.Errorf("%s: vus_max samples %v; k6 v2.2.0 reports 8 throughout", rn.name, vusMax)
		}
		// An iteration the ramp-down interrupts emits its bytes too but
		// no iterations sample: at most one per VU of the ramp's peak.
		if data["::setup"] != 1 || data["::teardown"] != 1 || data[""] < iterations || data[""] > iterations+6 || len(data) != 3 {
			t.Errorf("%s: data_sent samples per group %v for %d completed iterations; want one per iteration in group \"\" "+
				"(up to 6 more for interrupted ones), one in ::setup and one in ::teardown, as k6 v2.2.0", rn.name, data, iterations)
		}
		if reqGroups["::setup"] != 1 || reqGroups["::teardown"] != 1 || reqGroups["::g1"] != 4 {
			t.Errorf("%s: http_reqs per group %v; want 1 in ::setup, 1 in ::teardown and 4 in ::g1", rn.name, reqGroups)
		}
	})
}
