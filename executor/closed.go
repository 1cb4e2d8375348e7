package executor

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/executor/segment"
	"github.com/metronome-load/metronome/metrics"
)

// minClosedDuration is the shortest duration or maxDuration k6 accepts for
// constant-vus and the iterations executors.
const minClosedDuration = time.Second

// defaultMaxDuration is the iterations executors' default maxDuration.
const defaultMaxDuration = 10 * time.Minute

// closedRun is the state the closed-model executors share while running:
// the scenario's deadlines, the VU accounting and the progress counters.
// Progress reads it from other goroutines, so every field that changes
// during a run is atomic.
type closedRun struct {
	deps     Deps
	scenario *Scenario
	interval ExpectedInterval
	regular  time.Duration
	maxVUs   int
	tally    backFillTally
	// epoch is 1 ns before the run was made: what a closedVU's last
	// start is an offset from.
	epoch time.Time

	Tracker
	index atomic.Int64 // next local iteration index
	// stripe maps local iteration indices to global ones (nil: the same).
	stripe *segment.Tuple

	errOnce sync.Once
	err     error
}

func newClosedRun(deps Deps, s *Scenario, regular time.Duration, interval ExpectedInterval, maxVUs int) *closedRun {
	r := &closedRun{deps: deps, scenario: s, regular: regular, interval: interval, maxVUs: maxVUs}
	r.tally.acc.Interval = interval
	if deps.Clock != nil {
		r.epoch = deps.Clock.Now().Add(-time.Nanosecond)
	}
	return r
}

// begin records the start and returns the hard-stop context, which ends at
// the regular end plus gracefulStop or when ctx is cancelled, and the
// regular end, after which no iteration starts.
func (r *closedRun) begin(ctx context.Context) (context.Context, context.CancelFunc, time.Time) {
	now := r.deps.Clock.Now()
	r.Begin(now)
	hard, cancel := withClockTimeout(ctx, r.deps.Clock, r.regular+r.scenario.GracefulStop)
	return hard, cancel, now.Add(r.regular)
}

// finish freezes the elapsed time and marks the run done.
func (r *closedRun) finish() {
	r.End(min(r.deps.Clock.Now().Sub(r.Began()), r.regular+r.scenario.GracefulStop))
}

// canStart reports whether a VU may start another iteration: the run was
// neither stopped nor aborted and the regular duration has not passed.
func (r *closedRun) canStart(hard context.Context, regularEnd time.Time) bool {
	return hard.Err() == nil && r.deps.Clock.Now().Before(regularEnd)
}

// acquire takes a VU from the pool and counts it as held. A failure other
// than the run ending is kept as the run's error and stops the run. When
// the scenario back-fills, the VU comes wrapped with its own cadence
// estimate and tallies (a closedVU), which iterate and release unwrap.
func (r *closedRun) acquire(hard context.Context, stop context.CancelFunc) (VU, bool) {
	vu, err := r.deps.Pool.Get(hard)
	if err != nil {
		if hard.Err() == nil {
			r.errOnce.Do(func() { r.err = fmt.Errorf("scenarios.%s: getting a VU: %w", r.scenario.Name, err) })
			stop()
		}
		return nil, false
	}
	r.Active.Add(1)
	if r.deps.State != nil {
		r.deps.State.VUsActive.Add(1)
	}
	if r.interval.Enabled() {
		return &closedVU{VU: vu}, true
	}
	return vu, true
}

// release returns a held VU to the pool, and its back-fill tallies to the
// scenario's.
func (r *closedRun) release(vu VU) {
	if w, ok := vu.(*closedVU); ok {
		r.tally.add(w)
		vu = w.VU
	}
	r.deps.Pool.Put(vu)
	r.Active.Add(-1)
	if r.deps.State != nil {
		r.deps.State.VUsActive.Add(-1)
	}
}

// iterate runs the instance's iteration i (0-based) on vu and accounts for
// it. A scenario that back-fills has wrapped vu in a closedVU: its
// requests back-fill corrected_latency with the hand-set interval or with
// the VU's estimate (none yet: no back-fill).
//
// An idle VU's goroutine sleeps inside vu.Run, below this frame, and
// every byte of frame above the script counts towards the 4 KB its stack
// must stay within (docs/performance.md): so iterate is the one frame
// between the worker and Run, and holds only what the accounting needs
// after Run (the iteration is built again there rather than kept); the
// estimate and the accounting run in calls that are not on the stack
// meanwhile.
func (r *closedRun) iterate(ctx context.Context, vu VU, i int64) {
	run, fill := r.ready(vu)
	res := run.Run(ctx, Iteration{Scenario: r.scenario, Index: r.stripe.Global(i), LocalIndex: i, BackFill: fill})
	r.account(vu, i, fill, res)
}

// ready returns the VU to run an iteration on, unwrapped, and its
// back-fill for the iteration starting now (nil when the scenario does
// not back-fill). The estimate first takes in the interval from the VU's
// previous start to now, when the previous iteration completed without an
// exception; the iteration's own interval is known only when the next one
// starts.
//
//go:noinline
func (r *closedRun) ready(vu VU) (VU, *BackFiller) {
	w, ok := vu.(*closedVU)
	if !ok {
		return vu, nil
	}
	w.fill.Interval = r.interval.Fixed
	if r.interval.Mode == IntervalAuto {
		now := r.deps.Clock.Now().Sub(r.epoch)
		if w.last != 0 {
			w.cadence.Observe(now - w.last)
		}
		w.last = now
		est, ok := w.cadence.Estimate()
		if !ok {
			w.unestimated++
		}
		w.fill.Interval = est
	}
	return w.VU, &w.fill
}

// account accounts for iteration i, which vu (as iterate got it) ran with
// fill, and counts it as completed or interrupted. A back-filling VU's
// next estimate skips the interval after an iteration that did not
// complete.
//
//go:noinline
func (r *closedRun) account(vu VU, i int64, fill *BackFiller, res Result) {
	if w, ok := vu.(*closedVU); ok {
		if res.Outcome != Completed {
			w.last = 0
		}
		vu = w.VU
	}
	it := Iteration{Scenario: r.scenario, Index: r.stripe.Global(i), LocalIndex: i, BackFill: fill}
	if r.deps.Account(vu, it, res) {
		r.Completed.Add(1)
	} else {
		r.Interrupted.Add(1)
	}
}

// drop emits one dropped_iterations sample of n iterations that never
// started, with the executor-level tags.
func (r *closedRun) drop(at time.Time, n int64) {
	r.Dropped.Add(n)
	r.deps.Recorder.Record(metrics.Sample{Metric: r.deps.Metrics.DroppedIterations, Tags: r.deps.Tags, Time: at, Value: float64(n)})
}

// progress reports Total as the regular duration plus gracefulStop, as
// Config.MaxDuration does, so a scenario's bar ends where its time can end.
func (r *closedRun) progress() Progress {
	return r.Progress(r.deps.Clock.Now(), r.regular+r.scenario.GracefulStop, r.maxVUs)
}

// withClockTimeout is context.WithTimeout on the given clock, so that the
// deadline follows virtual time in tests.
func withClockTimeout(parent context.Context, c clock.Clock, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	t := c.NewTimer(d)
	go func() {
		defer t.Stop()
		select {
		case <-t.C():
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// countOption validates an optional count that must be greater than zero.
func countOption(scenario, option string, v *int64, def int64) (int64, error) {
	if v == nil {
		return def, nil
	}
	if *v <= 0 {
		return 0, fmt.Errorf("scenarios.%s.%s: must be greater than 0, got %d", scenario, option, *v)
	}
	return *v, nil
}

// durationOption validates a duration of at least minClosedDuration; a
// missing one takes def, or is an error when def is zero.
func durationOption(scenario, option string, v *duration.Duration, def time.Duration) (time.Duration, error) {
	if v == nil {
		if def == 0 {
			return 0, fmt.Errorf("scenarios.%s.%s: required: a duration of at least %s", scenario, option, minClosedDuration)
		}
		return def, nil
	}
	if d := v.Std(); d < minClosedDuration {
		return 0, fmt.Errorf("scenarios.%s.%s: must be at least %s, got %s", scenario, option, minClosedDuration, d)
	}
	return v.Std(), nil
}

// expectedIntervalOption returns metronome's expectedInterval as the
// scenario set it (decoding validated it); absent leaves it unset.
func expectedIntervalOption(v *ExpectedInterval) ExpectedInterval {
	if v == nil {
		return ExpectedInterval{}
	}
	return *v
}

// fitsHardStop checks that the regular duration plus gracefulStop does not
// overflow a time.Duration.
func fitsHardStop(s *Scenario, option string, regular time.Duration) error {
	if regular > math.MaxInt64-s.GracefulStop {
		return fmt.Errorf("scenarios.%s.%s: is too long", s.Name, option)
	}
	return nil
}

// bannerFacts formats the parenthesised facts of a closed-model banner:
// the executor's own, then exec, startTime, expectedInterval and
// gracefulStop when they differ from the defaults.
func bannerFacts(s *Scenario, interval ExpectedInterval, facts ...string) string {
	if s.Exec != "" && s.Exec != "default" {
		facts = append(facts, "exec: "+s.Exec)
	}
	if s.StartTime > 0 {
		facts = append(facts, "startTime: "+s.StartTime.String())
	}
	if interval.Enabled() {
		facts = append(facts, "expectedInterval: "+interval.String())
	}
	if s.GracefulStop > 0 {
		facts = append(facts, "gracefulStop: "+s.GracefulStop.String())
	}
	if len(facts) == 0 {
		return ""
	}
	return " (" + strings.Join(facts, ", ") + ")"
}
