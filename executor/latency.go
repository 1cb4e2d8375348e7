package executor

import (
	"time"

	"github.com/metronome-load/metronome/metrics"
)

// Latency turns the requests of one iteration into corrected_latency
// samples, as docs/DESIGN.md §2.2 defines them: one per request, with the
// request's own tags, worth what the user who arrived at the iteration's
// intended start waited for that response. In an open model that is the
// request's own duration plus how late the iteration started; in a closed
// model that back-fills, the duration back-filled from the VU's cadence.
// What the script does between requests (sleep, timers, its own work) is
// in no value: think time is never latency.
//
// The executor fixes everything a Latency needs before the iteration runs
// (Iteration.Latency); the VU hands it to the modules that make requests,
// which call Record once per request. The zero Latency records nothing:
// setup, teardown, and closed-model scenarios that do not back-fill.
type Latency struct {
	mode latencyMode
	// lag is how late the iteration started (open model).
	lag time.Duration
	// fill is the VU's back-fill state (closed model).
	fill *BackFiller
	// interval is fill's interval when the iteration started.
	interval time.Duration
}

type latencyMode uint8

const (
	latencyOff latencyMode = iota
	latencyOpen
	latencyBackFill
)

// BackFiller is the back-fill state of one VU of a closed-model scenario
// that back-fills (docs/DESIGN.md §2.3): the interval its requests are
// back-filled with and the tallies of the scenario's account. The executor
// sets Interval before each iteration; the requests of the iteration add
// to the tallies. Only the VU's own goroutine touches it while the VU runs.
type BackFiller struct {
	// Interval is the VU's cadence: the hand-set expectedInterval or the
	// estimate from the VU's iterations so far; zero while it has none,
	// and then requests record their duration alone.
	Interval time.Duration
	// Requests counts the requests recorded; Filled the samples added.
	Requests, Filled int64
}

// Latency returns how the requests of it, started at start, record
// corrected_latency: with the lag start − Intended when the iteration has
// an intended start, back-filled when BackFill is set, not at all
// otherwise.
func (it Iteration) Latency(start time.Time) Latency {
	switch {
	case !it.Intended.IsZero():
		return Latency{mode: latencyOpen, lag: max(start.Sub(it.Intended), 0)}
	case it.BackFill != nil:
		return Latency{mode: latencyBackFill, fill: it.BackFill, interval: it.BackFill.Interval}
	}
	return Latency{}
}

// Detached returns a copy of l that records on another goroutine than
// its VU's while the iteration runs: in a closed model it tallies its
// back-fills into a BackFiller of its own, which only the VU's goroutine
// may add to l's with Join. The copy's records are l's otherwise.
func (l Latency) Detached() Latency {
	if l.fill != nil {
		l.fill = &BackFiller{Interval: l.interval}
	}
	return l
}

// Join adds to l's account, on the VU's goroutine, what d, made by
// l.Detached, tallied.
func (l Latency) Join(d Latency) {
	if l.fill == nil || d.fill == nil || d.fill == l.fill {
		return
	}
	l.fill.Requests += d.fill.Requests
	l.fill.Filled += d.fill.Filled
}

// Enabled reports whether requests record corrected_latency at all.
func (l Latency) Enabled() bool { return l.mode != latencyOff }

// Lag is how late the iteration started: zero in a closed model.
func (l Latency) Lag() time.Duration { return l.lag }

// Record records the corrected_latency of one request that took d and was
// answered at end, into m (the run's corrected_latency) with the request's
// own tags: d plus the lag in an open model; d back-filled (BackFill) in a
// closed one.
func (l Latency) Record(rec metrics.Recorder, m *metrics.Metric, tags *metrics.TagSet, end time.Time, d time.Duration) {
	switch l.mode {
	case latencyOpen:
		rec.Record(metrics.Sample{Metric: m, Tags: tags, Time: end, Value: metrics.Milliseconds(d + l.lag)})
	case latencyBackFill:
		BackFill(rec, m, tags, end, d, l.interval)
		l.fill.Requests++
		l.fill.Filled += BackFilled(d, l.interval)
	}
}

// Interrupted records a request that was still in flight when its
// iteration was cut off at stop (the hard stop or an abort): the user has
// waited stop − sent for it, plus the lag, and is still waiting. The
// sample, and in a closed model its back-fill, is tagged
// outcome=interrupted.
func (l Latency) Interrupted(rec metrics.Recorder, m *metrics.Metric, tags *metrics.TagSet, sent, stop time.Time) {
	if l.mode == latencyOff {
		return
	}
	l.Record(rec, m, tags.With("outcome", "interrupted"), stop, max(stop.Sub(sent), 0))
}

// BackFill records d into metric, and when d is at least twice the
// interval also d−I, d−2I, … down to values ≥ I: the requests a closed
// loop would have sent had it kept its cadence I while it waited
// (HdrHistogram's recordValueWithExpectedInterval). The added samples are
// tagged backfilled=true so the summary can say they were not measured.
func BackFill(rec metrics.Recorder, metric *metrics.Metric, tags *metrics.TagSet, at time.Time, d, interval time.Duration) {
	rec.Record(metrics.Sample{Metric: metric, Tags: tags, Time: at, Value: metrics.Milliseconds(d)})
	if interval <= 0 || d < 2*interval {
		// Nothing to add: skip the tag-set lookup, which most requests
		// (shorter than twice their interval) would pay for nothing.
		return
	}
	filled := tags.With("backfilled", "true")
	for v := d - interval; v >= interval; v -= interval {
		rec.Record(metrics.Sample{Metric: metric, Tags: filled, Time: at, Value: metrics.Milliseconds(v)})
	}
}

// BackFilled is how many samples BackFill adds to a duration d for the
// given interval: d−I, d−2I, … while ≥ I.
func BackFilled(d, interval time.Duration) int64 {
	if interval <= 0 || d < 2*interval {
		return 0
	}
	return int64(d/interval) - 1
}
