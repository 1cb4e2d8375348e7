package hdrlog

import (
	"net/url"
	"slices"
	"strings"

	"github.com/metronome-load/metronome/metrics"
)

// RawMetrics are the duration metrics of the requests that record
// corrected_latency, in the order a name's raw figures are looked for:
// metrics.RequestDurationNames. They and corrected_latency are logged per
// request name.
var RawMetrics = metrics.RequestDurationNames

// PerName reports whether the log splits metric by request name: the
// requests' durations and corrected_latency. compare and the verdict's
// report split the same way.
func PerName(metric string) bool {
	return metric == metrics.CorrectedLatencyName || slices.Contains(RawMetrics, metric)
}

// Series is what one line of the log holds the interval histogram of: a
// metric's samples of one scenario and, for the metrics of requests, of one
// request name.
type Series struct {
	Metric   string
	Scenario string
	// Name is the requests' name tag (their URL unless the script named
	// them); "" for the other metrics, and for samples without a name
	// (corrected_latency's dropped arrivals, which made no request).
	Name string
	// Folded marks the series that holds, together, the samples of every
	// name past the log's cap (K6_HDRLOG_MAX_NAMES); Name is then "".
	Folded bool
	// Outcome is corrected_latency's outcome tag: "dropped" for arrivals
	// that never started, "interrupted" for requests cut off by the hard
	// stop, "" for completed requests (back-filled samples included).
	Outcome string
}

// Tag is the series' log tag:
//
//	metric=<m>;scenario=<s>;name=<n>;outcome=<o>   or   ...;folded=true
//
// with the parts that are empty left out. Values are percent-encoded
// where they hold a byte a tag cannot (',', spaces and other control or
// non-ASCII bytes) or that would split it (';', '=', and '%' itself), so
// every name survives the log exactly and HdrHistogram's own tools
// (HistogramLogProcessor -tag) read it.
func (s Series) Tag() string {
	var b strings.Builder
	part := func(k, v string) {
		if v == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(';')
		}
		b.WriteString(k)
		b.WriteByte('=')
		escape(&b, v)
	}
	part("metric", s.Metric)
	part("scenario", s.Scenario)
	part("name", s.Name)
	if s.Folded {
		part("folded", "true")
	}
	part("outcome", s.Outcome)
	return b.String()
}

// Labels is the tag without its metric part, decoded for display:
// scenario=api;name=GET /login.
func (s Series) Labels() string {
	var parts []string
	for _, p := range [][2]string{{"scenario", s.Scenario}, {"name", s.Name}, {"outcome", s.Outcome}} {
		if p[1] != "" {
			parts = append(parts, p[0]+"="+p[1])
		}
	}
	if s.Folded {
		parts = append(parts, "folded=true")
	}
	return strings.Join(parts, ";")
}

// ParseTag reads a tag written by Tag, or by an older metronome
// (metric=<m>;scenario=<s>, whose names had ',', ' ', ';' and '=' replaced
// by '_'). A tag without a metric part (a log of another program) is all
// metric.
func ParseTag(tag string) Series {
	var s Series
	for _, p := range strings.Split(tag, ";") {
		k, v, _ := strings.Cut(p, "=")
		v = unescape(v)
		switch k {
		case "metric":
			s.Metric = v
		case "scenario":
			s.Scenario = v
		case "name":
			s.Name = v
		case "folded":
			s.Folded = v == "true"
		case "outcome":
			s.Outcome = v
		}
	}
	if s.Metric == "" {
		return Series{Metric: tag}
	}
	return s
}

const hexDigits = "0123456789ABCDEF"

// escaped reports whether a tag holds c percent-encoded.
func escaped(c byte) bool {
	return c <= ' ' || c >= 0x7f || c == ',' || c == ';' || c == '=' || c == '%'
}

func escape(b *strings.Builder, v string) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case escaped(c):
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		default:
			b.WriteByte(c)
		}
	}
}

// unescape decodes %XX; a value that is not validly encoded (an old log's
// scenario holding '%') is kept as it is.
func unescape(v string) string {
	if !strings.Contains(v, "%") {
		return v
	}
	if u, err := url.PathUnescape(v); err == nil {
		return u
	}
	return v
}
