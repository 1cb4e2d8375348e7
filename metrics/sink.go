package metrics

import (
	"math"
	"math/bits"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/metronome-load/metronome/internal/hdrhist"
)

// Sink aggregates the samples of one metric (or submetric).
type Sink interface {
	Add(s Sample)
	// IsEmpty reports whether no sample was added.
	IsEmpty() bool
}

// NewSink returns the sink for a metric type.
func NewSink(t Type) Sink {
	switch t {
	case Counter:
		return &CounterSink{}
	case Gauge:
		return &GaugeSink{}
	case Rate:
		return &RateSink{}
	default:
		return NewTrendSink()
	}
}

// CounterSink sums values.
type CounterSink struct {
	Sum   float64
	Count int64
	First time.Time
}

// Add adds s.Value to the sum.
func (c *CounterSink) Add(s Sample) {
	if c.Count == 0 {
		c.First = s.Time
	}
	c.Sum += s.Value
	c.Count++
}

// IsEmpty reports whether no sample was added.
func (c *CounterSink) IsEmpty() bool { return c.Count == 0 }

// Rate is the sum per second of elapsed test time.
func (c *CounterSink) Rate(elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return 0
	}
	return c.Sum / elapsed.Seconds()
}

// GaugeSink keeps the last value and the extremes.
type GaugeSink struct {
	Value, Min, Max float64
	Set             bool
	Last            time.Time
}

// Add records s.Value as the gauge's current value.
func (g *GaugeSink) Add(s Sample) {
	if !g.Set || s.Value < g.Min {
		g.Min = s.Value
	}
	if !g.Set || s.Value > g.Max {
		g.Max = s.Value
	}
	if !g.Set || !s.Time.Before(g.Last) {
		g.Value = s.Value
		g.Last = s.Time
	}
	g.Set = true
}

// IsEmpty reports whether no sample was added.
func (g *GaugeSink) IsEmpty() bool { return !g.Set }

// RateSink counts non-zero values among all values.
type RateSink struct {
	Trues, Total int64
}

// Add counts s.Value, true when non-zero.
func (r *RateSink) Add(s Sample) {
	r.Total++
	if s.Value != 0 {
		r.Trues++
	}
}

// IsEmpty reports whether no sample was added.
func (r *RateSink) IsEmpty() bool { return r.Total == 0 }

// Rate is the fraction of non-zero values, 0 when empty.
func (r *RateSink) Rate() float64 {
	if r.Total == 0 {
		return 0
	}
	return float64(r.Trues) / float64(r.Total)
}

// Trend histogram parameters: values are stored as integers in units of
// TrendResolution (1 µs for time metrics, which are in milliseconds) with
// TrendSignificantDigits significant digits, up to trendHighest units
// (about 11.6 days of milliseconds). Larger magnitudes are clamped into the
// top bucket; count, sum, min and max stay exact regardless.
const (
	TrendResolution        = 0.001
	TrendSignificantDigits = 3
	trendHighest           = 1_000_000_000_000

	// trendSubBuckets is the number of unit-wide buckets at the bottom of
	// a histogram with TrendSignificantDigits digits and a lowest value of
	// 1: the smallest power of two ≥ 2·10^3. Above it every bucket
	// doubles in width at every doubling of the value.
	trendSubBuckets     = 2048
	trendSubBucketsBits = 11
)

// TrendSink aggregates values into HdrHistograms: memory is bounded
// however many samples arrive. Count, sum, min and max are exact, so avg,
// min and max match an exact computation to the last digit.
//
// Each histogram starts sparse, growing with the buckets its values fill
// (a few hundred bytes for a trend of a few values, at most some 20 KB),
// and turns dense (about 250 KB, which records faster) once it holds
// hdrhist.Dense values: a script with thousands of quiet custom trends
// pays for what they hold, a busy trend records at the dense speed. Both
// forms hold the same counts, so no statistic depends on which is in use.
//
// Percentiles are read from the histograms, so they carry the histograms'
// precision: each value is first rounded to the nearest TrendResolution
// (0.001 units: 1 µs for time metrics), then kept with
// TrendSignificantDigits (3) significant digits, i.e. in a bucket whose
// width is at most 1/1024 of its value. A value is read back as the middle
// of its bucket, so a percentile is within 0.05% (plus 0.0005 units) of
// what the same estimator computes on the exact values. Values below 2.048
// units are exact to the resolution.
//
// Negative values go to a mirrored histogram, so any float a script adds is
// accepted. The zero TrendSink is empty and ready to use.
type TrendSink struct {
	count    int64
	sum      float64
	min, max float64
	pos, neg hdrhist.Hist
}

// trendHists makes the storage of every TrendSink's histograms; it keeps
// none for reuse, so sinks on any goroutine share it.
var trendHists = hdrhist.NewSharedPool(1, trendHighest, TrendSignificantDigits)

// NewTrendSink returns an empty trend sink. Its histograms get storage
// with the first value of their sign: most trends of a run (those of
// modules a script does not use, most submetrics) never get any.
func NewTrendSink() *TrendSink { return &TrendSink{} }

// Add records s.Value.
func (t *TrendSink) Add(s Sample) { t.AddValue(s.Value) }

// AddValue records v. NaN is ignored.
func (t *TrendSink) AddValue(v float64) {
	if math.IsNaN(v) {
		return
	}
	if t.count == 0 || v < t.min {
		t.min = v
	}
	if t.count == 0 || v > t.max {
		t.max = v
	}
	t.count++
	t.sum += v
	if v < 0 {
		trendHists.Record(&t.neg, toUnits(-v))
		return
	}
	trendHists.Record(&t.pos, toUnits(v))
}

// TrendHighestUnit is the largest value, in units of TrendResolution, a
// trend histogram holds; TrendUnits clamps larger ones to it. Histograms
// from 1 to TrendHighestUnit with TrendSignificantDigits digits have a
// TrendSink's geometry.
const TrendHighestUnit = trendHighest

// TrendUnits is the histogram value a TrendSink records for v ≥ 0: v in
// units of TrendResolution, rounded, clamped to TrendHighestUnit. Outputs
// that keep trend histograms of their own (a result file's intervals)
// record with it so that their histograms merge into exactly the sink's.
func TrendUnits(v float64) int64 { return toUnits(v) }

func toUnits(v float64) int64 {
	u := math.Round(v / TrendResolution)
	if u > trendHighest {
		return trendHighest
	}
	return int64(u)
}

// IsEmpty reports whether no value was added.
func (t *TrendSink) IsEmpty() bool { return t.count == 0 }

// Count is the number of values.
func (t *TrendSink) Count() int64 { return t.count }

// Sum is the exact sum of the values.
func (t *TrendSink) Sum() float64 { return t.sum }

// Min is the exact smallest value, 0 when empty.
func (t *TrendSink) Min() float64 { return t.min }

// Max is the exact largest value, 0 when empty.
func (t *TrendSink) Max() float64 { return t.max }

// Avg is the mean, 0 when empty.
func (t *TrendSink) Avg() float64 {
	if t.count == 0 {
		return 0
	}
	return t.sum / float64(t.count)
}

// Med is the median, Percentile(50).
func (t *TrendSink) Med() float64 { return t.Percentile(50) }

// Percentile returns the p-th percentile (0 ≤ p ≤ 100) with k6's estimator:
// linear interpolation between the values of closest rank, h = p/100·(n−1).
// Values are read from the histogram (the middle of the value's bucket, see
// TrendSink for the precision), clamped to the exact min and max; the
// smallest and largest ranks are the exact min and max. It allocates
// nothing and costs two scans of the histogram's counts.
func (t *TrendSink) Percentile(p float64) float64 {
	switch {
	case t.count == 0:
		return 0
	case t.count == 1, p <= 0, math.IsNaN(p):
		return t.min
	case p >= 100:
		return t.max
	}
	return InterpolateRanks(p, t.count, t.valueAtRank)
}

// InterpolateRanks is k6's percentile estimator over n ranked values:
// with h = p/100·(n−1), the value of rank ⌊h⌋ plus the fraction h−⌊h⌋ of
// the way to the next one. at returns the value of a 0-based rank. The
// caller handles the ends: it needs 0 < p < 100 and n ≥ 2.
func InterpolateRanks(p float64, n int64, at func(rank int64) float64) float64 {
	h := p / 100 * float64(n-1)
	lo := math.Floor(h)
	a := at(int64(lo))
	if h == lo {
		return a
	}
	return a + (at(int64(lo)+1)-a)*(h-lo)
}

// valueAtRank returns the value with 0-based rank r in sorted order.
func (t *TrendSink) valueAtRank(r int64) float64 {
	if r <= 0 {
		return t.min
	}
	if r >= t.count-1 {
		return t.max
	}
	var v float64
	negs := t.neg.TotalCount()
	if r < negs {
		// Negative values sorted ascending are the mirrored histogram
		// read from its largest magnitude down.
		v = -rankValue(&t.neg, negs-1-r)
	} else {
		v = rankValue(&t.pos, r-negs)
	}
	return math.Min(math.Max(v, t.min), t.max)
}

// rankValue returns the middle of the bucket holding the value with 0-based
// rank r in h.
func rankValue(h *hdrhist.Hist, r int64) float64 {
	n := h.TotalCount()
	if n == 0 {
		return 0
	}
	// ValueAtPercentile looks for the first bucket whose cumulative count
	// reaches round(q/100·n); this q makes that count exactly r+1.
	q := 100 * (float64(r) + 1) / float64(n)
	return TrendBucketMiddle(h.ValueAtPercentile(q)) * TrendResolution
}

// TrendBucketMiddle is the middle, in units, of the bucket of a trend
// histogram (values in TrendUnits, TrendSignificantDigits digits) that
// holds u: what a TrendSink's percentiles read any value of that bucket as.
func TrendBucketMiddle(u int64) float64 {
	w := bucketWidth(u)
	return float64(u&^(w-1)) + float64(w-1)/2
}

// bucketWidth is the number of units in the histogram bucket holding u.
func bucketWidth(u int64) int64 {
	if u < trendSubBuckets {
		return 1
	}
	return 1 << (bits.Len64(uint64(u)) - trendSubBucketsBits)
}

// MergeHistogramsInto adds t's histograms, in units of TrendResolution,
// to pos (the non-negative values) and neg (the magnitudes of the negative
// ones), for outputs that export distributions, and returns how many
// values did not fit: with count, sum, min and max, what MergeParts takes
// back. It reads t's histograms as they are, sparse or dense.
func (t *TrendSink) MergeHistogramsInto(pos, neg *hdrhistogram.PackedHistogram) (dropped int64) {
	return t.pos.MergeIntoPacked(pos) + t.neg.MergeIntoPacked(neg)
}

// Clone returns an independent deep copy of t.
func (t *TrendSink) Clone() *TrendSink {
	c := *t
	c.pos = trendHists.Clone(&t.pos)
	c.neg = trendHists.Clone(&t.neg)
	return &c
}

// Merge adds every value of o to t.
func (t *TrendSink) Merge(o *TrendSink) {
	if o.count == 0 {
		return
	}
	t.addStats(o.count, o.sum, o.min, o.max)
	trendHists.Merge(&t.pos, &o.pos)
	trendHists.Merge(&t.neg, &o.neg)
}

// MergeParts adds to t count values whose exact sum, min and max are
// given and whose non-negative values and negative magnitudes are in pos
// and neg (histograms in TrendUnits, of any geometry; either may be nil):
// what a trend sink written to a file and read back holds (see
// MergeHistogramsInto), merged bucket by bucket.
func (t *TrendSink) MergeParts(count int64, sum, min, max float64, pos, neg *hdrhistogram.PackedHistogram) {
	if count == 0 {
		return
	}
	t.addStats(count, sum, min, max)
	if pos != nil {
		trendHists.MergePacked(&t.pos, pos)
	}
	if neg != nil {
		trendHists.MergePacked(&t.neg, neg)
	}
}

// reset empties t for reuse, keeping its histograms' storage.
func (t *TrendSink) reset() {
	pos, neg := t.pos, t.neg
	pos.Reset()
	neg.Reset()
	*t = TrendSink{pos: pos, neg: neg}
}

// addStats adds count values of the given sum and extremes to t's exact
// statistics.
func (t *TrendSink) addStats(count int64, sum, min, max float64) {
	if t.count == 0 || min < t.min {
		t.min = min
	}
	if t.count == 0 || max > t.max {
		t.max = max
	}
	t.count += count
	t.sum += sum
}

// MergeSink adds what src aggregated to dst, as if dst had been given
// src's samples too, and reports whether it could: both must be sinks of
// the same metric type. A gauge keeps the later of the two last values
// (src's when they are as recent) and the extremes of both; a counter
// keeps the earlier first sample.
func MergeSink(dst, src Sink) bool {
	switch d := dst.(type) {
	case *CounterSink:
		s, ok := src.(*CounterSink)
		if !ok {
			return false
		}
		if s.Count == 0 {
			return true
		}
		if d.Count == 0 || s.First.Before(d.First) {
			d.First = s.First
		}
		d.Sum += s.Sum
		d.Count += s.Count
	case *GaugeSink:
		s, ok := src.(*GaugeSink)
		if !ok {
			return false
		}
		if !s.Set {
			return true
		}
		if !d.Set {
			*d = *s
			return true
		}
		d.Min, d.Max = math.Min(d.Min, s.Min), math.Max(d.Max, s.Max)
		if !s.Last.Before(d.Last) {
			d.Value, d.Last = s.Value, s.Last
		}
	case *RateSink:
		s, ok := src.(*RateSink)
		if !ok {
			return false
		}
		d.Trues += s.Trues
		d.Total += s.Total
	case *TrendSink:
		s, ok := src.(*TrendSink)
		if !ok {
			return false
		}
		d.Merge(s)
	default:
		return false
	}
	return true
}

// sinkCount is the number of samples s aggregated; a gauge, which keeps no
// count, counts as one once set.
func sinkCount(s Sink) int64 {
	switch s := s.(type) {
	case *CounterSink:
		return s.Count
	case *RateSink:
		return s.Total
	case *TrendSink:
		return s.Count()
	}
	if s.IsEmpty() {
		return 0
	}
	return 1
}

// CloneSink returns an independent copy of s, safe to read while the
// original keeps aggregating. Sinks of other packages' types are returned
// as they are.
func CloneSink(s Sink) Sink {
	switch s := s.(type) {
	case *CounterSink:
		c := *s
		return &c
	case *GaugeSink:
		c := *s
		return &c
	case *RateSink:
		c := *s
		return &c
	case *TrendSink:
		return s.Clone()
	}
	return s
}
