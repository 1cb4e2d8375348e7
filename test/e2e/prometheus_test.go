package e2e

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/testkit/grafanatest"
	"github.com/metronome-load/metronome/internal/testkit/promtest"
	"github.com/metronome-load/metronome/metrics"
)

// The Prometheus remote-write output against a real Prometheus (Debian's
// 2.42, started by promtest): testdata/prometheus/script.js runs through
// metronome and, when present, real k6, once per trend mode, and
//   - every series k6 writes, metronome writes with the same labels, and no
//     other series but corrected_latency's and schedule_lag's (k6's series
//     are recorded in testdata/prometheus/k6-series.txt, so that CI, which
//     has no k6, checks them);
//   - corrected_latency's series are http_req_duration's, request by
//     request, plus back-filled ones (backfilled=true), dropped arrivals
//     (the scenario's labels and outcome=dropped) and the request cut off
//     at the hard stop (outcome=interrupted);
//   - per-endpoint PromQL quantiles and counts agree with the samples of the
//     same run's JSON output;
//   - metronome's Grafana dashboard, and Grafana's own k6 dashboards where
//     their files are present, answer their queries.

var recordK6Series = flag.Bool("record-k6-series", false,
	"write the series real k6 sends to Prometheus into testdata/prometheus/k6-series.txt instead of comparing them")

// k6SeriesFile holds the series k6 v2.2.0 wrote for the script, per mode.
var k6SeriesFile = filepath.Join("testdata", "prometheus", "k6-series.txt")

// promMode is one way the output writes trends.
type promMode struct {
	name string
	env  []string
	args []string
}

var promModes = []promMode{
	// Trend stats: k6's default p(99) and the stats the k6 dashboard
	// (19665) reads, plus count for the per-endpoint checks.
	{name: "stats", env: []string{"K6_PROMETHEUS_RW_TREND_STATS=p(95),p(99),min,max,avg,med,count"}},
	// Native histograms, with the vu and iter system tags on: they are
	// metadata and never labels; ip is a tag and a label.
	{name: "native", env: []string{"K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=true"}, args: []string{"--system-tags",
		"proto,subproto,status,method,url,name,group,check,error,error_code,tls_version,scenario,service,expected_response,vu,iter,ip"}},
}

// promRun is one run of the script pushed into Prometheus.
type promRun struct {
	mode       promMode
	testid     string
	start, end time.Time
	// series are the label sets Prometheus holds for the run, testid
	// left out.
	series []map[string]string
	// points are the run's JSON output (metronome only).
	points []jsonLine
}

// newShopServer starts the loopback server the script talks to: /delay/{ms}
// answers after ms milliseconds (or when the client goes), /status/{code}
// with that status, /redirect sends to /delay/1, anything else is 200.
func newShopServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/delay/{ms}", func(w http.ResponseWriter, r *http.Request) {
		ms, _ := strconv.Atoi(r.PathValue("ms"))
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-r.Context().Done():
		}
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, err := strconv.Atoi(r.PathValue("code"))
		if err != nil || code < 200 || code > 599 {
			code = http.StatusBadRequest
		}
		w.WriteHeader(code)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/delay/1", http.StatusFound)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// pushRun runs the script with rn into prom in mode m and reads back the
// run's series.
func pushRun(t *testing.T, rn runner, prom *promtest.Server, target string, m promMode) *promRun {
	t.Helper()
	pr := &promRun{mode: m, testid: fmt.Sprintf("%s-%s-%d", rn.name, m.name, time.Now().UnixNano())}
	args := append([]string{"run", "-q", "-e", "TARGET=" + target, "--tag", "testid=" + pr.testid,
		"-o", "experimental-prometheus-rw"}, m.args...)
	jsonPath := filepath.Join(t.TempDir(), "out.json")
	if rn.name == "metronome" {
		args = append(args, "-o", "json="+jsonPath)
	}
	env := append([]string{"K6_PROMETHEUS_RW_SERVER_URL=" + prom.WriteURL(), "K6_PROMETHEUS_RW_PUSH_INTERVAL=1s"}, m.env...)
	pr.start = time.Now().Add(-time.Second)
	r := rn.run(t, runSpec{args: append(args, script("prometheus/script.js")), env: env, timeout: 2 * time.Minute})
	pr.end = time.Now().Add(time.Second)
	if r.code != 0 {
		t.Fatalf("%s exited with %d\nstderr:\n%s", rn.name, r.code, r.stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	series, err := prom.Series(ctx, fmt.Sprintf(`{testid=%q}`, pr.testid), pr.start, pr.end)
	if err != nil {
		t.Fatal(err)
	}
	if len(series) == 0 {
		t.Fatalf("no series for testid %s\nserver log:\n%s\n%s stderr:\n%s", pr.testid, prom.Log(), rn.name, r.stderr)
	}
	for _, s := range series {
		delete(s, "testid")
	}
	pr.series = series
	if rn.name == "metronome" {
		pr.points = readJSONOutput(t, jsonPath)
	}
	return pr
}

// seriesLine writes a series as name{label="value",…} with the labels
// sorted and the target's address replaced by TARGET, so that lines of
// different runs compare.
func seriesLine(s map[string]string, target string) string {
	return strings.ReplaceAll(s["__name__"]+labelKey(s), target, "TARGET")
}

// labelKey writes a label set, its metric name left out, as
// {label="value",…} with the labels sorted.
func labelKey(s map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(s)) {
		if k != "__name__" {
			parts = append(parts, fmt.Sprintf("%s=%q", k, s[k]))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// readK6Series returns the recorded lines of one mode.
func readK6Series(t *testing.T, mode string) []string {
	t.Helper()
	raw, err := os.ReadFile(k6SeriesFile)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(raw), "\n") {
		if m, line, ok := strings.Cut(l, " "); ok && m == mode {
			out = append(out, line)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no series for mode %s", k6SeriesFile, mode)
	}
	return out
}

// writeK6Series replaces one mode's lines of the recording.
func writeK6Series(t *testing.T, mode string, lines []string) {
	t.Helper()
	raw, _ := os.ReadFile(k6SeriesFile)
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if l != "" && !strings.HasPrefix(l, mode+" ") && !strings.HasPrefix(l, "#") {
			keep = append(keep, l)
		}
	}
	for _, l := range lines {
		keep = append(keep, mode+" "+l)
	}
	sort.Strings(keep)
	header := "# The series k6 v2.2.0 sent to Prometheus for script.js, per trend mode (recorded by\n" +
		"# go test ./test/e2e -run TestPrometheusRemoteWrite -record-k6-series with K6_BINARY set), testid left out.\n"
	if err := os.WriteFile(k6SeriesFile, []byte(header+strings.Join(keep, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// metronomeSeries matches the series of metronome's own metrics
// (metronomeOnly and generatorHealth name them).
var metronomeSeries = regexp.MustCompile(`^k6_((corrected_latency|schedule_lag)_|generator_)`)

// TestPrometheusRemoteWrite: see the comment at the top of the file.
func TestPrometheusRemoteWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: four runs of 6 s each into a real Prometheus")
	}
	prom := promtest.Start(t)
	target := newShopServer(t).URL
	eachRunner(t, func(t *testing.T, rn runner) {
		var runs []*promRun
		for _, m := range promModes {
			t.Run(m.name, func(t *testing.T) {
				pr := pushRun(t, rn, prom, target, m)
				runs = append(runs, pr)
				var got []string
				for _, s := range pr.series {
					got = append(got, seriesLine(s, target))
				}
				sort.Strings(got)
				t.Run("series", func(t *testing.T) {
					if rn.name == "k6" && *recordK6Series {
						writeK6Series(t, m.name, got)
						return
					}
					compareSeries(t, rn.name, readK6Series(t, m.name), got)
				})
				if rn.name == "metronome" {
					t.Run("corrected labels", func(t *testing.T) { checkCorrectedLabels(t, pr) })
					t.Run("per endpoint", func(t *testing.T) { checkPerEndpoint(t, prom, pr) })
				}
				t.Run("k6 dashboards", func(t *testing.T) { checkK6Dashboards(t, prom, pr) })
			})
		}
		if rn.name == "metronome" && len(runs) == len(promModes) {
			t.Run("metronome dashboard", func(t *testing.T) { checkOwnDashboard(t, prom, runs) })
		}
	})
}

// compareSeries checks a run's series against k6's: the same lines for
// k6; for metronome every line of k6's and nothing more but its own
// metrics' series.
func compareSeries(t *testing.T, runner string, want, got []string) {
	t.Helper()
	has := map[string]bool{}
	for _, l := range got {
		has[l] = true
	}
	recorded := map[string]bool{}
	for _, l := range want {
		recorded[l] = true
		if !has[l] {
			t.Errorf("k6 wrote %s; %s did not", l, runner)
		}
	}
	own := 0
	for _, l := range got {
		switch {
		case recorded[l]:
		case runner == "metronome" && metronomeSeries.MatchString(l):
			own++
		default:
			t.Errorf("%s wrote %s; k6 did not", runner, l)
		}
	}
	t.Logf("%s: %d series, %d as k6's (of %d), %d of metronome's own metrics", runner, len(got), len(got)-own, len(want), own)
}

// without returns s without the labels ks.
func without(s map[string]string, ks ...string) map[string]string {
	c := maps.Clone(s)
	for _, k := range ks {
		delete(c, k)
	}
	return c
}

// trendSeries returns the label sets of a trend's series: its p99 gauges,
// or its native histograms.
func trendSeries(pr *promRun, metric string) []map[string]string {
	name := "k6_" + metric + "_p99"
	if pr.mode.name == "native" {
		name = "k6_" + metric + "_seconds"
	}
	var out []map[string]string
	for _, s := range pr.series {
		if s["__name__"] == name {
			out = append(out, without(s, "__name__"))
		}
	}
	return out
}

// checkCorrectedLabels holds corrected_latency's series to
// http_req_duration's: one per request series, with the same labels,
// plus back-filled, dropped and interrupted ones marked as such.
func checkCorrectedLabels(t *testing.T, pr *promRun) {
	raw := map[string]bool{}
	for _, s := range trendSeries(pr, "http_req_duration") {
		raw[labelKey(s)] = true
	}
	// The iteration-level labels of each scenario, as data_sent has them.
	iteration := map[string]bool{}
	for _, s := range pr.series {
		if s["__name__"] == "k6_data_sent_total" {
			iteration[labelKey(s)] = true
		}
	}
	corrected := map[string]bool{}
	kinds := map[string]int{}
	for _, s := range trendSeries(pr, "corrected_latency") {
		corrected[labelKey(s)] = true
		switch {
		case s["backfilled"] != "":
			kinds["backfilled"]++
			if s["backfilled"] != "true" || !raw[labelKey(without(s, "backfilled"))] {
				t.Errorf("back-filled series %v is no request's series", s)
			}
		case s["outcome"] == "dropped":
			kinds["dropped"]++
			if !iteration[labelKey(without(s, "outcome"))] {
				t.Errorf("dropped series %v does not carry its scenario's labels (%v)", s, slices.Sorted(maps.Keys(iteration)))
			}
		case s["outcome"] == "interrupted":
			kinds["interrupted"]++
			// The request cut off by the hard stop: it never got the
			// answer that would have given it its status labels.
			want := map[string]string{"method": "GET", "name": "slow", "url": "slow", "scenario": "starved", "team": "batch", "outcome": "interrupted"}
			if pr.mode.name == "native" {
				want["k6_feature_native_histograms"] = "true"
			}
			if got := without(s, "error", "error_code", "status"); labelKey(got) != labelKey(want) {
				t.Errorf("interrupted series %v, want the labels %v (plus error, error_code and status)", s, want)
			}
		case s["outcome"] != "":
			t.Errorf("series %v: unknown outcome", s)
		default:
			kinds["request"]++
			if !raw[labelKey(s)] {
				t.Errorf("corrected_latency series %v has no http_req_duration series with the same labels", s)
			}
		}
		if s["vu"] != "" || s["iter"] != "" {
			t.Errorf("series %v: vu and iter are metadata, never labels", s)
		}
	}
	for k := range raw {
		if !corrected[k] {
			t.Errorf("http_req_duration series %s has no corrected_latency series", k)
		}
	}
	t.Logf("%d http_req_duration series; corrected_latency: %v", len(raw), kinds)
	for _, k := range []string{"request", "backfilled", "dropped", "interrupted"} {
		if kinds[k] == 0 {
			t.Errorf("no %s corrected_latency series: the script should make some", k)
		}
	}
}

// checkPerEndpoint compares per-endpoint PromQL with the corrected_latency
// samples of the run's JSON output: counts exactly, quantiles within what
// the trend mode keeps of the values.
func checkPerEndpoint(t *testing.T, prom *promtest.Server, pr *promRun) {
	// The corrected_latency values (ms) per name and per series, and the
	// requests (neither back-filled nor an outcome) per name.
	byName := map[string][]float64{}
	bySeries := map[string][]float64{}
	requests := map[string]int{}
	for _, l := range pr.points {
		if l.Type != "Point" || l.Metric != "corrected_latency" || l.Data.Value == nil {
			continue
		}
		tags := map[string]string{}
		for k, v := range l.Data.Tags {
			if v != "" && k != "testid" {
				tags[k] = v
			}
		}
		v := *l.Data.Value
		bySeries[labelKey(tags)] = append(bySeries[labelKey(tags)], v)
		if name := tags["name"]; name != "" {
			byName[name] = append(byName[name], v)
			if tags["backfilled"] == "" && tags["outcome"] == "" {
				requests[name]++
			}
		}
	}
	if len(byName) < 5 {
		t.Fatalf("the JSON output holds corrected_latency for %d names: %v", len(byName), slices.Sorted(maps.Keys(byName)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// perName runs a query grouped by name at the end of the run.
	perName := func(expr string) map[string]float64 {
		t.Helper()
		res, err := prom.Query(ctx, fmt.Sprintf(expr, pr.testid), pr.end)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, s := range res.Series {
			out[s.Labels["name"]] = s.Points[0].V
		}
		return out
	}
	checkCounts := func(what string, got map[string]float64, want map[string]int) {
		t.Helper()
		for name, n := range want {
			if got[name] != float64(n) {
				t.Errorf("%s of %s: %g, want %d", what, name, got[name], n)
			}
		}
	}
	counts := map[string]int{}
	for name, vs := range byName {
		counts[name] = len(vs)
	}

	if pr.mode.name == "native" {
		checkCounts("corrected_latency samples", perName(`histogram_count(sum by (name) (k6_corrected_latency_seconds{testid=%q, name!=""}))`), counts)
		checkCounts("requests (http_req_duration samples)", perName(`histogram_count(sum by (name) (k6_http_req_duration_seconds{testid=%q}))`), requests)
		// PromQL finds the bucket of the value of rank ⌈q·n⌉ and
		// interpolates inside it: the answer is within one schema-3
		// bucket (×2^(1/8)) of that value.
		w := math.Exp2(1.0 / 8)
		p99 := perName(`histogram_quantile(0.99, sum by (name) (k6_corrected_latency_seconds{testid=%q, name!=""}))`)
		for _, name := range slices.Sorted(maps.Keys(byName)) {
			vs := slices.Sorted(slices.Values(byName[name]))
			x := vs[int(math.Ceil(0.99*float64(len(vs))))-1] / 1000
			got := p99[name]
			t.Logf("%-36s n=%4d  corrected p99: PromQL %.4f s, value of rank ⌈0.99n⌉ %.4f s", name, len(vs), got, x)
			if !(got > x/w*(1-1e-9) && got < x*w*(1+1e-9)) {
				t.Errorf("corrected p99 of %s: PromQL %g s, outside one schema-3 bucket of %g s", name, got, x)
			}
		}
		return
	}
	checkCounts("corrected_latency samples", perName(`sum by (name) (k6_corrected_latency_count{testid=%q, name!=""})`), counts)
	checkCounts("requests (http_req_duration samples)", perName(`sum by (name) (k6_http_req_duration_count{testid=%q})`), requests)
	// Each series' p99 gauge is k6's estimator over an HdrHistogram of
	// the values: within 0.05% plus 0.0005 ms of the exact estimate
	// (metrics.TrendSink).
	res, err := prom.Query(ctx, fmt.Sprintf(`k6_corrected_latency_p99{testid=%q}`, pr.testid), pr.end)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Series) != len(bySeries) {
		t.Errorf("%d corrected_latency p99 series, the JSON output has %d tag sets", len(res.Series), len(bySeries))
	}
	for _, s := range res.Series {
		vs := slices.Sorted(slices.Values(bySeries[labelKey(without(s.Labels, "__name__", "testid"))]))
		if len(vs) == 0 {
			t.Errorf("series %v: no such tag set in the JSON output", s.Labels)
			continue
		}
		want := vs[0]
		if len(vs) > 1 {
			want = metrics.InterpolateRanks(99, int64(len(vs)), func(r int64) float64 { return vs[r] })
		}
		got := s.Points[0].V * 1000
		if math.Abs(got-want) > 0.0005*want+0.0005+1e-9 {
			t.Errorf("series %v: p99 %g ms, the JSON output's samples give %g ms", s.Labels, got, want)
		}
	}
}

// k6DashboardsDir finds Grafana's k6 dashboards and the queries k6
// answered (k6-returns-data.txt): $METRONOME_K6_DASHBOARDS, else
// shared/reference/k6-dashboards in a directory above the package. ""
// when absent: they are third-party files, kept out of the repository.
func k6DashboardsDir() string {
	if d := os.Getenv("METRONOME_K6_DASHBOARDS"); d != "" {
		return d
	}
	dir, err := filepath.Abs(".")
	if err != nil {
		return ""
	}
	for {
		d := filepath.Join(dir, "shared", "reference", "k6-dashboards")
		if _, err := os.Stat(filepath.Join(d, "k6-returns-data.txt")); err == nil {
			return d
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// checkK6Dashboards runs the queries of Grafana's k6 dashboards that
// returned data for k6 v2.2.0 against the run: each must return data.
func checkK6Dashboards(t *testing.T, prom *promtest.Server, pr *promRun) {
	dir := k6DashboardsDir()
	if dir == "" {
		t.Skip("Grafana's k6 dashboards are not here: set METRONOME_K6_DASHBOARDS to the directory holding k6-prometheus.json, k6-prometheus-native-histogram.json and k6-returns-data.txt")
	}
	raw, err := os.ReadFile(filepath.Join(dir, "k6-returns-data.txt"))
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{
		"DS_PROMETHEUS": "prometheus", "testid": pr.testid, "quantile_stat": "p99", "quantile": "0.99",
		"__rate_interval": "1m", "__interval": "1s",
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dashboards := map[string][]grafanatest.Query{}
	answered, recorded := 0, 0
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.SplitN(line, "|", 5)
		if strings.HasPrefix(line, "#") || len(f) != 5 || f[1] != pr.mode.name {
			continue
		}
		recorded++
		file, panel, ref, expr := f[0], f[2], f[3], f[4]
		if _, ok := dashboards[file]; !ok {
			js, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				t.Fatal(err)
			}
			if dashboards[file], err = grafanatest.Queries(js); err != nil {
				t.Fatal(err)
			}
		}
		// The recording must name a query the dashboard has.
		i := slices.IndexFunc(dashboards[file], func(q grafanatest.Query) bool {
			return q.Panel == panel && q.RefID == ref && q.Expr == expr
		})
		if i < 0 {
			t.Errorf("%s has no query %s / %s: %s", file, panel, ref, expr)
			continue
		}
		q, err := dashboards[file][i].Expand(values)
		if err != nil {
			t.Error(err)
			continue
		}
		n, err := grafanatest.Count(ctx, prom, q, pr.start, pr.end, time.Second)
		switch {
		case err != nil:
			t.Errorf("%s: %s: %v", file, q, err)
		case n == 0:
			t.Errorf("%s: %s returns no data: %s", file, q, q.Expr)
		default:
			answered++
		}
	}
	if recorded == 0 {
		t.Fatalf("k6-returns-data.txt lists no query for mode %s", pr.mode.name)
	}
	t.Logf("Grafana's k6 dashboards, %s mode: %d of the %d queries that answered for k6 v2.2.0 answer", pr.mode.name, answered, recorded)
}

// checkOwnDashboard runs every query of examples/grafana/metronome.json
// over the runs of both modes, with every endpoint and with one picked:
// each must return data.
func checkOwnDashboard(t *testing.T, prom *promtest.Server, runs []*promRun) {
	js, err := os.ReadFile(filepath.Join("..", "..", "examples", "grafana", "metronome.json"))
	if err != nil {
		t.Fatal(err)
	}
	qs, err := grafanatest.Queries(js)
	if err != nil {
		t.Fatal(err)
	}
	// The runs were made one after the other.
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.testid)
	}
	start, end := runs[0].start, runs[len(runs)-1].end
	all := map[string]string{
		"datasource": "prometheus", "__rate_interval": "1m", "testid": strings.Join(ids, "|"),
		"scenario": ".*", "name": ".+", "quantile": "0.99", "stat": "p99",
	}
	one := maps.Clone(all)
	one["name"] = "login"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	evaluated, answered := 0, 0
	for _, q := range qs {
		each, err := q.ExpandEach(all, one)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range each {
			got, err := grafanatest.Count(ctx, prom, e, start, end, time.Second)
			evaluated++
			switch {
			case err != nil:
				t.Errorf("%s: %v", e, err)
			case got == 0:
				t.Errorf("%s: no data for %s", e, e.Expr)
			default:
				answered++
			}
		}
	}
	t.Logf("metronome's dashboard: %d queries, %d runs of them (those with $name again for name=login), %d returned data", len(qs), evaluated, answered)
}
