package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/metronome-load/metronome/internal/stallserver"
	"github.com/metronome-load/metronome/output/dashboard"
)

// chromium finds a Chromium to drive, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium installed (apt-get install chromium); the web dashboard's browser test is skipped")
	return ""
}

// browser starts a headless Chromium that makes no request of its own.
func browser(t *testing.T, parent context.Context, path string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(parent, opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	return ctx
}

// drawnChart is what the page's DOM holds for one chart.
type drawnChart struct {
	ID     string     `json:"id"`
	Series string     `json:"series"`
	Paths  []drawPath `json:"paths"`
}

type drawPath struct {
	Style string `json:"style"`
	D     string `json:"d"`
}

const chartsJS = `Array.from(document.querySelectorAll('figure.chart')).map(f => ({
  id: f.id, series: f.dataset.series,
  paths: Array.from(f.querySelectorAll('svg path')).map(p => ({style: p.getAttribute('style') || '', d: p.getAttribute('d') || ''}))
}))`

var strokeRE = regexp.MustCompile(`stroke:(#[0-9A-F]{6})`)

// checkCharts checks that every chart the page shows draws each of its
// series with at least two points, counted from the SVG's paths, and
// that the charts of want are there.
func checkCharts(t *testing.T, where string, charts []drawnChart, want []string) {
	t.Helper()
	byID := map[string]bool{}
	for _, c := range charts {
		byID[c.ID] = true
		points := map[string]int{}
		for _, p := range c.Paths {
			m := strokeRE.FindStringSubmatch(p.Style)
			if m == nil {
				continue
			}
			points[m[1]] = max(points[m[1]], strings.Count(p.D, "M")+strings.Count(p.D, "L"))
		}
		if c.Series == "" {
			t.Errorf("%s: chart %s names no series", where, c.ID)
		}
		var drawn []string
		for _, s := range strings.Split(c.Series, "|") {
			n := points[dashboard.Palette[s]]
			if n < 2 {
				t.Errorf("%s: chart %s: series %q drew %d points", where, c.ID, s, n)
			}
			drawn = append(drawn, fmt.Sprintf("%s=%d", s, n))
		}
		t.Logf("%s: %s: %s", where, c.ID, strings.Join(drawn, ", "))
	}
	for _, id := range want {
		if !byID[id] {
			t.Errorf("%s: no chart %s", where, id)
		}
	}
}

var wantCharts = []string{
	"total-latency", "total-lag", "total-backlog", "total-rate", "total-vus", "total-spectrum",
	"scenario-open-latency", "scenario-open-lag", "scenario-open-backlog", "scenario-open-rate", "scenario-open-spectrum",
	"scenario-closed-latency", "scenario-closed-rate", "scenario-closed-spectrum",
	"scenario-healthy-latency", "scenario-healthy-spectrum",
}

// endpointRow is one row of the page's per-endpoint table.
type endpointRow struct {
	Name string `json:"name"`
	// Cells are requests, raw p50, p99, p99.9, corrected p50, p99, p99.9.
	Cells        []string `json:"cells"`
	RawP99       float64  `json:"rawP99"`
	CorrectedP99 float64  `json:"correctedP99"`
	// Chart is the link to the name's chart, "#endpoint-<n>-latency".
	Chart string `json:"chart"`
}

const endpointsJS = `Array.from(document.querySelectorAll('#endpoint-table tbody tr')).map(r => ({
  name: r.querySelector('td.name').textContent,
  cells: Array.from(r.querySelectorAll('td')).slice(1).map(c => c.textContent),
  rawP99: Number(r.dataset.rawP99), correctedP99: Number(r.dataset.correctedP99),
  chart: (r.querySelector('td.name a') || {hash: ''}).hash
}))`

// checkEndpoints checks the per-endpoint table of stall.js: the two names
// with their requests counted and every percentile shown; once the run
// has ended (final), the stalled endpoint first, its corrected p99 far
// above its raw one, and the healthy one's close to its raw one.
func checkEndpoints(t *testing.T, where string, rows []endpointRow, charts []drawnChart, final bool) map[string]endpointRow {
	t.Helper()
	by := map[string]endpointRow{}
	for _, r := range rows {
		by[r.Name] = r
		t.Logf("%s: endpoint %s: %s (raw p99 %.2f ms, corrected p99 %.2f ms, chart %s)", where, r.Name, strings.Join(r.Cells, " "), r.RawP99, r.CorrectedP99, r.Chart)
		if len(r.Cells) != 7 {
			t.Errorf("%s: endpoint %s: %d cells", where, r.Name, len(r.Cells))
			continue
		}
		if n, err := strconv.Atoi(r.Cells[0]); err != nil || n == 0 {
			t.Errorf("%s: endpoint %s: requests %q", where, r.Name, r.Cells[0])
		}
		for _, c := range r.Cells[1:] {
			if _, err := time.ParseDuration(strings.ReplaceAll(c, "µs", "us")); err != nil {
				t.Errorf("%s: endpoint %s: %q is not a duration", where, r.Name, c)
			}
		}
		drawn := false
		for _, c := range charts {
			drawn = drawn || "#"+c.ID == r.Chart
		}
		if !drawn {
			t.Errorf("%s: endpoint %s links to %q, which is no chart on the page", where, r.Name, r.Chart)
		}
	}
	stalled, ok1 := by["stalled"]
	healthy, ok2 := by["healthy"]
	if len(rows) != 2 || !ok1 || !ok2 {
		t.Fatalf("%s: endpoints %v, want stalled and healthy", where, rows)
	}
	if !final {
		return by
	}
	if rows[0].Name != "stalled" {
		t.Errorf("%s: %s comes first; the stalled endpoint's corrected p99 is the highest", where, rows[0].Name)
	}
	// Each stall held one request of each stalled scenario (under 1% of
	// the endpoint's, so its raw p99 is fast) and delayed every arrival of
	// its 1.5 s (over 1%, so its corrected p99 is a second or so above the
	// raw one). The healthy endpoint's corrected p99 is its raw one
	// plus what a loaded machine made its arrivals wait. Compared as gaps,
	// so that a machine slow at everything moves both sides alike.
	stalledGap, healthyGap := stalled.CorrectedP99-stalled.RawP99, healthy.CorrectedP99-healthy.RawP99
	if stalledGap < 800 {
		t.Errorf("%s: stalled: corrected p99 %.2f ms, raw p99 %.2f ms; want the corrected one 800 ms above or more",
			where, stalled.CorrectedP99, stalled.RawP99)
	}
	if healthyGap > stalledGap/4 {
		t.Errorf("%s: healthy: corrected p99 %.2f ms, raw p99 %.2f ms; want them closer than a quarter of the stalled endpoint's %.2f ms",
			where, healthy.CorrectedP99, healthy.RawP99, stalledGap)
	}
	return by
}

// TestWebDashboardInBrowser runs two scenarios against a stall server
// and one against a healthy server (testdata/dashboard/stall.js) with
// K6_WEB_DASHBOARD=true, loads the live page in headless Chromium while
// the run goes on, then the exported report and the report `metronome
// report` builds from the run's HdrHistogram log, and checks that each
// chart drew its series, that the report's corrected p99 is the summary's,
// and that the per-endpoint table shows the stalled endpoint's corrected
// p99 far above its raw one and the healthy one's not. Screenshots go to
// the test's artifact directory (go test -artifacts).
func TestWebDashboardInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("a 10-second run in real time, with Chromium")
	}
	chrome := chromium(t)
	// Stalls of 1.5 s every 4 s, from 1.5 s: long enough that the stalled
	// endpoint's corrected tail stands clear of what a loaded machine adds
	// to every request's.
	srv := startServer(t, stallserver.Schedule{Length: 1500 * time.Millisecond, Period: 4 * time.Second, First: 1500 * time.Millisecond})
	healthy := startServer(t, stallserver.Schedule{})
	dir := t.TempDir()
	shots := t.ArtifactDir()
	report := filepath.Join(dir, "report.html")
	hlog := filepath.Join(dir, "run.hlog")

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// Both browsers start before the run, which must not wait for them.
	bctx, bctx2 := browser(t, ctx, chrome), browser(t, ctx, chrome)
	must(t, "start Chromium", chromedp.Do(bctx, chromedp.Navigate("about:blank")))
	must(t, "start Chromium", chromedp.Do(bctx2, chromedp.Navigate("about:blank")))
	start := time.Now()
	cmd := exec.CommandContext(ctx, binary, "run", "-o", "hdrlog="+hlog,
		"-e", "TARGET="+srv.URL(), "-e", "HEALTHY="+healthy.URL(), "-e", "RATE=100", "-e", "DURATION=10s", "testdata/dashboard/stall.js")
	cmd.Env = append(os.Environ(), "K6_WEB_DASHBOARD=true", "K6_WEB_DASHBOARD_PORT=0",
		"K6_WEB_DASHBOARD_PERIOD=1s", "K6_WEB_DASHBOARD_EXPORT="+report, "K6_HDRLOG_INTERVAL=1s")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addrRE := regexp.MustCompile(`web-dashboard \((http://127\.0\.0\.1:\d+)`)
	addr := make(chan string, 1)
	outDone := make(chan string, 1)
	go func() {
		var all strings.Builder
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		outDone <- all.String()
	}()
	var url string
	select {
	case url = <-addr:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("no dashboard address in the banner; stderr:\n%s", stderr.String())
	}
	t.Logf("live page at %s", url)

	// Load the live page once the first stall (1.5 s to 3 s) is behind, mark
	// the document, and read it again two periods later: the overview must
	// have moved on in the same document (no reload).
	time.Sleep(time.Until(start.Add(4 * time.Second)))
	open(t, bctx, url, "#total-latency svg")
	before := text(t, bctx, "#ov-requests")
	must(t, "mark", chromedp.Do(bctx, chromedp.Evaluate[chromedp.Void](`window.__sameDocument = true; undefined`)))
	must(t, "wait", chromedp.Do(bctx, chromedp.Sleep(2500*time.Millisecond)))
	after, status := text(t, bctx, "#ov-requests"), text(t, bctx, "#status")
	marker, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`window.__sameDocument === true`))
	must(t, "read the mark", err)
	live, err := chromedp.Run(bctx, chromedp.Evaluate[[]drawnChart](chartsJS))
	must(t, "read the charts", err)
	liveEndpoints, err := chromedp.Run(bctx, chromedp.Evaluate[[]endpointRow](endpointsJS))
	must(t, "read the endpoints", err)
	screenshot(t, bctx, filepath.Join(shots, "live.jpg"))
	if !marker || before == after || !strings.Contains(status, "updated") {
		t.Errorf("the live page did not update in place: requests %q then %q, status %q, same document %v", before, after, status, marker)
	}
	checkCharts(t, "live", live, []string{"total-latency", "total-lag", "total-rate", "total-vus", "total-spectrum"})
	checkEndpoints(t, "live", liveEndpoints, live, false)

	runErr := cmd.Wait()
	summaryText := <-outDone
	if runErr != nil {
		t.Fatalf("run: %v\nstderr:\n%s\nstdout:\n%s", runErr, stderr.String(), summaryText)
	}
	m := regexp.MustCompile(`(?m)^\s*corrected_latency\.*: .*p\(99\)=(\S+)`).FindStringSubmatch(summaryText)
	if m == nil {
		t.Fatalf("no corrected_latency p(99) in the summary:\n%s", summaryText)
	}
	summaryP99 := m[1]

	st, err := os.Stat(report)
	if err != nil {
		t.Fatalf("no report: %v", err)
	}
	if st.Size() > 5<<20 {
		t.Errorf("report is %d bytes, over 5 MB", st.Size())
	}
	t.Logf("report: %d bytes", st.Size())

	open(t, bctx2, "file://"+report, "#total-spectrum svg")
	shown, summaryShown := text(t, bctx2, "#corrected-p99"), text(t, bctx2, "pre.summary")
	final, err := chromedp.Run(bctx2, chromedp.Evaluate[[]drawnChart](chartsJS))
	must(t, "read the report's charts", err)
	requests, err := chromedp.Run(bctx2, chromedp.Evaluate[[]string](`performance.getEntriesByType('resource').map(e => e.name)`))
	must(t, "read the report's requests", err)
	reportEndpoints, err := chromedp.Run(bctx2, chromedp.Evaluate[[]endpointRow](endpointsJS))
	must(t, "read the report's endpoints", err)
	screenshot(t, bctx2, filepath.Join(shots, "report.jpg"))
	if shown != summaryP99 {
		t.Errorf("the report shows corrected p99 %q, the summary %q", shown, summaryP99)
	}
	t.Logf("corrected p99: report %s, summary %s", shown, summaryP99)
	if !strings.Contains(summaryShown, "corrected_latency") || !strings.Contains(summaryShown, "SCENARIOS") {
		t.Errorf("the report's summary misses the metrics or the scenario account:\n%s", summaryShown)
	}
	if len(requests) > 0 {
		t.Errorf("the report loaded resources: %v", requests)
	}
	checkCharts(t, "report", final, wantCharts)
	// The exported report's table has the summary's figures, as printed.
	stalled := checkEndpoints(t, "report", reportEndpoints, final, true)["stalled"]
	sm := regexp.MustCompile(`(?m)^\s+stalled\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$`).FindStringSubmatch(summaryText)
	if sm == nil {
		t.Errorf("no stalled row in the summary's endpoint table:\n%s", summaryText)
	} else if fmt.Sprint(sm[1:]) != fmt.Sprint(stalled.Cells) {
		t.Errorf("the report shows the stalled endpoint as %v, the summary as %v", stalled.Cells, sm[1:])
	}
	// Following the table's link shows the stalled endpoint's chart.
	must(t, "follow the stalled endpoint's link", chromedp.Do(bctx2, chromedp.Click(chromedp.CSS(`#endpoint-table a[href="`+stalled.Chart+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(stalled.Chart+" svg"))))

	// The same report from the run's HdrHistogram log.
	fromLog := filepath.Join(dir, "from-log.html")
	if out, err := exec.CommandContext(ctx, binary, "report", hlog, "-o", fromLog).CombinedOutput(); err != nil {
		t.Fatalf("metronome report: %v\n%s", err, out)
	}
	open(t, bctx2, "file://"+fromLog, "#total-spectrum svg")
	logged, err := chromedp.Run(bctx2, chromedp.Evaluate[[]drawnChart](chartsJS))
	must(t, "read the charts from the log", err)
	loggedEndpoints, err := chromedp.Run(bctx2, chromedp.Evaluate[[]endpointRow](endpointsJS))
	must(t, "read the endpoints from the log", err)
	screenshot(t, bctx2, filepath.Join(shots, "report-from-log.jpg"))
	checkCharts(t, "from log", logged, []string{"total-latency", "total-lag", "total-rate", "total-spectrum",
		"scenario-open-latency", "scenario-closed-spectrum"})
	checkEndpoints(t, "from log", loggedEndpoints, logged, true)

}

// TestShortRunReportInBrowser runs the same three scenarios for 10 s with
// the default 10 s period and no live page, and checks in headless
// Chromium that every chart of the exported report draws each series with
// points: the report of a run this short uses intervals of a tenth of
// the period.
func TestShortRunReportInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("a 10-second run in real time, with Chromium")
	}
	chrome := chromium(t)
	srv := startStallServer(t)
	healthy := startServer(t, stallserver.Schedule{})
	report := filepath.Join(t.TempDir(), "report.html")
	r := metronome(t, runSpec{
		args: []string{"run", "-q", "-e", "TARGET=" + srv.URL(), "-e", "HEALTHY=" + healthy.URL(), "-e", "RATE=50", "-e", "DURATION=10s",
			"testdata/dashboard/stall.js"},
		env: []string{"K6_WEB_DASHBOARD=true", "K6_WEB_DASHBOARD_PORT=-1", "K6_WEB_DASHBOARD_EXPORT=" + report},
	})
	if r.code != 0 {
		t.Fatalf("exit code %d\nstderr:\n%s", r.code, r.stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	bctx := browser(t, ctx, chrome)
	open(t, bctx, "file://"+report, "#total-spectrum svg")
	charts, err := chromedp.Run(bctx, chromedp.Evaluate[[]drawnChart](chartsJS))
	must(t, "read the report's charts", err)
	screenshot(t, bctx, filepath.Join(t.ArtifactDir(), "short-report.jpg"))
	checkCharts(t, "short report", charts, wantCharts)
	if intro := text(t, bctx, "body"); !strings.Contains(intro, "intervals of 1s") {
		t.Errorf("the report does not say it uses 1 s intervals")
	}
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// open loads url and waits until the element sel is visible.
func open(t *testing.T, ctx context.Context, url, sel string) {
	t.Helper()
	must(t, "open "+url, chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(sel))))
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	must(t, "read "+sel, err)
	return strings.TrimSpace(s)
}

// screenshot saves the whole page as a JPEG.
func screenshot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	b, err := chromedp.Run(ctx, chromedp.FullScreenshot(80))
	must(t, "screenshot", err)
	must(t, "save the screenshot", os.WriteFile(path, b, 0o644))
}
