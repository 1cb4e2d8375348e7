package result

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/metronome-load/metronome/internal/hdrhist"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/secrets"
)

// SeriesInfo is a series as its definition line gives it.
type SeriesInfo struct {
	ID     int
	Metric MetricDef
	Type   metrics.Type
	Tags   *metrics.TagSet
	// n counts the series' samples in the intervals read so far, to
	// refuse counts that overflow.
	n int64
}

// Delta is one series' aggregate over one interval, as Scan reads it.
// Which fields are set depends on the series' type, as for the sinks of
// package metrics.
type Delta struct {
	Start, End time.Time
	Series     *SeriesInfo
	// Line is the file's line that holds it, for messages.
	Line int
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

// Limits of reading a result file: those its writer keeps, so that a
// damaged or forged file costs no more to read than one metronome could
// have written, and is refused with its line named past them.
const (
	// maxLineBytes bounds a line, so that a damaged file without line
	// breaks costs bounded memory. An interval's line holds one entry
	// per series that got samples (at most the series defined, which
	// the header's maxSeries bounds), each a sparse histogram of at most
	// a few hundred KB; metronome's own lines stay far below it. An
	// interval line is decoded entry by entry, so that its memory is
	// that of its bytes.
	maxLineBytes = 256 << 20
)

// trendGeometry is the range and precision of every histogram the writer
// writes: that of metrics.TrendSink. A histogram declaring another is not
// the writer's, and is refused before it is inflated.
var trendGeometry = hdrhist.Geometry{Lowest: 1, Highest: metrics.TrendHighestUnit, Digits: metrics.TrendSignificantDigits}

// builtin are the names and types of metronome's built-in metrics, whose
// values are measured: finite, whatever a script adds to its own.
var builtin = func() map[string]metrics.Type {
	reg := metrics.NewRegistry()
	metrics.RegisterBuiltin(reg)
	out := map[string]metrics.Type{}
	for _, m := range reg.All() {
		out[m.Name] = m.Type
	}
	return out
}()

var errLongLine = errors.New("line too long")

// readLine returns the next line with its break, or errLongLine once it
// passes limit bytes. A long line's buffer doubles as it grows, so that
// reading it allocates about twice its bytes (append's growth of large
// slices by a quarter allocated five times).
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var buf []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(buf)+len(frag) > limit {
			return nil, errLongLine
		}
		if len(buf)+len(frag) > cap(buf) {
			buf = slices.Grow(buf, max(len(frag), len(buf)))
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
// file's line, or a number its writer cannot have written (a negative
// count, a histogram of another geometry or whose count is not the
// entry's, counts that overflow), is an error naming the file and the
// line. name is used in messages.
func Scan(r io.Reader, name string, visit func(*Delta)) (*Scanned, error) {
	if visit == nil {
		visit = func(*Delta) {}
	}
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
	name  string
	limit int // the longest line taken, in bytes
	// visit gets each delta; nil for a look (Tail), which decodes no
	// interval's entries: only the file's structure.
	visit         func(*Delta)
	sc            Scanned
	n             int // the lines taken
	metricsByName map[string]MetricDef
	series        map[int]*SeriesInfo
	// named counts the series of a tag set, at most the header's
	// maxSeries; foldedSeen holds those of the samples past it, one per
	// metric and scenario, in at most as many scenarios (and none) as
	// the options define (scenarios, 1 for k6's shortcuts).
	named           int
	maxSeries       int
	foldedSeen      map[[2]string]bool
	foldedScenarios map[string]bool
	scenarios       int
}

// look reports whether the scanner only looks at the file's structure.
func (s *scanner) look() bool { return s.visit == nil }

func newScanner(name string, visit func(*Delta)) *scanner {
	return &scanner{name: name, limit: maxLineBytes, visit: visit,
		metricsByName: map[string]MetricDef{}, series: map[int]*SeriesInfo{},
		foldedSeen: map[[2]string]bool{}, foldedScenarios: map[string]bool{}}
}

// empty is the error of a file without a line.
func (s *scanner) empty() error {
	return fmt.Errorf("%s is empty, not a result file (written with -o result=FILE)", s.name)
}

// longLine is the error of a line past the scanner's limit.
func (s *scanner) longLine() error {
	return fmt.Errorf("%s: line %d is longer than %d MiB, not a result line", s.name, s.n+1, s.limit>>20)
}

// notResult is the error of a file whose first line is not a header.
func (s *scanner) notResult() error {
	return fmt.Errorf("%s is not a result file (written with -o result=FILE): its first line is not a result header", s.name)
}

// errSyntax marks a line that is not JSON, or not whole: the last line of
// a file being written, or of a killed runner's.
var errSyntax = errors.New("not JSON")

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
	if n > 1 && sc.End != nil {
		return true, fmt.Errorf("%s: line %d comes after the end line", name, n)
	}
	err = s.decode(raw)
	switch {
	case err == nil:
		return s.ended(eof), nil
	case n == 1 && errors.Is(err, errSyntax):
		return true, s.notResult()
	case errors.Is(err, errSyntax) && eof:
		// The last line was cut off mid-write: a killed runner.
		sc.truncate(name, true)
		return true, nil
	case n == 1:
		return true, err
	case errors.Is(err, errSyntax):
		return true, fmt.Errorf("%s: line %d is not a result line: %v", name, n, errors.Unwrap(err))
	}
	return true, fmt.Errorf("%s: line %d: %w", name, n, err)
}

// syntax marks err as the line's JSON being broken.
func syntax(err error) error { return fmt.Errorf("%w: %w", errSyntax, err) }

// kinds are the lines' beginnings, as the writer writes them: compact
// JSON objects with one key naming their kind. A line beginning otherwise
// is not one of metronome's.
var kinds = [][]byte{[]byte(`{"header":`), []byte(`{"metric":`), []byte(`{"series":`), []byte(`{"interval":`), []byte(`{"end":`)}

// decode reads one line. An interval's entries are counted before they
// are decoded (gjson scans without allocating), so that a forged line of
// millions of entries is refused for more entries than series, not held
// whole.
func (s *scanner) decode(raw []byte) error {
	kind := slices.IndexFunc(kinds, func(k []byte) bool { return bytes.HasPrefix(raw, k) })
	switch {
	case kind < 0:
		return syntax(errors.New("not a line of metronome's"))
	case s.n == 1 && kind != 0:
		return syntax(errors.New("no header"))
	case s.n > 1 && kind == 0:
		return errors.New("a second header")
	case kind == 3:
		if n := gjson.GetBytes(raw, "interval.data.#").Int(); n > int64(len(s.series)) {
			return fmt.Errorf("%d entries, more than the %d series defined", n, len(s.series))
		}
	}
	var l line
	if s.look() && kind == 3 {
		// A look learns an interval's bounds, not its entries: gjson
		// checks the line and finds them without decoding the rest.
		if !gjson.ValidBytes(raw) {
			return syntax(errors.New("not valid JSON"))
		}
		start, end := gjson.GetBytes(raw, "interval.start"), gjson.GetBytes(raw, "interval.end")
		if start.Type != gjson.Number || end.Type != gjson.Number {
			return syntax(errors.New("an interval without its start and end"))
		}
		l.Interval = &intervalLine{Start: start.Int(), End: end.Int()}
	} else if err := json.Unmarshal(raw, &l); err != nil {
		return syntax(err)
	}
	switch {
	case l.Header != nil && kind == 0:
		return s.header(l.Header)
	case l.Metric != nil && kind == 1:
		return s.metric(*l.Metric)
	case l.Series != nil && kind == 2:
		return s.defineSeries(*l.Series)
	case l.Interval != nil && kind == 3:
		return s.interval(l.Interval)
	case l.End != nil && kind == 4:
		s.sc.End = l.End
		return nil
	}
	return syntax(errors.New("more than one kind in one line"))
}

// header checks the first line: the format, a version this reader knows,
// and a test identity that is the one of its script and options.
func (s *scanner) header(h *Header) error {
	if h.Format != Format {
		return syntax(errors.New("not a result header"))
	}
	if h.Version > Version {
		return fmt.Errorf("%s was written in result format %d by a newer metronome (%s); this one reads format %d",
			s.name, h.Version, h.Metronome, Version)
	}
	if h.Version < 1 {
		return fmt.Errorf("%s: line 1: result format %d does not exist (metronome writes %d): the header was edited", s.name, h.Version, Version)
	}
	if id := Identity(h.Options, h.ScriptDigest); h.Test != id {
		return fmt.Errorf("%s: line 1: its test %q is not the identity of the script digest and options it records (%s): the header was edited or copied from another file",
			s.name, h.Test, id)
	}
	s.maxSeries = DefaultMaxSeries
	if h.MaxSeries != 0 {
		if h.MaxSeries < 1 || h.MaxSeries > MaxSeriesLimit {
			return fmt.Errorf("%s: line 1: maxSeries %d is not a series cap metronome writes (1 to %d)", s.name, h.MaxSeries, MaxSeriesLimit)
		}
		s.maxSeries = h.MaxSeries
	}
	s.scenarios = scenarioCount(h.Options)
	s.sc.Header = *h
	return nil
}

// scenarioCount is how many scenarios options define, 1 for options
// without any (k6's shortcuts run one, "default").
func scenarioCount(options json.RawMessage) int {
	var o struct {
		Scenarios map[string]json.RawMessage `json:"scenarios"`
	}
	_ = json.Unmarshal(options, &o)
	return max(len(o.Scenarios), 1)
}

// metric takes a metric's definition: a valid k6 name, defined once, of
// a known type (a built-in one of its own type).
func (s *scanner) metric(m MetricDef) error {
	t, err := metrics.ParseType(m.Type)
	switch {
	case err != nil:
		return fmt.Errorf("metric %s: %v", m.Name, err)
	case !metrics.ValidName(strings.ReplaceAll(m.Name, secrets.Mask, "secret")):
		// A name the writer masked (a custom metric named by a fetched
		// secret) is still one metric; only a forged name is refused.
		return fmt.Errorf("%q is not a metric name (a letter or _, then 1 to 128 letters, digits or _)", m.Name)
	case m.Contains != "" && metrics.ParseValueType(m.Contains).String() != m.Contains:
		return fmt.Errorf("metric %s: %q is not what its values are (time, data or default)", m.Name, m.Contains)
	}
	if bt, ok := builtin[m.Name]; ok && bt != t {
		return fmt.Errorf("metric %s is metronome's %s, not a %s", m.Name, bt, t)
	}
	if _, ok := s.metricsByName[m.Name]; ok {
		return fmt.Errorf("metric %s is defined again", m.Name)
	}
	s.metricsByName[m.Name] = m
	s.sc.Metrics = append(s.sc.Metrics, m)
	return nil
}

// defineSeries takes a series' definition: a new id, a metric defined
// before, and no more series than the writer's cap lets it write.
func (s *scanner) defineSeries(d seriesDef) error {
	m, ok := s.metricsByName[d.Metric]
	switch {
	case !ok:
		return fmt.Errorf("series %d is of metric %q, which is not defined before it", d.ID, d.Metric)
	case d.ID < 0:
		return fmt.Errorf("series %d: a series id is not negative", d.ID)
	case s.series[d.ID] != nil:
		return fmt.Errorf("series %d is defined again (first as a series of %s)", d.ID, s.series[d.ID].Metric.Name)
	}
	if d.Tags[FoldedTag] == "true" {
		// The samples past the cap of one metric and scenario: one
		// series each, in no more scenarios than the options run.
		sc, has := d.Tags["scenario"]
		if len(d.Tags) != 1+btoi(has) {
			return fmt.Errorf("series %d: a folded series has the tags %s=true and scenario only", d.ID, FoldedTag)
		}
		key := [2]string{d.Metric, sc}
		if s.foldedSeen[key] {
			return fmt.Errorf("series %d: %s of scenario %q is folded twice", d.ID, d.Metric, sc)
		}
		if !s.foldedScenarios[sc] && len(s.foldedScenarios) >= s.scenarios+1 {
			return fmt.Errorf("series %d: folded series of %d scenarios, where the options run %d", d.ID, len(s.foldedScenarios)+1, s.scenarios)
		}
		s.foldedSeen[key] = true
		s.foldedScenarios[sc] = true
	} else {
		if s.named >= s.maxSeries {
			return fmt.Errorf("series %d is one more than the %d series its writer records apart (%s); a file of metronome's folds the others",
				d.ID, s.maxSeries, EnvMaxSeries)
		}
		s.named++
	}
	t, _ := metrics.ParseType(m.Type)
	s.series[d.ID] = &SeriesInfo{ID: d.ID, Metric: m, Type: t, Tags: metrics.NewTags(d.Tags)}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// interval takes an interval's line: its bounds and, unless the scanner
// only looks, its entries, each of a series defined before and no series
// twice, as the writer writes them, each checked and turned into a delta.
func (s *scanner) interval(iv *intervalLine) error {
	if iv.End < iv.Start {
		return fmt.Errorf("the interval ends (%d) before it starts (%d)", iv.End, iv.Start)
	}
	from, to := time.UnixMilli(iv.Start), time.UnixMilli(iv.End)
	deltas := make([]*Delta, 0, len(iv.Data))
	seen := make(map[int]bool, len(iv.Data))
	for i := range iv.Data {
		e := &iv.Data[i]
		switch {
		case s.series[e.Series] == nil:
			return fmt.Errorf("series %d is not defined before it", e.Series)
		case seen[e.Series]:
			return fmt.Errorf("series %d has two entries in one interval", e.Series)
		}
		seen[e.Series] = true
		d, err := s.deltaOf(e, from, to)
		if err != nil {
			return fmt.Errorf("series %d: %v", e.Series, err)
		}
		deltas = append(deltas, d)
	}
	sc := &s.sc
	if sc.Intervals == 0 || from.Before(sc.First) {
		sc.First = from
	}
	if to.After(sc.Last) {
		sc.Last = to
	}
	sc.Intervals++
	for _, d := range deltas {
		s.visit(d)
	}
	return nil
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

// StillWritten rewords Truncated for a file whose runner was still
// writing it when the reading stopped, which ended says ("the wait
// (--wait 5m0s) ended"): the runner was not killed, it had not finished.
func (sc *Scanned) StillWritten(name, ended string) {
	if sc.End != nil {
		return
	}
	sc.Truncated = fmt.Sprintf("%s was still being written when %s, after %d intervals (up to %s): its runner had not finished; what it recorded until then is merged",
		name, ended, sc.Intervals, sc.Last.UTC().Format(time.RFC3339))
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

// deltaOf turns an entry of series e.Series into its delta, refusing
// numbers the writer cannot have written: a negative count, counts that
// overflow, NaN or infinities where no sample can make them, a histogram
// of another geometry, or one whose count is not the entry's.
func (s *scanner) deltaOf(e *entry, start, end time.Time) (*Delta, error) {
	ser := s.series[e.Series]
	if e.N < 0 {
		return nil, fmt.Errorf("n is %d: a count is not negative", e.N)
	}
	if ser.n > math.MaxInt64-e.N {
		return nil, fmt.Errorf("its counts overflow: %d more after %d", e.N, ser.n)
	}
	ser.n += e.N
	d := &Delta{Start: start, End: end, Series: ser, Line: s.n, N: e.N}
	_, measured := builtin[ser.Metric.Name]
	switch ser.Type {
	case metrics.Counter:
		d.Sum, d.First = float64(e.Sum), time.Unix(0, e.First)
		if measured && !finite(d.Sum) {
			return nil, fmt.Errorf("sum %v: %s counts finite values", d.Sum, ser.Metric.Name)
		}
	case metrics.Gauge:
		d.Value, d.Last, d.Min, d.Max = float64(e.Value), time.Unix(0, e.Last), float64(e.Min), float64(e.Max)
		switch {
		case e.N == 0:
		case !(d.Min <= d.Value && d.Value <= d.Max):
			return nil, fmt.Errorf("value %v is not between min %v and max %v", d.Value, d.Min, d.Max)
		case measured && !(finite(d.Min) && finite(d.Max)):
			return nil, fmt.Errorf("min %v, max %v: %s's values are finite", d.Min, d.Max, ser.Metric.Name)
		}
	case metrics.Rate:
		d.NonZero = e.NonZero
		if e.NonZero < 0 || e.NonZero > e.N {
			return nil, fmt.Errorf("nz %d is not between 0 and n %d", e.NonZero, e.N)
		}
	case metrics.Trend:
		d.Sum, d.Min, d.Max = float64(e.Sum), float64(e.Min), float64(e.Max)
		if err := checkTrend(d, measured); err != nil {
			return nil, err
		}
		var err error
		if d.Pos, err = decode(e.Hist); err != nil {
			return nil, err
		}
		if d.Neg, err = decode(e.Neg); err != nil {
			return nil, err
		}
		// Every value a trend takes is in one of its histograms: those
		// past the range in the top bucket, infinities included.
		if c := countOf(d.Pos) + countOf(d.Neg); c != e.N {
			return nil, fmt.Errorf("n is %d but its histograms hold %d values", e.N, c)
		}
	}
	return d, nil
}

// checkTrend refuses a trend's statistics that no values can have: NaN
// extremes (a trend drops NaN), min above max, a sum that is not finite
// without the infinite extreme that makes it so, and for a measured
// metric any infinity.
func checkTrend(d *Delta, measured bool) error {
	if d.N == 0 {
		return nil
	}
	lo, hi, sum := d.Min, d.Max, d.Sum
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi) || lo > hi:
		return fmt.Errorf("min %v and max %v are not extremes of values", lo, hi)
	case measured && !(finite(lo) && finite(hi) && finite(sum)):
		return fmt.Errorf("sum %v, min %v, max %v: %s's values are finite", sum, lo, hi, d.Series.Metric.Name)
	case math.IsNaN(sum) && !(math.IsInf(lo, -1) && math.IsInf(hi, 1)),
		math.IsInf(sum, 1) && !math.IsInf(hi, 1),
		math.IsInf(sum, -1) && !math.IsInf(lo, -1):
		return fmt.Errorf("sum %v is not the sum of values between %v and %v", sum, lo, hi)
	}
	return nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// countOf is the number of values h holds, 0 for none.
func countOf(h *hdrhistogram.PackedHistogram) int64 {
	if h == nil {
		return 0
	}
	return h.TotalCount()
}

// decode decodes an entry's histogram under the rule every reader of
// metronome's files keeps (hdrhist.Decode), in the writer's geometry.
func decode(s string) (*hdrhistogram.PackedHistogram, error) {
	if s == "" {
		return nil, nil
	}
	h, err := hdrhist.Decode([]byte(s), &trendGeometry)
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

// File is a result file read: what Scan learned and, when read whole,
// every series' total over the file's intervals.
type File struct {
	Name string
	Scanned
	// Series are the series' totals, in the order the file defined them;
	// none for a file only looked at (Tail).
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
	var tot Totals
	sc, err := Scan(r, name, tot.Add)
	if err != nil {
		return nil, err
	}
	return &File{Name: name, Scanned: *sc, Series: tot.Series()}, nil
}

// Totals sums the deltas of each series of one file.
type Totals struct {
	order []*SeriesInfo
	sinks map[*SeriesInfo]metrics.Sink
}

// Add adds d to its series' total.
func (t *Totals) Add(d *Delta) {
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

// Series are the totals, in the order the series first got a delta.
func (t *Totals) Series() []Series {
	out := make([]Series, 0, len(t.order))
	for _, s := range t.order {
		out = append(out, Series{Metric: s.Metric, Tags: s.Tags, Sink: t.sinks[s]})
	}
	return out
}
