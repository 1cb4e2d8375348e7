package hdrlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/metronome-load/metronome/metrics"
)

// Distribution is the merged histogram of one tag across every interval of
// every log read.
type Distribution struct {
	// Tag is the log tag, e.g. metric=corrected_latency;scenario=api.
	Tag string
	// Metric is the tag's metric part, or the whole tag when it has none.
	Metric string
	// Labels are the other parts of the tag, e.g. scenario=api.
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

// Merger merges interval logs. The zero value is not ready; use NewMerger.
type Merger struct {
	byTag    map[string]*Distribution
	warnings []string
}

// NewMerger returns an empty Merger.
func NewMerger() *Merger { return &Merger{byTag: map[string]*Distribution{}} }

// Add reads one interval log and merges each of its histograms into the
// distribution of its tag. name is used in errors and warnings. Lines that
// are not interval histograms are skipped and described by Warnings; a log
// without any interval histogram is an error.
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
		return fmt.Errorf("%s: no interval histograms (is it an HdrHistogram log?)", name)
	}
	return nil
}

// Warnings describe the lines skipped in the logs added so far.
func (m *Merger) Warnings() []string { return m.warnings }

func (m *Merger) merge(iv *Interval) {
	h := iv.Hist
	d := m.byTag[iv.Tag]
	if d == nil {
		d = &Distribution{Tag: iv.Tag}
		d.Metric, d.Labels = splitTag(iv.Tag)
		m.byTag[iv.Tag] = d
	}
	// The merged histogram keeps metronome's precision over a range that
	// widens to every interval's, so every value of every log fits.
	lo, hi := min(h.LowestTrackableValue(), Lowest), max(h.HighestTrackableValue(), Highest)
	if d.Hist == nil {
		d.Hist = hdrhistogram.NewPacked(lo, hi, SignificantDigits)
	} else if lo < d.Hist.LowestTrackableValue() || hi > d.Hist.HighestTrackableValue() {
		wider := hdrhistogram.NewPacked(min(lo, d.Hist.LowestTrackableValue()), max(hi, d.Hist.HighestTrackableValue()), SignificantDigits)
		d.Dropped += wider.Merge(d.Hist)
		d.Hist = wider
	}
	d.Dropped += d.Hist.Merge(h)
	d.Intervals++
	if d.Start.IsZero() || iv.Start.Before(d.Start) {
		d.Start = iv.Start
	}
	if iv.End.After(d.End) {
		d.End = iv.End
	}
}

// splitTag separates metric=<m> from the other parts of a tag.
func splitTag(tag string) (metric, labels string) {
	var rest []string
	for _, p := range strings.Split(tag, ";") {
		if v, ok := strings.CutPrefix(p, "metric="); ok && metric == "" {
			metric = v
			continue
		}
		if p != "" {
			rest = append(rest, p)
		}
	}
	if metric == "" {
		metric = tag
		rest = nil
	}
	return metric, strings.Join(rest, ";")
}

// Distributions returns the merged distributions, sorted by metric and
// labels, keeping those whose metric is in metricsFilter (all when empty).
func (m *Merger) Distributions(metricsFilter ...string) []*Distribution {
	keep := map[string]bool{}
	for _, f := range metricsFilter {
		keep[f] = true
	}
	out := make([]*Distribution, 0, len(m.byTag))
	for _, d := range m.byTag {
		if len(keep) == 0 || keep[d.Metric] {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Metric != out[j].Metric {
			return out[i].Metric < out[j].Metric
		}
		return out[i].Labels < out[j].Labels
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
	width := make([]int, len(head))
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			switch {
			case i < 2:
				b.WriteString(c + pad)
			default:
				b.WriteString(pad + c)
			}
			if i < len(r)-1 {
				b.WriteString("  ")
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON prints summaries as an indented JSON array, values in
// milliseconds rounded to 0.1 µs.
func WriteJSON(w io.Writer, sums []Summary) error {
	out := make([]Summary, len(sums))
	for i, s := range sums {
		s.Min, s.Mean, s.Max = round4(s.Min), round4(s.Mean), round4(s.Max)
		p := make(map[string]float64, len(s.Percentiles))
		for k, v := range s.Percentiles {
			p[k] = round4(v)
		}
		s.Percentiles = p
		out[i] = s
	}
	sums = out
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sums)
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
