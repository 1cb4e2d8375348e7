package result

import (
	"strconv"

	"github.com/metronome-load/metronome/internal/jsonstr"
	"github.com/metronome-load/metronome/metrics"
)

// The lines written at every interval and for every series are appended
// to a reused buffer as json.Marshal would write them, byte for byte
// (TestEntryIsJSON, TestSeriesLineIsJSON and their fuzzers hold them to
// it): at the series cap there are thousands of them a second, and
// reflection, a sorted map and an allocation per field cost the
// generator's CPU.

// appendEntryFields appends e as json.Marshal writes it, up to and without
// its histograms and closing brace.
func appendEntryFields(b []byte, e *entry) []byte {
	b = append(b, `{"s":`...)
	b = strconv.AppendInt(b, int64(e.Series), 10)
	b = append(b, `,"n":`...)
	b = strconv.AppendInt(b, e.N, 10)
	b = appendNumField(b, `,"sum":`, e.Sum)
	b = appendIntField(b, `,"first":`, e.First)
	b = appendNumField(b, `,"value":`, e.Value)
	b = appendIntField(b, `,"last":`, e.Last)
	b = appendNumField(b, `,"min":`, e.Min)
	b = appendNumField(b, `,"max":`, e.Max)
	return appendIntField(b, `,"nz":`, e.NonZero)
}

// appendEntry appends e as json.Marshal writes it.
func appendEntry(b []byte, e *entry) []byte {
	b = appendEntryFields(b, e)
	if e.Hist != "" {
		b = append(append(append(b, `,"h":"`...), e.Hist...), '"')
	}
	if e.Neg != "" {
		b = append(append(append(b, `,"neg":"`...), e.Neg...), '"')
	}
	return append(b, '}')
}

// appendIntField appends an omitempty integer field.
func appendIntField(b []byte, key string, v int64) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendInt(append(b, key...), v, 10)
}

// appendNumField appends an omitempty num field.
func appendNumField(b []byte, key string, v num) []byte {
	if v == 0 {
		return b
	}
	return v.append(append(b, key...))
}

// appendSeriesLine appends a series' definition line, its tag values
// passed through redact, and a newline.
func appendSeriesLine(b []byte, id int, metric string, tags *metrics.TagSet, redact func(string) string) []byte {
	b = append(b, `{"series":{"id":`...)
	b = strconv.AppendInt(b, int64(id), 10)
	b = append(b, `,"metric":`...)
	b = jsonstr.Append(b, metric, jsonstr.Std)
	if tags != nil && tags.Len() > 0 {
		b = append(b, `,"tags":`...)
		sep := byte('{')
		tags.Range(func(k, v string) bool { // in key order, as json.Marshal sorts a map's keys
			b = jsonstr.Append(append(b, sep), k, jsonstr.Std)
			b = jsonstr.Append(append(b, ':'), redact(v), jsonstr.Std)
			sep = ','
			return true
		})
		b = append(b, '}')
	}
	return append(b, "}}\n"...)
}
