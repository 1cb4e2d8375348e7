package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/metronome-load/metronome/output/hdrlog"
)

// writeRunLog writes an interval log of 20 one-second intervals, each
// holding corrected_latency and http_req_duration values of 1 to 200 ms
// times factor.
func writeRunLog(t *testing.T, path string, factor float64) {
	t.Helper()
	var b bytes.Buffer
	w := hdrhistogram.NewHistogramLogWriter(&b)
	if err := w.OutputLogFormatVersion(); err != nil {
		t.Fatal(err)
	}
	for i := range int64(20) {
		for _, m := range []string{"corrected_latency", "http_req_duration"} {
			h := hdrhistogram.New(hdrlog.Lowest, hdrlog.Highest, hdrlog.SignificantDigits)
			for v := int64(1); v <= 200; v++ {
				if err := h.RecordValue(int64(float64(v*1000+i) * factor)); err != nil {
					t.Fatal(err)
				}
			}
			h.SetTag(hdrlog.Series{Metric: m, Scenario: "api"}.Tag())
			h.SetStartTimeMs(1_700_000_000_000 + 1000*i)
			h.SetEndTimeMs(1_700_000_001_000 + 1000*i)
			if err := w.OutputIntervalHistogram(h); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCompareCommand(t *testing.T) {
	dir := t.TempDir()
	base, same, slow := filepath.Join(dir, "base.hlog"), filepath.Join(dir, "same.hlog"), filepath.Join(dir, "slow.hlog")
	writeRunLog(t, base, 1)
	writeRunLog(t, same, 1)
	writeRunLog(t, slow, 1.2)
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := execute(append([]string{"compare"}, args...), &out, &errOut, map[string]string{})
		return code, out.String(), errOut.String()
	}

	code, out, errOut := run(base, same)
	if code != 0 || !strings.Contains(out, "\nverdict: no regression: corrected_latency p99 is +0.0%, no worse than the base's\n") {
		t.Errorf("same run: exit %d\n%s%s", code, out, errOut)
	}
	html := filepath.Join(dir, "compare.html")
	code, out, errOut = run("--html", html, base, slow)
	if code != 99 || !strings.Contains(out, "verdict: REGRESSION: corrected_latency p99 is +20.0% worse") ||
		!strings.HasPrefix(errOut, "ERROR: compare: regression: ") {
		t.Errorf("20%% slower: exit %d\n%s%s", code, out, errOut)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<b>Regression:</b>", "<svg", "base corrected", "new corrected", "base raw", "new raw", `<tr class="judged">`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the HTML page lacks %q", want)
		}
	}

	code, out, _ = run("--json", "--metric", "raw", "--tolerance", "25", base, slow)
	var rep struct {
		Regression bool `json:"regression"`
		Rows       []struct {
			Metric string `json:"metric"`
			Judged bool   `json:"judged"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if code != 0 || rep.Regression || len(rep.Rows) != 2 || rep.Rows[0].Metric != "http_req_duration" || !rep.Rows[0].Judged {
		t.Errorf("--metric raw --tolerance 25: exit %d, %+v", code, rep)
	}

	// A line that is not an interval histogram is skipped, and said so.
	f, err := os.OpenFile(same, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("Tag=x,not,a,histogram\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if code, _, errOut := run(base, same); code != 0 || !strings.Contains(errOut, "warning: "+same+":") || !strings.Contains(errOut, "the line was skipped") {
		t.Errorf("a bad line: exit %d, stderr %q", code, errOut)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{base}, "accepts 2 arg(s), received 1"},
		{[]string{base, filepath.Join(dir, "none.hlog")}, "compare: cannot read " + filepath.Join(dir, "none.hlog") + ": no such file or directory"},
		{[]string{"--percentile", "100", base, same}, "compare: --percentile must be between 0 and 100, got 100"},
	} {
		if code, _, errOut := run(c.args...); code != 104 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %s; want 104 and %q", c.args, code, errOut, c.want)
		}
	}
}
