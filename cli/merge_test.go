package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/metronome-load/metronome/internal/percentiles"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/output/hdrlog"
)

// writeLog writes an interval log holding one interval per tag with the
// values from..to milliseconds, 1 ms apart.
func writeLog(t *testing.T, path string, from, to int64, tags ...string) {
	t.Helper()
	var b bytes.Buffer
	w := hdrhistogram.NewHistogramLogWriter(&b)
	if err := w.OutputLogFormatVersion(); err != nil {
		t.Fatal(err)
	}
	for _, tag := range tags {
		h := hdrhistogram.New(hdrlog.Lowest, hdrlog.Highest, hdrlog.SignificantDigits)
		for v := from; v <= to; v++ {
			if err := h.RecordValue(v * 1000); err != nil {
				t.Fatal(err)
			}
		}
		h.SetTag(tag)
		h.SetStartTimeMs(1_700_000_000_000)
		h.SetEndTimeMs(1_700_000_001_000)
		if err := w.OutputIntervalHistogram(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func runMergeCmd(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := newMergeCmd(&globals{stdout: &out, stderr: &errOut, env: map[string]string{}})
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

func TestMergeCommand(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.hlog"), filepath.Join(dir, "b.hlog")
	cl, dur := hdrlog.Series{Metric: "corrected_latency", Scenario: "api"}.Tag(), hdrlog.Series{Metric: "http_req_duration", Scenario: "api"}.Tag()
	writeLog(t, a, 1, 500, cl, dur)
	writeLog(t, b, 501, 1000, cl, dur)

	out, _, err := runMergeCmd(t, "", a, b)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || !strings.Contains(lines[0], "merged 4 interval histograms from 2 file(s)") {
		t.Fatalf("table:\n%s", out)
	}
	if !strings.Contains(lines[2], "p99.9") || !strings.Contains(lines[3], "corrected_latency") ||
		!strings.Contains(lines[4], "http_req_duration") || !strings.Contains(lines[3], " 1000 ") {
		t.Errorf("table:\n%s", out)
	}

	out, _, err = runMergeCmd(t, "", "--json", "--metric", "corrected_latency", a, b)
	if err != nil {
		t.Fatal(err)
	}
	var sums []percentiles.Summary
	if err := json.Unmarshal([]byte(out), &sums); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(sums) != 1 || sums[0].Metric != "corrected_latency" || sums[0].Labels != "scenario=api" || sums[0].Count != 1000 {
		t.Fatalf("json %+v", sums)
	}
	// Values 1..1000 ms: k6's estimator gives p50 = 500.5, p99 = 990.01,
	// read from buckets 0.1% wide.
	for name, want := range map[string]float64{"p50": 500.5, "p90": 900.1, "p99": 990.01, "p99.9": 999.001} {
		if got := sums[0].Percentiles[name]; math.Abs(got-want) > want/1000 {
			t.Errorf("%s = %g, want %g", name, got, want)
		}
	}

	log, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err = runMergeCmd(t, string(log), "--json", "-", b)
	if err != nil || !strings.Contains(out, `"count": 1000`) {
		t.Errorf("stdin: %v\n%s", err, out)
	}
}

func TestMergeCommandErrors(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.hlog")
	writeLog(t, a, 1, 10, "metric=corrected_latency")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "requires at least 1 arg"},
		{[]string{filepath.Join(dir, "missing.hlog")}, "cannot read " + filepath.Join(dir, "missing.hlog") + ": no such file"},
		{[]string{"--metric", "nope", a}, "no metric nope in the logs; they hold corrected_latency"},
		{[]string{"--by-name", a}, "the logs hold no request names"},
		{[]string{"--by-name", "--metric", "x", a}, "none of the others can be"},
	} {
		_, _, err := runMergeCmd(t, "", c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
	notALog := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notALog, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runMergeCmd(t, "", notALog); err == nil || exitcode.Of(err) != exitcode.InvalidConfig ||
		!strings.Contains(err.Error(), "notes.txt holds no interval histogram: it is neither an HdrHistogram log (-o hdrlog=FILE) nor a result file (-o result=FILE); its 1 lines that are not comments were skipped, the first (line 1) as not an interval histogram") {
		t.Errorf("not a log: %v", err)
	}
	// An empty file or random bytes named .result are neither: exit 104,
	// as the docs say for a file that is not a result file (it was 255).
	h := newHarness(t, "")
	for name, content := range map[string][]byte{"empty.result": nil, "random.result": {0x8f, 0x01, 0xfe, '\n', 0x00, 0x42}} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := h.run(nil, "merge", p)
		if code != exitcode.InvalidConfig || !strings.Contains(stderr, p+" holds no interval histogram: it is neither") {
			t.Errorf("%s: exit %d, %s", name, code, stderr)
		}
	}
}

// Three segments of one run, each logging the same two names: the
// metric table adds the names up per scenario, and the per-name table
// puts the stalled name first with its raw and corrected percentiles.
func TestMergeCommandByName(t *testing.T) {
	dir := t.TempDir()
	tag := func(metric, name string) string {
		return hdrlog.Series{Metric: metric, Scenario: "api", Name: name}.Tag()
	}
	var segs []string
	for k := range int64(3) {
		fast, slow := filepath.Join(dir, fmt.Sprintf("fast-%d.hlog", k)), filepath.Join(dir, fmt.Sprintf("slow-%d.hlog", k))
		// Each segment: 100 requests a name, raw 1..100 ms (offset by
		// segment), the slow name's corrected 10 times as long.
		writeLog(t, fast, 1+k*100, 100+k*100, tag("http_req_duration", "GET /fast"), tag("corrected_latency", "GET /fast"))
		writeLog(t, slow, 1+k*100, 100+k*100, tag("http_req_duration", "POST /slow, \"quoted\""))
		writeLog(t, slow+"c", 10+k*1000, 1000+k*1000, tag("corrected_latency", "POST /slow, \"quoted\""))
		segs = append(segs, fast, slow, slow+"c")
	}
	out, _, err := runMergeCmd(t, "", segs...)
	if err != nil {
		t.Fatal(err)
	}
	metricRows, nameTable, ok := strings.Cut(out, "per request name")
	if !ok {
		t.Fatalf("no per-name table:\n%s", out)
	}
	// 3 × 100 + 3 × 100 raw values, 3 × 100 + 3 × 991 corrected ones.
	for _, want := range []string{"corrected_latency  scenario=api   3273 ", "http_req_duration  scenario=api    600 "} {
		if !strings.Contains(metricRows, want) {
			t.Errorf("metric table lacks %q:\n%s", want, metricRows)
		}
	}
	lines := strings.Split(strings.TrimSpace(nameTable), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[3], `POST /slow, "quoted"  `) || !strings.HasPrefix(lines[4], "GET /fast  ") {
		t.Fatalf("per-name table:\n%s", nameTable)
	}
	// Raw values 1..300 ms: p99.9 interpolates to 299.7 ms, read from
	// buckets 0.1% wide (299.6 ms).
	if f := strings.Fields(lines[4]); f[2] != "300" || f[5] != "299.6ms" || f[8] != "299.6ms" {
		t.Errorf("GET /fast: want 300 requests, raw and corrected p99.9 299.6 ms: %q", lines[4])
	}

	out, _, err = runMergeCmd(t, "", append([]string{"--by-name", "--json"}, segs...)...)
	if err != nil {
		t.Fatal(err)
	}
	var eps []percentiles.EndpointSummary
	if err := json.Unmarshal([]byte(out), &eps); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(eps) != 2 || eps[0].Name != `POST /slow, "quoted"` || eps[0].Requests != 300 || eps[0].CorrectedSamples != 3*991 ||
		eps[0].RawMetric != "http_req_duration" || eps[1].Name != "GET /fast" || eps[1].Corrected["p(99)"] != eps[1].Raw["p(99)"] {
		t.Errorf("json %+v", eps)
	}
}
