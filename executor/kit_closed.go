package executor

import (
	"context"
	"sync"
	"time"

	"github.com/metronome-load/metronome/executor/segment"
)

// ClosedLoop is the closed-model half of the executor kit: the machinery
// the built-in closed executors share, public so that an extension's
// closed executor is only what is specific to it. It owns the scenario's
// deadlines (no iteration starts after the regular duration; the hard stop
// comes gracefulStop later and interrupts what still runs), takes VUs from
// the pool and gives them back, accounts for every iteration (with the
// expectedInterval back-fill) and for every one dropped, and keeps the
// counters Progress reports.
//
// The common shape is Run: n workers, each with a VU, each calling body.
// An executor with another shape calls Begin, then Acquire, CanStart,
// Iterate and Release from its own goroutines, then Finish.
type ClosedLoop struct {
	run        *closedRun
	hard       context.Context
	stop       context.CancelFunc
	regularEnd time.Time
	wg         sync.WaitGroup // the workers Go started
	dropMu     sync.Mutex     // Deps.Recorder is not safe for concurrent use
}

// NewClosedLoop returns the loop of one closed-model scenario: iterations
// may start for regular after Begin, on at most maxVUs VUs; interval is
// its expectedInterval (the zero value: no back-fill) and stripe maps the
// instance's iteration indices to global ones (nil: the whole test).
func NewClosedLoop(deps Deps, sc *Scenario, regular time.Duration, maxVUs int, interval ExpectedInterval, stripe *segment.Tuple) *ClosedLoop {
	r := newClosedRun(deps, sc, regular, interval, maxVUs)
	r.stripe = stripe
	return &ClosedLoop{run: r}
}

// Run runs the scenario with n workers. Each takes a VU from the pool and
// calls body with the context that ends at the hard stop (or an abort),
// the worker's number (0-based) and the VU, then gives the VU back. A nil
// body loops iterations while CanStart. Run returns when every VU is back,
// with the pool's error if getting a VU failed.
func (l *ClosedLoop) Run(ctx context.Context, n int, body func(ctx context.Context, worker int, vu VU)) error {
	l.Begin(ctx)
	l.Go(n, body)
	l.Wait()
	return l.Finish()
}

// Begin starts the scenario's clock and returns the hard-stop context.
func (l *ClosedLoop) Begin(ctx context.Context) context.Context {
	l.hard, l.stop, l.regularEnd = l.run.begin(ctx)
	return l.hard
}

// Go starts n workers as Run does, after Begin; Wait waits for them.
func (l *ClosedLoop) Go(n int, body func(ctx context.Context, worker int, vu VU)) {
	for w := range n {
		l.wg.Go(func() {
			vu, ok := l.Acquire()
			if !ok {
				return
			}
			defer l.Release(vu)
			if body != nil {
				body(l.hard, w, vu)
				return
			}
			for l.CanStart() {
				l.Iterate(l.hard, vu, l.NextIndex())
			}
		})
	}
}

// Wait waits for the workers Go started.
func (l *ClosedLoop) Wait() { l.wg.Wait() }

// Acquire takes a VU from the pool for the scenario. It returns false when
// the scenario is over or the pool failed; the failure stops the scenario
// and Finish returns it.
func (l *ClosedLoop) Acquire() (VU, bool) { return l.run.acquire(l.hard, l.stop) }

// Release gives a VU Acquire returned back to the pool.
func (l *ClosedLoop) Release(vu VU) { l.run.release(vu) }

// CanStart reports whether an iteration may start now: the regular
// duration has not passed and the scenario was neither stopped nor aborted.
func (l *ClosedLoop) CanStart() bool { return l.run.canStart(l.hard, l.regularEnd) }

// RegularEnd is when the regular duration ends.
func (l *ClosedLoop) RegularEnd() time.Time { return l.regularEnd }

// Stop ends the scenario now: running iterations are interrupted.
func (l *ClosedLoop) Stop() { l.stop() }

// NextIndex claims the instance's next iteration index (0-based).
func (l *ClosedLoop) NextIndex() int64 { return l.run.index.Add(1) - 1 }

// Claimed is how many indices NextIndex has handed out.
func (l *ClosedLoop) Claimed() int64 { return l.run.index.Load() }

// Iterate runs the instance's iteration i on vu, with ctx (the hard-stop
// context, or one derived from it), and accounts for it.
func (l *ClosedLoop) Iterate(ctx context.Context, vu VU, i int64) { l.run.iterate(ctx, vu, i) }

// IterateAt runs iteration i on vu with an intended start, as an open
// model's iteration: its schedule_lag and corrected_latency count from
// intended. A closed executor that paces its VUs uses it.
func (l *ClosedLoop) IterateAt(ctx context.Context, vu VU, i int64, intended time.Time) {
	r := l.run
	it := Iteration{Scenario: r.scenario, Index: r.stripe.Global(i), LocalIndex: i, Intended: intended}
	if w, ok := vu.(*closedVU); ok {
		vu = w.VU
	}
	if r.deps.Account(vu, it, vu.Run(ctx, it)) {
		r.Completed.Add(1)
	} else {
		r.Interrupted.Add(1)
	}
}

// Drop accounts for n iterations that never started, noticed at at: one
// dropped_iterations sample (as k6's iterations executors emit).
func (l *ClosedLoop) Drop(at time.Time, n int64) {
	l.dropMu.Lock()
	defer l.dropMu.Unlock()
	l.run.drop(at, n)
}

// DropIntended accounts for one iteration with an intended start that
// never started: dropped_iterations, and corrected_latency from intended
// to giveUp tagged outcome=dropped. It is safe to call from any worker.
func (l *ClosedLoop) DropIntended(intended, giveUp time.Time) {
	l.dropMu.Lock()
	defer l.dropMu.Unlock()
	l.run.Dropped.Add(1)
	l.run.deps.Drop(intended, giveUp)
}

// Finish ends the scenario after every worker has returned its VU: it
// freezes the elapsed time. It returns the pool's error, if getting a VU
// failed.
func (l *ClosedLoop) Finish() error {
	l.stop()
	l.run.finish()
	return l.run.err
}

// BackFillAccount is the scenario's back-fill account: the tallies of
// the VUs that have left it, final once Finish has returned; its Interval
// is the scenario's expectedInterval. An executor built on the loop
// returns it as its own (BackFillAccounter).
func (l *ClosedLoop) BackFillAccount() BackFillAccount { return l.run.tally.account() }

// Tracker returns the scenario's counters.
func (l *ClosedLoop) Tracker() *Tracker { return &l.run.Tracker }

// Progress reports where the scenario is; Total is the regular duration
// plus gracefulStop.
func (l *ClosedLoop) Progress() Progress { return l.run.progress() }
