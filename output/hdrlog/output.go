// Package hdrlog is the HdrHistogram interval-log output (-o hdrlog=FILE)
// and the reader behind `metronome merge`.
//
// The output writes, for every time trend (http_req_duration,
// corrected_latency, schedule_lag, iteration_duration, ...) and every
// scenario, one histogram per interval (1 s, K6_HDRLOG_INTERVAL) in the
// HdrHistogram log format v1.3, which HdrHistogram's own tools
// (HistogramLogProcessor, the plotters) read. Each interval line is tagged
// with the metric and the scenario, as Tag=metric=<name>;scenario=<name>
// (the format forbids commas, spaces and line breaks in tags, so those
// characters of a name become '_').
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
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
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

	// loop runs the goroutine that records samples into the open
	// intervals and writes the closed ones.
	loop   *output.Loop
	err    error
	failed int // interval histograms whose write failed
	// unflushed counts the histograms written to buf since its last
	// flush: lost if that flush fails.
	unflushed int

	// Owned by the goroutine.
	base    time.Time
	keys    map[seriesKey]int // (metric, tags) → slot, -1 when not logged
	tags    []string          // slot → log tag
	open    []*interval       // consecutive intervals not yet written
	next    int64             // index of the first unwritten interval
	pool    []*hdrhistogram.Histogram
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
	hists []*hdrhistogram.Histogram // by slot, nil when empty
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
	o := &Output{
		path:     p.Arg,
		interval: iv,
		grace:    max(iv, 2*time.Second),
		logf:     p.Logf,
		now:      p.Now,
		keys:     map[seriesKey]int{},
	}
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
	o.buf = bufio.NewWriterSize(o.w, 64<<10)
	o.log = hdrhistogram.NewHistogramLogWriter(o.buf)
	o.base = o.now()
	err := firstErr(
		o.log.OutputComment("[Logged with metronome; values in microseconds, Interval_Max in seconds; tags metric=<name>;scenario=<name>]"),
		o.log.OutputLogFormatVersion(),
		o.log.OutputStartTime(o.base.UnixMilli()),
		o.log.OutputLegend(),
		o.buf.Flush(),
	)
	if err != nil {
		return output.RedactError(fmt.Errorf("hdrlog: writing %s: %w", o.path, err))
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
		tag := Tag(m.Name, tagValue(tags, "scenario"))
		for i, t := range o.tags {
			if t == tag {
				s = i
				break
			}
		}
		if s < 0 {
			s = len(o.tags)
			o.tags = append(o.tags, tag)
		}
	}
	o.keys[k] = s
	return s
}

func tagValue(tags *metrics.TagSet, key string) string {
	if tags == nil {
		return ""
	}
	v, _ := tags.Get(key)
	return v
}

// Tag is the log tag of a metric and scenario: metric=<m>;scenario=<s>, or
// metric=<m> without a scenario.
func Tag(metric, scenario string) string {
	t := "metric=" + clean(metric)
	if scenario != "" {
		t += ";scenario=" + clean(scenario)
	}
	return t
}

// clean replaces the characters a tag cannot hold, and the separators of
// its parts.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ',', ' ', '\t', '\r', '\n', ';', '=':
			return '_'
		}
		return r
	}, s)
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
			iv.hists = append(iv.hists, nil)
		}
		h := iv.hists[s]
		if h == nil {
			h = o.newHistogram()
			iv.hists[s] = h
		}
		_ = h.RecordValue(int64(us))
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

func (o *Output) newHistogram() *hdrhistogram.Histogram {
	if n := len(o.pool); n > 0 {
		h := o.pool[n-1]
		o.pool = o.pool[:n-1]
		return h
	}
	return hdrhistogram.New(Lowest, Highest, SignificantDigits)
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
		for s, h := range iv.hists {
			if h == nil {
				continue
			}
			wrote = true
			h.SetTag(o.tags[s])
			h.SetStartTimeMs(start.UnixMilli())
			h.SetEndTimeMs(end.UnixMilli())
			if err := o.log.OutputIntervalHistogram(h); err != nil {
				o.failed++
				if o.err == nil {
					o.err = err
				}
			} else {
				o.unflushed++
			}
			o.written++
			h.Reset()
			o.pool = append(o.pool, h)
		}
		o.open[0] = nil
		o.open = o.open[1:]
		o.next = iv.index + 1
	}
}
