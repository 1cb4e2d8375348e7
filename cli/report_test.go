package cli

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/metronome-load/metronome/output/hdrlog"
)

func TestWebDashboardSwitch(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want []string
	}{
		{map[string]string{"K6_WEB_DASHBOARD": "true"}, nil, []string{"web-dashboard"}},
		{map[string]string{"K6_WEB_DASHBOARD": "true"}, []string{"-o", "json=x.json"}, []string{"json=x.json", "web-dashboard"}},
		{map[string]string{"K6_WEB_DASHBOARD": "true"}, []string{"-o", "web-dashboard"}, []string{"web-dashboard"}},
		{map[string]string{"K6_WEB_DASHBOARD": "false"}, []string{"-o", "web-dashboard"}, []string{"web-dashboard"}},
		{map[string]string{}, nil, nil},
	} {
		h := newHarness(t, `{}`)
		args := append([]string{"run"}, tc.args...)
		if code, _, stderr := h.run(tc.env, append(args, "script.js")...); code != 0 {
			t.Fatalf("%v %v: exit %d: %s", tc.env, tc.args, code, stderr)
		}
		if !slices.Equal(h.ran.Outputs, tc.want) {
			t.Errorf("%v %v: outputs %q, want %q", tc.env, tc.args, h.ran.Outputs, tc.want)
		}
	}
	h := newHarness(t, `{}`)
	code, _, stderr := h.run(map[string]string{"K6_WEB_DASHBOARD": "yes please"}, "run", "script.js")
	if code != 104 || !strings.Contains(stderr, "K6_WEB_DASHBOARD") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("a bad K6_WEB_DASHBOARD: exit %d, stderr %q; want 104 and one line naming it", code, stderr)
	}
}

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.hlog"), filepath.Join(dir, "b.hlog")
	writeLog(t, a, 1, 100, "metric=http_req_duration;scenario=api", "metric=corrected_latency;scenario=api", "metric=schedule_lag;scenario=api")
	writeLog(t, b, 101, 200, "metric=http_req_duration;scenario=api", "metric=corrected_latency;scenario=api", "metric=schedule_lag;scenario=api")
	out := filepath.Join(dir, "r.html")
	h := newHarness(t, `{}`)
	code, stdout, stderr := h.run(nil, "report", a, b, "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "wrote "+out) {
		t.Errorf("stdout %q", stdout)
	}
	html, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{`id="total-latency"`, `id="total-spectrum"`, `id="scenario-api-lag"`} {
		if !strings.Contains(string(html), id) {
			t.Errorf("the report has no %s", id)
		}
	}
	// Both logs' 200 requests are counted.
	if !strings.Contains(string(html), `id="ov-requests">200<`) {
		t.Errorf("the report does not count the 200 requests of both logs")
	}

	notLog := writeFile(t, "x.hlog", "hello\n")
	code, _, stderr = h.run(nil, "report", notLog, "-o", out)
	if code != 104 || !strings.Contains(stderr, "x.hlog") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("not a log: exit %d, stderr %q; want 104 and one line naming the file", code, stderr)
	}
	code, _, stderr = h.run(nil, "report", filepath.Join(dir, "missing.hlog"))
	if code != 104 || !strings.Contains(stderr, "missing.hlog") {
		t.Errorf("a missing log: exit %d, stderr %q", code, stderr)
	}
	// A period that cannot be drawn is refused (it was taken, exit 0).
	for _, p := range []string{"-1s", "0s", "1ns"} {
		code, _, stderr = h.run(nil, "report", "--period", p, a, "-o", out)
		if code != 104 || !strings.Contains(stderr, "--period: must be at least 1s") {
			t.Errorf("--period %s: exit %d, stderr %q", p, code, stderr)
		}
	}
}

// A report from logs with request names has the per-endpoint table, the
// names of both instances' logs merged.
func TestReportCommandEndpoints(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.hlog"), filepath.Join(dir, "b.hlog")
	for i, path := range []string{a, b} {
		from := int64(1 + 100*i)
		writeLog(t, path, from, from+99, "metric=http_req_duration;scenario=api;name=GET%20/a%3Cb%3E",
			"metric=corrected_latency;scenario=api;name=GET%20/a%3Cb%3E", "metric=corrected_latency;scenario=api;outcome=dropped")
	}
	out := filepath.Join(dir, "r.html")
	h := newHarness(t, `{}`)
	if code, _, stderr := h.run(nil, "report", a, b, "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	html, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// 200 requests of 1..200 ms: p50 100 ms, p99 198 ms (HdrHistogram's
	// highest equivalent values, to 3 digits).
	for _, want := range []string{`<table id="endpoint-table">`, `<a href="#endpoint-1-latency">GET /a&lt;b&gt;</a></td><td>200</td><td>100.03ms</td><td>198.01ms</td>`,
		`<figure class="chart" id="endpoint-1-latency"`} {
		if !strings.Contains(string(html), want) {
			i := strings.Index(string(html), `<td class="name">`)
			t.Errorf("the report lacks %s\n%s", want, string(html)[max(i, 0):max(i, 0)+300])
		}
	}
}

// merge and report say which lines of a log they skipped, and report, as
// merge, how many values its histograms could not hold. Before, both
// skipped a bad line in silence and report dropped overflowing counts
// without a word; all exited 0, as they still do.
func TestMergeAndReportWarn(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.hlog")
	writeLog(t, good, 1, 100, "metric=http_req_duration;scenario=api", "metric=corrected_latency;scenario=api")
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	n := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "Tag=metric=http_req_duration") })
	lines[n] = strings.Replace(lines[n], ",", ";", 1)
	corrupt := writeFile(t, "corrupt.hlog", strings.Join(lines, ""))
	var over strings.Builder
	for i := range 3 {
		h := hdrhistogram.NewPacked(hdrlog.Lowest, hdrlog.Highest, hdrlog.SignificantDigits)
		if err := h.RecordValues(1000, math.MaxInt64/2); err != nil {
			t.Fatal(err)
		}
		enc, err := h.Encode()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&over, "Tag=metric=http_req_duration;scenario=api,%d.000,1.000,0.001,%s\n", 1_700_000_000+i, enc)
	}
	overflow := writeFile(t, "overflow.hlog", over.String())

	skipped := fmt.Sprintf("warning: %s:%d: not an interval histogram (want [Tag=…,]start,length,max,histogram); the line was skipped", corrupt, n+1)
	h := newHarness(t, `{}`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"merge", corrupt}, skipped},
		{[]string{"report", corrupt, "-o", filepath.Join(dir, "c.html")}, skipped},
		{[]string{"merge", overflow}, "warning: 4611686018427387903 values of metric=http_req_duration;scenario=api did not fit the merged histogram and were left out"},
		{[]string{"report", overflow, "-o", filepath.Join(dir, "o.html")}, "warning: 4611686018427387903 values of http_req_duration did not fit the report's histograms (1 µs to one day, at most 2^63 values) and were left out of its charts"},
	} {
		code, stdout, stderr := h.run(nil, c.args...)
		if code != 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit 0 and %q", c.args, code, stderr, c.want)
		}
		if c.args[0] == "merge" && c.args[1] == corrupt && (strings.Contains(stdout, "http_req_duration") || !strings.Contains(stdout, "corrected_latency")) {
			t.Errorf("%v: want only the interval of the good line:\n%s", c.args, stdout)
		}
	}
}
