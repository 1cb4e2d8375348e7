package metrics

import (
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
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
)

// TrendSink aggregates values into HdrHistograms: memory stays constant
// however many samples arrive. Count, sum, min and max are exact;
// percentiles are exact to the histogram's precision. Negative values go to
// a mirrored histogram, so any float a script adds is accepted.
type TrendSink struct {
	count    int64
	sum      float64
	min, max float64
	pos, neg *hdrhistogram.Histogram
}

// NewTrendSink returns an empty trend sink.
func NewTrendSink() *TrendSink {
	return &TrendSink{pos: newTrendHistogram()}
}

func newTrendHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, trendHighest, TrendSignificantDigits)
}

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
	h := t.pos
	if v < 0 {
		if t.neg == nil {
			t.neg = newTrendHistogram()
		}
		h = t.neg
		v = -v
	}
	_ = h.RecordValue(toUnits(v))
}

func toUnits(v float64) int64 {
	u := math.Round(v / TrendResolution)
	if u > trendHighest {
		return trendHighest
	}
	return int64(u)
}

func fromUnits(u int64) float64 { return float64(u) * TrendResolution }

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
// Values are read from the histogram (the midpoint of the value's bucket),
// clamped to the exact min and max.
func (t *TrendSink) Percentile(p float64) float64 {
	switch {
	case t.count == 0:
		return 0
	case t.count == 1:
		return t.min
	case p <= 0:
		return t.min
	case p >= 100:
		return t.max
	}
	h := p / 100 * float64(t.count-1)
	lo := math.Floor(h)
	a := t.valueAtRank(int64(lo))
	if h == lo {
		return a
	}
	b := t.valueAtRank(int64(lo) + 1)
	return a + (b-a)*(h-lo)
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
	if t.neg != nil && r < t.neg.TotalCount() {
		// Negative values sorted ascending are the mirrored histogram
		// read from its largest magnitude down.
		v = -rankValue(t.neg, t.neg.TotalCount()-1-r)
	} else {
		if t.neg != nil {
			r -= t.neg.TotalCount()
		}
		v = rankValue(t.pos, r)
	}
	return math.Min(math.Max(v, t.min), t.max)
}

// rankValue walks h's buckets to the value with 0-based rank r.
func rankValue(h *hdrhistogram.Histogram, r int64) float64 {
	var seen int64
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		seen += bar.Count
		if seen > r {
			return fromUnits((bar.From + bar.To) / 2)
		}
	}
	return fromUnits(h.Max())
}

// Histogram returns the histogram of the non-negative values, for outputs
// that export distributions (native histograms, HdrHistogram logs). It
// must not be modified.
func (t *TrendSink) Histogram() *hdrhistogram.Histogram { return t.pos }

// Merge adds every value of o to t.
func (t *TrendSink) Merge(o *TrendSink) {
	if o.count == 0 {
		return
	}
	if t.count == 0 || o.min < t.min {
		t.min = o.min
	}
	if t.count == 0 || o.max > t.max {
		t.max = o.max
	}
	t.count += o.count
	t.sum += o.sum
	t.pos.Merge(o.pos)
	if o.neg != nil {
		if t.neg == nil {
			t.neg = newTrendHistogram()
		}
		t.neg.Merge(o.neg)
	}
}
