package e2e

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func md5hex(s string) string {
	h := md5.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// The export counts what the executor arithmetic and the server say:
// shared-iterations 50 → 50 iterations and 50 requests.
func TestSummaryExportSharedIterations(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	_, e := runExported(t, 0, "-q", "-e", "TARGET="+tg.URL, script("summary/shared.js"))
	if n := e.num(t, "iterations", "count"); n != 50 {
		t.Errorf("iterations = %v, want 50", n)
	}
	served := tg.requests.Load()
	if served != 50 {
		t.Errorf("server answered %d requests, want 50", served)
	}
	if n := e.num(t, "http_reqs", "count"); n != float64(served) {
		t.Errorf("http_reqs = %v, server answered %d", n, served)
	}
	if n := e.num(t, "http_req_failed", "passes"); n != 0 {
		t.Errorf("http_req_failed passes = %v, want 0 (every request got 200)", n)
	}
	if n := e.num(t, "http_req_failed", "fails"); n != 50 {
		t.Errorf("http_req_failed fails = %v, want 50", n)
	}
	if v := e.num(t, "vus_max", "value"); v != 5 {
		t.Errorf("vus_max = %v, want 5", v)
	}
	for _, stat := range []string{"avg", "min", "med", "max", "p(90)", "p(95)"} {
		if v := e.num(t, "http_req_duration", stat); v <= 0 {
			t.Errorf("http_req_duration %s = %v, want > 0", stat, v)
		}
	}
	if min, max := e.num(t, "http_req_duration", "min"), e.num(t, "http_req_duration", "max"); min > max {
		t.Errorf("http_req_duration min %v > max %v", min, max)
	}
}

// per-vu-iterations 3×4 → 12; checks, groups, a custom counter and the
// inverted threshold booleans of k6's export.
func TestSummaryExportPerVUIterations(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	_, e := runExported(t, 99, "-q", "-e", "TARGET="+tg.URL, script("summary/per_vu.js")) // two thresholds fail
	if n := e.num(t, "iterations", "count"); n != 12 {
		t.Errorf("iterations = %v, want 3×4 = 12", n)
	}
	if n, served := e.num(t, "http_reqs", "count"), tg.requests.Load(); n != 12 || served != 12 {
		t.Errorf("http_reqs = %v, server answered %d; want 12 and 12", n, served)
	}
	if n := e.num(t, "items_processed", "count"); n != 36 {
		t.Errorf("items_processed = %v, want 12×3 = 36", n)
	}
	// 12 'status is 200' passes, 12 'body is long' fails, 6 of 12
	// 'even iteration' passes (__ITER 0…3 on each VU).
	if p, f, v := e.num(t, "checks", "passes"), e.num(t, "checks", "fails"), e.num(t, "checks", "value"); p != 18 || f != 18 || v != 0.5 {
		t.Errorf("checks passes/fails/value = %v/%v/%v, want 18/18/0.5", p, f, v)
	}
	if th := e.thresholds(t, "items_processed"); len(th) != 2 || th["count==36"] || !th["count>100"] {
		t.Errorf("items_processed thresholds %v, want count==36 false (passed) and count>100 true (failed)", th)
	}
	if th := e.thresholds(t, "checks"); len(th) != 1 || !th["rate>0.9"] {
		t.Errorf("checks thresholds %v, want rate>0.9 true (failed)", th)
	}

	rg := e.RootGroup
	if rg.Name != "" || rg.Path != "" || rg.ID != md5hex("") {
		t.Errorf("root group name/path/id = %q/%q/%q, want \"\"/\"\"/%s", rg.Name, rg.Path, rg.ID, md5hex(""))
	}
	want := map[string]exportCheck{
		"status is 200": {Name: "status is 200", Path: "::status is 200", Passes: 12},
		"body is long":  {Name: "body is long", Path: "::body is long", Fails: 12},
	}
	if len(rg.Checks) != len(want) {
		t.Errorf("root group checks %v, want %d of them", rg.Checks, len(want))
	}
	for name, w := range want {
		got := rg.Checks[name]
		w.ID = md5hex(w.Path)
		if got != w {
			t.Errorf("root group check %q = %+v, want %+v", name, got, w)
		}
	}
	inner, ok := rg.Groups["inner"].(map[string]any)
	if !ok {
		t.Fatalf("root group has no group \"inner\": %v", rg.Groups)
	}
	if inner["path"] != "::inner" || inner["id"] != md5hex("::inner") {
		t.Errorf("group inner path/id = %v/%v, want ::inner/%s", inner["path"], inner["id"], md5hex("::inner"))
	}
	checks, _ := inner["checks"].(map[string]any)
	even, _ := checks["even iteration"].(map[string]any)
	if even["passes"] != 6.0 || even["fails"] != 6.0 || even["path"] != "::inner::even iteration" {
		t.Errorf("group inner check \"even iteration\" = %v, want 6 passes, 6 fails, path ::inner::even iteration", even)
	}
	if sd, _ := e.SetupData.(map[string]any); sd["token"] != "abc" || sd["n"] != 7.0 {
		t.Errorf("setup_data = %v, want {token: abc, n: 7}", e.SetupData)
	}
}

// handleSummary's files hold the data object in k6's legacy shape, with
// values equal to those of the export of the same run.
func TestHandleSummary(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	dir := t.TempDir()
	exp := filepath.Join(dir, "export.json")
	r := metronome(t, runSpec{args: []string{"run", "-q", "-e", "TARGET=" + tg.URL, "-e", "OUT_DIR=" + dir,
		"--summary-export", exp, script("summary/handle.js")}})
	if r.code != 99 {
		t.Fatalf("exit code %d, want 99 (body_size max<0 fails)\nstderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "HANDLE-SUMMARY iterations=10\n") {
		t.Errorf("stdout lacks handleSummary's line\nstdout:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "TOTAL RESULTS") {
		t.Errorf("handleSummary replaces the default summary, but it was printed too\nstdout:\n%s", r.stdout)
	}

	raw, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatalf("handleSummary's JSON file: %v", err)
	}
	var data struct {
		RootGroup struct {
			Checks []exportCheck `json:"checks"`
			Groups []any         `json:"groups"`
		} `json:"root_group"`
		Options struct {
			SummaryTrendStats []string `json:"summaryTrendStats"`
		} `json:"options"`
		State struct {
			TestRunDurationMs float64 `json:"testRunDurationMs"`
		} `json:"state"`
		Metrics map[string]struct {
			Type       string                     `json:"type"`
			Contains   string                     `json:"contains"`
			Values     map[string]float64         `json:"values"`
			Thresholds map[string]map[string]bool `json:"thresholds"`
		} `json:"metrics"`
		SetupData map[string]any `json:"setup_data"`
	}
	if err := json.Unmarshal(raw, &data); err != nil {
		t.Fatalf("handleSummary's JSON file: %v\n%s", err, raw)
	}
	e := readExport(t, exp)

	for name, want := range map[string][2]string{
		"iterations":         {"counter", "default"},
		"http_reqs":          {"counter", "default"},
		"http_req_duration":  {"trend", "time"},
		"http_req_failed":    {"rate", "default"},
		"checks":             {"rate", "default"},
		"body_size":          {"trend", "default"},
		"vus_max":            {"gauge", "default"},
		"iteration_duration": {"trend", "time"},
		"data_received":      {"counter", "data"},
	} {
		m, ok := data.Metrics[name]
		if !ok {
			t.Errorf("handleSummary data lacks metric %s", name)
			continue
		}
		if m.Type != want[0] || m.Contains != want[1] {
			t.Errorf("%s: type/contains %s/%s, want %s/%s", name, m.Type, m.Contains, want[0], want[1])
		}
		// Every value equals the export's, but the export calls a
		// Rate's rate "value".
		for stat, v := range m.Values {
			es := stat
			if m.Type == "rate" && stat == "rate" {
				es = "value"
			}
			if ev := e.num(t, name, es); ev != v {
				t.Errorf("%s %s: handleSummary %v, export %v", name, stat, v, ev)
			}
		}
	}
	if v := data.Metrics["iterations"].Values["count"]; v != 10 {
		t.Errorf("iterations = %v, want 10", v)
	}
	if v := data.Metrics["http_reqs"].Values["count"]; v != float64(tg.requests.Load()) {
		t.Errorf("http_reqs = %v, server answered %d", v, tg.requests.Load())
	}
	if v := data.Metrics["body_size"].Values["min"]; v != 3 {
		t.Errorf("body_size min = %v, want 3 (the body \"ok\\n\")", v)
	}
	if th := data.Metrics["body_size"].Thresholds["max<0"]; th == nil || th["ok"] {
		t.Errorf("body_size thresholds %v, want max<0 {ok: false}", data.Metrics["body_size"].Thresholds)
	}
	if th := data.Metrics["http_reqs"].Thresholds["count==10"]; th == nil || !th["ok"] {
		t.Errorf("http_reqs thresholds %v, want count==10 {ok: true}", data.Metrics["http_reqs"].Thresholds)
	}
	if c := data.RootGroup.Checks; len(c) != 1 || c[0].Name != "status is 200" || c[0].Passes != 10 || c[0].Fails != 0 {
		t.Errorf("root_group.checks = %+v, want one array entry: status is 200, 10 passes", c)
	}
	if data.State.TestRunDurationMs <= 0 {
		t.Errorf("state.testRunDurationMs = %v, want > 0", data.State.TestRunDurationMs)
	}
	if len(data.Options.SummaryTrendStats) == 0 {
		t.Errorf("options.summaryTrendStats is empty")
	}
	if data.SetupData["greeting"] != "hello" {
		t.Errorf("setup_data = %v, want {greeting: hello}", data.SetupData)
	}

	txt, err := os.ReadFile(filepath.Join(dir, "summary.txt"))
	if err != nil {
		t.Fatalf("handleSummary's text file: %v", err)
	}
	for _, line := range []string{"body_size trend", "checks rate", "http_reqs counter", "iterations counter", "vus_max gauge"} {
		if !strings.Contains(string(txt), line+"\n") {
			t.Errorf("handleSummary's text file lacks %q:\n%s", line, txt)
		}
	}
}
