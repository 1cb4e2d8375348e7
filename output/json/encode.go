package json

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/metronome-load/metronome/internal/jsonstr"
	"github.com/metronome-load/metronome/metrics"
)

// maxTagCache bounds the encoded-tags cache: beyond it (a run with many
// unique URLs, say) the cache starts over rather than grow without end.
const maxTagCache = 8192

// encoder turns samples into JSON lines by appending bytes by hand: no
// reflection, and the parts that repeat (a metric's line prefix, a tag
// set's object) are encoded once and copied afterwards. It is used by one
// goroutine at a time.
type encoder struct {
	thresholds map[string][]string
	// prefix[id] is `{"metric":"<name>","type":"Point","data":{"time":"`
	// for metric id, nil until the metric's Metric line was written.
	prefix [][]byte
	tags   map[*metrics.TagSet][]byte
	keys   []string
}

func newEncoder(thresholds map[string][]string) *encoder {
	return &encoder{thresholds: thresholds, tags: make(map[*metrics.TagSet][]byte)}
}

// appendSample appends s's Point line to b, preceded by its metric's
// Metric line when this is the metric's first sample.
func (e *encoder) appendSample(b []byte, s *metrics.Sample) []byte {
	m := s.Metric
	if m.ID >= len(e.prefix) {
		e.prefix = append(e.prefix, make([][]byte, m.ID+1-len(e.prefix))...)
	}
	p := e.prefix[m.ID]
	if p == nil {
		b = e.appendMetric(b, m)
		p = append(p, `{"metric":`...)
		p = jsonstr.Append(p, m.Name, jsonstr.Plain)
		p = append(p, `,"type":"Point","data":{"time":"`...)
		e.prefix[m.ID] = p
	}
	b = append(b, p...)
	b = s.Time.Local().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","value":`...)
	b = appendFloat(b, s.Value)
	b = append(b, `,"tags":`...)
	b = append(b, e.tagObject(s.Tags)...)
	if len(s.Metadata) > 0 {
		b = append(b, `,"metadata":`...)
		b = e.appendStringMap(b, s.Metadata)
	}
	return append(b, "}}\n"...)
}

// appendMetric appends the Metric line that describes m.
func (e *encoder) appendMetric(b []byte, m *metrics.Metric) []byte {
	b = append(b, `{"type":"Metric","data":{"name":`...)
	b = jsonstr.Append(b, m.Name, jsonstr.Plain)
	b = append(b, `,"type":`...)
	b = jsonstr.Append(b, m.Type.String(), jsonstr.Plain)
	b = append(b, `,"contains":`...)
	b = jsonstr.Append(b, m.Contains.String(), jsonstr.Plain)
	b = append(b, `,"thresholds":[`...)
	for i, t := range e.thresholds[m.Name] {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, t, jsonstr.Plain)
	}
	b = append(b, `],"submetrics":`...)
	subs := submetricNames(e.thresholds, m.Name)
	if len(subs) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, name := range subs {
			if i > 0 {
				b = append(b, ',')
			}
			suffix := strings.TrimSuffix(name[len(m.Name)+1:], "}")
			b = append(b, `{"name":`...)
			b = jsonstr.Append(b, name, jsonstr.Plain)
			b = append(b, `,"suffix":`...)
			b = jsonstr.Append(b, suffix, jsonstr.Plain)
			b = append(b, `,"tags":`...)
			b = e.appendStringMap(b, selectorTags(suffix))
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `},"metric":`...)
	b = jsonstr.Append(b, m.Name, jsonstr.Plain)
	return append(b, "}\n"...)
}

// submetricNames returns the thresholded submetrics of metric name
// ("name{tag:value}"), sorted.
func submetricNames(thresholds map[string][]string, name string) []string {
	var out []string
	for k := range thresholds {
		if len(k) > len(name)+1 && strings.HasPrefix(k, name) && k[len(name)] == '{' {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// selectorTags reads a submetric selector ("a:1, b:'x'") into its tags,
// trimming spaces and quotes around keys and values as thresholds do.
func selectorTags(sel string) map[string]string {
	out := map[string]string{}
	for _, pair := range strings.Split(sel, ",") {
		k, v, ok := strings.Cut(pair, ":")
		if !ok {
			continue
		}
		out[trimSelector(k)] = trimSelector(v)
	}
	return out
}

func trimSelector(s string) string {
	return strings.Trim(strings.TrimSpace(s), `"'`)
}

// tagObject returns the JSON object of a tag set, cached per interned set.
func (e *encoder) tagObject(t *metrics.TagSet) []byte {
	if t == nil {
		t = metrics.EmptyTags
	}
	if b, ok := e.tags[t]; ok {
		return b
	}
	if len(e.tags) >= maxTagCache {
		clear(e.tags)
	}
	b := []byte{'{'}
	first := true
	t.Range(func(k, v string) bool {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = jsonstr.Append(b, k, jsonstr.Plain)
		b = append(b, ':')
		b = jsonstr.Append(b, v, jsonstr.Plain)
		return true
	})
	b = append(b, '}')
	e.tags[t] = b
	return b
}

// appendStringMap appends m as a JSON object with sorted keys.
func (e *encoder) appendStringMap(b []byte, m map[string]string) []byte {
	e.keys = e.keys[:0]
	for k := range m {
		e.keys = append(e.keys, k)
	}
	sort.Strings(e.keys)
	b = append(b, '{')
	for i, k := range e.keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, k, jsonstr.Plain)
		b = append(b, ':')
		b = jsonstr.Append(b, m[k], jsonstr.Plain)
	}
	return append(b, '}')
}

// appendFloat appends v as a JSON number, in the same form encoding/json
// uses (plain decimals, exponents only for very small or large values).
// JSON has no NaN or infinity; those are written as null.
func appendFloat(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	abs := math.Abs(v)
	if abs == 0 || (abs >= 1e-6 && abs < 1e21) {
		return strconv.AppendFloat(b, v, 'f', -1, 64)
	}
	start := len(b)
	b = strconv.AppendFloat(b, v, 'e', -1, 64)
	// Shorten a two-digit negative exponent: 1e-07 → 1e-7.
	if n := len(b); n-start >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b
}
