package dashboard

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"regexp"
	"strconv"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/metronome-load/metronome/summary"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Chart is one rendered chart.
type Chart struct {
	// ID is unique in a page, e.g. "total-latency" or
	// "scenario-api-spectrum"; Section is the scenario ("" for the whole
	// test).
	ID, Section string
	Title       string
	Caption     string
	// Series names the curves drawn; Palette has their colours.
	Series []string
	// Legend describes each series' line for the page's legend.
	Legend []LegendEntry
	// SVG is the chart as an inline <svg> element.
	SVG string
}

// LegendEntry is one line of a chart's legend, drawn by the page in HTML
// so that it never hides the curves. A Band entry is a shaded stretch of
// time rather than a curve.
type LegendEntry struct {
	Name, Color string
	Dashed      bool
	Band        bool
}

// Palette is the stroke colour of each series, as gonum's SVG backend
// writes it: the browser test counts the drawn curves by these.
var Palette = map[string]string{
	"raw p50":                       "#9ECAE1",
	"raw p99":                       "#3182BD",
	"raw max":                       "#08306B",
	"corrected p50":                 "#FCAE91",
	"corrected p99":                 "#DE2D26",
	"corrected max":                 "#67000D",
	"schedule_lag p50":              "#A1D99B",
	"schedule_lag p99":              "#31A354",
	"schedule_lag max":              "#00441B",
	"backlog":                       "#756BB1",
	"intended":                      "#636363",
	"achieved":                      "#1F78B4",
	"dropped":                       "#E6550D",
	"VUs":                           "#2CA25F",
	"failed requests":               "#CB181D",
	"raw (http_req_duration)":       "#3182BD",
	"corrected (corrected_latency)": "#DE2D26",
	failingWindows:                  "#FCBBA1",
	generatorLimited:                "#BDBDBD",
	"base raw":                      "#9ECAE1",
	"new raw":                       "#3182BD",
	"base corrected":                "#FC9272",
	"new corrected":                 "#A50F15",
}

// The two kinds of band the time charts shade, each in its own colour and
// named in the legend: the seconds in which the generator itself was short
// of CPU, scheduling or timely wake-ups (generator_limited), where latency
// is an upper bound, and where a windowed threshold failed.
const (
	generatorLimited = "generator may have inflated latency"
	failingWindows   = "failing threshold windows"
)

// bandCaptions are added to the caption of a chart with the band.
var bandCaptions = map[string]string{
	generatorLimited: " Shaded grey: seconds in which the generator itself was short of CPU, scheduling or timely wake-ups (generator_limited); latency there is an upper bound.",
	failingWindows:   " Shaded red: the windows in which a windowed threshold failed.",
}

// Mark is a stretch of the time axis to shade, in seconds since the
// timeline's start: where a windowed threshold failed, or where the
// generator was short.
type Mark struct {
	From, To float64
}

// inflatedMarks places tl's Inflated spans on its time axis.
func inflatedMarks(tl *Timeline) []Mark {
	var marks []Mark
	for _, s := range tl.Inflated {
		marks = append(marks, Mark{From: s.From.Sub(tl.Start).Seconds(), To: s.To.Sub(tl.Start).Seconds()})
	}
	return marks
}

// MarksOf returns the stretches of the run where a windowed threshold of
// in failed, placed on tl's time axis.
func MarksOf(tl *Timeline, in *summary.Input) []Mark {
	if in == nil {
		return nil
	}
	// Windows are offsets from the run's start, which is a little after
	// the dashboard's.
	shift := 0.0
	if !in.State.Start.IsZero() && !tl.Start.IsZero() {
		shift = in.State.Start.Sub(tl.Start).Seconds()
	}
	var marks []Mark
	for _, m := range in.Metrics {
		for _, t := range m.Thresholds {
			for _, s := range t.Windows.Failing {
				marks = append(marks, Mark{From: shift + s.From.Seconds(), To: shift + s.To.Seconds()})
			}
		}
	}
	return marks
}

// shade draws marks across the plot's height in a translucent fill of the
// palette's colour for name, over the curves, which stay visible through
// it.
func shade(name string, marks []Mark) func(*plot.Plot) {
	return func(p *plot.Plot) {
		rgb := paletteColor(name).(color.RGBA)
		fill := color.NRGBA{R: rgb.R, G: rgb.G, B: rgb.B, A: 110}
		for _, m := range marks {
			poly, err := plotter.NewPolygon(plotter.XYs{{X: m.From, Y: p.Y.Min}, {X: m.To, Y: p.Y.Min}, {X: m.To, Y: p.Y.Max}, {X: m.From, Y: p.Y.Max}})
			if err != nil {
				continue
			}
			poly.Color = fill
			poly.LineStyle.Width = 0
			p.Add(poly)
		}
	}
}

func paletteColor(name string) color.Color {
	s := Palette[name]
	v, _ := strconv.ParseUint(s[1:], 16, 32)
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}

// Chart size in points; the page scales the SVG to its column.
const (
	chartW = 16 * vg.Centimeter
	chartH = 7 * vg.Centimeter
)

// series is one curve to draw.
type series struct {
	name   string
	pts    plotter.XYs
	dashed bool
}

// Charts renders the charts of every section of tl, shading marks on the
// time charts of the whole test and tl's Inflated spans on every time
// chart. A chart without data (schedule_lag in a
// closed-model scenario, say) is left out.
func Charts(tl *Timeline, marks ...Mark) ([]Chart, error) {
	var out []Chart
	for _, sec := range tl.Sections {
		var m []Mark
		if sec.Name == "" {
			m = marks
		}
		cs, err := sectionCharts(tl, sec, m)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

// SectionID is the prefix of a section's chart IDs.
func SectionID(name string) string {
	if name == "" {
		return "total"
	}
	return "scenario-" + idUnsafe().ReplaceAllString(name, "_")
}

// idUnsafe matches what a chart ID cannot hold; compiled on first use.
var idUnsafe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_-]`) })

func sectionCharts(tl *Timeline, sec *Section, marks []Mark) ([]Chart, error) {
	prefix := SectionID(sec.Name)
	period := tl.Period.Seconds()
	xs := func(i int) float64 { return float64(i+1) * period }
	timeSeries := func(name string, dashed bool, v func(r *Row) (float64, bool)) series {
		s := series{name: name, dashed: dashed}
		for i := range sec.Rows {
			if y, ok := v(&sec.Rows[i]); ok {
				s.pts = append(s.pts, plotter.XY{X: xs(i), Y: y})
			}
		}
		return s
	}
	stat := func(get func(r *Row) Stats, f func(Stats) float64) func(r *Row) (float64, bool) {
		return func(r *Row) (float64, bool) {
			st := get(r)
			return f(st), st.Count > 0
		}
	}
	p50 := func(s Stats) float64 { return s.P50 }
	p99 := func(s Stats) float64 { return s.P99 }
	pmax := func(s Stats) float64 { return s.Max }
	lag := func(r *Row) Stats { return r.Lag }
	perSec := func(f func(r *Row) float64) func(r *Row) (float64, bool) {
		return func(r *Row) (float64, bool) { return f(r) / period, true }
	}

	var charts []Chart
	inflated := inflatedMarks(tl)
	add := func(id, title, caption, xLabel, yLabel string, ss []series, opts ...func(*plot.Plot)) error {
		var bands []LegendEntry
		for _, sh := range []struct {
			name  string
			marks []Mark
		}{{generatorLimited, inflated}, {failingWindows, marks}} {
			if xLabel != timeAxis || len(sh.marks) == 0 {
				continue
			}
			opts = append(opts, shade(sh.name, sh.marks))
			bands = append(bands, LegendEntry{Name: sh.name, Color: Palette[sh.name], Band: true})
			caption += bandCaptions[sh.name]
		}
		c, err := newChart(prefix+"-"+id, title, caption, xLabel, yLabel, ss, opts...)
		if c != nil {
			c.Section = sec.Name
			c.Legend = append(c.Legend, bands...)
			charts = append(charts, *c)
		}
		return err
	}
	steps := []error{
		add("latency", "Raw vs corrected latency", "Blue is what requests took (http_req_duration); red is what users waited, from each arrival's intended start (corrected_latency). A red line far above the blue one is coordinated omission made visible.",
			timeAxis, "latency per interval (ms)", latencySeries(len(sec.Rows), period, func(i int) (Stats, Stats) {
				return sec.Rows[i].Raw, sec.Rows[i].Corrected
			})),
		add("lag", "Schedule lag", "How late iterations started after their intended time: near zero while the generator keeps up; a spike means arrivals waited for a free VU (a stalled server, or too few VUs).",
			timeAxis, "schedule_lag per interval (ms)", []series{
				timeSeries("schedule_lag p50", true, stat(lag, p50)),
				timeSeries("schedule_lag p99", false, stat(lag, p99)),
				timeSeries("schedule_lag max", true, stat(lag, pmax)),
			}),
	}
	if sec.HasWait {
		steps = append(steps, add("backlog", "Backlog", "Arrivals waiting for a VU, averaged over each interval: it rises while the target stalls and should drain back to zero afterwards.",
			timeAxis, "arrivals waiting (mean)", []series{
				timeSeries("backlog", false, func(r *Row) (float64, bool) { return r.WaitMs / (period * 1000), true }),
			}))
	}
	rate := []series{timeSeries("achieved", false, perSec(func(r *Row) float64 { return r.Iterations }))}
	if sec.HasIntended {
		rate = []series{
			timeSeries("intended", true, perSec(func(r *Row) float64 { return r.Intended })),
			timeSeries("achieved", false, perSec(func(r *Row) float64 { return r.Completed })),
			timeSeries("dropped", false, perSec(func(r *Row) float64 { return r.Dropped })),
		}
	}
	steps = append(steps, add("rate", "Intended vs achieved rate", "Grey dashes are the arrivals the schedule intended (by intended start), blue those completed (by end; all iterations in a closed model), orange the dropped ones. Blue below grey means arrivals are waiting or lost.",
		timeAxis, "iterations per second", rate))
	var vus []series
	if sec.HasCounters {
		vus = append(vus, timeSeries("failed requests", false, perSec(func(r *Row) float64 { return r.Failures })))
	}
	if sec.HasVUs {
		vus = append([]series{timeSeries("VUs", false, func(r *Row) (float64, bool) { return r.VUs, r.VUs >= 0 })}, vus...)
	}
	steps = append(steps, add("vus", "VUs and errors", "Green is the number of active VUs, red the failed requests per second (http_req_failed).",
		timeAxis, "VUs / failed requests per second", vus))
	steps = append(steps, add("spectrum", "Percentile spectrum", "Latency at each percentile of the whole run, HdrHistogram style: the x axis stretches the tail (log of 1/(1−p)); where the red curve leaves the blue one, coordinated omission was hiding the stalls.",
		"percentile", "latency (ms)", []series{
			spectrum("raw (http_req_duration)", sec.SpectrumRaw),
			spectrum("corrected (corrected_latency)", sec.SpectrumCorrected),
		}, spectrumAxis))
	for _, err := range steps {
		if err != nil {
			return nil, err
		}
	}
	return charts, nil
}

// timeAxis labels the x axis of the charts over time.
const timeAxis = "time since start (s)"

// newChart renders the series of ss that have points as chart id; nil when
// none has.
func newChart(id, title, caption, xLabel, yLabel string, ss []series, opts ...func(*plot.Plot)) (*Chart, error) {
	var kept []series
	for _, s := range ss {
		if len(s.pts) > 0 {
			kept = append(kept, s)
		}
	}
	if len(kept) == 0 {
		return nil, nil
	}
	svg, err := render(title, xLabel, yLabel, kept, opts...)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", id, err)
	}
	c := &Chart{ID: id, Title: title, Caption: caption, SVG: svg}
	for _, s := range kept {
		c.Series = append(c.Series, s.name)
		c.Legend = append(c.Legend, LegendEntry{Name: s.name, Color: Palette[s.name], Dashed: s.dashed})
	}
	return c, nil
}

// latencySeries are the curves of a latency chart over n intervals of
// period seconds: raw and corrected p50, p99 and max, from each interval's
// figures at(i).
func latencySeries(n int, period float64, at func(i int) (raw, corrected Stats)) []series {
	curve := func(name string, dashed, corrected bool, f func(Stats) float64) series {
		s := series{name: name, dashed: dashed}
		for i := range n {
			st, c := at(i)
			if corrected {
				st = c
			}
			if st.Count > 0 {
				s.pts = append(s.pts, plotter.XY{X: float64(i+1) * period, Y: f(st)})
			}
		}
		return s
	}
	p50 := func(s Stats) float64 { return s.P50 }
	p99 := func(s Stats) float64 { return s.P99 }
	pmax := func(s Stats) float64 { return s.Max }
	return []series{
		curve("raw p50", true, false, p50), curve("raw p99", false, false, p99), curve("raw max", true, false, pmax),
		curve("corrected p50", true, true, p50), curve("corrected p99", false, true, p99), curve("corrected max", true, true, pmax),
	}
}

// spectrum samples a histogram at percentiles evenly spaced on the axis
// x = log10(1/(1−p)), from p = 0 to the percentile its count still
// resolves (1 − 1/count), and at its maximum.
func spectrum(name string, h *hdrhistogram.Histogram) series {
	s := series{name: name}
	n := h.TotalCount()
	if n == 0 {
		return s
	}
	top := math.Log10(float64(n))
	for x := 0.0; x < top; x += 0.05 {
		p := 100 * (1 - math.Pow(10, -x))
		s.pts = append(s.pts, plotter.XY{X: x, Y: float64(h.ValueAtQuantile(p)) / 1000})
	}
	s.pts = append(s.pts, plotter.XY{X: top, Y: float64(h.Max()) / 1000})
	return s
}

// SpectrumCurve is one distribution to draw on a percentile spectrum.
type SpectrumCurve struct {
	// Name labels the curve and picks its colour in Palette.
	Name string
	// Hist holds the values in microseconds.
	Hist   *hdrhistogram.Histogram
	Dashed bool
}

// SpectrumChart draws curves on one percentile spectrum, with the axis of
// the report's spectrum charts; `metronome compare` overlays two runs'.
func SpectrumChart(id, title, caption string, curves ...SpectrumCurve) (*Chart, error) {
	ss := make([]series, 0, len(curves))
	for _, c := range curves {
		s := spectrum(c.Name, c.Hist)
		s.dashed = c.Dashed
		ss = append(ss, s)
	}
	return newChart(id, title, caption, "percentile", "latency (ms)", ss, spectrumAxis)
}

// spectrumAxis labels x = log10(1/(1−p)) with the percentiles 0, 90, 99,
// 99.9 % …
func spectrumAxis(p *plot.Plot) {
	p.X.Min = 0
	p.X.Tick.Marker = plot.TickerFunc(func(min, max float64) []plot.Tick {
		var ts []plot.Tick
		for k := 0; float64(k) <= max+1e-9; k++ {
			label := "0%"
			if k > 0 {
				label = trimPercent(100*(1-math.Pow(10, -float64(k))), k) + "%"
			}
			ts = append(ts, plot.Tick{Value: float64(k), Label: label})
		}
		return ts
	})
}

// trimPercent prints 90, 99, 99.9, 99.99 … with just the decimals k nines
// need.
func trimPercent(v float64, k int) string {
	return strconv.FormatFloat(v, 'f', max(k-2, 0), 64)
}

// svgFixes are the two rewrites of gonum's SVG output, compiled when a
// chart is first rendered: the XML declaration and comment it starts
// with, and its fixed size.
var svgFixes = sync.OnceValues(func() (xmlDecl, svgSize *regexp.Regexp) {
	return regexp.MustCompile(`(?s)^<\?xml.*?\?>\s*(<!--.*?-->\s*)?`), regexp.MustCompile(`<svg width="[^"]*" height="[^"]*"`)
})

func render(title, xLabel, yLabel string, ss []series, opts ...func(*plot.Plot)) (string, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	for _, s := range ss {
		l, err := plotter.NewLine(s.pts)
		if err != nil {
			return "", err
		}
		l.Color = paletteColor(s.name)
		l.Width = vg.Points(1.5)
		if s.dashed {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		p.Add(l)
		if len(s.pts) == 1 {
			// A line through one point draws nothing: mark it.
			dot, err := plotter.NewScatter(s.pts)
			if err != nil {
				return "", err
			}
			dot.GlyphStyle = draw.GlyphStyle{Color: l.Color, Radius: vg.Points(3), Shape: draw.RingGlyph{}}
			p.Add(dot)
		}
	}
	for _, o := range opts {
		o(p)
	}
	w, err := p.WriterTo(chartW, chartH, "svg")
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if _, err := w.WriteTo(&b); err != nil {
		return "", err
	}
	xmlDecl, svgSize := svgFixes()
	out := xmlDecl.ReplaceAllString(b.String(), "")
	out = svgSize.ReplaceAllString(out, `<svg role="img" width="100%"`)
	return out, nil
}
