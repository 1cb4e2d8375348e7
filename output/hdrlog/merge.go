package hdrlog

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/metronome-load/metronome/internal/percentiles"
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

// Summarize computes a distribution's count, min, mean, max and
// percentiles, converting microseconds to milliseconds. Percentiles use the
// estimator of the end-of-test summary (metrics.TrendSink): linear
// interpolation between the values of closest rank, h = p/100·(n−1), each
// value read as the middle of its HdrHistogram bucket. Since the log's
// buckets are the summary's (1 µs units, 3 significant digits), the log of
// a single run reproduces its summary's percentiles; min and max are the
// middles of their buckets, within 0.05% of the exact ones.
func (d *Distribution) Summarize(pcts []float64) percentiles.Summary {
	const usToMs = 1e-3
	s := percentiles.Summary{
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
		s.Percentiles[percentiles.Name(p)] = r.percentile(p) * usToMs
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

// Summarize computes the endpoint's percentiles with the estimator of
// Distribution.Summarize.
func (e Endpoint) Summarize(pcts []float64) percentiles.EndpointSummary {
	s := percentiles.EndpointSummary{Name: e.Name, Folded: e.Folded, RawMetric: e.RawMetric}
	pick := func(d *Distribution) (map[string]float64, int64) {
		if d == nil || d.Hist.TotalCount() == 0 {
			return nil, 0
		}
		sum := d.Summarize(pcts)
		out := map[string]float64{}
		for _, p := range pcts {
			out[percentiles.StatName(p)] = sum.Percentiles[percentiles.Name(p)]
		}
		return out, sum.Count
	}
	s.Raw, s.Requests = pick(e.Raw)
	s.Corrected, s.CorrectedSamples = pick(e.Corrected)
	return s
}
