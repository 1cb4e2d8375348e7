// Package hdrlog is the HdrHistogram interval-log output (-o hdrlog=FILE)
// and the reader behind `metronome merge`.
//
// The output writes, for every time trend (http_req_duration,
// corrected_latency, schedule_lag, iteration_duration, ...) and every
// scenario, one histogram per interval (1 s, K6_HDRLOG_INTERVAL) in the
// HdrHistogram log format v1.3, which HdrHistogram's own tools
// (HistogramLogProcessor, the plotters) read. The requests' raw durations
// (RawMetrics) and corrected_latency are also split by the request's name
// tag, so each endpoint's raw and corrected distributions merge exactly.
// Each interval line is tagged with its Series, as
// Tag=metric=<m>;scenario=<s>;name=<n> (Series.Tag gives the format).
//
// The names logged apart are capped (K6_HDRLOG_MAX_NAMES, default
// metrics.MaxBreakdownValues, the end-of-test summary's cap): the samples
// of the names met after the first ones are logged together under
// folded=true, and the log and the run's output say so. Memory and file
// size stay bounded when a script puts an ID in every URL.
//
// Values are recorded in microseconds (integers; metronome's time metrics
// are float milliseconds), with 3 significant digits, from 1 µs up to one
// day; larger values are clamped to one day and negative ones skipped, and
// both are counted and reported at the end. The Interval_Max column of the
// log is therefore in seconds (the writer divides by 10^6). Samples are
// placed in the interval of their own timestamp, so the intervals reflect
// when requests happened, not when the output received them.
//
// Histograms of the same configuration merge exactly, so the logs of
// several instances or runs can be combined into one distribution
// without the error of averaging percentiles.
package hdrlog

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/internal/hdrhist"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
	"github.com/metronome-load/metronome/secrets"
)

// Name is the output's name for -o.
const Name = "hdrlog"

func init() { output.Register(Name, New) }

// Histogram geometry of the log: microseconds, 3 significant digits, up to
// one day.
const (
	Lowest            = 1
	Highest           = 24 * 60 * 60 * 1_000_000
	SignificantDigits = 3
)

// EnvInterval names the variable that sets the interval length.
const EnvInterval = "K6_HDRLOG_INTERVAL"

// DefaultInterval is the length of one interval.
const DefaultInterval = time.Second

// EnvMaxNames names the variable that sets how many request names are
// logged apart.
const EnvMaxNames = "K6_HDRLOG_MAX_NAMES"

// maxKeys bounds the cache from (metric, tag set) to slot, as the metrics
// engine bounds its own: a cleared cache is rebuilt from the slots.
const maxKeys = 1 << 16

// inputBuffer is how many batches may wait for the output's goroutine.
const inputBuffer = 4096

// stopTimeout bounds Stop's wait for a destination that takes nothing.
const stopTimeout = 10 * time.Second

// Output writes the interval log.
type Output struct {
	path     string
	interval time.Duration
	// grace is how long an interval stays open after its end for samples
	// that arrive late.
	grace time.Duration
	w     io.Writer
	file  *os.File
	buf   *bufio.Writer
	log   *hdrhistogram.HistogramLogWriter
	logf  func(string, ...any)
	now   func() time.Time
	// secrets hides fetched secrets in metric names and in the names and
	// scenarios of tags.
	secrets *secrets.Store

	// loop runs the goroutine that records samples into the open
	// intervals and writes the closed ones.
	loop   *output.Loop
	err    error
	failed int // interval histograms whose write failed
	// unflushed counts the histograms written to buf since its last
	// flush: lost if that flush fails.
	unflushed int

	// maxNames is how many request names are logged apart.
	maxNames int

	// Owned by the goroutine.
	base  time.Time
	keys  map[seriesKey]int // (metric, tags) → slot, -1 when not logged
	slots map[string]int    // log tag → slot
	tags  []string          // slot → log tag
	// names are the request names logged apart; folded those past
	// maxNames, logged together, kept (for their count) up to maxKeys.
	names  map[string]bool
	folded map[string]bool
	// cutLogged is set once a name or scenario too long for a line was
	// cut and the run told so.
	cutLogged bool
	open      []*interval // consecutive intervals not yet written
	next      int64       // index of the first unwritten interval
	hists     *hdrhist.Pool
	// enc encodes every interval line with one compressor, and line is
	// the buffer it encodes into.
	enc     *hdrhist.Encoder
	line    []byte
	skipped int64 // negative values
	clamped int64 // values above Highest
	written int
}

type seriesKey struct {
	metric *metrics.Metric
	tags   *metrics.TagSet
}

type interval struct {
	index int64
	// hists are by slot. They start sparse, so a quiet series (most
	// request names) costs a few KB per open interval, not 230 KB.
	hists []hdrhist.Hist
}

// New builds the output; p.Arg is the file ("-" for standard output).
func New(p output.Params) (output.Output, error) {
	if p.Arg == "" {
		return nil, fmt.Errorf("the hdrlog output needs a file name: -o hdrlog=results.hlog")
	}
	iv := DefaultInterval
	if v := p.Env[EnvInterval]; v != "" {
		d, err := duration.Parse(v)
		if err != nil || d < time.Millisecond {
			return nil, fmt.Errorf("%s: %q is not a duration of at least 1ms", EnvInterval, v)
		}
		iv = d
	}
	maxNames := metrics.MaxBreakdownValues
	if v := p.Env[EnvMaxNames]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%s: %q is not a number of names (0 or more)", EnvMaxNames, v)
		}
		maxNames = n
	}
	o := &Output{
		path:     p.Arg,
		interval: iv,
		grace:    max(iv, 2*time.Second),
		logf:     p.Logf,
		now:      p.Now,
		maxNames: maxNames,
		secrets:  p.Secrets,
		keys:     map[seriesKey]int{},
		slots:    map[string]int{},
		names:    map[string]bool{},
		folded:   map[string]bool{},
		hists:    hdrhist.NewPool(Lowest, Highest, SignificantDigits),
	}
	o.enc = o.hists.NewEncoder()
	o.loop = output.NewLoop(inputBuffer, min(iv, time.Second), output.LoopSteps{
		Ingest: o.ingest,
		Tick:   func() { o.writeClosed(o.now()) },
		Final:  func() { o.writeClosed(time.Time{}) },
	})
	if o.logf == nil {
		o.logf = func(string, ...any) {}
	}
	if o.now == nil {
		o.now = time.Now
	}
	if p.Arg == "-" {
		o.w = p.Stdout
		if o.w == nil {
			o.w = os.Stdout
		}
	}
	return o, nil
}

// Description is shown in the banner.
func (o *Output) Description() string { return fmt.Sprintf("hdrlog (%s)", output.Redact(o.path)) }

// Start creates the file, writes the header and starts the goroutine.
func (o *Output) Start() error {
	if o.w == nil {
		f, err := os.Create(o.path)
		if err != nil {
			return output.RedactError(fmt.Errorf("hdrlog: cannot create %s: %w", o.path, err))
		}
		o.file, o.w = f, f
	}
	if err := o.header(); err != nil {
		return output.RedactError(err)
	}
	o.loop.Start()
	return nil
}

// header starts the log at o.now(), the base of its intervals.
func (o *Output) header() error {
	o.buf = bufio.NewWriterSize(o.w, 64<<10)
	o.log = hdrhistogram.NewHistogramLogWriter(o.buf)
	o.base = o.now()
	err := firstErr(
		o.log.OutputComment("[Logged with metronome; values in microseconds, Interval_Max in seconds; "+
			"tags metric=<m>;scenario=<s>;name=<n>;outcome=<o>, values percent-encoded]"),
		o.log.OutputLogFormatVersion(),
		o.log.OutputStartTime(o.base.UnixMilli()),
		o.log.OutputLegend(),
		o.buf.Flush(),
	)
	if err != nil {
		return fmt.Errorf("hdrlog: writing %s: %w", o.path, err)
	}
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

// Stop writes every open interval and closes the file.
func (o *Output) Stop() error {
	return o.loop.Stop(stopTimeout, func(stuck bool) error {
		return output.RedactError(o.finish(stuck))
	})
}

// finish closes the log once the goroutine is done and says what was lost.
func (o *Output) finish(stuck bool) error {
	if stuck {
		// Writing to a destination that takes nothing: the goroutine is
		// left behind, and the log is incomplete.
		return fmt.Errorf("hdrlog: %s took no more data for %s; the log is incomplete", o.path, stopTimeout)
	}
	if err := o.buf.Flush(); err != nil && o.err == nil {
		o.err = err
	}
	if o.file != nil {
		if err := o.file.Close(); err != nil && o.err == nil {
			o.err = err
		}
	}
	var err error
	if o.err != nil {
		err = fmt.Errorf("hdrlog: writing %s: %w; at least %d interval histograms were not written", o.path, o.err, o.failed)
	} else if n := o.loop.Dropped(); n > 0 {
		err = fmt.Errorf("hdrlog: %d samples were dropped because the output's buffer was full; %s is incomplete", n, o.path)
	}
	if o.skipped > 0 {
		o.logf("hdrlog: %d negative values were not logged", o.skipped)
	}
	if o.clamped > 0 {
		o.logf("hdrlog: %d values above one day were logged as one day", o.clamped)
	}
	if n := len(o.folded); n > 0 {
		o.logf("hdrlog: %s were logged together under folded=true (%s sets the cap)", FoldedNames(n, n == maxKeys, o.maxNames), EnvMaxNames)
	}
	return err
}

// slot returns the histogram slot of a series, -1 when it is not logged:
// only time trends are.
func (o *Output) slot(m *metrics.Metric, tags *metrics.TagSet) int {
	k := seriesKey{m, tags}
	if s, ok := o.keys[k]; ok {
		return s
	}
	s := -1
	if m.Type == metrics.Trend && m.Contains == metrics.Time {
		tag := o.series(m.Name, tags).Tag()
		var ok bool
		if s, ok = o.slots[tag]; !ok {
			s = len(o.tags)
			o.tags = append(o.tags, tag)
			o.slots[tag] = s
		}
	}
	if len(o.keys) >= maxKeys {
		clear(o.keys)
	}
	o.keys[k] = s
	return s
}

// series is the Series a sample of metric with tags is logged in.
func (o *Output) series(metric string, tags *metrics.TagSet) Series {
	// A custom metric's name may be a fetched secret (new Trend(secret)).
	s := Series{Metric: o.secrets.Redact(metric), Scenario: o.cut("scenario", o.secrets.Redact(tagValue(tags, "scenario")))}
	if !PerName(metric) {
		return s
	}
	if metric == metrics.CorrectedLatencyName {
		s.Outcome = tagValue(tags, "outcome")
	}
	// Names come from scripts and URLs, which may hold a fetched secret.
	name := o.cut("name", o.secrets.Redact(tagValue(tags, "name")))
	switch {
	case name == "":
	case o.names[name]:
		s.Name = name
	case len(o.names) < o.maxNames:
		o.names[name] = true
		s.Name = name
	default:
		s.Folded = true
		if !o.folded[name] && len(o.folded) < maxKeys {
			if len(o.folded) == 0 {
				o.foldComment(name)
			}
			o.folded[name] = true
		}
	}
	return s
}

// MaxTagValueBytes bounds a name or scenario in a line's tag, once
// percent-encoded: two of them and the largest histogram metronome writes
// (about 340 KB of base64) stay within MaxLineBytes, the longest line the
// log's readers take, so that the output never writes a line its own
// reader skips.
const MaxTagValueBytes = 1 << 20

// cut returns v, a tag's value, shortened at a character's boundary so
// that it is at most MaxTagValueBytes once encoded, and marked as cut;
// the first cut of the run is logged.
func (o *Output) cut(tag, v string) string {
	if encodedLen(v) <= MaxTagValueBytes {
		return v
	}
	mark := fmt.Sprintf("…[cut from %d bytes]", len(v))
	n, room := 0, MaxTagValueBytes-encodedLen(mark)
	for i, r := range v {
		w := encodedLen(string(r))
		if room < w {
			n = i
			break
		}
		room -= w
	}
	if !o.cutLogged {
		o.cutLogged = true
		o.logf("hdrlog: a request %s of %d bytes is logged cut to its first %d bytes (and so are later ones past %d bytes encoded): the log's readers take lines of at most %d MiB",
			tag, len(v), n, MaxTagValueBytes, MaxLineBytes>>20)
	}
	return v[:n] + mark
}

// encodedLen is the length of v percent-encoded as in a tag.
func encodedLen(v string) int {
	n := len(v)
	for i := 0; i < len(v); i++ {
		if escaped(v[i]) {
			n += 2
		}
	}
	return n
}

// foldComment notes in the log, where it happens, that names are folded
// from now on.
func (o *Output) foldComment(first string) {
	var b strings.Builder
	escape(&b, first)
	if err := o.log.OutputComment(fmt.Sprintf("[metronome: more than %d request names; from here on, names not seen before (the first: %s) are logged together under folded=true instead of name=<n>; %s sets the cap]",
		o.maxNames, b.String(), EnvMaxNames)); err != nil && o.err == nil {
		o.err = err
	}
	o.logf("hdrlog: more than %d request names; later names (the first: %q) are logged together under folded=true (%s sets the cap)", o.maxNames, first, EnvMaxNames)
}

func tagValue(tags *metrics.TagSet, key string) string {
	if tags == nil {
		return ""
	}
	v, _ := tags.Get(key)
	return v
}

func (o *Output) ingest(batch []metrics.Sample) {
	for i := range batch {
		smp := &batch[i]
		if smp.Metric == nil || smp.Metric.Type != metrics.Trend {
			continue
		}
		s := o.slot(smp.Metric, smp.Tags)
		if s < 0 || math.IsNaN(smp.Value) {
			continue
		}
		us := math.Round(smp.Value * 1000)
		switch {
		case us < 0:
			o.skipped++
			continue
		case us > Highest:
			o.clamped++
			us = Highest
		}
		t := smp.Time
		if t.IsZero() {
			t = o.now()
		}
		iv := o.intervalFor(t)
		for len(iv.hists) <= s {
			iv.hists = append(iv.hists, hdrhist.Hist{})
		}
		o.hists.Record(&iv.hists[s], int64(us))
	}
}

// intervalFor returns the open interval a sample at t belongs to. Samples
// older than every open interval (late ones, or from before the start) go
// to the oldest open one.
func (o *Output) intervalFor(t time.Time) *interval {
	idx := int64(t.Sub(o.base) / o.interval)
	if t.Before(o.base) {
		idx = 0
	}
	idx = max(idx, o.next)
	first := o.next
	if len(o.open) > 0 {
		first = o.open[0].index
	}
	for first+int64(len(o.open)) <= idx {
		o.open = append(o.open, &interval{index: first + int64(len(o.open))})
	}
	return o.open[idx-first]
}

// writeClosed writes the intervals that ended at least grace before now, or
// all of them when now is zero, and hands them to the operating system at
// once: an interval written is on disk even if the process is killed
// (kill -9, OOM, a second Ctrl-C) a moment later.
func (o *Output) writeClosed(now time.Time) {
	wrote := false
	defer func() {
		if wrote {
			if err := o.buf.Flush(); err != nil {
				o.failed += o.unflushed
				if o.err == nil {
					o.err = err
				}
			}
			o.unflushed = 0
		}
	}()
	for len(o.open) > 0 {
		iv := o.open[0]
		start := o.base.Add(time.Duration(iv.index) * o.interval)
		end := start.Add(o.interval)
		if !now.IsZero() && now.Sub(end) < o.grace {
			return
		}
		for s := range iv.hists {
			h := &iv.hists[s]
			if h.TotalCount() == 0 {
				continue
			}
			wrote = true
			line, err := o.enc.AppendLogLine(o.line[:0], h, o.tags[s], start.UnixMilli(), end.UnixMilli())
			if o.line = line; err == nil {
				_, err = o.buf.Write(line)
			}
			o.hists.Release(h)
			if err != nil {
				o.failed++
				if o.err == nil {
					o.err = err
				}
			} else {
				o.unflushed++
			}
			o.written++
		}
		o.open[0] = nil
		o.open = o.open[1:]
		o.next = iv.index + 1
	}
}
