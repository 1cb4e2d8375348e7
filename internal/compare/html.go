package compare

import (
	"fmt"
	"html/template"
	"io"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/metronome-load/metronome/internal/percentiles"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output/dashboard"
	"github.com/metronome-load/metronome/output/hdrlog"
)

// pageTemplate is the report page, parsed when a report is first written.
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("compare").Funcs(template.FuncMap{
		"svg": func(s string) template.HTML { return template.HTML(s) }, // rendered by gonum, not user input
	}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>metronome compare: {{.Base}} vs {{.New}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5rem auto; max-width: 70rem; padding: 0 1rem; color: #222; }
.verdict { font-size: 1.1rem; padding: .6rem .8rem; border-radius: .3rem; }
.regression { background: #FEE0D2; } .ok { background: #E5F5E0; }
table { border-collapse: collapse; font-size: .85rem; margin: .5rem 0 1.5rem; }
th, td { padding: .15rem .6rem; text-align: right; border-bottom: 1px solid #ddd; }
th { text-align: left; }
th:first-child, td:first-child, td.l { text-align: left; }
tr.judged td { font-weight: bold; background: #FFF5EB; }
figure { margin: 1rem 0; } figcaption { font-size: .85rem; color: #555; }
.legend { font-size: .8rem; } .legend span { margin-right: .9rem; }
.legend i { display: inline-block; width: 1.6rem; margin-right: .3rem; vertical-align: middle; border-top: 3px solid; }
</style></head><body>
<h1>metronome compare</h1>
<p>base <b>{{.Base}}</b>, new <b>{{.New}}</b></p>
<p class="verdict {{if .Regression}}regression{{else}}ok{{end}}"><b>{{if .Regression}}Regression{{else}}No regression{{end}}:</b> {{.Reason}}</p>
<p>Rule: {{.Rule}}</p>
{{range .Charts}}<figure><div class="legend">{{range .Legend}}<span><i style="border-top-color: {{.Color}}; border-top-style: {{if .Dashed}}dashed{{else}}solid{{end}}"></i>{{.Name}}</span>{{end}}</div>
{{svg .SVG}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}
<table><tr><th>metric</th><th>tags</th><th>percentile</th><th>base</th><th>new</th><th>difference</th><th></th><th>{{.Confidence}}% interval</th></tr>
{{range .Rows}}<tr{{if .Judged}} class="judged"{{end}}>{{range .Cells}}<td class="l">{{.}}</td>{{end}}</tr>
{{end}}</table>
</body></html>
`))
})

// WriteHTML writes a self-contained page: the verdict, both runs'
// percentile spectra overlaid for the judged tag set (corrected and raw),
// and every row's percentiles.
func (r *Report) WriteHTML(w io.Writer) error {
	type row struct {
		Judged bool
		Cells  []string
	}
	page := struct {
		Base, New, Reason, Rule, Confidence string
		Regression                          bool
		Charts                              []dashboard.Chart
		Rows                                []row
	}{
		Base: r.Base.File, New: r.New.File, Reason: r.Verdict.Reason, Regression: r.Verdict.Regression,
		Rule: fmt.Sprintf("%s: a regression when worse by more than %s%% and its %s%% interval lies above zero (a bootstrap over both runs' intervals, %d resamples).",
			r.judgedName(), trimFloat(r.Options.Tolerance), trimFloat(r.Options.Confidence), r.Options.Resamples),
		Confidence: trimFloat(r.Options.Confidence),
	}
	for i, kind := range []string{"corrected", "raw"} {
		metric := metrics.CorrectedLatencyName
		if i == 1 {
			metric = r.rawMetric()
		}
		if metric == "" {
			continue
		}
		var curves []dashboard.SpectrumCurve
		for k, g := range r.groupSeries(metric, r.Verdict.Labels) {
			if h := histogramOf(g); h.TotalCount() > 0 {
				curves = append(curves, dashboard.SpectrumCurve{Name: []string{"base ", "new "}[k] + kind, Hist: h, Dashed: k == 0})
			}
		}
		if len(curves) == 0 {
			continue
		}
		c, err := dashboard.SpectrumChart("spectrum-"+kind, fmt.Sprintf("%s (%s), %s", kind, metric, labelsOr(r.Verdict.Labels)),
			"Latency at each percentile of each whole run; the x axis stretches the tail (log of 1/(1−p)). Dashed: the base run.", curves...)
		if err != nil {
			return err
		}
		if c != nil {
			page.Charts = append(page.Charts, *c)
		}
	}
	for _, rw := range r.Rows {
		for _, d := range rw.Diffs {
			page.Rows = append(page.Rows, row{Judged: rw.Judged && d.Percentile == r.Options.Percentile, Cells: []string{
				rw.Metric, labelsOr(rw.Labels), percentiles.Name(d.Percentile),
				value(d.Base, rw.Time), value(d.New, rw.Time), signed(d.Diff, rw.Time), percent(d.Relative), interval(d.Low, d.High, rw.Time),
			}})
		}
	}
	return pageTemplate().Execute(w, page)
}

func labelsOr(labels string) string {
	if labels == "" {
		return "all samples"
	}
	return labels
}

// rawMetric is the raw metric the report shows, "" when none.
func (r *Report) rawMetric() string {
	for _, row := range r.Rows {
		if row.Metric != metrics.CorrectedLatencyName && hdrlog.PerName(row.Metric) {
			return row.Metric
		}
	}
	return ""
}

// groupSeries returns each run's series of metric's row labels.
func (r *Report) groupSeries(metric, labels string) [2][]*Series {
	for _, g := range groupsOf(metric, r.runs[0], r.runs[1], labels) {
		if g.labels == labels {
			return g.series
		}
	}
	return [2][]*Series{}
}

// histogramOf merges every interval of series into one histogram of a
// TrendSink's geometry, in microseconds for time metrics.
func histogramOf(series []*Series) *hdrhistogram.Histogram {
	h := hdrhistogram.New(1, metrics.TrendHighestUnit, metrics.TrendSignificantDigits)
	for _, s := range series {
		for _, p := range s.Intervals {
			p.MergeInto(h)
		}
	}
	return h
}
