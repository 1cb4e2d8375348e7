package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// browserSite serves a page for browser scripts on loopback.
func browserSite(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/favicon.ico" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><html><head><title>T</title></head><body><h1>Hello</h1><button onclick="this.textContent='done'">Go</button></body></html>`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		t.Skip("no Chromium at /usr/bin/chromium; CI installs it (.ci/run)")
	}
}

// chromiumsUsing counts the processes whose command line mentions dir:
// Chromium passes its --user-data-dir, made under $TMPDIR, to every child.
func chromiumsUsing(dir string) int {
	out, _ := exec.Command("pgrep", "-f", dir).Output()
	return len(strings.Fields(string(out)))
}

// Chromium dies with metronome: on SIGINT the run ends and closes it
// before metronome exits, leaving nothing in TMPDIR, on SIGKILL the kernel kills it (Pdeathsig) and its children follow; none of
// its processes, found by the unique profile folder, remains.
func TestBrowserLeavesNoChromium(t *testing.T) {
	needChromium(t)
	srv := browserSite(t)
	script := filepath.Join(t.TempDir(), "b.js")
	if err := os.WriteFile(script, []byte(`
import { browser } from "k6/browser";
export const options = { scenarios: { ui: { executor: "constant-vus", vus: 1, duration: "60s", options: { browser: { type: "chromium" } } } } };
export default async function () {
	const page = await browser.newPage();
	try { await page.goto(__ENV.URL); await page.waitForTimeout(300); } finally { await page.close(); }
}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			tmp := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary, "run", "-q", "-e", "URL="+srv.URL, script)
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(30 * time.Second)
			for chromiumsUsing(tmp) == 0 {
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatal("Chromium did not start within 30s")
				}
				time.Sleep(100 * time.Millisecond)
			}
			time.Sleep(time.Second) // let it load a page
			_ = cmd.Process.Signal(sig)
			_ = cmd.Wait()
			if sig == syscall.SIGINT {
				// The run's end stopped the browser before metronome exited.
				if n := chromiumsUsing(tmp); n > 0 {
					t.Errorf("%d Chromium processes still run when metronome has exited", n)
				}
				left, _ := os.ReadDir(tmp)
				for _, e := range left {
					t.Errorf("%s is left in TMPDIR", e.Name())
				}
			}
			// Chromium's children notice their parent's death on their own.
			deadline = time.Now().Add(10 * time.Second)
			for n := chromiumsUsing(tmp); n > 0; n = chromiumsUsing(tmp) {
				if time.Now().After(deadline) {
					t.Fatalf("%d Chromium processes remain after %s", n, sig)
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}

// A script with an HTTP scenario and an open-model browser scenario gives
// one summary holding both: http_reqs and the browser_* metrics, and a
// corrected_latency for each page navigation.
func TestBrowserMixedScenarios(t *testing.T) {
	needChromium(t)
	srv := browserSite(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "mixed.js")
	if err := os.WriteFile(script, []byte(`
import http from "k6/http";
import { check } from "k6";
import { browser } from "k6/browser";
export const options = { thresholds: { "corrected_latency{scenario:ui}": ["max>=0"] }, scenarios: {
	api: { executor: "shared-iterations", iterations: 5, exec: "api" },
	ui: { executor: "constant-arrival-rate", rate: 2, timeUnit: "1s", duration: "2s", preAllocatedVUs: 2, exec: "ui",
		options: { browser: { type: "chromium" } } },
} };
export function api() { http.get(__ENV.URL); }
export async function ui() {
	const page = await browser.newPage();
	try {
		await page.goto(__ENV.URL);
		await page.locator("button").click();
		check(await page.locator("button").textContent(), { "clicked": (t) => t === "done" });
	} finally { await page.close(); }
}`), 0o644); err != nil {
		t.Fatal(err)
	}
	export := filepath.Join(dir, "summary.json")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "run", "-q", "-e", "URL="+srv.URL, "--summary-export", export, script)
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	raw, err := os.ReadFile(export)
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Metrics map[string]map[string]any `json:"metrics"`
	}
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	count := func(name, key string) float64 {
		v, _ := sum.Metrics[name][key].(float64)
		return v
	}
	if n := count("http_reqs", "count"); n != 5 {
		t.Errorf("http_reqs %v, want 5", n)
	}
	// About 4 arrivals of the browser scenario; each loads the page.
	if n := count("checks", "passes"); n < 2 {
		t.Errorf("checks passed %v times, want the browser iterations' (≥ 2)\n%s", n, out)
	}
	if n := count("corrected_latency{scenario:ui}", "max"); n <= 0 {
		t.Errorf("corrected_latency of the browser scenario has max %v, want the navigations' latencies (> 0)\n%s", n, raw)
	}
	for _, m := range []string{"browser_http_req_duration", "browser_data_received", "browser_data_sent", "browser_web_vital_fcp", "browser_web_vital_ttfb"} {
		if _, ok := sum.Metrics[m]; !ok {
			t.Errorf("summary lacks %s\n%s", m, out)
		}
	}
	// The run's TMPDIR is dir: Chromium's profile and socket folders are
	// gone by the time metronome exits.
	left, _ := os.ReadDir(dir)
	for _, e := range left {
		if n := e.Name(); n != "mixed.js" && n != "summary.json" {
			t.Errorf("%s is left in TMPDIR after the run", n)
		}
	}
}

// renderersUsing lists the renderer processes of the Chromium whose
// profile folder is under dir.
func renderersUsing(dir string) []int {
	out, _ := exec.Command("pgrep", "-f", dir).Output()
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		var pid int
		if _, err := fmt.Sscan(f, &pid); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && strings.Contains(string(cmdline), "--type=renderer") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// SIGKILL of a page's renderer while iterations run fails the iteration
// that used the page with k6's "Target has crashed", instead of leaving
// it waiting for an answer that never comes; the VU goes on with new
// pages, the run ends on time and normally, and no Chromium process
// remains.
func TestBrowserRendererKilled(t *testing.T) {
	needChromium(t)
	site := browserSite(t)
	loaded := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			select {
			case loaded <- struct{}{}:
			default:
			}
		}
		site.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	script := filepath.Join(dir, "crash.js")
	if err := os.WriteFile(script, []byte(`
import { browser } from "k6/browser";
import { Counter } from "k6/metrics";
const done = new Counter("pages_read");
export const options = { scenarios: { ui: { executor: "constant-vus", vus: 1, duration: "10s", gracefulStop: "30s",
	options: { browser: { type: "chromium" } } } } };
export default async function () {
	const page = await browser.newPage();
	try {
		await page.goto(__ENV.URL);
		await page.waitForTimeout(1500);
		if (await page.locator("h1").textContent() === "Hello") done.add(1);
	} finally { await page.close(); }
}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	export := filepath.Join(dir, "summary.json")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "run", "-q", "-e", "URL="+srv.URL, "--summary-export", export, script)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill the renderers once a page asked for the document: the
	// iteration is then loading it or in its 1.5 s wait.
	select {
	case <-loaded:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("no page loaded within 30s\n%s", stderr.String())
	}
	time.Sleep(300 * time.Millisecond)
	var killed []int
	for _, pid := range renderersUsing(tmp) {
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed = append(killed, pid)
		}
	}
	if len(killed) == 0 {
		t.Error("found no renderer of the run's Chromium to kill")
	}
	err := cmd.Wait()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	// 10 s of iterations, a 1.5 s one at most running on past it, and
	// Chromium's start and stop: far below the 30 s gracefulStop that a
	// hung iteration would wait for.
	if took > 30*time.Second {
		t.Errorf("the run took %v: an iteration waited on the dead renderer until gracefulStop", took)
	}
	if !strings.Contains(stderr.String(), "Target has crashed") {
		t.Errorf("no iteration failed with k6's \"Target has crashed\" after the renderers %v were killed\nstderr:\n%s", killed, stderr.String())
	}
	raw, err := os.ReadFile(export)
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Metrics map[string]map[string]float64 `json:"metrics"`
	}
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	// Before the kill the first page may not have been read; after it,
	// each 1.5 s iteration of the remaining ~9 s reads a new page.
	if n := sum.Metrics["pages_read"]["count"]; n < 2 {
		t.Errorf("%v pages read, want the new pages after the crash (≥ 2)\nstderr:\n%s", n, stderr.String())
	}
	deadline := time.Now().Add(10 * time.Second)
	for n := chromiumsUsing(tmp); n > 0; n = chromiumsUsing(tmp) {
		if time.Now().After(deadline) {
			t.Fatalf("%d Chromium processes remain after the run", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// k6's tags on the browser metrics with the default system tags (its
// browser module's network manager and web vitals): a response's
// metrics, a request's browser_data_sent, and a web vital.
var (
	browserResponseTags = []string{"from_cache", "from_prefetch_cache", "from_service_worker", "group", "method", "name", "proto", "resource_type", "scenario", "status", "url"}
	browserRequestTags  = []string{"group", "method", "name", "resource_type", "scenario", "url"}
	browserVitalTags    = []string{"group", "name", "rating", "scenario", "url"}
)

// Browser metrics reach thresholds and every output like any metric: a
// threshold on browser_web_vital_fcp that any page crosses fails the run
// (exit 99, named), those on browser_http_req_duration and
// browser_http_req_failed hold; the json output's browser samples carry
// k6's tags, each page, closed as soon as it loaded, has its FCP, LCP,
// TTFB and CLS, the csv output holds as many of each, the hdrlog holds the
// browser trends' values, and metronome merge of the result file gives
// the run's own --summary-export for every browser metric.
func TestBrowserMetricsReachOutputs(t *testing.T) {
	needChromium(t)
	srv := browserSite(t)
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	if err := os.WriteFile(path("out.js"), []byte(`
import { browser } from "k6/browser";
export const options = {
	thresholds: {
		browser_http_req_duration: ["p(95)<60000"],
		browser_http_req_failed: ["rate<0.5"],
		browser_web_vital_fcp: ["max<0"],
	},
	scenarios: { ui: { executor: "shared-iterations", vus: 1, iterations: 3, options: { browser: { type: "chromium" } } } },
};
export default async function () {
	const page = await browser.newPage();
	try { await page.goto(__ENV.URL); } finally { await page.close(); }
}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := metronome(t, runSpec{timeout: 90 * time.Second, env: []string{"TMPDIR=" + dir},
		args: []string{"run", "-q", "-e", "URL=" + srv.URL, "--summary-export", path("run.json"),
			"-o", "json=" + path("out.json"), "-o", "csv=" + path("out.csv"), "-o", "result=" + path("out.result"),
			"-o", "hdrlog=" + path("out.hlog"), path("out.js")}})
	if r.code != 99 {
		t.Fatalf("exit code %d, want 99 (the FCP threshold crossed)\nstderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "thresholds on metrics 'browser_web_vital_fcp' have been crossed") {
		t.Errorf("the crossed FCP threshold is not named\nstderr:\n%s", r.stderr)
	}

	// json: every browser sample with k6's tag names; count them.
	points := map[string]int{}
	values := map[string]float64{}
	for i, line := range strings.Split(string(readMaybeGzip(t, path("out.json"))), "\n") {
		var l struct {
			Type   string
			Metric string
			Data   struct {
				Value float64
				Tags  map[string]string
			}
		}
		if line == "" || json.Unmarshal([]byte(line), &l) != nil || l.Type != "Point" || !strings.HasPrefix(l.Metric, "browser_") {
			continue
		}
		points[l.Metric]++
		values[l.Metric] += l.Data.Value
		want := browserResponseTags
		switch {
		case l.Metric == "browser_data_sent":
			want = browserRequestTags
		case strings.HasPrefix(l.Metric, "browser_web_vital_"):
			want = browserVitalTags
		}
		got := make([]string, 0, len(l.Data.Tags))
		for k := range l.Data.Tags {
			got = append(got, k)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("out.json line %d: %s has tags %v, want k6's %v", i+1, l.Metric, got, want)
		}
		if u := l.Data.Tags["url"]; !strings.HasPrefix(u, srv.URL+"/") || l.Data.Tags["scenario"] != "ui" {
			t.Errorf("out.json line %d: %s tagged url %q scenario %q", i+1, l.Metric, u, l.Data.Tags["scenario"])
		}
	}
	for _, m := range []string{"browser_http_req_duration", "browser_http_req_failed", "browser_data_received", "browser_data_sent"} {
		if points[m] < 3 {
			t.Errorf("out.json has %d %s samples, want one per page at least (3)", points[m], m)
		}
	}
	// Each page is closed as soon as it loaded, and still has its vitals:
	// its first contentful paint comes a few frames after load. (k6 v2.2.0
	// has them in some runs, loses them in others.)
	for _, m := range []string{"browser_web_vital_fcp", "browser_web_vital_lcp", "browser_web_vital_ttfb", "browser_web_vital_cls"} {
		if points[m] != 3 {
			t.Errorf("out.json has %d %s samples, want one per page (3)", points[m], m)
		}
	}

	// csv: as many rows of each browser metric.
	rows := map[string]int{}
	for _, line := range strings.Split(string(readMaybeGzip(t, path("out.csv"))), "\n") {
		if name, _, ok := strings.Cut(line, ","); ok && strings.HasPrefix(name, "browser_") {
			rows[name]++
		}
	}
	if !maps.Equal(rows, points) {
		t.Errorf("out.csv has browser rows %v, out.json %v", rows, points)
	}

	// result: merge gives the run's summary of each browser metric.
	export := func(file string) map[string]map[string]any {
		var s struct{ Metrics map[string]map[string]any }
		if err := json.Unmarshal(readMaybeGzip(t, file), &s); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		return s.Metrics
	}
	m := metronome(t, runSpec{args: []string{"merge", "--summary-export", path("merged.json"), path("out.result")}})
	if m.code != 99 {
		t.Errorf("merge of the result file: exit code %d, want the run's 99\nstderr:\n%s", m.code, m.stderr)
	}
	run, merged := export(path("run.json")), export(path("merged.json"))
	for name, want := range run {
		if !strings.HasPrefix(name, "browser_") {
			continue
		}
		got := merged[name]
		for k, v := range want {
			if w, ok := v.(float64); ok {
				g, _ := got[k].(float64)
				if math.Abs(g-w) > 1e-9*math.Max(1, math.Abs(w)) {
					t.Errorf("%s %s: merged %v, run %v", name, k, got[k], v)
				}
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: merged %v, run %v", name, got, want)
		}
	}
	if n := run["browser_data_sent"]["count"]; n != values["browser_data_sent"] {
		t.Errorf("summary's browser_data_sent %v, out.json's samples sum to %v", n, values["browser_data_sent"])
	}
	p, _ := run["browser_http_req_failed"]["passes"].(float64)
	f, _ := run["browser_http_req_failed"]["fails"].(float64)
	if p+f != float64(points["browser_http_req_failed"]) {
		t.Errorf("summary's browser_http_req_failed counts %v+%v, out.json has %d samples", p, f, points["browser_http_req_failed"])
	}

	// hdrlog: every value of the browser trends.
	h := metronome(t, runSpec{args: []string{"merge", "--json", path("out.hlog")}})
	if h.code != 0 {
		t.Fatalf("merge of the hdrlog: exit %d\n%s", h.code, h.stderr)
	}
	var dists []struct {
		Metric string
		Count  int
	}
	if err := json.Unmarshal([]byte(h.stdout), &dists); err != nil {
		t.Fatalf("merge --json: %v\n%s", err, h.stdout)
	}
	logged := map[string]int{}
	for _, d := range dists {
		logged[d.Metric] += d.Count
	}
	for _, name := range []string{"browser_http_req_duration", "browser_web_vital_fcp", "browser_web_vital_ttfb"} {
		if logged[name] != points[name] {
			t.Errorf("the hdrlog holds %d %s values, out.json %d", logged[name], name, points[name])
		}
	}
}
