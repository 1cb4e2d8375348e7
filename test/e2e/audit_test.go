package e2e

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/stallserver"
)

// The proof of metronome audit (issue 28): docs/DESIGN.md §7's stall
// experiment — 1,000 requests/s, a 500 ms freeze every 5 s — run in stock
// k6 v2.2.0 with constant-arrival-rate and with constant-vus, its JSON
// output recorded in testdata/audit (so CI needs no k6), audited, and held
// to what metronome measures live on the same server, schedule and script:
// corrected_latency's p99 and its count over 100 ms within 10%. k6's own
// figures show the stalls only in their max.
//
// TestAuditRecordedK6 compares the audit with metronome's live figures
// recorded beside k6's outputs (testdata/audit/metronome-live.json);
// TestAuditStockK6Live measures them again, and with K6_BINARY set also
// re-runs k6 and audits that run. With -record-k6-audit it writes k6's
// outputs and metronome's figures into testdata/audit instead.

var recordK6Audit = flag.Bool("record-k6-audit", false,
	"re-run real k6 ($K6_BINARY) and metronome for TestAuditStockK6Live and write k6's JSON outputs and metronome's figures into testdata/audit")

// auditStall is the reference stall: 500 ms every 5 s, the first 2 s
// after the server starts. A run of 10 s that starts within 2 s of the
// server meets two stalls, whole.
var auditStall = stallserver.Schedule{Length: 500 * time.Millisecond, Period: 5 * time.Second, First: 2 * time.Second}

// auditSystemTags are the system tags of the recorded runs: the ones the
// rows name (scenario, name), a few that are k6's defaults, and vu and
// iter, which make the audit exact.
const auditSystemTags = "scenario,name,method,status,vu,iter"

// auditTolerance is how far the audit of k6's output may land from what
// metronome measures live (issue 28).
const auditTolerance = 0.10

// liveAttempts bounds the live runs made to get one the machine did not
// disturb (see liveLatency).
const liveAttempts = 3

type auditCase struct {
	name, scenario, script, fixture string
	// pause is the closed loop's pause after its request, 0 for the open
	// model.
	pause time.Duration
}

var auditCases = []auditCase{
	{"constant-arrival-rate", "open", "open.js", "k6-open.json.gz", 0},
	{"constant-vus", "closed", "closed.js", "k6-closed.json.gz", 50 * time.Millisecond},
}

// slowCadence is how much longer than its pause a closed-loop VU's median
// iteration may take in a live run that measures the server: on a quiet
// machine metronome's took 50.5–51 ms for the 50 ms pause, k6's 52.4 ms.
// A slower cadence, on a machine busy with other work, back-fills fewer
// samples: one run at a load average of 9 counted 599 over 100 ms where
// quiet runs count 790.
const slowCadence = 1.1

// liveFile holds metronome's live figures, measured when k6's outputs were
// recorded, by scenario.
var liveFile = filepath.Join("testdata", "audit", "metronome-live.json")

// auditRow is one row of metronome audit --json.
type auditRow struct {
	Metric        string             `json:"metric"`
	Labels        string             `json:"labels"`
	Count         int64              `json:"count"`
	Max           float64            `json:"max"`
	Percentiles   map[string]float64 `json:"percentiles"`
	Source        string             `json:"source"`
	Reconstructed bool               `json:"reconstructed"`
	OverBound     int64              `json:"overBound"`
}

// latency is what the comparison looks at: corrected_latency's p99 and its
// count over 100 ms.
type latency struct {
	P99  float64 `json:"p99"`
	Over int64   `json:"over100ms"`
}

func TestAuditRecordedK6(t *testing.T) {
	raw, err := os.ReadFile(liveFile)
	if err != nil {
		t.Fatal(err)
	}
	var recorded map[string]latency
	if err := json.Unmarshal(raw, &recorded); err != nil {
		t.Fatalf("%s: %v", liveFile, err)
	}
	for _, c := range auditCases {
		t.Run(c.name, func(t *testing.T) {
			rows := auditJSON(t, filepath.Join("testdata", "audit", c.fixture), c.script)
			checkK6HidesStall(t, c, rows)
			live, ok := recorded[c.scenario]
			if !ok {
				t.Fatalf("%s has no figures for scenario %s", liveFile, c.scenario)
			}
			compareAudit(t, "the audit of the recorded k6 output, against metronome's recorded live run", auditedLatency(t, c, rows), live)
		})
	}
}

func TestAuditStockK6Live(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time stall runs (about 10 s each)")
	}
	if *recordK6Audit && k6Binary() == "" {
		t.Fatal("-record-k6-audit needs real k6: set $K6_BINARY")
	}
	recorded := map[string]latency{}
	for _, c := range auditCases {
		t.Run(c.name, func(t *testing.T) {
			fixture := filepath.Join("testdata", "audit", c.fixture)
			if *recordK6Audit {
				runK6Stall(t, c, fixture)
			}
			live := liveLatency(t, c)
			recorded[c.scenario] = latency{P99: math.Round(live.P99*100) / 100, Over: live.Over}
			compareAudit(t, "the audit of the recorded k6 output", auditedLatency(t, c, auditJSON(t, fixture, c.script)), live)
			if k6Binary() == "" || *recordK6Audit {
				return
			}
			out := filepath.Join(t.TempDir(), "k6.json.gz")
			runK6Stall(t, c, out)
			rows := auditJSON(t, out, c.script)
			checkK6HidesStall(t, c, rows)
			compareAudit(t, "the audit of k6 re-run now", auditedLatency(t, c, rows), live)
		})
	}
	if *recordK6Audit && !t.Failed() {
		b, err := json.MarshalIndent(recorded, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(liveFile, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runK6Stall runs the case's script in real k6 against a fresh stall
// server, writing its JSON output to dest.
func runK6Stall(t *testing.T, c auditCase, dest string) {
	t.Helper()
	srv := startServer(t, auditStall)
	r := runK6(t, runSpec{args: []string{"run", "-q", "--system-tags", auditSystemTags,
		"-e", "TARGET=" + srv.URL() + "/", "-o", "json=" + dest, script("audit/" + c.script)}, timeout: 90 * time.Second})
	if r.code != 0 {
		t.Fatalf("k6 exited with %d\n%s", r.code, r.stderr)
	}
	t.Logf("k6 %s:\n%s", c.name, r.stdout)
}

// auditJSON runs metronome audit --json on a k6 output and returns its
// rows.
func auditJSON(t *testing.T, output, scriptName string) []auditRow {
	t.Helper()
	r := metronome(t, runSpec{args: []string{"audit", "--json", output, script("audit/" + scriptName)}})
	if r.code != 0 {
		t.Fatalf("metronome audit exited with %d\n%s", r.code, r.stderr)
	}
	var rows []auditRow
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("metronome audit --json printed no rows: %v\n%s", err, r.stdout)
	}
	return rows
}

// findRow returns the row of source for metric in the case's scenario.
func findRow(t *testing.T, rows []auditRow, c auditCase, source, metric string) auditRow {
	t.Helper()
	for _, r := range rows {
		if r.Source == source && r.Metric == metric && r.Labels == "scenario="+c.scenario {
			return r
		}
	}
	t.Fatalf("no %s row of %s for scenario %s in %+v", source, metric, c.scenario, rows)
	return auditRow{}
}

// checkK6HidesStall checks what k6's own summary shows: its
// http_req_duration stats (med, p(90), p(95)) far below the stall, which
// appears only in the max.
func checkK6HidesStall(t *testing.T, c auditCase, rows []auditRow) {
	t.Helper()
	k6 := findRow(t, rows, c, "k6", "http_req_duration")
	if k6.Reconstructed {
		t.Errorf("k6's row is marked reconstructed")
	}
	for _, p := range []string{"p50", "p90", "p95"} {
		if v := k6.Percentiles[p]; v > 100 {
			t.Errorf("k6's http_req_duration %s = %.1f ms: the stall shows beyond the max", p, v)
		}
	}
	if k6.Max < 400 {
		t.Errorf("k6's http_req_duration max = %.1f ms: the output met no 500 ms stall", k6.Max)
	}
	t.Logf("k6's own figures: p95 %.2f ms, max %.1f ms, %d of %d requests over 100 ms", k6.Percentiles["p95"], k6.Max, k6.OverBound, k6.Count)
}

// auditedLatency returns the audited corrected_latency of the scenario.
func auditedLatency(t *testing.T, c auditCase, rows []auditRow) latency {
	t.Helper()
	r := findRow(t, rows, c, "audit", "corrected_latency")
	if !r.Reconstructed {
		t.Errorf("the audited row is not marked reconstructed")
	}
	return latency{P99: r.Percentiles["p99"], Over: r.OverBound}
}

// liveLatency runs the case's script in metronome against a fresh stall
// server and returns its corrected_latency's p99 (k6's estimator, over
// every point) and count over 100 ms. A run the machine disturbed is made
// again, up to liveAttempts runs: one in which metronome started an
// arrival more than 100 ms late (its own schedule_lag), a request not
// sent during a stall took more than 100 ms, or a closed loop's cadence
// was slowCadence times its pause. On this shared 2-core machine such a
// run came one time in four, with 90 arrivals more over 100 ms than the
// stalls explain. When every run is disturbed the machine cannot give
// the reference and the test is skipped, saying so; TestAuditRecordedK6
// holds the audit to the figures recorded on a quiet one.
func liveLatency(t *testing.T, c auditCase) latency {
	t.Helper()
	for attempt := 1; ; attempt++ {
		srv := startServer(t, auditStall)
		out := filepath.Join(t.TempDir(), "live.json")
		r := metronome(t, runSpec{args: []string{"run", "-q", "-e", "TARGET=" + srv.URL() + "/", "-o", "json=" + out, script("audit/" + c.script)},
			timeout: 90 * time.Second})
		if r.code != 0 {
			t.Fatalf("metronome run exited with %d\n%s", r.code, r.stderr)
		}
		l, disturbed := liveFigures(t, srv, out, c.pause)
		if disturbed == "" {
			return l
		}
		if attempt == liveAttempts {
			t.Skipf("%d live runs in a row were disturbed by the machine's load, the last: %s", attempt, disturbed)
		}
		t.Logf("live run %d was disturbed (%s; p99 %.1f ms, %d over 100 ms): running again", attempt, disturbed, l.P99, l.Over)
	}
}

// liveFigures reads a live run's JSON output: corrected_latency's p99 and
// count over 100 ms, and what disturbed the run, "" when nothing did.
func liveFigures(t *testing.T, srv *stallserver.Server, path string, pause time.Duration) (latency, string) {
	t.Helper()
	var vs, its []float64
	var l latency
	late, slow := 0, 0
	for _, line := range readJSONOutput(t, path) {
		if line.Type != "Point" {
			continue
		}
		v := *line.Data.Value
		switch line.Metric {
		case "corrected_latency":
			vs = append(vs, v)
			if v > 100 {
				l.Over++
			}
		case "schedule_lag":
			if v > 100 {
				late++
			}
		case "iteration_duration":
			its = append(its, v)
		case "http_req_duration":
			if v <= 100 {
				continue
			}
			end, err := time.Parse(time.RFC3339Nano, line.Data.Time)
			if err != nil {
				t.Fatal(err)
			}
			// A request sent up to stallJitter before a stall can reach the
			// server in it.
			sent := end.Add(-time.Duration(v * float64(time.Millisecond)))
			if _, stalled := srv.Schedule.StallEnd(sent.Sub(srv.Started()) + stallJitter); !stalled {
				slow++
			}
		}
	}
	slices.Sort(vs)
	l.P99 = k6Percentile(vs, 0.99)
	var why []string
	if late > 0 {
		why = append(why, fmt.Sprintf("%d arrivals started more than 100 ms late", late))
	}
	if slow > 0 {
		why = append(why, fmt.Sprintf("%d requests sent outside the stalls took more than 100 ms", slow))
	}
	slices.Sort(its)
	if cadence := k6Percentile(its, 0.5); pause > 0 && cadence > slowCadence*float64(pause/time.Millisecond) {
		why = append(why, fmt.Sprintf("the VUs' median iteration took %.1f ms for a pause of %v", cadence, pause))
	}
	return l, strings.Join(why, ", ")
}

// compareAudit holds an audit to the live measurement.
func compareAudit(t *testing.T, what string, audited, live latency) {
	t.Helper()
	t.Logf("%s: p99 %.1f ms, %d over 100 ms; metronome live: p99 %.1f ms, %d over 100 ms", what, audited.P99, audited.Over, live.P99, live.Over)
	if d := math.Abs(audited.P99-live.P99) / live.P99; d > auditTolerance {
		t.Errorf("%s: p99 %.1f ms is %.1f%% from metronome's live %.1f ms (allowed %.0f%%)", what, audited.P99, 100*d, live.P99, 100*auditTolerance)
	}
	if d := math.Abs(float64(audited.Over-live.Over)) / float64(live.Over); d > auditTolerance {
		t.Errorf("%s: %d over 100 ms is %.1f%% from metronome's live %d (allowed %.0f%%)", what, audited.Over, 100*d, live.Over, 100*auditTolerance)
	}
}

// TestAuditOutputs audits a recorded k6 output through every output of
// the command: the text, thresholds and their exit code, the HdrHistogram
// log (which merge reads back to the audit's own figures) and the HTML
// report; and, with k6's vu and iter metadata taken out, the estimate the
// audit makes without them.
func TestAuditOutputs(t *testing.T) {
	c := auditCases[0]
	fixture := filepath.Join("testdata", "audit", c.fixture)
	dir := t.TempDir()
	hlog, report := filepath.Join(dir, "audit.hlog"), filepath.Join(dir, "audit.html")
	r := metronome(t, runSpec{args: []string{"audit", "--hdrlog", hlog, "--report", report,
		"--threshold", "corrected_latency: p(99)<100", "--threshold", "http_req_duration=p(95)<100", fixture, script("audit/" + c.script)}})
	wantOneError(t, r, 99, "thresholds on metrics 'corrected_latency' have been crossed on the audited data")
	// The form audit took before merge's and watch's still works, warned of.
	if !strings.Contains(r.stderr, `--threshold "http_req_duration=p(95)<100": METRIC=EXPRESSION is deprecated`) {
		t.Errorf("no deprecation warning for the old --threshold form:\n%s", r.stderr)
	}
	for _, want := range []string{"RECONSTRUCTED by metronome audit", "✗ 'p(99)<100'", "✓ 'p(95)<100'",
		"█ AUDIT", "by k6's vu and iter metadata (exact)", "█ K6 vs AUDIT", "audit  corrected_latency"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the audit's text does not say %q:\n%s", want, r.stdout)
		}
	}
	page, err := os.ReadFile(report)
	if err != nil || !strings.Contains(string(page), "RECONSTRUCTED by metronome audit") {
		t.Errorf("the report %s is missing or does not say it is reconstructed (%v)", report, err)
	}

	rows := auditJSON(t, fixture, c.script)
	audited := findRow(t, rows, c, "audit", "corrected_latency")
	m := metronome(t, runSpec{args: []string{"merge", "--json", "--metric", "corrected_latency", hlog}})
	var merged []auditRow
	if err := json.Unmarshal([]byte(m.stdout), &merged); m.code != 0 || err != nil || len(merged) != 1 {
		t.Fatalf("merge of the audit's log: exit %d, %v\n%s%s", m.code, err, m.stdout, m.stderr)
	}
	// The log's histograms are the summary's (1 µs, 3 significant digits).
	for _, p := range []string{"p50", "p99", "p99.9"} {
		if a, g := audited.Percentiles[p], merged[0].Percentiles[p]; math.Abs(a-g) > 0.001*a+0.001 {
			t.Errorf("merge reads %s = %v ms from the audit's log, the audit says %v", p, g, a)
		}
	}
	if merged[0].Count != audited.Count {
		t.Errorf("merge reads %d values from the audit's log, the audit counted %d", merged[0].Count, audited.Count)
	}

	for _, c := range auditCases {
		fixture := filepath.Join("testdata", "audit", c.fixture)
		audited := findRow(t, auditJSON(t, fixture, c.script), c, "audit", "corrected_latency")
		bare := filepath.Join(dir, "no-metadata-"+c.fixture)
		withoutMetadata(t, fixture, bare)
		est := findRow(t, auditJSON(t, bare, c.script), c, "audit", "corrected_latency")
		t.Logf("%s without vu and iter: p99 %.1f ms, %d over 100 ms; with them: p99 %.1f ms, %d over 100 ms",
			c.name, est.Percentiles["p99"], est.OverBound, audited.Percentiles["p99"], audited.OverBound)
		if math.Abs(float64(est.Count-audited.Count)) > 0.02*float64(audited.Count) || math.Abs(est.Percentiles["p99"]-audited.Percentiles["p99"]) > 0.02*audited.Percentiles["p99"] ||
			math.Abs(float64(est.OverBound-audited.OverBound)) > 0.02*float64(audited.OverBound) {
			t.Errorf("%s: without vu and iter metadata the audit gives %+v, with them %+v: want them within 2%%", c.name, est, audited)
		}
	}
}

// A mistake on the command line or in the files is one sentence and exit
// code 104; a threshold that fails on the audited data is 99 (see
// TestAuditOutputs).
func TestAuditMistakes(t *testing.T) {
	out, js := filepath.Join("testdata", "audit", "k6-open.json.gz"), script("audit/open.js")
	measured := filepath.Join(t.TempDir(), "metronome.json")
	if err := os.WriteFile(measured, []byte(`{"type":"Metric","data":{"name":"corrected_latency","type":"trend","contains":"time"},"metric":"corrected_latency"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{out}, "audit needs k6's JSON output and the script (or archive) of the run, in that order"},
		{[]string{"no-such.json", js}, "audit: cannot read no-such.json: no such file or directory"},
		{[]string{js, out}, "looks like k6's JSON output, not a script: give the output first"},
		{[]string{js, js}, "testdata/audit/open.js is not k6 JSON output (k6 run -o json=FILE): line 1 is not a JSON object"},
		{[]string{measured, js}, "already holds corrected_latency samples (a metronome run, or k6 with jslib/intended.js)"},
		{[]string{out, script("audit/closed.js")}, "holds samples of scenario open, which the options do not have (they have closed)"},
		{[]string{"-e", "DURATION=5s", out, js}, "but its schedule (1000.00 iterations/s for 5s (maxVUs: 20, gracefulStop: 30s)) intends only 5000"},
		{[]string{"--threshold", "p(99)<5", out, js}, `--threshold "p(99)<5": write it as METRIC[{tag:value}]: EXPRESSION`},
		{[]string{"--threshold", "no_such: p(99)<5", out, js}, `metric "no_such" is not defined (the output holds no sample of no_such)`},
	} {
		wantOneError(t, metronome(t, runSpec{args: append([]string{"audit"}, c.args...)}), 104, c.want)
	}
}

// withoutMetadata copies a k6 JSON output without its vu and iter
// metadata, as a run without them in --system-tags writes it.
func withoutMetadata(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(out)
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		if data, ok := line["data"].(map[string]any); ok {
			delete(data, "metadata")
		}
		b, err := json.Marshal(line)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := zw.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
