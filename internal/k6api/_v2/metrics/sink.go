package metrics

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Sink aggregates the samples of one metric or time series. metronome's
// engine aggregates with sinks of its own; these are for extensions, the
// outputs that keep their own aggregates (a Prometheus remote write, a
// database's summary rows).
type Sink interface {
	Add(s Sample)
	// Format gives the aggregate's values by name, as thresholds read
	// them; t is the test's duration so far, for a counter's rate.
	Format(t time.Duration) map[string]float64
	IsEmpty() bool
}

// NewSink returns an empty sink for a metric of type mt; a type without a
// name is a programming mistake and panics.
func NewSink(mt MetricType) Sink {
	switch mt {
	case Counter:
		return &CounterSink{}
	case Gauge:
		return &GaugeSink{}
	case Trend:
		return NewTrendSink()
	case Rate:
		return &RateSink{}
	}
	panic(fmt.Sprintf("MetricType %q is not supported", mt))
}

// CounterSink sums a counter's values; First is the time of its first
// sample.
type CounterSink struct {
	Value float64
	First time.Time
}

// Add adds s's value.
func (c *CounterSink) Add(s Sample) {
	c.Value += s.Value
	if c.First.IsZero() {
		c.First = s.Time
	}
}

// IsEmpty reports whether no sample was added.
func (c *CounterSink) IsEmpty() bool { return c.First.IsZero() }

// Format gives the sum ("count") and its rate per second over t
// ("rate").
func (c *CounterSink) Format(t time.Duration) map[string]float64 {
	return map[string]float64{"count": c.Value, "rate": c.Rate(t)}
}

// Rate is the sum per second over t, 0 for no time.
func (c *CounterSink) Rate(t time.Duration) float64 {
	if t <= 0 {
		return 0
	}
	return c.Value / t.Seconds()
}

// GaugeSink keeps a gauge's last value and the smallest and largest.
type GaugeSink struct {
	Value    float64
	Max, Min float64
	// seen is whether a sample came, so that Min and Max start from it.
	seen bool
}

// Add makes s's value the gauge's.
func (g *GaugeSink) Add(s Sample) {
	g.Value = s.Value
	if !g.seen || s.Value > g.Max {
		g.Max = s.Value
	}
	if !g.seen || s.Value < g.Min {
		g.Min = s.Value
	}
	g.seen = true
}

// IsEmpty reports whether no sample was added.
func (g *GaugeSink) IsEmpty() bool { return !g.seen }

// Format gives the last value ("value").
func (g *GaugeSink) Format(time.Duration) map[string]float64 {
	return map[string]float64{"value": g.Value}
}

// TrendSink keeps every value of a trend, for its statistics and exact
// percentiles.
type TrendSink struct {
	values   []float64
	sorted   bool
	min, max float64
	sum      float64
}

// NewTrendSink returns an empty trend sink.
func NewTrendSink() *TrendSink { return &TrendSink{} }

// Add keeps s's value.
func (t *TrendSink) Add(s Sample) {
	v := s.Value
	if len(t.values) == 0 || v < t.min {
		t.min = v
	}
	if len(t.values) == 0 || v > t.max {
		t.max = v
	}
	t.values = append(t.values, v)
	t.sorted = false
	t.sum += v
}

// IsEmpty reports whether no sample was added.
func (t *TrendSink) IsEmpty() bool { return len(t.values) == 0 }

// P is the percentile pct (0 to 1) of the values, interpolated linearly
// between the two values around its rank; 0 for no values.
func (t *TrendSink) P(pct float64) float64 {
	n := len(t.values)
	if n == 0 {
		return 0
	}
	if !t.sorted {
		slices.Sort(t.values)
		t.sorted = true
	}
	rank := pct * float64(n-1)
	lo, hi := int(math.Floor(rank)), int(math.Ceil(rank))
	return t.values[lo] + (t.values[hi]-t.values[lo])*(rank-math.Floor(rank))
}

// Min is the smallest value, 0 for none.
func (t *TrendSink) Min() float64 { return t.min }

// Max is the largest value, 0 for none.
func (t *TrendSink) Max() float64 { return t.max }

// Count is the number of values.
func (t *TrendSink) Count() uint64 { return uint64(len(t.values)) }

// Avg is the mean of the values, 0 for none.
func (t *TrendSink) Avg() float64 {
	if len(t.values) == 0 {
		return 0
	}
	return t.sum / float64(len(t.values))
}

// Total is the sum of the values.
func (t *TrendSink) Total() float64 { return t.sum }

// Format gives min, max, avg, med, p(90) and p(95).
func (t *TrendSink) Format(time.Duration) map[string]float64 {
	return map[string]float64{
		"min": t.Min(), "max": t.Max(), "avg": t.Avg(),
		"med": t.P(0.5), "p(90)": t.P(0.9), "p(95)": t.P(0.95),
	}
}

// RateSink counts a rate's values and those that are not zero.
type RateSink struct {
	Trues int64
	Total int64
}

// Add counts s's value.
func (r *RateSink) Add(s Sample) {
	r.Total++
	if s.Value != 0 {
		r.Trues++
	}
}

// IsEmpty reports whether no sample was added.
func (r *RateSink) IsEmpty() bool { return r.Total == 0 }

// Format gives the share of values that are not zero ("rate").
func (r RateSink) Format(time.Duration) map[string]float64 {
	rate := 0.0
	if r.Total > 0 {
		rate = float64(r.Trues) / float64(r.Total)
	}
	return map[string]float64{"rate": rate}
}

// GetResolversForTrendColumns returns, for each statistic named in
// columns (avg, min, med, max, count, p(N) with N from 0 to 100), the
// function that reads it from a TrendSink.
func GetResolversForTrendColumns(columns []string) (map[string]func(s *TrendSink) float64, error) {
	fixed := map[string]func(s *TrendSink) float64{
		"avg":   (*TrendSink).Avg,
		"min":   (*TrendSink).Min,
		"max":   (*TrendSink).Max,
		"med":   func(s *TrendSink) float64 { return s.P(0.5) },
		"count": func(s *TrendSink) float64 { return float64(s.Count()) },
	}
	out := make(map[string]func(s *TrendSink) float64, len(columns))
	for _, c := range columns {
		if f, ok := fixed[c]; ok {
			out[c] = f
			continue
		}
		if !strings.HasPrefix(c, "p(") || !strings.HasSuffix(c, ")") {
			return nil, fmt.Errorf("invalid trend stat '%s', unknown format", c)
		}
		pct, err := strconv.ParseFloat(c[2:len(c)-1], 64)
		if err != nil || pct < 0 || pct > 100 {
			return nil, fmt.Errorf("invalid percentile trend stat value '%s', provide a number between 0 and 100", c)
		}
		out[c] = func(s *TrendSink) float64 { return s.P(pct / 100) }
	}
	return out, nil
}
