// Package result is the result-file output (-o result=FILE) and its
// reader: one instance's whole measurement in a form that merges exactly
// with the other instances' of the same test, so that `metronome merge`
// can give the verdict of a test that ran on many machines.
//
// A result file is JSON Lines: one JSON object per line, each line ending
// in a newline, written and handed to the operating system interval by
// interval, so that what a killed runner wrote up to its last interval is
// on disk and reads back. Each line has one key naming its kind:
//
//	{"header": {...}}    first line: the test, the instance, its options
//	{"metric": {...}}    a metric's definition: name, type, contains
//	{"series": {...}}    a series: an id, a metric and one set of tags
//	{"interval": {...}}  what each series aggregated from start to end
//	{"end": {...}}       last line: duration, setup data, scenario accounts,
//	                     the generator's health
//
// A metric's definition comes before its first series, a series' before
// its first interval. An interval holds, per series that got samples in
// it, the exact aggregate a metrics.Sink keeps: a counter's count, sum and
// first time; a gauge's last value and time and its extremes; a rate's
// non-zero and total counts; a trend's count, exact sum, min and max and
// the HdrHistogram (V2 compressed, base64) of its values in the units and
// geometry of metrics.TrendSink, with the magnitudes of negative values
// apart. Summing a series' intervals gives exactly the sink a single run
// would have, so the thresholds and the summary of merged files are those
// of the union of the samples. A file without its end line was cut short
// (the runner was killed): its intervals still read back.
package result

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/metronome-load/metronome/health"
)

// Format and Version identify a result file in its header.
const (
	Format  = "metronome-result"
	Version = 1
)

// Header is a result file's first line.
type Header struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Metronome is the version of metronome that wrote the file.
	Metronome string `json:"metronome"`
	// Test identifies the test: a digest of the script and of the
	// options apart from the execution segment and the tags, which are
	// all the instances of one test may differ in (see Identity).
	Test string `json:"test"`
	// Script is the script's path as given, ScriptDigest the SHA-256 of
	// its bytes ("" when it could not be read).
	Script       string `json:"script"`
	ScriptDigest string `json:"scriptDigest,omitempty"`
	// Host is the machine's host name; Tags are the run's tags
	// (instance_id and testrun_name under k6-operator).
	Host string            `json:"host,omitempty"`
	Tags map[string]string `json:"tags,omitempty"`
	// Segment and Sequence are the instance's executionSegment and
	// executionSegmentSequence, "" when unset (the whole test).
	Segment  string `json:"executionSegment,omitempty"`
	Sequence string `json:"executionSegmentSequence,omitempty"`
	// Started is when the output started, Interval the length of its
	// intervals.
	Started  time.Time `json:"started"`
	Interval string    `json:"interval"`
	// MaxSeries is the writer's series cap (K6_RESULT_MAX_SERIES): the
	// reader refuses more series; absent in files before it, which had
	// DefaultMaxSeries.
	MaxSeries int `json:"maxSeries,omitempty"`
	// Options are the run's consolidated options, thresholds included.
	Options json.RawMessage `json:"options"`
}

// MetricDef is a metric's definition line.
type MetricDef struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Contains string `json:"contains"`
}

// seriesDef is a series' definition line.
type seriesDef struct {
	ID     int               `json:"id"`
	Metric string            `json:"metric"`
	Tags   map[string]string `json:"tags,omitempty"`
}

// intervalLine is an interval's line: its bounds in Unix milliseconds and
// one entry per series that got samples.
type intervalLine struct {
	Start int64   `json:"start"`
	End   int64   `json:"end"`
	Data  []entry `json:"data"`
}

// entry is one series' aggregate over one interval. N counts the samples
// (a counter's and a trend's values, a rate's values, a gauge's sets);
// the other fields are those of the series' type.
type entry struct {
	Series int   `json:"s"`
	N      int64 `json:"n"`
	// Counter: Sum and First (Unix ns). Trend: Sum, Min, Max, Hist and
	// Neg.
	Sum   num   `json:"sum,omitempty"`
	First int64 `json:"first,omitempty"`
	// Gauge: Value at Last (Unix ns), Min and Max.
	Value num   `json:"value,omitempty"`
	Last  int64 `json:"last,omitempty"`
	Min   num   `json:"min,omitempty"`
	Max   num   `json:"max,omitempty"`
	// Rate: NonZero of N.
	NonZero int64 `json:"nz,omitempty"`
	// Trend: the histograms of the values ≥ 0 and of the magnitudes of
	// the negative ones.
	Hist string `json:"h,omitempty"`
	Neg  string `json:"neg,omitempty"`
}

// End is a result file's last line.
type End struct {
	// Elapsed is the test's duration (from the end of --paused to the end
	// of teardown()), "" when the run gave none.
	Elapsed   string          `json:"elapsed,omitempty"`
	SetupData json.RawMessage `json:"setupData,omitempty"`
	Scenarios []ScenarioEnd   `json:"scenarios,omitempty"`
	// Health is what the generator's health intervals added up to
	// (health.Tally), absent when none was measured.
	Health *Health `json:"health,omitempty"`
	// Dropped counts the samples the output could not keep up with;
	// Folded those recorded past the series cap under fewer tags.
	Dropped int64 `json:"dropped,omitempty"`
	Folded  int64 `json:"folded,omitempty"`
	// Stopped says why the run ended before its end, absent when it ran
	// to its end or a threshold stopped it (the merged thresholds say so).
	Stopped *Stopped `json:"stopped,omitempty"`
}

// Stopped is what ended a run early (a signal, exec.test.abort(), a
// script error, a timeout): the exit code the run gave and its error.
type Stopped struct {
	Code  int    `json:"code"`
	Error string `json:"error"`
}

// ScenarioEnd is one started scenario's account.
type ScenarioEnd struct {
	Name     string       `json:"name"`
	Open     *OpenAccount `json:"open,omitempty"`
	BackFill *BackFill    `json:"backFill,omitempty"`
}

// OpenAccount is an open-model scenario's account (executor.Account).
type OpenAccount struct {
	Intended    int64 `json:"intended"`
	OnTime      int64 `json:"onTime"`
	Late        int64 `json:"late"`
	LateForVU   int64 `json:"lateForVU"`
	Completed   int64 `json:"completed"`
	Interrupted int64 `json:"interrupted"`
	Dropped     int64 `json:"dropped"`
	PeakBacklog int64 `json:"peakBacklog"`
}

// BackFill is a closed-model scenario's back-fill account
// (executor.BackFillAccount); Estimates are each VU's cadence estimate,
// ascending, in nanoseconds.
type BackFill struct {
	Interval    string  `json:"interval"`
	Requests    int64   `json:"requests"`
	Backfilled  int64   `json:"backfilled"`
	Unestimated int64   `json:"unestimated"`
	Estimates   []int64 `json:"estimates,omitempty"`
}

// Health is an instance's tally of its generator's health
// (health.Tally): its intervals, those in which the generator may have
// inflated latency, per reason (keyed by the reason in words, as the
// summary prints it), the extremes (times in nanoseconds; maxCPU absent
// where the platform does not tell) and the arrival counts.
type Health struct {
	Intervals  int            `json:"intervals"`
	Limited    int            `json:"limited"`
	ByReason   map[string]int `json:"byReason,omitempty"`
	Procs      int            `json:"procs"`
	MaxCPU     *float64       `json:"maxCPU,omitempty"`
	MaxSched   int64          `json:"maxSched"`
	MaxGC      int64          `json:"maxGC"`
	Arrivals   int64          `json:"arrivals"`
	LateWakeup int64          `json:"lateWakeup"`
	LateForVU  int64          `json:"lateForVU"`
}

// NewHealth is the result file's form of a tally.
func NewHealth(t *health.Tally) *Health {
	h := &Health{Intervals: t.Intervals, Limited: t.Limited, Procs: t.Procs,
		MaxSched: int64(t.MaxSched), MaxGC: int64(t.MaxGC),
		Arrivals: t.Arrivals, LateWakeup: t.LateWakeup, LateForVU: t.LateForVU}
	if !math.IsNaN(t.MaxCPU) {
		c := t.MaxCPU
		h.MaxCPU = &c
	}
	for r, n := range t.ByReason {
		if h.ByReason == nil {
			h.ByReason = map[string]int{}
		}
		h.ByReason[r.String()] = n
	}
	return h
}

// Tally is the tally the file holds; reasons it does not know (a later
// version's) are left out.
func (h *Health) Tally() health.Tally {
	t := health.Tally{Intervals: h.Intervals, Limited: h.Limited, Procs: h.Procs, MaxCPU: math.NaN(),
		MaxSched: time.Duration(h.MaxSched), MaxGC: time.Duration(h.MaxGC),
		Arrivals: h.Arrivals, LateWakeup: h.LateWakeup, LateForVU: h.LateForVU}
	if h.MaxCPU != nil {
		t.MaxCPU = *h.MaxCPU
	}
	for name, n := range h.ByReason {
		if r, ok := health.ParseReason(name); ok {
			if t.ByReason == nil {
				t.ByReason = map[health.Reason]int{}
			}
			t.ByReason[r] = n
		}
	}
	return t
}

// line is any line of a result file: exactly one field is set.
type line struct {
	Header   *Header       `json:"header,omitempty"`
	Metric   *MetricDef    `json:"metric,omitempty"`
	Series   *seriesDef    `json:"series,omitempty"`
	Interval *intervalLine `json:"interval,omitempty"`
	End      *End          `json:"end,omitempty"`
}

// num is a float64 that survives JSON whatever its value: infinities and
// NaN, which JSON numbers cannot hold, are written as the strings "+Inf",
// "-Inf" and "NaN".
type num float64

// MarshalJSON writes n as the shortest number that reads back exactly.
func (n num) MarshalJSON() ([]byte, error) { return n.append(nil), nil }

// append appends n as MarshalJSON writes it.
func (n num) append(b []byte) []byte {
	f := float64(n)
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"+Inf"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Inf"`...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (n *num) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
		*n = num(f)
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("%s is not a number", b)
	}
	*n = num(f)
	return nil
}
