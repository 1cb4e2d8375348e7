package e2e

import (
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/stallserver"
)

// expectedInterval 'auto' in real time, on an unchanged closed-model
// script: stall/closed.js (request, then sleep(0.01)) with 2 VUs for 6 s,
// no expectedInterval anywhere, against a stall server that freezes once,
// for 3 s, 2 s after it starts. Each VU sends into the freeze once; its
// request is held until the thaw, up to 3,000 ms, and back-filling that
// request at the VU's estimated cadence I (the median interval between its
// iteration starts, the sleep included) adds floor(d/I) − 1 ≈ 3,000/I
// samples (fewer, by up to one, as the VU met the freeze later in its
// cycle). So the requests answered at the thaw back-fill 2 × 3,000 ms / I,
// I being the estimate the summary reports; the test allows 10%. On a
// loaded machine the generator itself stretches some other requests past
// twice the estimate, and those are back-filled too; the test counts the
// samples stamped within 300 ms after the thaw as the freeze's and logs
// the others.
func TestStallClosedModelAutoInterval(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 6 s load in real time")
	}
	const vus = 2
	freeze := stallserver.Schedule{Length: 3 * time.Second, First: 2 * time.Second, Once: true}
	srv := stallserver.New(freeze)
	if err := srv.Start("127.0.0.1:0"); err != nil {
		t.Fatalf("stall server: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	dir := t.TempDir()
	exp, jsonPath := filepath.Join(dir, "summary.json"), filepath.Join(dir, "out.json")
	r := metronome(t, runSpec{args: []string{"run", "-q", "--summary-export", exp, "-o", "json=" + jsonPath,
		"-e", "TARGET=" + srv.URL(), "-e", "DURATION=6s", "-e", "VUS=" + strconv.Itoa(vus),
		script("stall/closed.js")}, timeout: 40 * time.Second})
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	if since := time.Since(srv.Started()); since < freeze.First+freeze.Length {
		t.Fatalf("the run ended %v after the server started, before the freeze ended", since)
	}
	e := readExport(t, exp)
	m := regexp.MustCompile(`interval\.+: estimated per VU: median ([0-9.]+)ms of 2 VUs`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("the summary gives no per-VU estimate:\n%s", r.stdout)
	}
	cadence, _ := strconv.ParseFloat(m[1], 64)
	requests := e.num(t, "http_reqs", "count")
	backfilled := e.num(t, "corrected_latency", "count") - requests
	thaw := srv.Started().Add(freeze.First + freeze.Length)
	atThaw := 0.0
	for _, l := range readJSONOutput(t, jsonPath) {
		if l.Type != "Point" || l.Metric != "corrected_latency" || l.Data.Tags["backfilled"] != "true" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, l.Data.Time)
		if err != nil {
			t.Fatal(err)
		}
		if off := at.Sub(thaw); off >= 0 && off < 300*time.Millisecond {
			atThaw++
		}
	}
	want := vus * float64(freeze.Length/time.Millisecond) / cadence
	t.Logf("%v requests, estimated cadence %.2f ms (iteration_duration med %.2f ms); %v back-filled, %v of them at the thaw; 2 × 3000 ms / cadence = %.0f",
		requests, cadence, e.num(t, "iteration_duration", "med"), backfilled, atThaw, want)
	if math.Abs(atThaw-want) > 0.1*want {
		t.Errorf("%v samples back-filled at the thaw, want %.0f ± 10%%", atThaw, want)
	}
	if n := e.num(t, "slow_requests", "passes"); n < vus {
		t.Errorf("%v requests over 100 ms, want at least one per VU: the run did not meet the freeze", n)
	}
	// The summary says the back-filled figures are estimates.
	for _, want := range []string{
		"closed (constant-vus, expectedInterval: auto)",
		"interval.......: estimated per VU: median ",
		"back-filled....: " + strconv.Itoa(int(backfilled)) + " samples (estimates)",
		"'auto' ones estimated from each VU's cadence), not measured",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the summary lacks %q:\n%s", want, r.stdout)
		}
	}
}
