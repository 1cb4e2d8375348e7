package executor

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/metronome-load/metronome/metrics"
)

// LatencyTrendTag is the tag on the corrected_latency samples that samples
// of a latency trend (options.latencyTrends) record: the trend's name, so
// that corrected_latency{metric:redis_duration} selects that operation's
// and nothing else. The built-in protocols' samples do not carry it.
const LatencyTrendTag = "metric"

// LatencyTrendSubmetrics are the submetrics of corrected_latency that
// select the operations of each latency trend by LatencyTrendTag: a run,
// a merge and an audit show them under corrected_latency.
func LatencyTrendSubmetrics(names []string) []string {
	subs := make([]string, len(names))
	for i, name := range names {
		subs[i] = metrics.CorrectedLatencyName + "{" + LatencyTrendTag + ":" + name + "}"
	}
	return subs
}

// ResolveLatencyTrends returns the metrics of reg that names
// (options.latencyTrends) name, in order, once the script's init context
// has defined its metrics and its modules' (the engine calls it after the
// first VU is initialised, as it checks thresholds then). Each must be a
// Trend of time; config.Options.Validate has already refused selectors and
// built-in metrics. Every problem is reported, one sentence each, with
// the option path.
func ResolveLatencyTrends(reg *metrics.Registry, names []string) ([]*metrics.Metric, error) {
	var trends []*metrics.Metric
	var errs []error
	for i, name := range names {
		path := fmt.Sprintf("options.latencyTrends[%d]", i)
		m := reg.Get(name)
		switch {
		case m == nil:
			errs = append(errs, fmt.Errorf("%s: metric %q is not defined: neither the script's init context nor a module it imports defines it", path, name))
		case m.Type != metrics.Trend:
			errs = append(errs, fmt.Errorf("%s: %q is a %s metric; only a Trend of time qualifies (in a script, new Trend(%q, true))", path, name, m.Type, name))
		case m.Contains != metrics.Time:
			errs = append(errs, fmt.Errorf("%s: %q is a Trend of plain numbers, not of time; declare it new Trend(%q, true) so that its values are milliseconds", path, name, name))
		case !slices.Contains(trends, m):
			trends = append(trends, m)
		}
	}
	return trends, errors.Join(errs...)
}

// LatencyRecorder is the recorder a VU hands its modules when the run has
// latency trends: every sample goes on to the VU's own recorder, and a
// sample of one of the trends, being one operation's own time, also
// records that operation's corrected_latency through the iteration's
// Latency — the lag added in an open model, back-filled in a closed one,
// nothing in setup and teardown — exactly as a k6/http request's does,
// with the sample's tags plus LatencyTrendTag. So a script's Trend.add, an
// extension's pushed sample or any module's recording counts alike: the
// hook is where samples enter the VU's recorder, not in any module. Like
// the recorder it wraps, it is used on the VU's goroutine only.
type LatencyRecorder struct {
	next      metrics.Recorder
	latency   *Latency
	corrected *metrics.Metric
	trends    []*metrics.Metric
}

var (
	_ metrics.Parker         = (*LatencyRecorder)(nil)
	_ metrics.MetadataSetter = (*LatencyRecorder)(nil)
)

// maxMillis bounds the values a time.Duration holds, in milliseconds.
const maxMillis = float64(math.MaxInt64) / float64(time.Millisecond)

// NewLatencyRecorder returns a recorder that records into next and, for
// the samples of trends, also into corrected, through *latency as it is
// when each sample is recorded (the VU's current iteration's).
func NewLatencyRecorder(next metrics.Recorder, latency *Latency, corrected *metrics.Metric, trends []*metrics.Metric) *LatencyRecorder {
	return &LatencyRecorder{next: next, latency: latency, corrected: corrected, trends: trends}
}

// Record records s, and its operation's corrected_latency when s is a
// sample of a latency trend in an iteration that records them. A value
// that is not a duration (negative, NaN, infinite) adds nothing.
func (r *LatencyRecorder) Record(s metrics.Sample) {
	r.next.Record(s)
	if r.latency.mode == latencyOff || !slices.Contains(r.trends, s.Metric) {
		return
	}
	if !(s.Value >= 0 && s.Value < maxMillis) {
		return
	}
	d := time.Duration(math.Round(s.Value * float64(time.Millisecond)))
	tags := s.Tags
	if tags == nil {
		tags = metrics.EmptyTags
	}
	r.latency.Record(r.next, r.corrected, tags.With(LatencyTrendTag, s.Metric.Name), s.Time, d)
}

// Park parks the wrapped recorder, when it can be parked.
func (r *LatencyRecorder) Park() {
	if p, ok := r.next.(metrics.Parker); ok {
		p.Park()
	}
}

// Unpark gives the wrapped recorder back to its owner.
func (r *LatencyRecorder) Unpark() {
	if p, ok := r.next.(metrics.Parker); ok {
		p.Unpark()
	}
}

// SetMetadata sets the metadata of the wrapped recorder's samples, when
// it stamps any.
func (r *LatencyRecorder) SetMetadata(m map[string]string) {
	if ms, ok := r.next.(metrics.MetadataSetter); ok {
		ms.SetMetadata(m)
	}
}
