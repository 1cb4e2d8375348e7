package prometheus

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/metronome-load/metronome/metrics"
	"github.com/prometheus/prometheus/prompb"
)

// staleNaN is Prometheus's staleness marker: a NaN with a payload that
// ends a series at once.
var staleNaN = math.Float64frombits(0x7ff0000000000002)

// seriesKey identifies a time series: tag sets are interned, so the pair of
// pointers is the identity.
type seriesKey struct {
	metric *metrics.Metric
	tags   *metrics.TagSet
}

// series aggregates the samples of one (metric, tags) pair since the start
// of the test. Every exported value is cumulative, as in k6.
type series struct {
	metric *metrics.Metric
	// labels are the sorted labels, __name__ at nameAt with no value.
	labels []prompb.Label
	nameAt int

	counter      float64
	gauge        float64
	gaugeTime    int64
	trues, total int64
	trend        *metrics.TrendSink
	native       *nativeHistogram

	// latest is the newest sample time (ms); sent the timestamp of the
	// last value sent, 0 before the first.
	latest, sent int64
	dirty        bool
}

func newSeries(k seriesKey, native bool, schema int32, names *labelNames) *series {
	s := &series{metric: k.metric}
	s.labels = tagLabels(k.tags, names)
	if k.metric.Type == metrics.Trend {
		if native {
			s.native = newNativeHistogram(schema)
		} else {
			s.trend = metrics.NewTrendSink()
		}
	}
	for i, l := range s.labels {
		if l.Name == "__name__" {
			s.nameAt = i
		}
	}
	return s
}

// tagLabels turns tags into sorted labels plus an empty __name__. Empty
// values are skipped and names are the run's label names for the tags.
func tagLabels(tags *metrics.TagSet, names *labelNames) []prompb.Label {
	labels := make([]prompb.Label, 0, tags.Len()+1)
	labels = append(labels, prompb.Label{Name: "__name__"})
	tags.Range(func(k, v string) bool {
		if v != "" {
			labels = append(labels, prompb.Label{Name: names.name(k), Value: v})
		}
		return true
	})
	slices.SortFunc(labels, func(a, b prompb.Label) int { return strings.Compare(a.Name, b.Name) })
	return labels
}

// labelNames gives every tag name of a run its Prometheus label name, and
// never the same label to two tag names: "x-y" and "x.y" both sanitise to
// x_y, and two series that differ only there would reach Prometheus as one
// (their values overwriting each other). The first tag name seen keeps the
// readable name; a later one that would collide gets its escaped form
// (escapedLabelName), and the collision is logged once, naming both tags.
// It is used by the aggregator goroutine only.
type labelNames struct {
	byTag   map[string]string
	byLabel map[string]string // label → the tag name that holds it
	logf    func(format string, args ...any)
}

func newLabelNames(logf func(format string, args ...any)) *labelNames {
	return &labelNames{
		byTag:   map[string]string{},
		byLabel: map[string]string{"__name__": "(the metric name)"},
		logf:    logf,
	}
}

// name returns the label name of tag name k.
func (n *labelNames) name(k string) string {
	if l, ok := n.byTag[k]; ok {
		return l
	}
	l := labelName(k)
	if other, taken := n.byLabel[l]; taken {
		alt := escapedLabelName(k)
		for i := 2; ; i++ {
			if _, taken := n.byLabel[alt]; !taken {
				break
			}
			alt = escapedLabelName(k) + "_" + strconv.Itoa(i)
		}
		n.logf("prometheus remote write: the tags %q and %q both become the label %q; %q is sent as the label %q so that their series stay apart",
			other, k, l, k, alt)
		l = alt
	}
	n.byTag[k] = l
	n.byLabel[l] = k
	return l
}

// escapedLabelName is Prometheus's value-encoding escape of a name, applied
// even to valid names: U__ then the name with '_' doubled and every other
// character outside [a-zA-Z0-9] written as _<hex code point>_. Distinct
// names never share an escaped form, and Prometheus can unescape it.
func escapedLabelName(k string) string {
	var b strings.Builder
	b.WriteString("U__")
	for _, r := range k {
		switch {
		case r == '_':
			b.WriteString("__")
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
			b.WriteString(strconv.FormatInt(int64(r), 16))
			b.WriteByte('_')
		}
	}
	return b.String()
}

// labelName maps a tag name onto [a-zA-Z_][a-zA-Z0-9_]*, replacing every
// other character by '_'. k6's own tag names are already valid.
func labelName(k string) string {
	valid := k != ""
	for i, r := range k {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			valid = false
			break
		}
	}
	if valid {
		return k
	}
	b := []byte(k)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] >= '0' && b[0] <= '9' {
		b = append([]byte{'_'}, b...)
	}
	return string(b)
}

// add folds one sample into the series.
func (s *series) add(v float64, ms int64) {
	switch s.metric.Type {
	case metrics.Counter:
		s.counter += v
	case metrics.Gauge:
		if ms >= s.gaugeTime {
			s.gauge, s.gaugeTime = v, ms
		}
	case metrics.Rate:
		s.total++
		if v != 0 {
			s.trues++
		}
	case metrics.Trend:
		if s.native != nil {
			s.native.observe(toBaseUnit(s.metric, v))
		} else {
			s.trend.AddValue(v)
		}
	}
	if ms > s.latest {
		s.latest = ms
	}
	s.dirty = true
}

// toBaseUnit converts a value to Prometheus's base unit: time metrics are
// milliseconds in metronome and seconds in Prometheus.
func toBaseUnit(m *metrics.Metric, v float64) float64 {
	if m.Contains == metrics.Time {
		return v / 1000
	}
	return v
}

// nextTimestamp returns the timestamp of the next value sent: the newest
// sample's, moved 1 ms past the last one sent when needed so that every
// series only moves forward (Prometheus rejects out-of-order samples).
func (s *series) nextTimestamp() int64 {
	ts := s.latest
	if ts <= s.sent {
		ts = s.sent + 1
	}
	s.sent = ts
	return ts
}

// withName returns a copy of the labels with __name__ set.
func (s *series) withName(name string) []prompb.Label {
	l := slices.Clone(s.labels)
	l[s.nameAt].Value = name
	return l
}

// floats calls dst with the name and value of each float series s exports.
func (s *series) floats(stats []trendStat, dst func(name string, v float64)) {
	switch s.metric.Type {
	case metrics.Counter:
		dst(SeriesName(s.metric), s.counter)
	case metrics.Gauge:
		dst(SeriesName(s.metric), s.gauge)
	case metrics.Rate:
		r := 0.0
		if s.total > 0 {
			r = float64(s.trues) / float64(s.total)
		}
		dst(SeriesName(s.metric), r)
	case metrics.Trend:
		if s.trend == nil {
			return
		}
		for _, st := range stats {
			dst("k6_"+s.metric.Name+"_"+st.suffix, trendValue(s.metric, s.trend, st))
		}
	}
}

// trendValue computes one stat of a trend, in seconds for time trends.
func trendValue(m *metrics.Metric, t *metrics.TrendSink, st trendStat) float64 {
	switch st.kind {
	case "count":
		return float64(t.Count())
	case "sum":
		return toBaseUnit(m, t.Sum())
	case "min":
		return toBaseUnit(m, t.Min())
	case "max":
		return toBaseUnit(m, t.Max())
	case "avg":
		return toBaseUnit(m, t.Avg())
	case "med":
		return toBaseUnit(m, t.Med())
	}
	return toBaseUnit(m, t.Percentile(st.pct))
}

// histogramName is the name of a trend's native histogram: k6 suffixes the
// base unit.
func histogramName(m *metrics.Metric) string {
	switch m.Contains {
	case metrics.Time:
		return "k6_" + m.Name + "_seconds"
	case metrics.Data:
		return "k6_" + m.Name + "_bytes"
	}
	return "k6_" + m.Name
}

// outputNames lists every Prometheus series name s exports, for stale
// markers.
func (s *series) outputNames(stats []trendStat) []string {
	if s.native != nil {
		return []string{histogramName(s.metric)}
	}
	var names []string
	if s.metric.Type == metrics.Trend {
		for _, st := range stats {
			names = append(names, "k6_"+s.metric.Name+"_"+st.suffix)
		}
		return names
	}
	s.floats(stats, func(name string, _ float64) { names = append(names, name) })
	return names
}

// SeriesName is the name under which the output sends metric m: the
// running sum of a counter, a gauge's value, a rate's ratio, or a trend's
// native histogram (its stats go under k6_<name>_<stat> instead). Tools
// that query Prometheus for what metronome sent (metronome watch) name
// series with it.
func SeriesName(m *metrics.Metric) string {
	switch m.Type {
	case metrics.Counter:
		return "k6_" + m.Name + "_total"
	case metrics.Rate:
		return "k6_" + m.Name + "_rate"
	case metrics.Trend:
		return histogramName(m)
	}
	return "k6_" + m.Name
}

// LabelName is the label a tag becomes (unless another tag of the series
// took that label first).
func LabelName(tag string) string { return labelName(tag) }
