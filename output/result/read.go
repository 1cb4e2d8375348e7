package result

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/metronome-load/metronome/metrics"
)

// SeriesInfo is a series as its definition line gives it.
type SeriesInfo struct {
	ID     int
	Metric MetricDef
	Type   metrics.Type
	Tags   *metrics.TagSet
}

// Delta is one series' aggregate over one interval, as Scan reads it.
// Which fields are set depends on the series' type, as for the sinks of
// package metrics.
type Delta struct {
	Start, End time.Time
	Series     *SeriesInfo
	// N counts the samples: a counter's, a rate's and a trend's values, a
	// gauge's sets.
	N int64
	// Counter: Sum and First. Gauge: Value at Last, Min and Max. Rate:
	// NonZero of N. Trend: Sum, Min, Max and the histograms of the
	// values ≥ 0 (Pos) and of the negative values' magnitudes (Neg), in
	// metrics.TrendUnits; either may be nil.
	Sum, Min, Max, Value float64
	First, Last          time.Time
	NonZero              int64
	Pos, Neg             *hdrhistogram.PackedHistogram
}

// Scanned is what Scan learned of a file besides its intervals.
type Scanned struct {
	Header Header
	// Metrics are the metric definitions in the file's order.
	Metrics []MetricDef
	// End is the file's end line, nil when the file has none.
	End *End
	// Truncated says, in a sentence, why the file ended before its end
	// line; "" when it has one.
	Truncated string
	// Intervals counts the interval lines; First and Last bound them.
	Intervals   int
	First, Last time.Time
}

// maxLineBytes bounds a line, so that a damaged file without line breaks
// costs bounded memory. An interval's line holds every series' aggregate:
// at most DefaultMaxSeries of them, each a sparse histogram of at most a
// few KB, so metronome's own lines stay well below it.
const maxLineBytes = 256 << 20

var errLongLine = errors.New("line too long")

// readLine returns the next line with its break, or errLongLine once it
// passes limit bytes.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var buf []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(buf)+len(frag) > limit {
			return nil, errLongLine
		}
		buf = append(buf, frag...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return buf, err
		}
	}
}

// Scan reads a result file line by line and calls visit with each series'
// aggregate of each interval, in the file's order. A file that ends
// without its end line, or whose last line was cut short, is read up to
// there and reported in Truncated; anything else that is not a result
// file's line is an error naming the file and the line. name is used in
// messages.
func Scan(r io.Reader, name string, visit func(*Delta)) (*Scanned, error) {
	return scan(r, newScanner(name, visit))
}

// scan is Scan with the scanner given, and so its line limit.
func scan(r io.Reader, s *scanner) (*Scanned, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		raw, err := readLine(br, s.limit)
		if errors.Is(err, errLongLine) {
			return nil, s.longLine()
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("cannot read %s: %w", s.name, err)
		}
		done, err := s.line(raw, err != nil)
		if err != nil {
			return nil, err
		}
		if done {
			return &s.sc, nil
		}
	}
}

// scanner takes a result file's lines one by one, for Scan and Tail.
type scanner struct {
	name          string
	limit         int // the longest line taken, in bytes
	visit         func(*Delta)
	sc            Scanned
	n             int // the lines taken
	metricsByName map[string]MetricDef
	series        map[int]*SeriesInfo
}

func newScanner(name string, visit func(*Delta)) *scanner {
	return &scanner{name: name, limit: maxLineBytes, visit: visit, metricsByName: map[string]MetricDef{}, series: map[int]*SeriesInfo{}}
}

// empty is the error of a file without a line.
func (s *scanner) empty() error {
	return fmt.Errorf("%s is empty, not a result file (written with -o result=FILE)", s.name)
}

// longLine is the error of a line past the scanner's limit.
func (s *scanner) longLine() error {
	return fmt.Errorf("%s: line %d is longer than %d MiB, not a result line", s.name, s.n+1, s.limit>>20)
}

// line takes the next line, raw, with its line break; eof is set when it
// is what follows the file's last line break (possibly nothing). done is
// set once the file has been read as far as it goes, as Scan says.
func (s *scanner) line(raw []byte, eof bool) (done bool, err error) {
	s.n++
	n, name, sc := s.n, s.name, &s.sc
	if len(bytes.TrimSpace(raw)) == 0 && eof {
		if n == 1 {
			return true, s.empty()
		}
		sc.truncate(name, false)
		return true, nil
	}
	var l line
	if jerr := json.Unmarshal(raw, &l); jerr != nil {
		if n == 1 {
			return true, fmt.Errorf("%s is not a result file (written with -o result=FILE): its first line is not a result header", name)
		}
		if eof && sc.End == nil {
			// The last line was cut off mid-write: a killed runner.
			sc.truncate(name, true)
			return true, nil
		}
		return true, fmt.Errorf("%s: line %d is not a result line: %v", name, n, jerr)
	}
	if n == 1 {
		if l.Header == nil || l.Header.Format != Format {
			return true, fmt.Errorf("%s is not a result file (written with -o result=FILE): its first line is not a result header", name)
		}
		if l.Header.Version > Version {
			return true, fmt.Errorf("%s was written in result format %d by a newer metronome (%s); this one reads format %d",
				name, l.Header.Version, l.Header.Metronome, Version)
		}
		sc.Header = *l.Header
		return s.ended(eof), nil
	}
	if sc.End != nil {
		return true, fmt.Errorf("%s: line %d comes after the end line", name, n)
	}
	switch {
	case l.Metric != nil:
		if _, err := metrics.ParseType(l.Metric.Type); err != nil {
			return true, fmt.Errorf("%s: line %d: metric %s: %v", name, n, l.Metric.Name, err)
		}
		s.metricsByName[l.Metric.Name] = *l.Metric
		sc.Metrics = append(sc.Metrics, *l.Metric)
	case l.Series != nil:
		m, ok := s.metricsByName[l.Series.Metric]
		if !ok {
			return true, fmt.Errorf("%s: line %d: series %d is of metric %q, which is not defined before it", name, n, l.Series.ID, l.Series.Metric)
		}
		t, _ := metrics.ParseType(m.Type)
		s.series[l.Series.ID] = &SeriesInfo{ID: l.Series.ID, Metric: m, Type: t, Tags: metrics.NewTags(l.Series.Tags)}
	case l.Interval != nil:
		iv := l.Interval
		start, end := time.UnixMilli(iv.Start), time.UnixMilli(iv.End)
		if sc.Intervals == 0 || start.Before(sc.First) {
			sc.First = start
		}
		if end.After(sc.Last) {
			sc.Last = end
		}
		sc.Intervals++
		for _, e := range iv.Data {
			ser := s.series[e.Series]
			if ser == nil {
				return true, fmt.Errorf("%s: line %d: series %d is not defined before it", name, n, e.Series)
			}
			d, err := deltaOf(e, ser, start, end)
			if err != nil {
				return true, fmt.Errorf("%s: line %d: series %d: %v", name, n, e.Series, err)
			}
			s.visit(d)
		}
	case l.End != nil:
		sc.End = l.End
	default:
		return true, fmt.Errorf("%s: line %d is not a result line", name, n)
	}
	return s.ended(eof), nil
}

// ended reports whether the file ends after a whole line, eof being set
// when that line had no line break: the end line is complete, anything
// else was being written.
func (s *scanner) ended(eof bool) bool {
	if eof {
		s.sc.truncate(s.name, false)
	}
	return eof
}

// truncate says in Truncated why a file without its end line stopped
// where it did: it ends after a whole line, or is cut short mid-line. It
// is the one place that decides the wording, for Scan and Tail.
func (sc *Scanned) truncate(name string, cutShort bool) {
	if sc.End != nil {
		return
	}
	how := "ends"
	if cutShort {
		how = "is cut short"
	}
	if sc.Intervals == 0 {
		sc.Truncated = fmt.Sprintf("%s %s before its first interval and has no end line: the runner was stopped before it recorded anything", name, how)
		return
	}
	sc.Truncated = fmt.Sprintf("%s %s without its end line after %d intervals (up to %s): the runner was killed; what it recorded until then is merged",
		name, how, sc.Intervals, sc.Last.UTC().Format(time.RFC3339))
}

func deltaOf(e entry, s *SeriesInfo, start, end time.Time) (*Delta, error) {
	d := &Delta{Start: start, End: end, Series: s, N: e.N}
	switch s.Type {
	case metrics.Counter:
		d.Sum, d.First = float64(e.Sum), time.Unix(0, e.First)
	case metrics.Gauge:
		d.Value, d.Last, d.Min, d.Max = float64(e.Value), time.Unix(0, e.Last), float64(e.Min), float64(e.Max)
	case metrics.Rate:
		d.NonZero = e.NonZero
	case metrics.Trend:
		d.Sum, d.Min, d.Max = float64(e.Sum), float64(e.Min), float64(e.Max)
		var err error
		if d.Pos, err = decode(e.Hist); err != nil {
			return nil, err
		}
		if d.Neg, err = decode(e.Neg); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func decode(s string) (*hdrhistogram.PackedHistogram, error) {
	if s == "" {
		return nil, nil
	}
	h, err := hdrhistogram.DecodePacked([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("its histogram cannot be decoded: %v", err)
	}
	return h, nil
}

// Sink returns what d aggregated as a sink of its series' type.
func (d *Delta) Sink() metrics.Sink {
	switch d.Series.Type {
	case metrics.Counter:
		return &metrics.CounterSink{Sum: d.Sum, Count: d.N, First: d.First}
	case metrics.Gauge:
		return &metrics.GaugeSink{Value: d.Value, Min: d.Min, Max: d.Max, Set: d.N > 0, Last: d.Last}
	case metrics.Rate:
		return &metrics.RateSink{Trues: d.NonZero, Total: d.N}
	}
	t := metrics.NewTrendSink()
	t.MergeParts(d.N, d.Sum, d.Min, d.Max, d.Pos, d.Neg)
	return t
}

// File is a result file read whole: what Scan learned, and every series'
// total over the file's intervals.
type File struct {
	Name string
	Scanned
	// Series are the series' totals, in the order the file defined them.
	Series []Series
}

// Series is one series' total.
type Series struct {
	Metric MetricDef
	Tags   *metrics.TagSet
	Sink   metrics.Sink
}

// Read reads a whole result file (see Scan) into its series' totals.
func Read(r io.Reader, name string) (*File, error) {
	var tot totals
	sc, err := Scan(r, name, tot.add)
	if err != nil {
		return nil, err
	}
	return tot.file(name, sc), nil
}

// totals sums the deltas of each series.
type totals struct {
	order []*SeriesInfo
	sinks map[*SeriesInfo]metrics.Sink
}

func (t *totals) add(d *Delta) {
	sink := t.sinks[d.Series]
	if sink == nil {
		if t.sinks == nil {
			t.sinks = map[*SeriesInfo]metrics.Sink{}
		}
		sink = metrics.NewSink(d.Series.Type)
		t.sinks[d.Series] = sink
		t.order = append(t.order, d.Series)
	}
	if tr, ok := sink.(*metrics.TrendSink); ok {
		tr.MergeParts(d.N, d.Sum, d.Min, d.Max, d.Pos, d.Neg)
		return
	}
	metrics.MergeSink(sink, d.Sink())
}

// file is the File of the totals so far; it shares their sinks.
func (t *totals) file(name string, sc *Scanned) *File {
	f := &File{Name: name, Scanned: *sc}
	for _, s := range t.order {
		f.Series = append(f.Series, Series{Metric: s.Metric, Tags: s.Tags, Sink: t.sinks[s]})
	}
	return f
}
