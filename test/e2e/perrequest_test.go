package e2e

import (
	"maps"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/stallserver"
)

// corrected_latency is per request: a script's sleep() is think time and
// is in no value (issue 22). Against a healthy target answering in 10 ms,
// an open model whose iterations sleep 100 ms after their request records
// corrected values equal to the requests' own times plus only how late
// each iteration started; per iteration they were 110 ms and more. The
// tolerance is arithmetic: corrected = the request's whole time (its
// connection wait included) + the lag, so its median exceeds
// http_req_duration's by at most the lag's median plus the time to get a
// pooled connection, which the test bounds by 2 ms.
func TestPerRequestOpenModelLeavesOutSleep(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 6 s load in real time")
	}
	srv := startServer(t, stallserver.Schedule{})
	dir := t.TempDir()
	exp, jsonPath := filepath.Join(dir, "summary.json"), filepath.Join(dir, "out.json")
	r := metronome(t, runSpec{args: []string{"run", "-q", "--summary-export", exp, "-o", "json=" + jsonPath,
		"-e", "TARGET=" + srv.URL(), script("perrequest/open_sleep.js")}})
	if r.code != 0 {
		t.Fatalf("exit code %d\nstderr:\n%s", r.code, r.stderr)
	}
	// Each corrected_latency point carries exactly the tags of its
	// request's http_req_duration point (same time, same request).
	lines := readJSONOutput(t, jsonPath)
	tagsAt := map[string]map[string]string{}
	var busy []timing // the completed iterations: start and duration
	for _, l := range lines {
		if l.Type == "Point" && l.Metric == "http_req_duration" {
			tagsAt[l.Data.Time] = l.Data.Tags
		}
		if l.Type == "Point" && l.Metric == "iteration_duration" && l.Data.Tags["outcome"] == "" {
			d := pointDuration(l)
			busy = append(busy, timing{pointTime(t, l).Add(-d), d})
		}
	}
	// An arrival the machine's load left without a free VU is charged as
	// dropped (a point without a request): at its intended time every one
	// of the script's 20 VUs was running an iteration (within 1 ms, the
	// moment a VU frees and takes the next); the others are requests.
	const vus, edge = 20, time.Millisecond
	points, dropped, cmax := 0, 0, 0.0
	for _, l := range lines {
		if l.Type != "Point" || l.Metric != "corrected_latency" {
			continue
		}
		if l.Data.Tags["outcome"] == "dropped" {
			dropped++
			at := pointTime(t, l).Add(-pointDuration(l))
			running := 0
			for _, b := range busy {
				if !b.at.After(at.Add(edge)) && !b.at.Add(b.d).Before(at.Add(-edge)) {
					running++
				}
			}
			if running < vus {
				t.Errorf("an arrival intended at %v was dropped while %d of the %d VUs were running an iteration", at, running, vus)
			}
			continue
		}
		points++
		cmax = max(cmax, *l.Data.Value)
		if want := tagsAt[l.Data.Time]; !maps.Equal(l.Data.Tags, want) || want["name"] == "" || want["method"] != "GET" || want["status"] != "200" {
			t.Fatalf("corrected_latency point tagged %v, its request's http_req_duration %v", l.Data.Tags, want)
		}
	}
	if points == 0 {
		t.Fatal("no corrected_latency point in the JSON output")
	}
	e := readExport(t, exp)
	raw, cor, lag := e.num(t, "http_req_duration", "med"), e.num(t, "corrected_latency", "med"), e.num(t, "schedule_lag", "med")
	t.Logf("http_req_duration med %.2f p99 %.2f; corrected_latency med %.2f p99 %.2f max %.2f; schedule_lag med %.2f p99 %.2f",
		raw, e.num(t, "http_req_duration", "p(99)"), cor, e.num(t, "corrected_latency", "p(99)"), e.num(t, "corrected_latency", "max"),
		lag, e.num(t, "schedule_lag", "p(99)"))
	if math.Abs(cor-raw) > 2+lag {
		t.Errorf("corrected_latency med %.2f ms, http_req_duration med %.2f ms: want them within 2 ms plus the lag's median %.2f (the 100 ms sleep is not latency)",
			cor, raw, lag)
	}
	if n, reqs := e.num(t, "corrected_latency", "count"), e.num(t, "http_reqs", "count"); n != reqs+float64(dropped) || float64(points) != reqs {
		t.Errorf("%v corrected_latency samples (%d of them requests') for %v requests and %d dropped arrivals, want one each",
			n, points, reqs, dropped)
	}
	if dropped > 0 {
		t.Logf("%d arrivals dropped, each while all %d VUs were busy", dropped, vus)
	}
	if want := e.num(t, "http_req_duration", "max") + e.num(t, "schedule_lag", "max") + 2; cmax > want {
		t.Errorf("a request's corrected_latency reached %.2f ms, above the slowest request plus the largest lag (%.2f ms)", cmax, want)
	}
}

// Issue 22's second example: a closed loop of 5 VUs, request, check, a
// 0.5 s pause. 'auto' back-fills from each VU's cadence (about 500 ms), and
// no request of a healthy target comes near twice that, so
// corrected_latency holds the requests' own times, one each.
func TestPerRequestClosedModelLeavesOutSleep(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 5 s load in real time")
	}
	srv := startServer(t, stallserver.Schedule{})
	exp := filepath.Join(t.TempDir(), "summary.json")
	r := metronome(t, runSpec{args: []string{"run", "-q", "--summary-export", exp, "-e", "TARGET=" + srv.URL(),
		script("perrequest/closed_check_sleep.js")}})
	if r.code != 0 {
		t.Fatalf("exit code %d\nstderr:\n%s", r.code, r.stderr)
	}
	e := readExport(t, exp)
	raw, cor := e.num(t, "http_req_duration", "med"), e.num(t, "corrected_latency", "med")
	t.Logf("http_req_duration med %.2f ms, corrected_latency med %.2f ms", raw, cor)
	if math.Abs(cor-raw) > 2 {
		t.Errorf("corrected_latency med %.2f ms, http_req_duration med %.2f ms: want them within 2 ms (the 0.5 s pause is not latency)", cor, raw)
	}
	if n, reqs := e.num(t, "corrected_latency", "count"), e.num(t, "http_reqs", "count"); n != reqs {
		t.Errorf("%v corrected_latency samples for %v requests: nothing to back-fill on a healthy target", n, reqs)
	}
}

// docs/DESIGN.md §7's closed loop in real time: one VU, request
// (/delay/10), sleep(0.0025), 450 times, against a server that freezes
// 500 ms once. Exactly one request meets the freeze and takes d ≈ 500–
// 510 ms; back-filled at the VU's cadence I it adds d − I, d − 2I, … ≥ I:
// floor(d/I) − 1 samples. The test reads I from the samples themselves (the
// largest back-filled one is d − I) and checks the arithmetic exactly: the
// back-filled values, their count, and the nearest-rank p99 of the whole
// (d − 5I for n ≈ 489). It then checks the reference table (n 489, p50
// 10, p90 10, p99 445, max 507.5, 33 over 100 ms) within 10 % where the
// arithmetic holds on a loaded machine (n less the back-fills of requests
// the machine slowed, and max for the moment the frozen request was sent)
// and logs the rest.
func TestReferenceClosedLoopRealTime(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 7 s load in real time")
	}
	freeze := stallserver.Schedule{Length: 500 * time.Millisecond, First: 2 * time.Second, Once: true}
	srv := startServer(t, freeze)
	dir := t.TempDir()
	exp, jsonPath := filepath.Join(dir, "summary.json"), filepath.Join(dir, "out.json")
	r := metronome(t, runSpec{args: []string{"run", "-q", "--summary-export", exp, "-o", "json=" + jsonPath,
		"-e", "TARGET=" + srv.URL(), script("perrequest/reference_closed.js")}, timeout: 90 * time.Second})
	if r.code != 0 {
		t.Fatalf("exit code %d\nstderr:\n%s", r.code, r.stderr)
	}
	if since := time.Since(srv.Started()); since < freeze.First+freeze.Length {
		t.Fatalf("the run ended %v after the server started, before the freeze ended", since)
	}
	// The back-filled samples of a request carry its time; on a loaded
	// machine a few other requests may take twice the cadence and
	// back-fill too, so the frozen request's are told by their time.
	var measured, filled, others []float64
	var frozenAt string
	lines := readJSONOutput(t, jsonPath)
	for _, l := range lines {
		if l.Type == "Point" && l.Metric == "corrected_latency" && l.Data.Tags["backfilled"] != "true" {
			measured = append(measured, *l.Data.Value)
			if *l.Data.Value == slices.Max(measured) {
				frozenAt = l.Data.Time
			}
		}
	}
	for _, l := range lines {
		if l.Type == "Point" && l.Metric == "corrected_latency" && l.Data.Tags["backfilled"] == "true" {
			if l.Data.Time == frozenAt {
				filled = append(filled, *l.Data.Value)
			} else {
				others = append(others, *l.Data.Value)
			}
		}
	}
	if len(measured) != 450 {
		t.Fatalf("%d measured corrected_latency samples, want the 450 requests'", len(measured))
	}
	slices.Sort(measured)
	d := measured[449]
	// The request sent into the freeze left at most one cadence (I, some
	// 13 ms) after it began and waits out the rest, then 10 ms of
	// service: 510 − I ms or more (checked exactly once I is known).
	if d < 400 {
		t.Fatalf("the slowest request took %.1f ms; want one that met the 500 ms freeze", d)
	}
	if measured[448] > 100 {
		t.Logf("another request took %.1f ms: the loaded machine's", measured[448])
	}
	slices.Sort(filled)
	slices.Reverse(filled)
	if len(filled) == 0 {
		t.Fatalf("nothing back-filled for the %.1f ms request", d)
	}
	if len(others) > 0 {
		t.Logf("%d samples back-filled for requests the loaded machine slowed past twice the cadence: %v", len(others), others)
	}
	cadence := d - filled[0]
	// It was sent d before its sample's time, its end, and answered once
	// the freeze was over and its 10 ms of service done: it ended no
	// earlier than that (the server's clock is the run's), and took the
	// rest of the freeze from when it was sent, plus the service, plus
	// what the machine added on the way back. The VU sends every cadence,
	// so it was sent within one cadence of the freeze's start, unless the
	// loaded machine held the VU back longer: the arithmetic uses the
	// moment it was sent, not the cadence.
	const service = 10 * time.Millisecond
	freezeStart := srv.Started().Add(freeze.First)
	freezeEnd := freezeStart.Add(freeze.Length)
	end, err := time.Parse(time.RFC3339Nano, frozenAt)
	if err != nil {
		t.Fatal(err)
	}
	sent := end.Add(-time.Duration(d * float64(time.Millisecond)))
	into := sent.Sub(freezeStart)
	// One VU: the request cannot have been sent before the one before it
	// was answered, so a value that charged more than the request's own
	// time would put its sending there.
	var prevEnd time.Time
	for _, l := range lines {
		if l.Type == "Point" && l.Metric == "corrected_latency" && l.Data.Tags["backfilled"] != "true" {
			if at := pointTime(t, l); at.Before(end) && at.After(prevEnd) {
				prevEnd = at
			}
		}
	}
	if sent.Before(prevEnd.Add(-time.Millisecond)) {
		t.Errorf("the frozen request's %.1f ms put its sending %v before the previous request was answered: it was charged more than it waited",
			d, prevEnd.Sub(sent))
	}
	expected := ms(freezeEnd.Add(service).Sub(sent))
	t.Logf("the frozen request was sent %v into the freeze (the cadence is %.2f ms): %.1f ms of freeze and service left, it took %.1f ms", into, cadence, expected, d)
	if !sent.Before(freezeEnd) || end.Before(freezeEnd.Add(service)) {
		t.Errorf("the frozen request was sent %v into the %v freeze and ended %v after it: want it sent before the freeze ended and ended no earlier than %v after it",
			into, freeze.Length, end.Sub(freezeEnd), service)
	}
	if want := int(math.Floor(d/cadence)) - 1; len(filled) != want {
		t.Errorf("%d samples back-filled for %.1f ms at a cadence of %.2f ms, want floor(d/I) − 1 = %d", len(filled), d, cadence, want)
	}
	for j, v := range filled {
		if want := d - float64(j+1)*cadence; math.Abs(v-want) > 0.01 {
			t.Fatalf("back-filled sample %d = %.3f ms, want d − %d·I = %.3f", j, v, j+1, want)
		}
	}
	all := append(slices.Clone(measured), filled...)
	all = append(all, others...)
	slices.Sort(all)
	n := len(all)
	rank := func(p float64) float64 { // HdrHistogram's getValueAtPercentile: nearest rank
		return all[max(int(p/100*float64(n)+0.5), 1)-1]
	}
	over := 0
	for _, v := range all {
		if v > 100 {
			over++
		}
	}
	// p99 is the (k+1)-th largest sample: d − k·I unless the loaded
	// machine's other slow samples (a slowed request, or its back-fill)
	// reach that far up.
	k := n - int(0.99*float64(n)+0.5)
	slowest := measured[448]
	if len(others) > 0 {
		slowest = max(slowest, slices.Max(others))
	}
	if p99, want := rank(99), d-float64(k)*cadence; math.Abs(p99-want) > 0.01 && slowest < want {
		t.Errorf("nearest-rank p99 %.2f ms, want d − %d·I = %.2f", p99, k, want)
	}
	t.Logf("real time: n=%d p50 %.1f p90 %.1f p99 %.1f (nearest rank; summary %.1f) max %.1f, %d over 100 ms; cadence %.2f ms"+
		" — the reference table: n=489 p50 10.0 p90 10.0 p99 445.0 max 507.5, 33 over 100 ms",
		n, rank(50), rank(90), rank(99), readExport(t, exp).num(t, "corrected_latency", "p(99)"), all[n-1], over, cadence)
	within := func(what string, got, ref float64) {
		if math.Abs(got-ref) > 0.1*ref {
			t.Errorf("%s %.1f, the reference table's %.1f: more than 10%% apart", what, got, ref)
		}
	}
	// The table's n counts the 450 requests and the frozen one's
	// back-fill; the loaded machine's own back-fills are not in it.
	within("n (without the loaded machine's back-fills)", float64(n-len(others)), 489)
	// The table's max is 510 − 2.5 ms, the request sent 2.5 ms into the
	// freeze; this run's is the freeze and service left when it was sent.
	within("max", all[n-1], expected)
	if raw := readExport(t, exp).num(t, "http_req_duration", "med"); math.Abs(rank(50)-raw) > 2 {
		t.Errorf("corrected p50 %.2f ms, raw p50 %.2f ms: want them within 2 ms", rank(50), raw)
	}
}
