package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output/hdrlog"
)

// maxLine bounds one line of the output; k6's lines are a few hundred
// bytes, a URL tag makes them longer, nothing makes them megabytes.
const maxLine = 16 << 20

// maxTagSets bounds the reader's cache of tag sets by their JSON text.
const maxTagSets = 1 << 14

// maxExamples is how many skipped lines a Reading describes one by one.
const maxExamples = 5

// point is one sample of k6's JSON output.
type point struct {
	metric *metrics.Metric
	time   time.Time
	value  float64
	tags   *metrics.TagSet
	// vu and iter are k6's vu and iter metadata (tags before k6 v0.41),
	// -1 when the run did not record them.
	vu, iter int64
}

// Reading says what was read from the output and what was skipped.
type Reading struct {
	// Lines counts the lines read, Points the samples taken.
	Lines, Points int64
	// Gzip is set when the file was gzip-compressed.
	Gzip bool
	// Malformed counts the lines that are not k6 JSON records, Unknown the
	// records of a type other than Metric and Point; Examples describes
	// the first of them, as "line N: why".
	Malformed, Unknown int64
	Examples           []string
	// Undeclared counts, per metric, the points of metrics the output
	// never declared with a Metric line; Conflicting names the metrics
	// whose declared type differs from the built-in metric of that name.
	// Their points are skipped.
	Undeclared  map[string]int64
	Conflicting map[string]string
	// Cut says where the output ends early (a run killed mid-write, a
	// copy cut short), "" when it ends cleanly. What came before is
	// audited.
	Cut string
}

// reader reads k6's JSON output (k6 run -o json=FILE, plain or gzipped):
// one JSON object per line, either a metric's declaration
//
//	{"type":"Metric","metric":"http_reqs","data":{"name":"http_reqs","type":"counter","contains":"default",...}}
//
// written before its first sample, or one sample
//
//	{"type":"Point","metric":"http_reqs","data":{"time":"...","value":1,"tags":{...},"metadata":{"vu":"1","iter":"0"}}}
type reader struct {
	name string
	br   *bufio.Reader
	reg  *metrics.Registry
	// declared holds the metrics the output declared (or built-in ones it
	// declared with their own type).
	declared map[string]*metrics.Metric
	// tagSets caches the tag sets by their JSON text: k6 writes the same
	// few sets over and over.
	tagSets map[string]tagged
	buf     []byte
	// seen is set once a k6 record was read.
	seen bool
	rd   Reading
}

// tagged is a tag set with the vu and iter an older k6 put among the tags.
type tagged struct {
	tags     *metrics.TagSet
	vu, iter int64
}

// record is one line of the output.
type record struct {
	Type   string `json:"type"`
	Metric string `json:"metric"`
	Data   struct {
		// A Point's.
		Time     string            `json:"time"`
		Value    *float64          `json:"value"`
		Tags     json.RawMessage   `json:"tags"`
		Metadata map[string]string `json:"metadata"`
		// A Metric's.
		Name     string `json:"name"`
		Type     string `json:"type"`
		Contains string `json:"contains"`
	} `json:"data"`
}

// newReader reads the output in r, gzipped or not; name is used in
// messages.
func newReader(r io.Reader, name string, reg *metrics.Registry) (*reader, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	rd := Reading{Undeclared: map[string]int64{}, Conflicting: map[string]string{}}
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: not a readable gzip file: %v", name, err)
		}
		br = bufio.NewReaderSize(zr, 256<<10)
		rd.Gzip = true
	}
	return &reader{name: name, br: br, reg: reg, declared: map[string]*metrics.Metric{}, tagSets: map[string]tagged{}, rd: rd}, nil
}

// errNotK6 is returned when the first line is no k6 JSON record.
var errNotK6 = errors.New("not k6 JSON output")

// next returns the next point, io.EOF at the end of the output (or where
// it was cut: Reading.Cut says so), or an error when the output is not
// k6's JSON output at all.
func (r *reader) next() (point, error) {
	for {
		line, err := r.readLine()
		if err != nil {
			return point{}, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var rec record
		if err := json.Unmarshal(line, &rec); err != nil || (rec.Type == "" && rec.Metric == "") {
			if !r.seen {
				return point{}, fmt.Errorf("%s is %w (k6 run -o json=FILE): line %d is not a JSON object with \"type\": \"Point\" or \"Metric\" (%s)", r.name, errNotK6, r.rd.Lines, preview(line))
			}
			r.skip(&r.rd.Malformed, "not a JSON record")
			continue
		}
		switch rec.Type {
		case "Metric", "Point":
			r.seen = true
		}
		switch rec.Type {
		case "Metric":
			if err := r.declare(&rec); err != nil {
				return point{}, err
			}
		case "Point":
			if p, ok := r.point(&rec); ok {
				r.rd.Points++
				return p, nil
			}
		default:
			if !r.seen {
				return point{}, fmt.Errorf("%s is %w (k6 run -o json=FILE): line %d has type %q, not \"Point\" or \"Metric\"", r.name, errNotK6, r.rd.Lines, rec.Type)
			}
			r.skip(&r.rd.Unknown, fmt.Sprintf("a record of type %q", rec.Type))
		}
	}
}

// readLine returns the next line. A last line without its newline that is
// not a whole JSON object, and a compressed stream that breaks off, end
// the output early (Reading.Cut); what came before stands.
func (r *reader) readLine() ([]byte, error) {
	r.buf = r.buf[:0]
	long := false
	for {
		chunk, err := r.br.ReadSlice('\n')
		if len(r.buf)+len(chunk) > maxLine {
			long = true
		} else if !long {
			r.buf = append(r.buf, chunk...)
		}
		switch {
		case err == nil:
			r.rd.Lines++
			if long {
				r.skip(&r.rd.Malformed, fmt.Sprintf("longer than %d MiB", maxLine>>20))
				r.buf, long = r.buf[:0], false
				continue
			}
			return r.buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(r.buf) == 0 && !long:
			return nil, io.EOF
		case errors.Is(err, io.EOF):
			r.rd.Lines++
			if json.Valid(bytes.TrimSpace(r.buf)) {
				return r.buf, nil
			}
			r.rd.Cut = fmt.Sprintf("the file ends inside line %d, which is not whole: it was cut short (a run still writing, or killed)", r.rd.Lines)
			return nil, io.EOF
		default:
			// The compressed stream is cut short or corrupt.
			r.rd.Cut = fmt.Sprintf("the compressed data breaks off after line %d (%v): the file was cut short or is damaged", r.rd.Lines, err)
			return nil, io.EOF
		}
	}
}

// skip counts a skipped line in *n and describes it while there are few.
func (r *reader) skip(n *int64, why string) {
	*n++
	if len(r.rd.Examples) < maxExamples {
		r.rd.Examples = append(r.rd.Examples, fmt.Sprintf("line %d: %s", r.rd.Lines, why))
	}
}

// declare takes a Metric line: a built-in metric keeps its definition
// when the types agree; another metric is defined as declared.
func (r *reader) declare(rec *record) error {
	name := rec.Metric
	if name == "" {
		name = rec.Data.Name
	}
	switch name {
	case metrics.CorrectedLatencyName, metrics.ScheduleLagName:
		return fmt.Errorf("%s already holds %s samples (a metronome run, or k6 with jslib/intended.js): they were measured, not left out, so there is nothing to audit; read them directly (the run's summary, metronome merge or report)", r.name, name)
	}
	typ, err := metrics.ParseType(rec.Data.Type)
	if err != nil || !metrics.ValidName(name) {
		r.skip(&r.rd.Malformed, fmt.Sprintf("a Metric line for %q of type %q", name, rec.Data.Type))
		return nil
	}
	contains := metrics.ParseValueType(rec.Data.Contains)
	if m := r.reg.Get(name); m != nil {
		if m.Type != typ {
			r.rd.Conflicting[name] = fmt.Sprintf("declared a %s, but %s is a %s", typ, name, m.Type)
			return nil
		}
		r.declared[name] = m
		return nil
	}
	m, err := r.reg.New(name, typ, contains)
	if err != nil {
		r.skip(&r.rd.Malformed, fmt.Sprintf("a Metric line for %q: %v", name, err))
		return nil
	}
	r.declared[name] = m
	return nil
}

// point takes a Point line; false when it is skipped.
func (r *reader) point(rec *record) (point, bool) {
	m := r.declared[rec.Metric]
	if m == nil {
		if _, bad := r.rd.Conflicting[rec.Metric]; !bad {
			r.rd.Undeclared[rec.Metric]++
		}
		return point{}, false
	}
	if rec.Data.Value == nil {
		r.skip(&r.rd.Malformed, "a Point without a value")
		return point{}, false
	}
	if why := r.impossible(m, *rec.Data.Value); why != "" {
		r.skip(&r.rd.Malformed, why)
		return point{}, false
	}
	at, err := time.Parse(time.RFC3339Nano, rec.Data.Time)
	if err != nil {
		r.skip(&r.rd.Malformed, fmt.Sprintf("a Point whose time %q is not RFC 3339", rec.Data.Time))
		return point{}, false
	}
	tg, err := r.tags(rec.Data.Tags)
	if err != nil {
		r.skip(&r.rd.Malformed, "a Point whose tags are not strings")
		return point{}, false
	}
	p := point{metric: m, time: at, value: *rec.Data.Value, tags: tg.tags, vu: tg.vu, iter: tg.iter}
	if v, ok := rec.Data.Metadata["vu"]; ok {
		p.vu = parseID(v)
	}
	if v, ok := rec.Data.Metadata["iter"]; ok {
		p.iter = parseID(v)
	}
	return p, true
}

// maxDurationMs bounds, in milliseconds, a value the audit adds as a
// duration (2^62 ns, about 146 years: two of them add without
// overflowing): no run lasts that long, so a longer value is damage, and
// taking it would wrap the arithmetic into negative times.
const maxDurationMs = float64(1<<62) / 1e6

// maxDrops bounds the value of one dropped_iterations sample: k6 writes
// 1 for each drop.
const maxDrops = 1 << 20

// impossible says why a value k6 cannot have written is refused, "" for
// a value that is taken: a duration the audit computes with (a request's
// own time, an iteration's duration) past maxDurationMs, and a
// dropped_iterations count that is not a whole number from 0 to maxDrops.
// The sample is skipped as a damaged line, by its line number.
func (r *reader) impossible(m *metrics.Metric, v float64) string {
	switch {
	case m.Name == metrics.DroppedIterationsName:
		if v < 0 || v > maxDrops || v != math.Trunc(v) {
			return fmt.Sprintf("a Point of %s whose value %g is no count of dropped arrivals (k6 writes 1 per drop)", m.Name, v)
		}
	case m.Name == metrics.IterationDurationName || m.Name == metrics.HTTPReqBlockedName || slices.Contains(hdrlog.RawMetrics, m.Name),
		m.Type == metrics.Trend && m.Contains == metrics.Time: // a latency trend's operations are durations too
		if math.Abs(v) > maxDurationMs {
			return fmt.Sprintf("a Point of %s whose value %g ms is longer than any run (over 146 years): damaged", m.Name, v)
		}
	}
	return ""
}

// tags returns the tag set of a Point's tags object. An older k6's vu and
// iter tags are taken out of the set (one set per iteration would grow
// without bound) and returned apart.
func (r *reader) tags(raw json.RawMessage) (tagged, error) {
	if t, ok := r.tagSets[string(raw)]; ok {
		return t, nil
	}
	t := tagged{tags: metrics.EmptyTags, vu: -1, iter: -1}
	var m map[string]string
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			return tagged{}, err
		}
	}
	if v, ok := m["vu"]; ok {
		t.vu = parseID(v)
		delete(m, "vu")
	}
	if v, ok := m["iter"]; ok {
		t.iter = parseID(v)
		delete(m, "iter")
	}
	if len(m) > 0 {
		t.tags = metrics.NewTags(m)
	}
	if t.vu < 0 && t.iter < 0 {
		// Sets with vu or iter are one per iteration: not worth keeping.
		// Nor are sets past maxTagSets (a URL per request): the cache
		// starts over rather than grow with the output.
		if len(r.tagSets) >= maxTagSets {
			clear(r.tagSets)
		}
		r.tagSets[string(raw)] = t
	}
	return t, nil
}

// parseID reads a vu or iter value, -1 when it is not a number.
func parseID(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// preview quotes the start of a line for an error message.
func preview(line []byte) string {
	const n = 60
	if len(line) > n {
		return strconv.Quote(string(line[:n])) + "..."
	}
	return strconv.Quote(string(line))
}
