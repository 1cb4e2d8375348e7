package summary

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/metrics"
)

// exactPercentile is k6's estimator on the raw values, computed here
// independently of the HdrHistogram sinks.
func exactPercentile(vals []float64, p float64) float64 {
	x := append([]float64(nil), vals...)
	sort.Float64s(x)
	if len(x) == 1 {
		return x[0]
	}
	h := p / 100 * float64(len(x)-1)
	lo := math.Floor(h)
	if int(lo)+1 >= len(x) {
		return x[len(x)-1]
	}
	return x[int(lo)] + (x[int(lo)+1]-x[int(lo)])*(h-lo)
}

func mean(vals []float64) float64 {
	s := 0.0
	for _, v := range vals {
		s += v
	}
	return s / float64(len(vals))
}

func trendOf(vals []float64) *metrics.TrendSink {
	t := metrics.NewTrendSink()
	for _, v := range vals {
		t.Add(metrics.Sample{Value: v})
	}
	return t
}

func seq(n int, step, offset float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i+1)*step + offset
	}
	return out
}

// fixture is a run with every kind of metric, fed through real sinks.
type fixture struct {
	in                 *Input
	durVals, subVals   []float64
	corrVals, backVals []float64
}

func newFixture() *fixture {
	reg := metrics.NewRegistry()
	b := metrics.RegisterBuiltin(reg)
	custom := reg.MustNew("my_trend", metrics.Trend, metrics.Default)
	checksFoo := reg.MustNew("checks_foo", metrics.Counter, metrics.Default)

	f := &fixture{
		durVals:  seq(100, 10, 0),  // 10ms … 1000ms
		subVals:  seq(80, 10, 0),   // 10ms … 800ms
		corrVals: seq(100, 20, 0),  // 20ms … 2000ms
		backVals: seq(40, 12.5, 0), // 40 back-filled samples
	}
	reqs := &metrics.CounterSink{}
	failed := &metrics.RateSink{}
	for i := 0; i < 20; i++ {
		reqs.Add(metrics.Sample{Value: 1})
		v := 0.0
		if i%4 == 0 {
			v = 1
		}
		failed.Add(metrics.Sample{Value: v})
	}
	vus := &metrics.GaugeSink{}
	base := time.Unix(1000, 0)
	for i, v := range []float64{1, 5, 3} {
		vus.Add(metrics.Sample{Value: v, Time: base.Add(time.Duration(i) * time.Second)})
	}
	data := &metrics.CounterSink{}
	data.Add(metrics.Sample{Value: 31234})
	checks := &metrics.RateSink{}
	for i := 0; i < 8; i++ {
		v := 1.0
		if i >= 6 {
			v = 0
		}
		checks.Add(metrics.Sample{Value: v})
	}
	sel := func(k, v string) *metrics.TagSet { return metrics.NewTags(map[string]string{k: v}) }
	f.in = &Input{
		Metrics: []Metric{
			{Name: "vus", Metric: b.VUs, Sink: vus},
			{Name: "iterations", Metric: b.Iterations, Sink: &metrics.CounterSink{Sum: 20, Count: 20}},
			{Name: "checks", Metric: b.Checks, Sink: checks, Thresholds: []Threshold{{Source: "rate>0.9", OK: false}}},
			{Name: "group_duration", Metric: b.GroupDuration, Sink: trendOf([]float64{5})},
			{Name: "data_received", Metric: b.DataReceived, Sink: data},
			{Name: "http_reqs", Metric: b.HTTPReqs, Sink: reqs},
			{Name: "http_req_failed", Metric: b.HTTPReqFailed, Sink: failed, Thresholds: []Threshold{{Source: "rate<0.01", OK: false}}},
			{Name: "http_req_duration", Metric: b.HTTPReqDuration, Sink: trendOf(f.durVals),
				Thresholds: []Threshold{{Source: "p(95)<1000", OK: true}, {Source: "avg < 100", OK: false}}},
			{Name: "http_req_duration{expected_response:true}", Metric: b.HTTPReqDuration, Sink: trendOf(f.subVals),
				Parent: "http_req_duration", Selector: sel("expected_response", "true")},
			{Name: "http_req_waiting", Metric: b.HTTPReqWaiting, Sink: trendOf(f.durVals)},
			{Name: "corrected_latency", Metric: b.CorrectedLatency, Sink: trendOf(f.corrVals)},
			{Name: "corrected_latency{backfilled:true}", Metric: b.CorrectedLatency, Sink: trendOf(f.backVals),
				Parent: "corrected_latency", Selector: sel("backfilled", "true")},
			{Name: "schedule_lag", Metric: b.ScheduleLag, Sink: trendOf([]float64{0.5, 1.5})},
			{Name: "my_trend", Metric: custom, Sink: trendOf([]float64{0.5, 1, 1.5, 2})},
			{Name: "checks_foo", Metric: checksFoo, Sink: &metrics.CounterSink{Sum: 3, Count: 3}},
		},
		RootGroup: &Group{
			Checks: []*Check{
				{Name: "status is 200", Path: "::status is 200", Passes: 4},
				{Name: "body ok", Path: "::body ok", Passes: 1, Fails: 2},
			},
			Groups: []*Group{{
				Name: "login", Path: "::login",
				Checks: []*Check{{Name: "token", Path: "::login::token", Passes: 1}},
				Groups: []*Group{{Name: "inner", Path: "::login::inner"}},
			}},
		},
		Options: Options{NoColor: true},
		State:   State{TestRunDuration: 10 * time.Second, IsStdOutTTY: true},
		Scenarios: []ScenarioReport{{
			Name: "api", Executor: "intended-arrival-rate", Intended: 450, OnTime: 286, Late: 164, LateForVU: 150,
			Dropped: 3, Interrupted: 2, PeakBacklog: 40, RawP99: 10, CorrectedP99: 500,
		}},
		Warnings: []string{`scenario api: 3 iterations were dropped for want of a free VU`},
	}
	return f
}

func lineWith(t *testing.T, text, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("no line starts with %q in:\n%s", prefix, text)
	return ""
}

func lineIndex(text, prefix string) int {
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return i
		}
	}
	return -1
}

var durRE = regexp.MustCompile(`^(-?[0-9.]+)(ns|µs|ms|s)$`)

// statMillis reads "name=<duration>" from a summary line, in ms.
func statMillis(t *testing.T, line, name string) float64 {
	t.Helper()
	for _, f := range strings.Fields(line) {
		v, ok := strings.CutPrefix(f, name+"=")
		if !ok {
			continue
		}
		m := durRE.FindStringSubmatch(v)
		if m == nil {
			t.Fatalf("%s=%q is not a duration", name, v)
		}
		n, _ := strconv.ParseFloat(m[1], 64)
		switch m[2] {
		case "ns":
			return n / 1e6
		case "µs":
			return n / 1e3
		case "s":
			return n * 1e3
		}
		return n
	}
	t.Fatalf("no %s= in %q", name, line)
	return 0
}

// near checks a printed value against an exact one: the histogram is
// exact to 3 significant digits and the print rounds to 2 decimals.
func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if tol := math.Abs(want)*1e-3 + 0.0051; math.Abs(got-want) > tol {
		t.Errorf("%s = %v, want %v (±%v)", what, got, want, tol)
	}
}

func TestTextCompactTrendLines(t *testing.T) {
	f := newFixture()
	text := Text(f.in)

	l := lineWith(t, text, "    http_req_duration.")
	near(t, "avg", statMillis(t, l, "avg"), mean(f.durVals))
	near(t, "min", statMillis(t, l, "min"), 10)
	near(t, "max", statMillis(t, l, "max"), 1000)
	near(t, "med", statMillis(t, l, "med"), exactPercentile(f.durVals, 50))
	near(t, "p(90)", statMillis(t, l, "p(90)"), exactPercentile(f.durVals, 90))
	near(t, "p(95)", statMillis(t, l, "p(95)"), exactPercentile(f.durVals, 95))
	if got := strings.Count(l, "="); got != 6 {
		t.Errorf("default trend stats: %d stats in %q, want 6", got, l)
	}

	// The submetric follows its parent, indented, with its own numbers.
	lines := strings.Split(text, "\n")
	i := lineIndex(text, "    http_req_duration.")
	if !strings.HasPrefix(lines[i+1], "      { expected_response:true }.") {
		t.Fatalf("line after http_req_duration = %q, want the submetric", lines[i+1])
	}
	near(t, "sub p(95)", statMillis(t, lines[i+1], "p(95)"), exactPercentile(f.subVals, 95))

	// Sub-millisecond values print in µs.
	l = lineWith(t, text, "    schedule_lag.")
	if !strings.Contains(l, "min=500µs") || !strings.Contains(l, "max=1.5ms") {
		t.Errorf("schedule_lag line %q, want min=500µs max=1.5ms", l)
	}
	// A trend without time values prints plain numbers: p(90) of
	// 0.5, 1, 1.5, 2 is 1.85 (values under 2.048 are exact in the histogram).
	l = lineWith(t, text, "    my_trend.")
	if !strings.Contains(l, "avg=1.25 ") || !strings.Contains(l, "p(90)=1.85 ") || !strings.Contains(l, "med=1.25 ") {
		t.Errorf("my_trend line %q", l)
	}
}

func TestTextOtherMetricTypes(t *testing.T) {
	text := Text(newFixture().in)
	fields := func(prefix string) []string {
		l := lineWith(t, text, prefix)
		_, vals, _ := strings.Cut(l, ": ")
		return strings.Fields(vals)
	}
	// 20 requests in 10s.
	if got := fields("    http_reqs."); strings.Join(got, " ") != "20 2/s" {
		t.Errorf("http_reqs = %q, want 20 2/s", got)
	}
	// 5 of 20 failed.
	if got := fields("    http_req_failed."); strings.Join(got, " ") != "25.00% 5 out of 20" {
		t.Errorf("http_req_failed = %q", got)
	}
	// Gauge: last value 3, extremes 1 and 5.
	if got := fields("    vus."); strings.Join(got, " ") != "3 min=1 max=5" {
		t.Errorf("vus = %q", got)
	}
	// 31234 bytes over 10 s.
	if got := fields("    data_received."); strings.Join(got, " ") != "31 kB 3.1 kB/s" {
		t.Errorf("data_received = %q", got)
	}
	// Checks from the checks Rate: 6 of 8 passed.
	if got := fields("    checks_total."); strings.Join(got, " ") != "8 0.8/s" {
		t.Errorf("checks_total = %q", got)
	}
	if got := fields("    checks_succeeded."); strings.Join(got, " ") != "75.00% 6 out of 8" {
		t.Errorf("checks_succeeded = %q", got)
	}
	if got := fields("    checks_failed."); strings.Join(got, " ") != "25.00% 2 out of 8" {
		t.Errorf("checks_failed = %q", got)
	}
}

func TestTextLayout(t *testing.T) {
	f := newFixture()
	text := Text(f.in)

	// Category order: CUSTOM, HTTP, CORRECTED LATENCY, EXECUTION, NETWORK.
	last := -1
	for _, c := range []string{"    CUSTOM", "    HTTP", "    CORRECTED LATENCY", "    EXECUTION", "    NETWORK"} {
		i := lineIndex(text, c)
		if i <= last {
			t.Fatalf("section %q at line %d, not after line %d:\n%s", c, i, last, text)
		}
		last = i
	}
	if lineIndex(text, "  █ THRESHOLDS") > lineIndex(text, "  █ TOTAL RESULTS") {
		t.Error("THRESHOLDS must come before TOTAL RESULTS")
	}
	// my_trend is custom; corrected_latency sits in its own category.
	if i := lineIndex(text, "    my_trend."); i < lineIndex(text, "    CUSTOM") || i > lineIndex(text, "    HTTP") {
		t.Error("my_trend is not under CUSTOM")
	}
	if i := lineIndex(text, "    corrected_latency."); i < lineIndex(text, "    CORRECTED LATENCY") || i > lineIndex(text, "    EXECUTION") {
		t.Error("corrected_latency is not under CORRECTED LATENCY")
	}

	// Names are padded with dots so every ':' lines up.
	col := -1
	for _, l := range strings.Split(text, "\n") {
		if !strings.Contains(l, ".: ") || strings.HasPrefix(l, "      ") && !strings.Contains(l, "{") {
			continue
		}
		c := strings.Index(l, ".: ")
		if col == -1 {
			col = c
		} else if c != col {
			t.Errorf("':' at column %d, want %d: %q", c, col, l)
		}
	}

	// Compact hides by name prefix: checks, group_duration, the http_req_*
	// timings, and (the quirk) a custom metric named checks_foo.
	for _, name := range []string{"checks.", "group_duration.", "http_req_waiting.", "checks_foo."} {
		if lineIndex(text, "    "+name) >= 0 {
			t.Errorf("compact summary lists %s", name)
		}
	}
	if strings.Contains(text, "GROUP:") {
		t.Error("compact summary has group sections")
	}

	// Thresholds: per metric, mark, quoted expression and current value.
	l := lineWith(t, text, "    ✓ 'p(95)<1000'")
	near(t, "threshold p(95)", statMillis(t, l, "p(95)"), exactPercentile(f.durVals, 95))
	l = lineWith(t, text, "    ✗ 'avg < 100'")
	near(t, "threshold avg", statMillis(t, l, "avg"), mean(f.durVals))
	lineWith(t, text, "    ✗ 'rate<0.01' rate=25.00%")
	lineWith(t, text, "    ✗ 'rate>0.9' rate=75.00%") // on the hidden checks metric
	if i := lineIndex(text, "    http_req_duration"); lineIndex(text, "    ✓ 'p(95)<1000'") != i+1 {
		t.Error("threshold lines do not follow their metric name")
	}

	// Root checks with the failing one's tallies.
	lineWith(t, text, "    ✓ status is 200")
	lineWith(t, text, "    ✗ body ok")
	lineWith(t, text, "      ↳  33% — ✓ 1 / ✗ 2")

	// Back-filled note, scenario block and warnings.
	lineWith(t, text, "      ↳ includes 40 back-filled samples (expectedInterval), not measured")
	lineWith(t, text, "    api (intended-arrival-rate)")
	lineWith(t, text, "      arrivals.......: 450 intended, 286 on time, 164 late, 3 dropped, 2 interrupted")
	lineWith(t, text, "      peak backlog...: 40")
	lineWith(t, text, "      p99............: raw 10ms (http_req_duration), corrected 500ms (corrected_latency)")
	lineWith(t, text, `  WARN scenario api: 3 iterations were dropped for want of a free VU`)
	if strings.Contains(text, "\x1b[") {
		t.Error("NoColor output contains ANSI escapes")
	}
}

func TestTextFullAndColor(t *testing.T) {
	f := newFixture()
	f.in.Options.Mode = "full"
	f.in.Options.NoColor = false
	text := Text(f.in)
	if lineIndex(text, "    http_req_waiting.") < 0 {
		t.Error("full summary hides http_req_waiting")
	}
	for _, name := range []string{"checks.", "group_duration."} {
		if lineIndex(text, "    "+name) >= 0 {
			t.Errorf("full summary lists %s", name)
		}
	}
	lineWith(t, text, "  █ GROUP: login")
	lineWith(t, text, "  █ GROUP: login::inner")
	if !strings.Contains(text, "    \x1b[32m✓\x1b[0m token") {
		t.Error("group check missing or not green")
	}
	if !strings.Contains(text, "\x1b[31m✗\x1b[0m 'avg < 100'") {
		t.Error("failed threshold not red")
	}
	if !strings.Contains(text, "\x1b[33mWARN\x1b[0m") {
		t.Error("WARN not yellow")
	}
}

func TestTextTimeUnitAndTrendStats(t *testing.T) {
	f := newFixture()
	f.in.Options.TimeUnit = "s"
	f.in.Options.TrendStats = []string{"p(99.9)", "count", "min"}
	text := Text(f.in)
	l := lineWith(t, text, "    http_req_duration.")
	want := fmt.Sprintf("p(99.9)=%.2fs", exactPercentile(f.durVals, 99.9)/1000)
	if !strings.HasPrefix(strings.Fields(l)[1], "p(99.9)=") || !strings.Contains(l, want) {
		t.Errorf("line %q, want %s first", l, want)
	}
	if !strings.Contains(l, "count=100 ") || !strings.HasSuffix(l, "min=0.01s") {
		t.Errorf("line %q, want count=100 and min=0.01s", l)
	}
}

// A checks metric with no sample is in the summary when a threshold names
// it (`checks: []`, issue 37): k6 v2.2.0 then shows the totals as zeros,
// "checks_total: 0 0/s", "0.00% 0 out of 0".
func TestTextChecksWithoutChecks(t *testing.T) {
	reg := metrics.NewRegistry()
	b := metrics.RegisterBuiltin(reg)
	in := &Input{Metrics: []Metric{{Name: "checks", Metric: b.Checks, Sink: metrics.NewSink(metrics.Rate)}}}
	in.State.TestRunDuration = time.Second
	text := Text(in)
	for prefix, want := range map[string]string{
		"    checks_total.":     "0 0/s",
		"    checks_succeeded.": "0.00% 0 out of 0",
		"    checks_failed.":    "0.00% 0 out of 0",
	} {
		_, vals, _ := strings.Cut(lineWith(t, text, prefix), ": ")
		if got := strings.Join(strings.Fields(vals), " "); got != want {
			t.Errorf("%s %q, want %q", prefix, got, want)
		}
	}
}

func TestTextEmpty(t *testing.T) {
	text := Text(&Input{})
	if !strings.Contains(text, "█ TOTAL RESULTS") || strings.Contains(text, "THRESHOLDS") || strings.Contains(text, "checks_total") {
		t.Errorf("empty summary:\n%s", text)
	}
	_ = Text(nil)
}

func TestFormatTime(t *testing.T) {
	for _, c := range []struct {
		ms   float64
		unit string
		want string
	}{
		{0, "", "0s"},
		{0.0005, "", "500ns"},
		{0.25, "", "250µs"},
		{1.5, "", "1.5ms"},
		{148.214, "", "148.21ms"},
		{100, "", "100ms"},
		{1234.5, "", "1.23s"},
		{90_500, "", "1m31s"},
		{3_723_000, "", "1h2m3s"},
		{1500, "s", "1.50s"},
		{2, "ms", "2.00ms"},
		{1.5, "us", "1500.00µs"},
		// Past whole seconds' range: no wrapped negative, no double minus.
		{1e18, "", "277777777777h46m40s"},
		{1e300, "", "2.778e+293h"},
		{-1e300, "", "-2.778e+293h"},
		{math.MaxFloat64, "", "4.994e+301h"},
	} {
		if got := formatTime(c.ms, c.unit); got != c.want {
			t.Errorf("formatTime(%v, %q) = %q, want %q", c.ms, c.unit, got, c.want)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for _, c := range []struct {
		b    float64
		want string
	}{
		{5, "5 B"}, {963.2, "963 B"}, {5800, "5.8 kB"}, {31234, "31 kB"},
		{2_500_000, "2.5 MB"}, {999_960, "1.0 MB"}, {7e9, "7.0 GB"},
	} {
		if got := formatBytes(c.b); got != c.want {
			t.Errorf("formatBytes(%v) = %q, want %q", c.b, got, c.want)
		}
	}
}

// JavaScript's toFixed rounds exact ties away from zero; the summary
// follows it so numbers match k6's digit for digit.
func TestToFixedRoundsLikeJavaScript(t *testing.T) {
	for _, c := range []struct {
		v    float64
		prec int
		want string
	}{
		{1.125, 2, "1.13"}, {0.125, 2, "0.13"}, {-1.125, 2, "-1.13"},
		{2.5, 0, "3"}, {0.5, 0, "1"}, {0.995, 2, "0.99"}, // 0.995 is below the tie in binary
		{1.005, 2, "1.00"}, {1.45, 1, "1.4"}, {9.995, 2, "9.99"}, {0.375, 2, "0.38"}, {12.3456, 2, "12.35"},
	} {
		if got := toFixed(c.v, c.prec); got != c.want {
			t.Errorf("toFixed(%v, %d) = %q, want %q", c.v, c.prec, got, c.want)
		}
	}
}

func md5hex(s string) string {
	h := md5.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestExportJSON(t *testing.T) {
	f := newFixture()
	f.in.Options.TrendStats = []string{"avg", "p(95)", "count"}
	raw, err := ExportJSON(f.in)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("export is not JSON: %v", err)
	}
	if _, ok := doc["setup_data"]; ok {
		t.Error("setup_data present though setup() returned nothing")
	}
	if strings.Contains(string(raw), `\u003c`) {
		t.Error("threshold expressions are HTML-escaped")
	}

	root := doc["root_group"].(map[string]any)
	if root["id"] != "d41d8cd98f00b204e9800998ecf8427e" || root["path"] != "" || root["name"] != "" {
		t.Errorf("root group = %v", root)
	}
	checks := root["checks"].(map[string]any) // an object keyed by name
	body := checks["body ok"].(map[string]any)
	if body["id"] != md5hex("::body ok") || body["passes"] != 1.0 || body["fails"] != 2.0 || body["path"] != "::body ok" {
		t.Errorf("check = %v", body)
	}
	login := root["groups"].(map[string]any)["login"].(map[string]any)
	if login["id"] != md5hex("::login") {
		t.Errorf("group id = %v, want md5 of ::login", login["id"])
	}
	if _, ok := login["groups"].(map[string]any)["inner"]; !ok {
		t.Error("nested group missing")
	}

	ms := doc["metrics"].(map[string]any)
	dur := ms["http_req_duration"].(map[string]any)
	if len(dur) != 4 { // avg, p(95), count, thresholds
		t.Errorf("trend keys = %v", dur)
	}
	near(t, "export p(95)", dur["p(95)"].(float64), exactPercentile(f.durVals, 95))
	if dur["avg"] != mean(f.durVals) || dur["count"] != 100.0 {
		t.Errorf("avg/count = %v/%v", dur["avg"], dur["count"])
	}
	// Inverted: true means the threshold failed.
	th := dur["thresholds"].(map[string]any)
	if th["p(95)<1000"] != false || th["avg < 100"] != true {
		t.Errorf("thresholds = %v, want passed → false, failed → true", th)
	}
	failed := ms["http_req_failed"].(map[string]any)
	if failed["value"] != 0.25 || failed["passes"] != 5.0 || failed["fails"] != 15.0 {
		t.Errorf("rate = %v", failed)
	}
	if _, ok := failed["rate"]; ok {
		t.Error("export Rate has \"rate\"; k6 calls it \"value\" there")
	}
	reqs := ms["http_reqs"].(map[string]any)
	if reqs["count"] != 20.0 || reqs["rate"] != 2.0 {
		t.Errorf("counter = %v", reqs)
	}
	vus := ms["vus"].(map[string]any)
	if vus["value"] != 3.0 || vus["min"] != 1.0 || vus["max"] != 5.0 {
		t.Errorf("gauge = %v", vus)
	}
	if _, ok := ms["http_req_duration{expected_response:true}"]; !ok {
		t.Error("submetric missing")
	}

	f.in.SetupData = json.RawMessage(`{"token":"abc","n":[1,2]}`)
	raw, err = ExportJSON(f.in)
	if err != nil {
		t.Fatal(err)
	}
	doc = nil
	_ = json.Unmarshal(raw, &doc)
	sd, _ := doc["setup_data"].(map[string]any)
	if sd["token"] != "abc" {
		t.Errorf("setup_data = %v", doc["setup_data"])
	}
	f.in.SetupData = json.RawMessage(`{broken`)
	if _, err := ExportJSON(f.in); err == nil {
		t.Error("invalid setup data accepted")
	}
}

func TestData(t *testing.T) {
	f := newFixture()
	f.in.SetupData = json.RawMessage(`{"token":"abc"}`)
	d := Data(f.in)

	root := d["root_group"].(map[string]any)
	checks := root["checks"].([]any) // arrays here
	if len(checks) != 2 || checks[1].(map[string]any)["name"] != "body ok" || checks[1].(map[string]any)["id"] != md5hex("::body ok") {
		t.Errorf("checks = %v", checks)
	}
	groups := root["groups"].([]any)
	if len(groups) != 1 || groups[0].(map[string]any)["path"] != "::login" || len(groups[0].(map[string]any)["groups"].([]any)) != 1 {
		t.Errorf("groups = %v", groups)
	}
	opts := d["options"].(map[string]any)
	if len(opts["summaryTrendStats"].([]any)) != 6 || opts["summaryTimeUnit"] != "" || opts["noColor"] != true {
		t.Errorf("options = %v", opts)
	}
	state := d["state"].(map[string]any)
	if state["testRunDurationMs"] != 10000.0 || state["isStdOutTTY"] != true || state["isStdErrTTY"] != false {
		t.Errorf("state = %v", state)
	}
	ms := d["metrics"].(map[string]any)
	failed := ms["http_req_failed"].(map[string]any)
	if failed["type"] != "rate" || failed["contains"] != "default" {
		t.Errorf("rate metric = %v", failed)
	}
	vals := failed["values"].(map[string]any)
	if vals["rate"] != 0.25 || vals["passes"] != 5.0 || vals["fails"] != 15.0 {
		t.Errorf("rate values = %v", vals)
	}
	if _, ok := vals["value"]; ok {
		t.Error("handleSummary Rate has \"value\"; k6 calls it \"rate\" there")
	}
	th := failed["thresholds"].(map[string]any)["rate<0.01"].(map[string]any)
	if th["ok"] != false {
		t.Errorf("threshold = %v, want ok:false", th)
	}
	dur := ms["http_req_duration"].(map[string]any)
	if dur["type"] != "trend" || dur["contains"] != "time" {
		t.Errorf("trend = %v", dur)
	}
	near(t, "data p(90)", dur["values"].(map[string]any)["p(90)"].(float64), exactPercentile(f.durVals, 90))
	if _, ok := ms["my_trend"].(map[string]any)["thresholds"]; ok {
		t.Error("thresholds key on a metric without thresholds")
	}
	if d["setup_data"].(map[string]any)["token"] != "abc" {
		t.Errorf("setup_data = %v", d["setup_data"])
	}
	mt := d["metronome"].(map[string]any)
	sc := mt["scenarios"].([]any)[0].(map[string]any)
	if sc["name"] != "api" || sc["late"] != int64(164) || sc["lateForVU"] != int64(150) || sc["peakBacklog"] != int64(40) || sc["correctedP99"] != 500.0 {
		t.Errorf("metronome scenario = %v", sc)
	}
	if len(mt["warnings"].([]any)) != 1 {
		t.Errorf("warnings = %v", mt["warnings"])
	}
	if _, err := json.Marshal(d); err != nil {
		t.Errorf("Data does not marshal: %v", err)
	}
	// Nothing returned from setup: no key at all.
	f.in.SetupData = nil
	if _, ok := Data(f.in)["setup_data"]; ok {
		t.Error("setup_data present without setup data")
	}
}

// A submetric's label is its selector as written, as k6 v2.2.0 prints
// 'my_counter{"c":"3"}' and 'my_counter{ e : 5 ,f:6 }' (issue 25).
func TestSelectorLabelAsWritten(t *testing.T) {
	for name, want := range map[string]string{
		`my_counter{"c":"3"}`:                       `{ "c":"3" }`,
		"my_counter{a:1,b:2}":                       "{ a:1,b:2 }",
		"my_counter{e : 5 ,f:6}":                    "{ e : 5 ,f:6 }",
		"my_counter{d:'x y'}":                       "{ d:'x y' }",
		"http_req_duration{expected_response:true}": "{ expected_response:true }",
	} {
		m := &Metric{Name: name, Parent: "my_counter", Selector: metrics.EmptyTags.With("x", "y")}
		if got := selectorLabel(m); got != want {
			t.Errorf("selectorLabel(%q) = %q, want %q", name, got, want)
		}
	}
}
