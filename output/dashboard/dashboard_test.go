package dashboard

import (
	"bytes"
	"maps"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
	"github.com/metronome-load/metronome/output/hdrlog"
	"github.com/metronome-load/metronome/summary"
)

// The synthetic run every test below uses: an open-model scenario "api"
// with rate arrivals/s for secs seconds, each answered in service, except
// that the arrivals intended during second stallSec wait stallWait for a
// VU; and a closed-model scenario "loop" of one VU back-filled at 10 ms.
const (
	rate      = 10
	secs      = 5
	stallSec  = 2
	service   = 10 * time.Millisecond
	stallWait = 500 * time.Millisecond
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type fixture struct {
	b       *metrics.Builtin
	api     *metrics.TagSet
	loop    *metrics.TagSet
	samples []metrics.Sample
}

func newFixture() *fixture {
	reg := metrics.NewRegistry()
	f := &fixture{b: metrics.RegisterBuiltin(reg)}
	f.api = metrics.NewTags(map[string]string{"scenario": "api"})
	f.loop = metrics.NewTags(map[string]string{"scenario": "loop"})
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	add := func(m *metrics.Metric, tags *metrics.TagSet, at time.Time, v float64) {
		f.samples = append(f.samples, metrics.Sample{Metric: m, Tags: tags, Time: at, Value: v})
	}
	for i := 0; i < rate*secs; i++ {
		intended := t0.Add(time.Duration(i) * time.Second / rate)
		var lag time.Duration
		if i/rate == stallSec {
			lag = stallWait
		}
		end := intended.Add(lag + service)
		// The order executor.Deps.Account records them in.
		add(f.b.HTTPReqs, f.api, end, 1)
		add(f.b.HTTPReqFailed, f.api, end, 0)
		add(f.b.HTTPReqDuration, f.api, end, ms(service))
		add(f.b.IterationDuration, f.api, end, ms(service))
		add(f.b.Iterations, f.api, end, 1)
		add(f.b.ScheduleLag, f.api, end, ms(lag))
		add(f.b.CorrectedLatency, f.api, end, ms(lag+service))
	}
	for s := 0; s < secs; s++ {
		add(f.b.VUs, metrics.NewTags(nil), t0.Add(time.Duration(s)*time.Second), 3)
		// The closed loop: one iteration a second, never intended.
		end := t0.Add(time.Duration(s)*time.Second + 500*time.Millisecond)
		add(f.b.HTTPReqDuration, f.loop, end, 5)
		add(f.b.Iterations, f.loop, end, 1)
		add(f.b.CorrectedLatency, f.loop, end, 5)
	}
	return f
}

func (f *fixture) timeline(t *testing.T) *Timeline {
	t.Helper()
	a := NewAggregator(t0, time.Second)
	a.Add(f.samples)
	a.Close(time.Time{})
	return a.Snapshot(true)
}

func section(t *testing.T, tl *Timeline, name string) *Section {
	t.Helper()
	for _, s := range tl.Sections {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no section %q", name)
	return nil
}

// within checks v against want to HdrHistogram's 3 significant digits.
func within(t *testing.T, what string, v, want float64) {
	t.Helper()
	if math.Abs(v-want) > want*1e-3+1e-3 {
		t.Errorf("%s = %v, want %v (±0.1%%)", what, v, want)
	}
}

func TestAggregatorPlacesArrivalsAndWaits(t *testing.T) {
	f := newFixture()
	tl := f.timeline(t)
	if tl.Sections[0].Name != "" {
		t.Fatalf("the whole test must come first, got %q", tl.Sections[0].Name)
	}
	api := section(t, tl, "api")
	if !api.HasLag || !api.HasWait || !api.HasIntended || !api.HasCounters {
		t.Fatalf("api flags: %+v", api)
	}
	if loop := section(t, tl, "loop"); loop.HasIntended || loop.HasLag {
		t.Errorf("a closed loop has no intended arrivals nor lag: %+v", loop)
	}
	if len(api.Rows) < secs {
		t.Fatalf("api has %d rows, want at least %d", len(api.Rows), secs)
	}
	for i := 0; i < secs; i++ {
		r := api.Rows[i]
		// Every arrival is placed by its intended start: rate a second.
		if r.Intended != rate {
			t.Errorf("row %d: intended %v, want %d", i, r.Intended, rate)
		}
		wantCorr := service
		wantWait := 0.0
		if i == stallSec {
			wantCorr = stallWait + service
			// rate arrivals each waited 500 ms, all of it within the
			// second they were intended in except for those intended in
			// its last half second, whose waits run into the next.
			wantWait = 0
			for k := 0; k < rate; k++ {
				start := float64(k) * 1000 / rate
				wantWait += math.Min(500, 1000-start)
			}
		}
		if i == stallSec+1 {
			for k := 0; k < rate; k++ {
				start := float64(k) * 1000 / rate
				wantWait += math.Max(0, start+500-1000)
			}
		}
		within(t, "wait", r.WaitMs, wantWait)
		if i != stallSec && i != stallSec+1 {
			within(t, "corrected p99", r.Corrected.P99, float64(wantCorr)/1e6)
		}
		within(t, "raw p99", r.Raw.P99, float64(service)/1e6)
	}
	total := tl.Sections[0]
	// The whole test: the closed loop's five samples join the raw
	// spectrum but not the intended arrivals.
	if got, want := total.SpectrumRaw.TotalCount(), int64(rate*secs+secs); got != want {
		t.Errorf("raw spectrum count %d, want %d", got, want)
	}
	var intended, completed, iterations float64
	for _, r := range total.Rows {
		intended += r.Intended
		completed += r.Completed
		iterations += r.Iterations
	}
	if intended != rate*secs || completed != rate*secs || iterations != rate*secs+secs {
		t.Errorf("whole test: intended %v, completed %v, iterations %v; want %d, %d, %d",
			intended, completed, iterations, rate*secs, rate*secs, rate*secs+secs)
	}
	if total.Rows[0].VUs != 3 {
		t.Errorf("VUs %v, want 3", total.Rows[0].VUs)
	}
}

// paths matches one stroked path of gonum's SVG backend.
var pathRE = regexp.MustCompile(`<path d="([^"]*)"[^>]*stroke:(#[0-9A-F]{6})`)

// drawnPoints is, per stroke colour, the largest number of points one path
// of that colour draws.
func drawnPoints(svg string) map[string]int {
	out := map[string]int{}
	for _, m := range pathRE.FindAllStringSubmatch(svg, -1) {
		n := strings.Count(m[1], "M") + strings.Count(m[1], "L")
		out[m[2]] = max(out[m[2]], n)
	}
	return out
}

func TestChartsDrawEverySeriesWithItsPoints(t *testing.T) {
	tl := newFixture().timeline(t)
	charts, err := Charts(tl)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Chart{}
	for _, c := range charts {
		byID[c.ID] = c
		if c.Title == "" || c.Caption == "" || !strings.Contains(c.SVG, "<svg") {
			t.Errorf("%s: missing title, caption or svg", c.ID)
		}
		pts := drawnPoints(c.SVG)
		for _, s := range c.Series {
			if pts[Palette[s]] < 2 {
				t.Errorf("%s: series %q drew %d points", c.ID, s, pts[Palette[s]])
			}
		}
	}
	for _, id := range []string{"total-latency", "total-lag", "total-backlog", "total-rate", "total-vus", "total-spectrum",
		"scenario-api-latency", "scenario-api-backlog", "scenario-loop-latency", "scenario-loop-spectrum"} {
		if _, ok := byID[id]; !ok {
			t.Errorf("no chart %s", id)
		}
	}
	for _, id := range []string{"scenario-loop-lag", "scenario-loop-backlog"} {
		if _, ok := byID[id]; ok {
			t.Errorf("chart %s drawn without data", id)
		}
	}
	// The latency chart has a point per interval with data: secs rows
	// plus the stall's spill into the next... all ends fall in [0, secs+1).
	lat := drawnPoints(byID["scenario-api-latency"].SVG)
	rows := 0
	for _, r := range section(t, tl, "api").Rows {
		if r.Raw.Count > 0 {
			rows++
		}
	}
	if lat[Palette["raw p99"]] != rows {
		t.Errorf("raw p99 drew %d points, want %d (one per interval)", lat[Palette["raw p99"]], rows)
	}
	// The spectrum spans x = 0 … log10(count) in steps of 0.05, plus the max.
	spec := drawnPoints(byID["scenario-api-spectrum"].SVG)
	want := int(math.Ceil(math.Log10(rate*secs)/0.05)) + 1
	if spec[Palette["corrected (corrected_latency)"]] != want {
		t.Errorf("corrected spectrum drew %d points, want %d", spec[Palette["corrected (corrected_latency)"]], want)
	}
}

func TestPageIsSelfContained(t *testing.T) {
	p, err := BuildPage(newFixture().timeline(t), nil, false, "test")
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Render()
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, bad := range []string{"<script", "http://", "https://", "<link", "src="} {
		if i := strings.Index(html, bad); i >= 0 && !strings.Contains(html[i:min(i+60, len(html))], "www.w3.org") {
			t.Errorf("the report holds %q: %s", bad, html[i:min(i+80, len(html))])
		}
	}
	if n := strings.Count(html, `<figure class="chart"`); n < 10 {
		t.Errorf("%d charts, want at least 10", n)
	}
}

// The report renders the summary's accounts: every field the template
// names exists (a renamed one fails the render, not only the browser
// test), and the back-fill account's figures reach the page.
func TestPageRendersTheAccounts(t *testing.T) {
	in := &summary.Input{
		Scenarios: []summary.ScenarioReport{{Name: "open", Executor: "intended-arrival-rate", Intended: 100, OnTime: 90, Late: 10}},
		BackFills: []summary.BackFillReport{{Name: "closed", Executor: "constant-vus", ExpectedInterval: "auto",
			Estimated: true, Requests: 1234, Backfilled: 56, Unestimated: 5, CadenceMedian: 10}},
	}
	p, err := BuildPage(newFixture().timeline(t), in, false, "test")
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Render()
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if !strings.Contains(string(b), "<td>closed</td><td>constant-vus</td><td>auto</td><td>1234</td><td>56</td><td>5</td>") {
		t.Errorf("the back-fill account is not on the page")
	}
}

func TestConfigFromEnv(t *testing.T) {
	c, err := ConfigFromEnv(map[string]string{})
	if err != nil || c.Host != "127.0.0.1" || c.Port != 5665 || c.Period != 10*time.Second || c.Open || c.Export != "" {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	c, err = ConfigFromEnv(map[string]string{EnvHost: "0.0.0.0", EnvPort: "-1", EnvPeriod: "2s", EnvOpen: "true", EnvExport: "r.html"})
	if err != nil || c.Host != "0.0.0.0" || c.Port != -1 || c.Period != 2*time.Second || !c.Open || c.Export != "r.html" {
		t.Fatalf("set: %+v %v", c, err)
	}
	for k, v := range map[string]string{EnvPort: "x", EnvPeriod: "1ms", EnvOpen: "maybe"} {
		if _, err := ConfigFromEnv(map[string]string{k: v}); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: error %v should name the variable", k, v, err)
		}
	}
}

// Two instances' logs, each holding half of the arrivals, merge into the
// timeline of all of them.
func TestLogReaderMergesInstances(t *testing.T) {
	f := newFixture()
	var logs [2]bytes.Buffer
	for i := range logs {
		o, err := hdrlog.New(output.Params{Arg: "-", Stdout: &logs[i], Now: func() time.Time { return t0 }})
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Start(); err != nil {
			t.Fatal(err)
		}
		// Instance i takes every other iteration (7 samples each).
		var half []metrics.Sample
		for k := 0; k < rate*secs; k++ {
			if k%2 == i {
				half = append(half, f.samples[7*k:7*k+7]...)
			}
		}
		o.AddSamples(half)
		if err := o.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	var lr LogReader
	for i := range logs {
		if err := lr.Add(&logs[i], "log"); err != nil {
			t.Fatal(err)
		}
	}
	tl, err := lr.Timeline(0)
	if err != nil {
		t.Fatal(err)
	}
	live := f.timeline(t)
	api, liveAPI := section(t, tl, "api"), section(t, live, "api")
	if api.SpectrumCorrected.TotalCount() != rate*secs {
		t.Errorf("merged corrected count %d, want %d", api.SpectrumCorrected.TotalCount(), rate*secs)
	}
	if got, want := api.SpectrumCorrected.ValueAtQuantile(99), liveAPI.SpectrumCorrected.ValueAtQuantile(99); got != want {
		t.Errorf("merged corrected p99 %d µs, live %d µs", got, want)
	}
	for i := 0; i < secs; i++ {
		if api.Rows[i].Raw != liveAPI.Rows[i].Raw {
			t.Errorf("row %d raw: merged %+v, live %+v", i, api.Rows[i].Raw, liveAPI.Rows[i].Raw)
		}
	}
	charts, err := Charts(tl)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range charts {
		if strings.HasSuffix(c.ID, "-vus") || strings.HasSuffix(c.ID, "-backlog") {
			t.Errorf("chart %s drawn from logs that hold no such data", c.ID)
		}
	}
}

// A one-hour run of three scenarios, with intervals of period, rendered as
// a report: its size, which the issue bounds at 5 MB.
func hourReportSize(t *testing.T, period time.Duration) int {
	t.Helper()
	reg := metrics.NewRegistry()
	b := metrics.RegisterBuiltin(reg)
	a := NewAggregator(t0, period)
	var batch []metrics.Sample
	for _, sc := range []string{"a", "b", "c"} {
		tags := metrics.NewTags(map[string]string{"scenario": sc})
		// Five arrivals per interval, of varying latency, for an hour.
		for at := time.Duration(0); at < time.Hour; at += period / 5 {
			end := t0.Add(at + 3*time.Millisecond)
			v := 1 + float64(at/period%97)
			batch = append(batch,
				metrics.Sample{Metric: b.HTTPReqs, Tags: tags, Time: end, Value: 1},
				metrics.Sample{Metric: b.HTTPReqFailed, Tags: tags, Time: end, Value: 0},
				metrics.Sample{Metric: b.HTTPReqDuration, Tags: tags, Time: end, Value: v},
				metrics.Sample{Metric: b.Iterations, Tags: tags, Time: end, Value: 1},
				metrics.Sample{Metric: b.ScheduleLag, Tags: tags, Time: end, Value: 2 * v},
				metrics.Sample{Metric: b.CorrectedLatency, Tags: tags, Time: end, Value: 3 * v})
		}
	}
	for at := time.Duration(0); at < time.Hour; at += time.Second {
		batch = append(batch, metrics.Sample{Metric: b.VUs, Tags: metrics.NewTags(nil), Time: t0.Add(at), Value: 10})
	}
	a.Add(batch)
	// The snapshot reduces the intervals still open itself; closing them
	// first would only add the cost of resetting their histograms.
	p, err := BuildPage(a.Snapshot(true), nil, false, "hour")
	if err != nil {
		t.Fatal(err)
	}
	html, err := p.Render()
	if err != nil {
		t.Fatal(err)
	}
	return len(html)
}

func TestHourReportStaysSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("renders a one-hour report")
	}
	for _, period := range []time.Duration{10 * time.Second} {
		n := hourReportSize(t, period)
		t.Logf("one hour, 3 scenarios, period %s: %d bytes", period, n)
		if n > 5<<20 {
			t.Errorf("period %s: %d bytes, over 5 MB", period, n)
		}
	}
}

// TestShortRunReport exports the report of the 5-second fixture run with
// the default 10-second period: one interval at that period, so the
// report uses a tenth of it and every time chart draws a curve.
func TestShortRunReport(t *testing.T) {
	f := newFixture()
	path := t.TempDir() + "/report.html"
	o := NewWithConfig(Config{Port: -1, Period: DefaultPeriod, Export: path}, nil, func() time.Time { return t0 })
	if err := o.Start(); err != nil {
		t.Fatal(err)
	}
	o.AddSamples(f.samples)
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	if !strings.Contains(html, "intervals of 1s.") {
		t.Errorf("the report does not say it uses 1 s intervals")
	}
	figures := regexp.MustCompile(`(?s)<figure class="chart" id="([^"]+)".*?</figure>`).FindAllStringSubmatch(html, -1)
	if len(figures) < 10 {
		t.Fatalf("%d charts", len(figures))
	}
	for _, fig := range figures {
		if strings.HasSuffix(fig[1], "-spectrum") {
			continue
		}
		series := 0
		for color, n := range drawnPoints(fig[0]) {
			if !slices.Contains(slices.Collect(maps.Values(Palette)), color) {
				continue // axes and grid
			}
			series++
			if n < secs {
				t.Errorf("%s: the series drawn in %s has %d points, want one per second (%d)", fig[1], color, n, secs)
			}
		}
		if series == 0 {
			t.Errorf("%s: no series drawn", fig[1])
		}
	}
}

// TestSinglePointIsMarked draws a timeline of one interval: each series
// has one point, which a line cannot show, so a ring marks it.
func TestSinglePointIsMarked(t *testing.T) {
	f := newFixture()
	a := NewAggregator(t0, time.Minute)
	a.Add(f.samples)
	a.Close(time.Time{})
	charts, err := Charts(a.Snapshot(true))
	if err != nil {
		t.Fatal(err)
	}
	ring := regexp.MustCompile(`<path d="M[^"]*A[^"]*"\s+style="[^"]*stroke:(#[0-9A-F]{6})`)
	for _, c := range charts {
		if strings.HasSuffix(c.ID, "-spectrum") {
			continue
		}
		marked := map[string]bool{}
		for _, m := range ring.FindAllStringSubmatch(c.SVG, -1) {
			marked[m[1]] = true
		}
		for _, s := range c.Series {
			if !marked[Palette[s]] {
				t.Errorf("%s: the single point of %q is not marked", c.ID, s)
			}
		}
	}
}
