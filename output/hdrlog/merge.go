package hdrlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/metronome-load/metronome/internal/columns"
	"github.com/metronome-load/metronome/metrics"
)

// Distribution is the merged histogram of one series, or of several,
// across every interval of every log read.
type Distribution struct {
	// Tag is the log tag, e.g. metric=corrected_latency;scenario=api.
	Tag string
	// Metric is the tag's metric part, or the whole tag when it has none.
	Metric string
	// Labels are the other parts of the tag, decoded, e.g. scenario=api.
	Labels string
	// Hist holds the values in the log's unit (microseconds for metronome's
	// logs), at SignificantDigits over the widest range of the intervals
	// merged, stored sparsely: it grows with the buckets the logs fill,
	// whatever range and precision they declare.
	Hist *hdrhistogram.PackedHistogram
	// Intervals is the number of interval histograms merged.
	Intervals int
	// Start and End span the merged intervals.
	Start, End time.Time
	// Dropped counts values that did not fit the merged histogram's range,
	// or whose count would overflow its total.
	Dropped int64
}

// add merges the histogram h of the interval [start, end), widening the
// merged histogram's range first when h's is wider, so every value fits.
func (d *Distribution) add(h *hdrhistogram.PackedHistogram, intervals int, start, end time.Time) {
	lo, hi := min(h.LowestTrackableValue(), Lowest), max(h.HighestTrackableValue(), Highest)
	switch {
	case d.Hist == nil:
		d.Hist = hdrhistogram.NewPacked(lo, hi, SignificantDigits)
	case lo < d.Hist.LowestTrackableValue() || hi > d.Hist.HighestTrackableValue():
		wider := hdrhistogram.NewPacked(min(lo, d.Hist.LowestTrackableValue()), max(hi, d.Hist.HighestTrackableValue()), SignificantDigits)
		d.Dropped += wider.Merge(d.Hist)
		d.Hist = wider
	}
	d.Dropped += d.Hist.Merge(h)
	d.Intervals += intervals
	if d.Start.IsZero() || start.Before(d.Start) {
		d.Start = start
	}
	if end.After(d.End) {
		d.End = end
	}
}

// Merger merges interval logs: each series exactly, whatever log or
// interval its histograms come from. The zero value is not ready; use
// NewMerger.
type Merger struct {
	bySeries map[Series]*Distribution
	warnings []string
}

// NewMerger returns an empty Merger.
func NewMerger() *Merger { return &Merger{bySeries: map[Series]*Distribution{}} }

// Add reads one interval log and merges each of its histograms into the
// distribution of its series. name is used in errors and warnings. Lines
// that are not interval histograms are skipped and described by Warnings;
// a log without any interval histogram is an error.
func (m *Merger) Add(r io.Reader, name string) error {
	lr := NewLogReader(r, name)
	n := 0
	for {
		iv, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		n++
		m.merge(iv)
	}
	m.warnings = append(m.warnings, lr.Warnings()...)
	if n == 0 {
		return lr.NoIntervals()
	}
	return nil
}

// Warnings describe the lines skipped in the logs added so far.
func (m *Merger) Warnings() []string { return m.warnings }

func (m *Merger) merge(iv *Interval) {
	s := ParseTag(iv.Tag)
	d := m.bySeries[s]
	if d == nil {
		d = &Distribution{Tag: s.Tag(), Metric: s.Metric, Labels: s.Labels()}
		m.bySeries[s] = d
	}
	d.add(iv.Hist, 1, iv.Start, iv.End)
}

// mergeInto adds the distributions of the series keep selects into one
// per key, and returns them in no particular order.
func (m *Merger) mergeInto(keep func(Series) (key Series, ok bool)) map[Series]*Distribution {
	out := map[Series]*Distribution{}
	for s, d := range m.bySeries {
		k, ok := keep(s)
		if !ok {
			continue
		}
		t := out[k]
		if t == nil {
			t = &Distribution{Tag: k.Tag(), Metric: k.Metric, Labels: k.Labels()}
			out[k] = t
		}
		t.add(d.Hist, d.Intervals, d.Start, d.End)
		t.Dropped += d.Dropped
	}
	return out
}

// Distributions returns one distribution per metric and scenario (the
// names and outcomes of a metric's requests merged), sorted by metric and
// labels, keeping those whose metric is in metricsFilter (all when empty).
func (m *Merger) Distributions(metricsFilter ...string) []*Distribution {
	keep := map[string]bool{}
	for _, f := range metricsFilter {
		keep[f] = true
	}
	by := m.mergeInto(func(s Series) (Series, bool) {
		return Series{Metric: s.Metric, Scenario: s.Scenario}, len(keep) == 0 || keep[s.Metric]
	})
	out := make([]*Distribution, 0, len(by))
	for _, d := range by {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Metric != out[j].Metric {
			return out[i].Metric < out[j].Metric
		}
		return out[i].Labels < out[j].Labels
	})
	return out
}

// Endpoint is one request name's raw and corrected distributions, each
// merged over every scenario and outcome.
type Endpoint struct {
	// Name is the requests' name tag; "" for the folded names (Folded).
	Name   string
	Folded bool
	// RawMetric is the first of RawMetrics the name has samples of, as in
	// the end-of-test summary; Raw its distribution, nil when the name has
	// none.
	RawMetric string
	Raw       *Distribution
	// Corrected is the name's corrected_latency (back-filled and
	// interrupted samples included), nil when it has none.
	Corrected *Distribution
}

// Endpoints returns each request name's distributions. The folded names,
// when the logs have some, come last as one Endpoint.
func (m *Merger) Endpoints() []Endpoint {
	by := m.mergeInto(func(s Series) (Series, bool) {
		return Series{Metric: s.Metric, Name: s.Name, Folded: s.Folded}, PerName(s.Metric) && (s.Name != "" || s.Folded)
	})
	eps := map[Series]*Endpoint{}
	for k, d := range by {
		id := Series{Name: k.Name, Folded: k.Folded}
		e := eps[id]
		if e == nil {
			e = &Endpoint{Name: k.Name, Folded: k.Folded}
			eps[id] = e
		}
		if k.Metric == metrics.CorrectedLatencyName {
			e.Corrected = d
		}
	}
	for _, raw := range RawMetrics {
		for k, d := range by {
			if e := eps[Series{Name: k.Name, Folded: k.Folded}]; k.Metric == raw && e.Raw == nil {
				e.RawMetric, e.Raw = raw, d
			}
		}
	}
	out := make([]Endpoint, 0, len(eps))
	for _, e := range eps {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Folded != out[j].Folded {
			return out[j].Folded
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Percentiles are the percentiles `metronome merge` reports.
var Percentiles = []float64{50, 90, 95, 99, 99.9}

// Summary is a distribution's numbers in milliseconds.
type Summary struct {
	Metric    string  `json:"metric"`
	Labels    string  `json:"labels,omitempty"`
	Count     int64   `json:"count"`
	Min       float64 `json:"min"`
	Mean      float64 `json:"mean"`
	Max       float64 `json:"max"`
	Intervals int     `json:"intervals"`
	// Percentiles maps "p50", "p99.9", ... to values.
	Percentiles map[string]float64 `json:"percentiles"`
	Start       time.Time          `json:"start"`
	End         time.Time          `json:"end"`
}

// Summarize computes a distribution's count, min, mean, max and
// percentiles, converting microseconds to milliseconds. Percentiles use the
// estimator of the end-of-test summary (metrics.TrendSink): linear
// interpolation between the values of closest rank, h = p/100·(n−1), each
// value read as the middle of its HdrHistogram bucket. Since the log's
// buckets are the summary's (1 µs units, 3 significant digits), the log of
// a single run reproduces its summary's percentiles; min and max are the
// middles of their buckets, within 0.05% of the exact ones.
func (d *Distribution) Summarize(pcts []float64) Summary {
	const usToMs = 1e-3
	s := Summary{
		Metric:      d.Metric,
		Labels:      d.Labels,
		Count:       d.Hist.TotalCount(),
		Intervals:   d.Intervals,
		Percentiles: map[string]float64{},
		Start:       d.Start.UTC(),
		End:         d.End.UTC(),
	}
	if s.Count == 0 {
		return s
	}
	// Ranks come from the dense form of the same geometry, at most a few
	// hundred KB at SignificantDigits, one distribution at a time.
	dense := hdrhistogram.New(d.Hist.LowestTrackableValue(), d.Hist.HighestTrackableValue(), int(d.Hist.SignificantFigures()))
	d.Hist.MergeInto(dense)
	r := newRanks(dense)
	s.Min = r.at(0) * usToMs
	s.Max = r.at(s.Count-1) * usToMs
	s.Mean = dense.Mean() * usToMs
	for _, p := range pcts {
		s.Percentiles[PercentileName(p)] = r.percentile(p) * usToMs
	}
	return s
}

// ranks answers "which value has rank r" over a histogram's non-empty
// buckets.
type ranks struct {
	mids []float64 // middle of each non-empty bucket, ascending
	cum  []int64   // cumulative count up to and including the bucket
}

func newRanks(h *hdrhistogram.Histogram) ranks {
	var r ranks
	var c int64
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		c += b.Count
		r.mids = append(r.mids, float64(b.From+b.To)/2)
		r.cum = append(r.cum, c)
	}
	return r
}

// at returns the value with 0-based rank i.
func (r ranks) at(i int64) float64 {
	k := sort.Search(len(r.cum), func(j int) bool { return r.cum[j] > i })
	return r.mids[min(k, len(r.mids)-1)]
}

func (r ranks) percentile(p float64) float64 {
	n := r.cum[len(r.cum)-1]
	switch {
	case n == 1, p <= 0:
		return r.at(0)
	case p >= 100:
		return r.at(n - 1)
	}
	return metrics.InterpolateRanks(p, n, r.at)
}

// EndpointPercentiles are the percentiles of the per-name view, as in the
// end-of-test summary's endpoint table.
var EndpointPercentiles = []float64{50, 99, 99.9}

// EndpointSummary is one request name's numbers in milliseconds, in the
// shape of handleSummary's metronome.endpoints.
type EndpointSummary struct {
	Name   string `json:"name"`
	Folded bool   `json:"folded,omitempty"`
	// Requests counts the raw samples, CorrectedSamples the corrected ones
	// (back-filled samples included).
	Requests         int64  `json:"requests"`
	CorrectedSamples int64  `json:"correctedSamples"`
	RawMetric        string `json:"rawMetric,omitempty"`
	// Raw and Corrected map "p(50)", "p(99)", "p(99.9)" to values; nil when
	// the name has no such samples.
	Raw       map[string]float64 `json:"raw,omitempty"`
	Corrected map[string]float64 `json:"corrected,omitempty"`
}

// Summarize computes the endpoint's percentiles with the estimator of
// Distribution.Summarize.
func (e Endpoint) Summarize(pcts []float64) EndpointSummary {
	s := EndpointSummary{Name: e.Name, Folded: e.Folded, RawMetric: e.RawMetric}
	pick := func(d *Distribution) (map[string]float64, int64) {
		if d == nil || d.Hist.TotalCount() == 0 {
			return nil, 0
		}
		sum := d.Summarize(pcts)
		out := map[string]float64{}
		for _, p := range pcts {
			out[statName(p)] = sum.Percentiles[PercentileName(p)]
		}
		return out, sum.Count
	}
	s.Raw, s.Requests = pick(e.Raw)
	s.Corrected, s.CorrectedSamples = pick(e.Corrected)
	return s
}

// SortEndpoints orders endpoints as the summary does, the slowest by
// corrected p99 first; those without corrected samples, then the folded
// names, last.
func SortEndpoints(eps []EndpointSummary) {
	p99 := func(e EndpointSummary) float64 {
		if e.Corrected == nil {
			return -1
		}
		return e.Corrected["p(99)"]
	}
	sort.SliceStable(eps, func(i, j int) bool {
		if eps[i].Folded != eps[j].Folded {
			return eps[j].Folded
		}
		if a, b := p99(eps[i]), p99(eps[j]); a != b {
			return a > b
		}
		return eps[i].Name < eps[j].Name
	})
}

// FoldedName is how tables show the folded names.
const FoldedName = "(names past the cap, folded)"

// WriteEndpointTable prints endpoints as an aligned table: name, requests,
// then raw and corrected p50, p99, p99.9.
func WriteEndpointTable(w io.Writer, eps []EndpointSummary, pcts []float64) error {
	head := []string{"name", "requests"}
	for _, kind := range []string{"raw", "corrected"} {
		for _, p := range pcts {
			head = append(head, kind+" "+PercentileName(p))
		}
	}
	rows := [][]string{head}
	for _, e := range eps {
		name := e.Name
		if e.Folded {
			name = FoldedName
		}
		row := []string{name, fmt.Sprint(e.Requests)}
		for _, vals := range []map[string]float64{e.Raw, e.Corrected} {
			for _, p := range pcts {
				v, ok := vals[statName(p)]
				if !ok {
					row = append(row, "n/a")
					continue
				}
				row = append(row, FormatMs(v))
			}
		}
		rows = append(rows, row)
	}
	return writeColumns(w, "lr", rows)
}

// statName writes p as k6 names a trend stat: 99.9 → p(99.9).
func statName(p float64) string { return "p(" + strings.TrimPrefix(PercentileName(p), "p") + ")" }

// PercentileName writes p as k6 names a stat column: 99.9 → p99.9.
func PercentileName(p float64) string {
	return "p" + strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.4f", p), "0"), ".")
}

// WriteTable prints summaries as an aligned table: names left-aligned,
// numbers right-aligned, durations in readable units.
func WriteTable(w io.Writer, sums []Summary, pcts []float64) error {
	head := []string{"metric", "labels", "count", "min", "mean"}
	for _, p := range pcts {
		head = append(head, PercentileName(p))
	}
	head = append(head, "max")
	rows := [][]string{head}
	for _, s := range sums {
		labels := s.Labels
		if labels == "" {
			labels = "-"
		}
		row := []string{s.Metric, labels, fmt.Sprint(s.Count), FormatMs(s.Min), FormatMs(s.Mean)}
		for _, p := range pcts {
			row = append(row, FormatMs(s.Percentiles[PercentileName(p)]))
		}
		rows = append(rows, append(row, FormatMs(s.Max)))
	}
	return writeColumns(w, "llr", rows)
}

// writeColumns prints rows as columns aligned as align says (see
// columns.Write).
func writeColumns(w io.Writer, align string, rows [][]string) error {
	var b strings.Builder
	columns.Write(&b, "", align, rows)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON prints summaries as an indented JSON array, values in
// milliseconds rounded to 0.1 µs.
func WriteJSON(w io.Writer, sums []Summary) error {
	out := make([]Summary, len(sums))
	for i, s := range sums {
		s.Min, s.Mean, s.Max = round4(s.Min), round4(s.Mean), round4(s.Max)
		s.Percentiles = round4Map(s.Percentiles)
		out[i] = s
	}
	return writeIndented(w, out)
}

// WriteEndpointJSON prints endpoints as WriteJSON prints summaries.
func WriteEndpointJSON(w io.Writer, eps []EndpointSummary) error {
	out := make([]EndpointSummary, len(eps))
	for i, e := range eps {
		e.Raw, e.Corrected = round4Map(e.Raw), round4Map(e.Corrected)
		out[i] = e
	}
	return writeIndented(w, out)
}

func writeIndented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func round4Map(m map[string]float64) map[string]float64 {
	if m == nil {
		return nil
	}
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = round4(v)
	}
	return out
}

// round4 rounds milliseconds to 0.1 µs, below the histograms' resolution,
// so JSON shows no floating-point noise.
func round4(ms float64) float64 { return math.Round(ms*1e4) / 1e4 }

// FormatMs writes milliseconds with a unit that keeps 3–4 significant
// digits: 850µs, 12.35ms, 1.92s, 2m5.1s.
func FormatMs(ms float64) string {
	switch {
	case math.IsNaN(ms) || math.IsInf(ms, 0):
		return fmt.Sprint(ms)
	case ms == 0:
		return "0s"
	case math.Abs(ms) < 1:
		return trimZeros(fmt.Sprintf("%.1f", ms*1000)) + "µs"
	case math.Abs(ms) < 1000:
		return trimZeros(fmt.Sprintf("%.2f", ms)) + "ms"
	case math.Abs(ms) < 60_000:
		return trimZeros(fmt.Sprintf("%.2f", ms/1000)) + "s"
	case math.Abs(ms) >= math.MaxInt64/float64(time.Millisecond):
		// Past what a time.Duration holds (292 years), which only a
		// damaged or forged value reaches: hours, not a wrapped negative.
		return strconv.FormatFloat(ms/3.6e6, 'g', 4, 64) + "h"
	}
	d := time.Duration(math.Round(ms/100) * 100 * float64(time.Millisecond))
	return d.String()
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
