package summary

import (
	"math"
	"strings"
	"time"

	"github.com/metronome-load/metronome/metrics"
)

// stat is one named value of a metric's summary.
type stat struct {
	key string
	v   float64
}

// metricValues lists the summary values of m in k6's order: the trend
// stats; count and rate for a counter; value, min and max for a gauge;
// rate, passes and fails for a rate.
func metricValues(m *Metric, trend []string, d time.Duration) []stat {
	switch s := m.Sink.(type) {
	case *metrics.TrendSink:
		out := make([]stat, 0, len(trend))
		for _, name := range trend {
			if v, ok := trendStat(s, name); ok {
				out = append(out, stat{name, v})
			}
		}
		return out
	case *metrics.CounterSink:
		return []stat{{"count", s.Sum}, {"rate", s.Rate(d)}}
	case *metrics.GaugeSink:
		return []stat{{"value", s.Value}, {"min", s.Min}, {"max", s.Max}}
	case *metrics.RateSink:
		return []stat{{"rate", s.Rate()}, {"passes", float64(s.Trues)}, {"fails", float64(s.Total - s.Trues)}}
	}
	return nil
}

// thresholdAgg returns the aggregation a threshold expression tests:
// "p(95)" for "p(95)<500".
func thresholdAgg(source string) (string, bool) {
	i := strings.IndexAny(source, "<>=!")
	if i <= 0 {
		return "", false
	}
	return strings.ReplaceAll(strings.TrimSpace(source[:i]), " ", ""), true
}

// thresholdStat returns the aggregation a threshold expression tests
// and its value for m over the whole run.
func thresholdStat(m *Metric, source string, d time.Duration) (string, float64, bool) {
	agg, ok := thresholdAgg(source)
	if !ok {
		return "", 0, false
	}
	switch s := m.Sink.(type) {
	case *metrics.TrendSink:
		v, ok := trendStat(s, agg)
		return agg, v, ok
	case *metrics.CounterSink:
		switch agg {
		case "count":
			return agg, s.Sum, true
		case "rate":
			return agg, s.Rate(d), true
		}
	case *metrics.GaugeSink:
		if agg == "value" {
			return agg, s.Value, true
		}
	case *metrics.RateSink:
		if agg == "rate" {
			return agg, s.Rate(), true
		}
	}
	return agg, 0, false
}

// jsonNumber is v for JSON, or nil (null) when v is not finite, which JSON
// cannot represent.
func jsonNumber(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

// metricType and metricContains name a metric's type and value type the
// way k6's summary data does.
func metricType(m *Metric) string {
	if m.Metric != nil {
		return m.Metric.Type.String()
	}
	switch m.Sink.(type) {
	case *metrics.CounterSink:
		return "counter"
	case *metrics.GaugeSink:
		return "gauge"
	case *metrics.RateSink:
		return "rate"
	}
	return "trend"
}

func metricContains(m *Metric) metrics.ValueType {
	if m.Metric != nil {
		return m.Metric.Contains
	}
	return metrics.Default
}
