package result

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/hdrhist"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
	"github.com/metronome-load/metronome/secrets"
)

// Name is the output's name for -o.
const Name = "result"

func init() { output.Register(Name, New) }

// Settings read from the environment, and their defaults.
const (
	// EnvInterval sets the length of an interval: a killed runner's file
	// holds everything but its last interval or two.
	EnvInterval     = "K6_RESULT_INTERVAL"
	DefaultInterval = time.Second
	// EnvMaxSeries sets how many series (metric and tag set) are recorded
	// apart; the samples of later tag sets are recorded per metric and
	// scenario only, tagged folded=true.
	EnvMaxSeries     = "K6_RESULT_MAX_SERIES"
	DefaultMaxSeries = 10_000
	// MaxSeriesLimit is the most K6_RESULT_MAX_SERIES may be, and so the
	// most series a reader takes from a file.
	MaxSeriesLimit = 100_000
)

// FoldedTag marks the series that hold the samples of tag sets past the
// series cap.
const FoldedTag = "folded"

// maxKeys bounds the cache from a tag set to its metrics' series; a
// cleared cache is rebuilt from the series.
const maxKeys = 1 << 14

// maxKeyMetrics bounds the metrics cached per tag set, searched in turn.
const maxKeyMetrics = 32

// inputBuffer is how many batches may wait for the output's goroutine.
const inputBuffer = 4096

// stopTimeout bounds Stop's wait for a destination that takes nothing.
const stopTimeout = 10 * time.Second

// The output takes its optional capability from the output kit.
var _ output.EndReceiver = (*Output)(nil)

// Output writes a result file.
type Output struct {
	path      string
	interval  time.Duration
	grace     time.Duration
	maxSeries int
	header    Header
	logf      func(string, ...any)
	now       func() time.Time
	loop      *output.Loop
	registry  *metrics.Registry
	// secrets hides fetched secrets in every line but the intervals'.
	secrets *secrets.Store

	file *os.File
	buf  *bufio.Writer
	err  error

	endMu sync.Mutex
	end   *output.RunEnd

	// Owned by the goroutine.
	pool    *hdrhist.Pool
	enc     *hdrhist.Encoder
	defined map[*metrics.Metric]bool
	// keys caches, per tag set, where its samples of each metric go: a
	// request's samples come together and share one tag set, so one
	// lookup of it (kept in lastTags and last) serves them all.
	keys     map[*metrics.TagSet]*tagSlots
	lastTags *metrics.TagSet
	last     *tagSlots
	series   map[seriesKey]int // the series written
	metric   []*metrics.Metric // series → metric
	open     map[int64]*interval
	// lastIdx and lastIv are the open interval a sample last went to.
	lastIdx int64
	lastIv  *interval
	written int64 // intervals before this index are written
	folded  int64
	// The deltas and intervals written, kept for the next intervals.
	spare   []*delta
	spareIv []*interval
	scratch []byte  // an interval's line, entry by entry
	idxs    []int64 // the open intervals, in order
}

// tagSlots are the slots of one tag set's samples, by metric.
type tagSlots struct {
	metrics []*metrics.Metric
	slots   []slot
}

type seriesKey struct {
	metric *metrics.Metric
	tags   *metrics.TagSet
}

// slot is where the samples of a (metric, tags) go: a series, under other
// tags when folded past the cap.
type slot struct {
	id     int
	folded bool
}

// interval is one open interval: the aggregate of each series that got
// samples, by series (nil for those that got none), and those series in
// the order they first did.
type interval struct {
	deltas []*delta
	order  []int
}

// delta is one series' aggregate over one interval.
type delta struct {
	n           int64
	sum         float64
	min, max    float64
	value       float64
	first, last int64
	nonZero     int64
	pos, neg    hdrhist.Hist
}

// New builds the output; p.Arg is the file. "{instance_id}" and
// "{hostname}" in it are replaced by the run's instance_id tag (k6-operator
// gives each runner its own) and the machine's host name, so that runners
// sharing a volume write files of their own.
func New(p output.Params) (output.Output, error) {
	if p.Arg == "" {
		return nil, fmt.Errorf("the result output needs a file name: -o result=results.json")
	}
	iv := DefaultInterval
	if v := p.Env[EnvInterval]; v != "" {
		d, err := duration.Parse(v)
		if err != nil || d < 100*time.Millisecond {
			return nil, fmt.Errorf("%s: %q is not a duration of at least 100ms", EnvInterval, v)
		}
		iv = d
	}
	maxSeries := DefaultMaxSeries
	if v := p.Env[EnvMaxSeries]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxSeriesLimit {
			return nil, fmt.Errorf("%s: %q is not a number of series from 1 to %d", EnvMaxSeries, v, MaxSeriesLimit)
		}
		maxSeries = n
	}
	var opts struct {
		Tags     map[string]string `json:"tags"`
		Segment  string            `json:"executionSegment"`
		Sequence string            `json:"executionSegmentSequence"`
	}
	if len(p.Options) > 0 {
		if err := json.Unmarshal(p.Options, &opts); err != nil {
			return nil, fmt.Errorf("the result output cannot read the run's options: %v", err)
		}
	}
	host, _ := os.Hostname()
	path := strings.NewReplacer("{instance_id}", opts.Tags["instance_id"], "{hostname}", host).Replace(p.Arg)
	o := &Output{
		path: path, interval: iv, grace: max(iv, 2*time.Second), maxSeries: maxSeries,
		logf: p.Logf, now: p.Now, registry: p.Registry, secrets: p.Secrets,
		pool:    hdrhist.NewPool(1, metrics.TrendHighestUnit, metrics.TrendSignificantDigits),
		defined: map[*metrics.Metric]bool{}, keys: map[*metrics.TagSet]*tagSlots{}, series: map[seriesKey]int{},
		open: map[int64]*interval{},
	}
	if o.logf == nil {
		o.logf = func(string, ...any) {}
	}
	if o.now == nil {
		o.now = time.Now
	}
	o.enc = o.pool.NewEncoder()
	o.header = Header{
		Format: Format, Version: Version, Metronome: p.Version,
		Script: p.Script, Host: host, Tags: opts.Tags,
		Segment: opts.Segment, Sequence: opts.Sequence,
		Interval: iv.String(), Options: p.Options, MaxSeries: maxSeries,
	}
	if b, err := os.ReadFile(p.Script); err == nil && p.Script != "" {
		sum := sha256.Sum256(b)
		o.header.ScriptDigest = hex.EncodeToString(sum[:])
	}
	o.loop = output.NewLoop(inputBuffer, min(iv, time.Second), output.LoopSteps{
		Ingest: o.ingest,
		Tick:   func() { o.writeClosed(o.now()) },
		Final:  o.final,
	})
	return o, nil
}

// Identity is what the instances of one test share: a digest of the
// options without the execution segment and the tags (which k6-operator
// sets per runner) and of the script's digest.
func Identity(options json.RawMessage, scriptDigest string) string {
	b := options
	if m := comparableOptions(options); m != nil {
		b, _ = json.Marshal(m) // map keys sorted, so the same options give the same bytes
	}
	h := sha256.New()
	h.Write(b)
	h.Write([]byte{0})
	h.Write([]byte(scriptDigest))
	return hex.EncodeToString(h.Sum(nil))
}

// comparableOptions are the options the instances of a test share, nil
// when options are not a JSON object.
func comparableOptions(options json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(options, &m) != nil || m == nil {
		return nil
	}
	delete(m, "executionSegment")
	delete(m, "tags")
	return m
}

// Description is shown in the banner.
func (o *Output) Description() string { return fmt.Sprintf("result (%s)", output.Redact(o.path)) }

// Path is the file written, after {instance_id} and {hostname}.
func (o *Output) Path() string { return o.path }

// Start creates the file, writes the header and the metrics defined so far
// and starts the goroutine.
func (o *Output) Start() error {
	f, err := os.Create(o.path)
	if err != nil {
		return output.RedactError(fmt.Errorf("result: cannot create %s: %w", o.path, err))
	}
	o.file = f
	o.buf = bufio.NewWriterSize(f, 64<<10)
	o.header.Started = o.now().UTC()
	// The header's options are written with fetched secrets masked, so
	// the test's identity is a digest of them as written: merge recomputes
	// it from the file, and every instance masks the same secrets alike.
	o.header.Options = o.secrets.RedactJSON(o.header.Options)
	o.header.Test = Identity(o.header.Options, o.header.ScriptDigest)
	o.writeLine(line{Header: &o.header})
	// The metrics defined so far, in the registry's order, which is the
	// summary's.
	if o.registry != nil {
		for _, m := range o.registry.All() {
			o.defined[m] = true
			o.writeLine(line{Metric: &MetricDef{Name: m.Name, Type: m.Type.String(), Contains: m.Contains.String()}})
		}
	}
	if err := o.buf.Flush(); err != nil || o.err != nil {
		f.Close()
		return output.RedactError(fmt.Errorf("result: writing %s: %w", o.path, firstErr(o.err, err)))
	}
	o.loop.Start()
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// AddSamples hands the batch over without waiting; when the output is that
// far behind, the batch is counted as dropped.
func (o *Output) AddSamples(batch []metrics.Sample) { o.loop.AddSamples(batch) }

// ReceiveEnd keeps the run's end for the file's last line.
func (o *Output) ReceiveEnd(end output.RunEnd) {
	o.endMu.Lock()
	defer o.endMu.Unlock()
	o.end = &end
}

// Stop writes every open interval and the end line, and closes the file.
func (o *Output) Stop() error {
	return o.loop.Stop(stopTimeout, func(stuck bool) error {
		if stuck {
			return output.RedactError(fmt.Errorf("result: %s took no more data for %s; the file is incomplete", o.path, stopTimeout))
		}
		if err := o.file.Close(); err != nil && o.err == nil {
			o.err = err
		}
		if o.err != nil {
			return output.RedactError(fmt.Errorf("result: writing %s: %w; the file is incomplete", o.path, o.err))
		}
		if n := o.loop.Dropped(); n > 0 {
			return output.RedactError(fmt.Errorf("result: %d samples were dropped because the output's buffer was full; %s is incomplete", n, o.path))
		}
		return nil
	})
}

// writeLine appends one line to the buffer; the first error sticks.
func (o *Output) writeLine(l line) {
	if o.err != nil {
		return
	}
	b, err := json.Marshal(l)
	if err == nil {
		if l.Interval == nil {
			// The other lines hold the script's text (options, metric
			// names, tags, scenarios, setup data), which may hold a
			// fetched secret; an interval's holds ids, numbers and
			// encoded histograms, which a short secret must not touch.
			b = o.secrets.RedactJSON(b)
		}
		b = append(b, '\n')
		_, err = o.buf.Write(b)
	}
	if err != nil {
		o.err = err
	}
}

// seriesOf returns the series a sample of m with tags is recorded in,
// defining it (and m) in the file first.
func (o *Output) seriesOf(m *metrics.Metric, tags *metrics.TagSet) slot {
	ts := o.last
	if tags != o.lastTags || ts == nil {
		if ts = o.keys[tags]; ts == nil {
			if len(o.keys) >= maxKeys {
				clear(o.keys)
			}
			ts = &tagSlots{}
			o.keys[tags] = ts
		}
		o.lastTags, o.last = tags, ts
	}
	for i, km := range ts.metrics {
		if km == m {
			return ts.slots[i]
		}
	}
	sl := o.define(m, tags)
	if len(ts.metrics) < maxKeyMetrics {
		ts.metrics = append(ts.metrics, m)
		ts.slots = append(ts.slots, sl)
	}
	return sl
}

// define returns the series of m with tags, folded past the cap, writing
// its definition (and m's) when it is new.
func (o *Output) define(m *metrics.Metric, tags *metrics.TagSet) slot {
	if tags == nil {
		tags = metrics.EmptyTags
	}
	var sl slot
	if _, ok := o.series[seriesKey{m, tags}]; !ok && len(o.series) >= o.maxSeries {
		// Past the cap, a new tag set is recorded under its scenario
		// only, so that the series stay bounded and the metric's totals
		// exact.
		folded := metrics.EmptyTags.With(FoldedTag, "true")
		if sc, ok := tags.Get("scenario"); ok {
			folded = folded.With("scenario", sc)
		}
		tags, sl.folded = folded, true
	}
	id, ok := o.series[seriesKey{m, tags}]
	if !ok {
		if !o.defined[m] {
			o.defined[m] = true
			o.writeLine(line{Metric: &MetricDef{Name: m.Name, Type: m.Type.String(), Contains: m.Contains.String()}})
		}
		id = len(o.metric)
		o.metric = append(o.metric, m)
		o.series[seriesKey{m, tags}] = id
		// The line's metric name and tags may hold a fetched secret, as
		// writeLine's other lines may.
		b := appendSeriesLine(o.scratch[:0], id, m.Name, tags, o.secrets.Redact)
		o.scratch = b
		o.write(o.secrets.RedactJSON(b))
	}
	sl.id = id
	return sl
}

func (o *Output) ingest(batch []metrics.Sample) {
	for i := range batch {
		s := &batch[i]
		if s.Metric == nil {
			continue
		}
		sl := o.seriesOf(s.Metric, s.Tags)
		if sl.folded {
			o.folded++
		}
		t := s.Time
		if t.IsZero() {
			t = o.now()
		}
		ns := t.UnixNano()
		o.add(o.intervalAt(t, ns), sl.id, s, ns)
	}
}

// intervalAt returns the open interval a sample at t (ns in Unix
// nanoseconds) belongs to: the one of its time, or the oldest still open
// for a sample that comes later than its interval was written.
func (o *Output) intervalAt(t time.Time, ns int64) *interval {
	idx := int64(0)
	if base := o.header.Started; t.After(base) {
		d := ns - base.UnixNano()
		if d < 0 { // past the year 2262, where ns overflows
			d = int64(t.Sub(base))
		}
		idx = d / int64(o.interval)
	}
	idx = max(idx, o.written)
	if idx == o.lastIdx && o.lastIv != nil {
		return o.lastIv
	}
	iv := o.open[idx]
	if iv == nil {
		if n := len(o.spareIv); n > 0 {
			iv, o.spareIv = o.spareIv[n-1], o.spareIv[:n-1]
		} else {
			iv = &interval{}
		}
		o.open[idx] = iv
	}
	o.lastIdx, o.lastIv = idx, iv
	return iv
}

// add aggregates one sample, at ns (Unix nanoseconds), into the series'
// delta of iv.
func (o *Output) add(iv *interval, id int, s *metrics.Sample, ns int64) {
	if id >= len(iv.deltas) {
		iv.deltas = append(iv.deltas, make([]*delta, len(o.metric)-len(iv.deltas))...)
	}
	d := iv.deltas[id]
	if d == nil {
		if n := len(o.spare); n > 0 {
			d, o.spare = o.spare[n-1], o.spare[:n-1]
		} else {
			d = &delta{}
		}
		iv.deltas[id] = d
		iv.order = append(iv.order, id)
	}
	v := s.Value
	switch s.Metric.Type {
	case metrics.Counter:
		if d.n == 0 {
			d.first = ns
		}
		d.sum += v
	case metrics.Gauge:
		if d.n == 0 || v < d.min {
			d.min = v
		}
		if d.n == 0 || v > d.max {
			d.max = v
		}
		if d.n == 0 || ns >= d.last {
			d.value, d.last = v, ns
		}
	case metrics.Rate:
		if v != 0 {
			d.nonZero++
		}
	case metrics.Trend:
		if math.IsNaN(v) {
			return // as metrics.TrendSink
		}
		if d.n == 0 || v < d.min {
			d.min = v
		}
		if d.n == 0 || v > d.max {
			d.max = v
		}
		d.sum += v
		if v < 0 {
			o.pool.Record(&d.neg, metrics.TrendUnits(-v))
		} else {
			o.pool.Record(&d.pos, metrics.TrendUnits(v))
		}
	}
	d.n++
}

// writeClosed writes, in order, the intervals that ended at least grace
// before now, or all of them when now is zero, and hands them to the
// operating system at once: an interval written is on disk even if the
// process is killed a moment later.
func (o *Output) writeClosed(now time.Time) {
	idxs := o.idxs[:0]
	for idx := range o.open {
		idxs = append(idxs, idx)
	}
	slices.Sort(idxs)
	o.idxs = idxs
	wrote := false
	for _, idx := range idxs {
		start := o.header.Started.Add(time.Duration(idx) * o.interval)
		end := start.Add(o.interval)
		if !now.IsZero() && now.Sub(end) < o.grace {
			break
		}
		o.writeInterval(o.open[idx], start, end)
		delete(o.open, idx)
		o.lastIv = nil
		o.written = idx + 1
		wrote = true
	}
	if wrote && o.err == nil {
		o.err = o.buf.Flush()
	}
}

// writeInterval writes one interval's line and releases its deltas. The
// line is appended to the buffer entry by entry as json.Marshal would
// write it (appendEntry), each trend's histograms encoded in place by one
// reused encoder: at the series cap a line holds thousands of entries
// every interval, and reflection and an allocation per field would cost
// the generator's CPU.
func (o *Output) writeInterval(iv *interval, start, end time.Time) {
	b := append(o.scratch[:0], `{"interval":{"start":`...)
	b = strconv.AppendInt(b, start.UnixMilli(), 10)
	b = append(b, `,"end":`...)
	b = strconv.AppendInt(b, end.UnixMilli(), 10)
	b = append(b, `,"data":`...)
	if len(iv.order) == 0 {
		b = append(b, "null"...)
	}
	for i, id := range iv.order {
		b = append(b, "[,"[min(i, 1)])
		d := iv.deltas[id]
		e := entry{Series: id, N: d.n}
		typ := o.metric[id].Type
		switch typ {
		case metrics.Counter:
			e.Sum, e.First = num(d.sum), d.first
		case metrics.Gauge:
			e.Value, e.Last, e.Min, e.Max = num(d.value), d.last, num(d.min), num(d.max)
		case metrics.Rate:
			e.NonZero = d.nonZero
		case metrics.Trend:
			e.Sum, e.Min, e.Max = num(d.sum), num(d.min), num(d.max)
		}
		b = appendEntryFields(b, &e)
		if typ == metrics.Trend {
			b = o.appendHist(b, `,"h":"`, &d.pos)
			b = o.appendHist(b, `,"neg":"`, &d.neg)
		}
		b = append(b, '}')
		if i == len(iv.order)-1 {
			b = append(b, ']')
		}
		o.write(b)
		b = b[:0]
		*d = delta{}
		o.spare = append(o.spare, d)
		iv.deltas[id] = nil
	}
	b = append(b, "}}\n"...)
	o.write(b)
	o.scratch = b
	iv.order = iv.order[:0]
	o.spareIv = append(o.spareIv, iv)
}

// write appends b to the buffer; the first error sticks.
func (o *Output) write(b []byte) {
	if o.err != nil {
		return
	}
	if _, err := o.buf.Write(b); err != nil {
		o.err = err
	}
}

// appendHist appends key and h's encoding, then releases h; nothing when
// h holds nothing.
func (o *Output) appendHist(b []byte, key string, h *hdrhist.Hist) []byte {
	if h.TotalCount() == 0 {
		return b
	}
	b = append(b, key...)
	b = o.enc.Append(b, h)
	o.pool.Release(h)
	return append(b, '"')
}

// final writes what is still open and the end line.
func (o *Output) final() {
	o.writeClosed(time.Time{})
	o.endMu.Lock()
	run := o.end
	o.endMu.Unlock()
	end := End{Dropped: o.loop.Dropped(), Folded: o.folded}
	if run != nil {
		end.Elapsed = run.Elapsed.String()
		end.SetupData = run.SetupData
		for _, sc := range run.Scenarios {
			se := ScenarioEnd{Name: sc.Name}
			if a := sc.Open; a != nil {
				se.Open = &OpenAccount{Intended: a.Intended, OnTime: a.OnTime, Late: a.Late, LateForVU: a.LateForVU,
					Completed: a.Completed, Interrupted: a.Interrupted, Dropped: a.Dropped, PeakBacklog: a.PeakBacklog}
			}
			if b := sc.BackFill; b != nil {
				se.BackFill = &BackFill{Interval: b.Interval.String(), Requests: b.Requests, Backfilled: b.Backfilled, Unestimated: b.Unestimated}
				for _, e := range b.Estimates {
					se.BackFill.Estimates = append(se.BackFill.Estimates, int64(e))
				}
			}
			end.Scenarios = append(end.Scenarios, se)
		}
		if run.Health != nil {
			end.Health = NewHealth(run.Health)
		}
		if code := exitcode.Of(run.Err); run.Err != nil && code != exitcode.ThresholdsFailed {
			end.Stopped = &Stopped{Code: code, Error: output.Redact(run.Err.Error())}
		}
	}
	o.writeLine(line{End: &end})
	if o.err == nil {
		o.err = o.buf.Flush()
	}
	if o.folded > 0 {
		o.logf("result: %d samples past the first %d series were recorded per metric and scenario only, tagged %s=true (%s sets the cap)",
			o.folded, o.maxSeries, FoldedTag, EnvMaxSeries)
	}
}
