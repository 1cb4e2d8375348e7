package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

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
	cmd := newMergeCommand(&out, &errOut)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

func TestMergeCommand(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.hlog"), filepath.Join(dir, "b.hlog")
	cl, dur := hdrlog.Tag("corrected_latency", "api"), hdrlog.Tag("http_req_duration", "api")
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
	var sums []hdrlog.Summary
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
	writeLog(t, a, 1, 10, hdrlog.Tag("corrected_latency", ""))
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "requires at least 1 arg"},
		{[]string{filepath.Join(dir, "missing.hlog")}, "cannot read " + filepath.Join(dir, "missing.hlog") + ": no such file"},
		{[]string{"--metric", "nope", a}, "no metric nope in the logs; they hold corrected_latency"},
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
	if _, _, err := runMergeCmd(t, "", notALog); err == nil || !strings.Contains(err.Error(), "notes.txt: no interval histograms") {
		t.Errorf("not a log: %v", err)
	}
}
