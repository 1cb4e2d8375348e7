package dashboard

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/summary"
)

//go:embed page.html
var pageSource string

// pageTemplate is the parsed page, parsed when a page is first rendered:
// a run without the dashboard does not pay for it.
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Funcs(template.FuncMap{
		"svg":  func(s string) template.HTML { return template.HTML(s) }, // rendered by gonum, not user input
		"join": strings.Join,
		"title": func(name string) string {
			if name == "" {
				return "Whole test"
			}
			return "Scenario " + name
		},
	}).Parse(pageSource))
})

// Overview is the row of numbers at the top of the page. Values are
// formatted for display.
type Overview struct {
	Elapsed      string
	Requests     string
	Failures     string
	VUs          string
	Achieved     string
	Intended     string
	Dropped      string
	Interrupted  string
	PeakBacklog  string
	RawP99       string
	CorrectedP99 string
	// Source says where the percentiles come from.
	Source string
}

// Report is what the end-of-test summary adds to the page.
type Report struct {
	Thresholds []ThresholdRow
	Scenarios  []summary.ScenarioReport
	BackFills  []summary.BackFillReport
	Warnings   []string
	// Text is the end-of-test summary as the terminal shows it.
	Text string
}

// ThresholdRow is one evaluated threshold. Windows, for a windowed
// threshold, says how many windows failed and where.
type ThresholdRow struct {
	Metric, Source string
	OK             bool
	Windows        string
}

// Page is everything the template renders.
type Page struct {
	Title    string
	Live     bool
	PeriodMs int64
	Overview Overview
	Sections []PageSection
	// Endpoints is the per-endpoint view, nil when no request had a name.
	Endpoints *EndpointView
	Report    *Report
	// Note explains where the data came from (the run, or which logs).
	Note string
}

// PageSection is the charts of the whole test or of one scenario.
type PageSection struct {
	Name   string
	ID     string
	Charts []Chart
}

// BuildPage renders the charts of tl and lays them out. in, when not nil,
// is the end-of-test summary: its percentiles and accounts replace the
// timeline's own.
func BuildPage(tl *Timeline, in *summary.Input, live bool, note string) (*Page, error) {
	charts, err := Charts(tl, MarksOf(tl, in)...)
	if err != nil {
		return nil, err
	}
	p := &Page{Title: "metronome: raw vs corrected latency", Live: live, PeriodMs: tl.Period.Milliseconds(), Note: note}
	p.Overview = overviewOf(tl)
	for _, sec := range tl.Sections {
		ps := PageSection{Name: sec.Name, ID: SectionID(sec.Name)}
		for _, c := range charts {
			if c.Section == sec.Name {
				ps.Charts = append(ps.Charts, c)
			}
		}
		p.Sections = append(p.Sections, ps)
	}
	if in != nil {
		p.Report = reportOf(in, &p.Overview)
	}
	if p.Endpoints, err = endpointViewOf(tl, in); err != nil {
		return nil, err
	}
	return p, nil
}

// Render writes the whole page.
func (p *Page) Render() ([]byte, error) {
	var b bytes.Buffer
	if err := pageTemplate().Execute(&b, p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// RenderContent writes only the part the live page replaces each period.
func (p *Page) RenderContent() ([]byte, error) {
	var b bytes.Buffer
	if err := pageTemplate().ExecuteTemplate(&b, "content", p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func overviewOf(tl *Timeline) Overview {
	total := tl.Sections[0]
	var req, fail, iters, intended, dropped, interrupted, peak, vus, vusMax float64
	vus = -1
	last := 0
	for i, r := range total.Rows {
		req += r.Requests
		fail += r.Failures
		iters += r.Iterations
		intended += r.Intended
		dropped += r.Dropped
		interrupted += r.Interrupted
		peak = max(peak, r.WaitMs/float64(tl.Period.Milliseconds()))
		if r.VUs >= 0 {
			vus = r.VUs
			vusMax = max(vusMax, r.VUs)
		}
		if r.Requests > 0 || r.Iterations > 0 || r.Raw.Count > 0 || r.Corrected.Count > 0 {
			last = i
		}
	}
	if total.HasIntended {
		// Compare like with like: the open-model arrivals completed.
		iters = 0
		for _, r := range total.Rows {
			iters += r.Completed
		}
	}
	elapsed := time.Duration(last+1) * tl.Period
	secs := elapsed.Seconds()
	o := Overview{
		Elapsed:      elapsed.String(),
		Requests:     count(req),
		Failures:     count(fail),
		Achieved:     strconv.FormatFloat(iters/secs, 'f', 1, 64) + "/s",
		Intended:     "—",
		Dropped:      count(dropped),
		Interrupted:  count(interrupted),
		PeakBacklog:  "—",
		VUs:          "—",
		RawP99:       p99(total.SpectrumRaw),
		CorrectedP99: p99(total.SpectrumCorrected),
		Source:       "percentiles from the dashboard's histograms (3 significant digits)",
	}
	if !total.HasCounters {
		o.Requests = count(float64(total.SpectrumRaw.TotalCount()))
		o.Failures = "—"
	} else if req > 0 {
		o.Failures += fmt.Sprintf(" (%.2f%%)", 100*fail/req)
	}
	if total.HasIntended {
		o.Intended = strconv.FormatFloat(intended/secs, 'f', 1, 64) + "/s"
	}
	if total.HasWait {
		o.PeakBacklog = strconv.FormatFloat(peak, 'f', 1, 64) + " (interval mean)"
	}
	if vus >= 0 {
		o.VUs = count(vus) + " (peak " + count(vusMax) + ")"
	}
	return o
}

func count(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }

func p99(h *hdrhistogram.Histogram) string {
	if h.TotalCount() == 0 {
		return "—"
	}
	return summary.FormatTime(float64(h.ValueAtQuantile(99))/1000, "")
}

// reportOf takes the summary's tables, and its exact p99s and peak
// backlog for the overview.
func reportOf(in *summary.Input, o *Overview) *Report {
	r := &Report{Scenarios: in.Scenarios, BackFills: in.BackFills, Warnings: in.Warnings}
	for _, m := range in.Metrics {
		for _, t := range m.Thresholds {
			row := ThresholdRow{Metric: m.Name, Source: t.Source, OK: t.OK}
			if t.Window != 0 {
				row.Windows = t.Windows.String(t.Window)
			}
			r.Thresholds = append(r.Thresholds, row)
		}
		if m.Parent != "" {
			continue
		}
		ts, ok := m.Sink.(*metrics.TrendSink)
		if !ok || ts.IsEmpty() {
			continue
		}
		switch m.Name {
		case metrics.HTTPReqDurationName:
			o.RawP99 = summary.FormatTime(ts.Percentile(99), in.Options.TimeUnit)
		case metrics.CorrectedLatencyName:
			o.CorrectedP99 = summary.FormatTime(ts.Percentile(99), in.Options.TimeUnit)
		}
	}
	o.Source = "percentiles from the end-of-test summary"
	var peak int64 = -1
	var dropped, interrupted int64
	for _, s := range in.Scenarios {
		peak = max(peak, s.PeakBacklog)
		dropped += s.Dropped
		interrupted += s.Interrupted
	}
	if peak >= 0 {
		o.PeakBacklog = strconv.FormatInt(peak, 10)
		o.Dropped = strconv.FormatInt(dropped, 10)
		o.Interrupted = strconv.FormatInt(interrupted, 10)
	}
	sort.SliceStable(r.Thresholds, func(i, j int) bool { return r.Thresholds[i].Metric < r.Thresholds[j].Metric })
	text := *in
	text.Options.NoColor = true
	r.Text = summary.Text(&text)
	return r
}
