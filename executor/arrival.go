package executor

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/executor/schedule"
	"github.com/metronome-load/metronome/executor/segment"
	"github.com/metronome-load/metronome/optdecode"
)

// OnTimeTolerance is how late an open-model iteration may start and still
// count as started on time in the scenario's Account. One millisecond is
// the accuracy wrk2 claims for its own pacing and the threshold beyond
// which Perf Analyzer calls a request delayed; a lag below it is the cost
// of handing the iteration to a VU, not a sign that the generator fell
// behind.
const OnTimeTolerance = time.Millisecond

// PreciseMaxRate is the highest arrival rate, per second, at which the VUs
// of an open-model scenario end their waits on a precise kernel timer when
// the clock offers one (clock.Precise). Each such wait is one more wake-up
// of the process: on this project's 2-core VM, at 2,000 arrivals/s, it
// took schedule_lag from a median of 450 µs (p99 1.2 ms) to 74-84 µs (p99
// 0.18-0.39 ms) for 57-94 µs more CPU per arrival. At 5,000/s it still paid
// (p99 1.3 ms -> 0.6-1.0 ms); at 10,000/s the extra CPU, on cores the
// server shares, made the tail worse, and the traffic itself keeps Go's
// timers prompt.
const PreciseMaxRate = 2000

// Account is the end-of-test account of one open-model scenario
// (docs/DESIGN.md §2.4). Every arrival that became due ends exactly once, so
// Intended == Completed + Interrupted + Dropped and
// Intended == OnTime + Late + Dropped once the scenario has finished.
type Account struct {
	// Intended counts the arrivals whose intended start came during the
	// run (the whole schedule, unless the test was aborted).
	Intended int64
	// OnTime and Late split the arrivals that started by their schedule
	// lag: at most OnTimeTolerance, or more.
	OnTime, Late int64
	// LateForVU counts the Late arrivals that came due before the VU that
	// ran them was free (every VU was busy with an earlier one: the
	// backlog, or too few VUs). The other Late arrivals had a free VU in
	// time and started late because its goroutine woke late: a timer that
	// fired late, or no core free to run it.
	LateForVU int64
	// Completed arrivals ran to the end (an exception still counts);
	// Interrupted ones were cut off by the hard stop.
	Completed, Interrupted int64
	// Dropped arrivals never started.
	Dropped int64
	// PeakBacklog is the most arrivals that were due and waiting for a VU
	// at once (intended-arrival-rate only; the k6 executors drop instead).
	PeakBacklog int64
}

// ArrivalConfig is the open-model part of a scenario config, the kit's
// arrival loop with its options: the timetable of intended starts, the VU
// budget and what happens to an arrival that finds every VU busy. The
// arrival-rate executors embed it, and so can an extension's config (see
// NewArrivalConfig); it provides every Config method but Description.
type ArrivalConfig struct {
	scenario     *Scenario
	schedule     schedule.Timetable
	preAllocated int
	maxVUs       int
	// queue makes due arrivals that find no idle VU wait in a backlog
	// (intended-arrival-rate) instead of being dropped (k6's executors).
	queue bool
	// stripe holds the global arrival indices this instance runs (nil:
	// all of them); idle says it runs none (see Segmented).
	stripe *segment.Tuple
	idle   bool
	// segment is the length of the instance's execution segment, 0
	// without segments; the banner scales rates by it (see rateShare).
	segment float64
	// first and firstLocal number the arrivals (see Numbered).
	first, firstLocal int64
}

// Base returns the common options.
func (c *ArrivalConfig) Base() *Scenario { return c.scenario }

// MaxVUs is maxVUs.
func (c *ArrivalConfig) MaxVUs() int { return c.maxVUs }

// InitialVUs is preAllocatedVUs.
func (c *ArrivalConfig) InitialVUs() int { return c.preAllocated }

// MaxDuration is the schedule's duration plus gracefulStop.
func (c *ArrivalConfig) MaxDuration() time.Duration {
	return c.schedule.Duration() + c.scenario.GracefulStop
}

// Schedule returns the scenario's schedule when it is a rate Schedule (the
// built-in arrival processes), nil for another Timetable.
func (c *ArrivalConfig) Schedule() *schedule.Schedule {
	s, _ := c.schedule.(*schedule.Schedule)
	return s
}

// New builds the executor.
func (c *ArrivalConfig) New(deps Deps) Executor {
	return &arrivalExecutor{cfg: c, deps: deps}
}

// arrivalInfo is the parenthesised tail of an arrival-rate description.
func (c *ArrivalConfig) arrivalInfo() string {
	vus := fmt.Sprint(c.maxVUs)
	if c.preAllocated != c.maxVUs {
		vus = fmt.Sprintf("%d-%d", c.preAllocated, c.maxVUs)
	}
	exec := ""
	if c.scenario.Exec != "default" {
		exec = ", exec: " + c.scenario.Exec
	}
	return fmt.Sprintf(" (maxVUs: %s%s, gracefulStop: %s)", vus, exec, c.scenario.GracefulStop)
}

// stripeShare is the instance's part of the scenario's arrivals: 1
// without segments, 0 when its stripe of maxVUs is empty.
func (c *ArrivalConfig) stripeShare() float64 {
	switch {
	case c.segment == 0:
		return 1
	case c.idle:
		return 0
	}
	return c.stripe.Length()
}

// segmentShare is the length of the instance's segment, 1 without
// segments.
func (c *ArrivalConfig) segmentShare() float64 {
	if c.segment == 0 {
		return 1
	}
	return c.segment
}

// arrivalRatePerSecond is a rate per time unit expressed per second.
func arrivalRatePerSecond(rate int64, unit time.Duration) float64 {
	return float64(rate) * float64(time.Second) / float64(unit)
}

// arrivalExecutor runs an arrival-rate scenario. Each VU the scenario holds
// has a goroutine that claims the oldest unclaimed arrival, sleeps until its
// intended start and runs it: one wake-up per iteration and no hand-off
// between goroutines on the way, so a VU that is free starts on time. The
// goroutine in Run watches the schedule: it sees arrivals come due while
// every VU is busy (the backlog, or k6's drops), initialises VUs in the
// background, and ends the scenario.
type arrivalExecutor struct {
	cfg  *ArrivalConfig
	deps Deps

	Tracker
	onTime      atomic.Int64
	late        atomic.Int64
	lateForVU   atomic.Int64
	peakBacklog atomic.Int64
}

// Progress reports where the scenario is.
func (e *arrivalExecutor) Progress() Progress {
	return e.Tracker.Progress(e.deps.Clock.Now(), e.cfg.MaxDuration(), e.cfg.maxVUs)
}

// Account returns the scenario's account so far; it is final once Run has
// returned. Every arrival that came due either started (on time or late)
// or was dropped, so Intended is their sum.
func (e *arrivalExecutor) Account() Account {
	onTime, late, dropped := e.onTime.Load(), e.late.Load(), e.Dropped.Load()
	return Account{
		Intended:    onTime + late + dropped,
		OnTime:      onTime,
		Late:        late,
		LateForVU:   e.lateForVU.Load(),
		Completed:   e.Completed.Load(),
		Interrupted: e.Interrupted.Load(),
		Dropped:     dropped,
		PeakBacklog: e.peakBacklog.Load(),
	}
}

// arrivalWorker is one VU the scenario holds, with the sleeper its
// goroutine waits on.
type arrivalWorker struct {
	vu    VU
	sleep clock.Sleeper
	// free is when the VU became free: when it joined the scenario, then
	// when each of its iterations returned. Its goroutine claims the next
	// arrival a little later (it has to be scheduled, and it records the
	// iteration's samples first); arrivals due in between were not missed.
	free time.Time
}

// arrivalInit is the outcome of one background VU initialisation.
type arrivalInit struct {
	vu  VU
	err error
}

// scheduleHead walks a schedule one arrival at a time: index is the
// arrival it stands at, due at offset off, unless end says the schedule
// has no arrival index.
type scheduleHead struct {
	cur    schedule.Walker
	stripe *segment.Tuple
	index  int64
	off    time.Duration
	end    bool
}

// newScheduleHead stands at the first arrival of c's stripe of the
// schedule.
func newScheduleHead(c *ArrivalConfig) scheduleHead {
	h := scheduleHead{cur: c.schedule.Walk(), stripe: c.stripe, index: -1}
	if c.idle {
		h.end = true
		return h
	}
	h.step()
	return h
}

// step moves to the next arrival the instance owns; the others' offsets
// are still walked, so a Poisson schedule draws the global sequence.
func (h *scheduleHead) step() {
	h.index = h.stripe.NextOwned(h.index + 1)
	var ok bool
	h.off, ok = h.cur.Offset(h.index)
	h.end = !ok
}

// arrivalClaim is an arrival a worker claimed and gave back unstarted.
type arrivalClaim struct {
	index int64
	off   time.Duration
}

// arrivalRun is the state of one Run.
type arrivalRun struct {
	e                 *arrivalExecutor
	deps              *Deps
	start             time.Time
	regular, hardStop time.Duration
	coarse            bool // sleep on Go's timers alone (see PreciseMaxRate)

	hardCtx   context.Context // cancelled at the end: interrupts iterations, wakes sleepers
	initCtx   context.Context // cancelled when no more VUs can be of use
	stopInits context.CancelFunc
	wg        sync.WaitGroup
	live      atomic.Int64  // worker goroutines that have not ended
	exited    chan struct{} // a worker ended (capacity 1, never blocks)

	// Owned by the goroutine in Run.
	workers []*arrivalWorker
	initCh  chan arrivalInit
	initing int // background initialisations in flight
	initErr error
	warned  bool

	// mu guards the claims. Arrivals before next are claimed or dropped:
	// next is the oldest unclaimed one. Arrivals before due have come due.
	mu        sync.Mutex
	next, due scheduleHead
	closed    bool // no more claims: k6's regular end, the hard stop, an abort
	fresh     int  // workers started that have not claimed yet
	returned  []arrivalClaim

	// The watcher's timer, also under mu: the offset it is armed for (-1
	// when it is not), whether that look is only to see next claimed in
	// time, and the latest look the watcher wants (the regular end or the
	// hard stop). A claim moves such a look on to the new next (see
	// claim), so that the watcher sleeps while the VUs keep up.
	timer   clock.Timer
	armed   time.Duration
	forNext bool
	limit   time.Duration
}

// Run runs the scenario: the schedule, then the graceful stop. It returns
// once every VU it took is back in the pool.
func (e *arrivalExecutor) Run(ctx context.Context) error {
	deps := &e.deps
	defer func() {
		var el time.Duration
		if s := e.Began(); !s.IsZero() {
			el = deps.Clock.Now().Sub(s)
		}
		e.End(el)
	}()
	hardCtx, hardCancel := context.WithCancel(ctx)
	defer hardCancel()
	initCtx, stopInits := context.WithCancel(hardCtx)
	defer stopInits()

	r := &arrivalRun{
		e: e, deps: deps, hardCtx: hardCtx, initCtx: initCtx, stopInits: stopInits,
		regular:  e.cfg.schedule.Duration(),
		hardStop: e.cfg.schedule.Duration() + e.cfg.scenario.GracefulStop,
		coarse:   peakPerSecond(e.cfg.schedule) > PreciseMaxRate,
		exited:   make(chan struct{}, 1),
		initCh:   make(chan arrivalInit),
		next:     newScheduleHead(e.cfg),
		due:      newScheduleHead(e.cfg),
	}

	vus := make([]VU, 0, e.cfg.preAllocated)
	for range e.cfg.preAllocated {
		vu, err := deps.Pool.Get(ctx)
		if err != nil {
			for _, vu := range vus {
				deps.Pool.Put(vu)
			}
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("scenario %s: %w", e.cfg.scenario.Name, err)
		}
		vus = append(vus, vu)
	}
	r.start = deps.Clock.Now()
	e.Begin(r.start)
	for _, vu := range vus {
		r.addWorker(vu, r.start)
	}
	r.watch(ctx)
	r.finish(hardCancel)
	return r.initErr
}

// watch follows the schedule until the scenario ends: at the hard stop, on
// abort, or once every arrival has been claimed and run and the regular
// duration is over.
func (r *arrivalRun) watch(ctx context.Context) {
	e, clk := r.e, r.deps.Clock
	r.mu.Lock()
	r.timer, r.armed = clk.NewTimer(time.Hour), -1
	r.mu.Unlock()
	defer r.timer.Stop()
	fired := false
	for {
		if ctx.Err() != nil {
			return
		}
		now := clk.Now()
		el := now.Sub(r.start)
		if el >= r.hardStop {
			return
		}
		r.mu.Lock()
		if fired {
			r.armed, fired = -1, false
		}
		r.advance(el)
		if !e.cfg.queue && el >= r.regular && !r.closed && r.fresh == 0 {
			// k6 starts nothing after the regular duration: the arrivals
			// that found every VU busy are charged up to its end. A VU
			// that has just joined is idle and about to claim: arrivals
			// due at the very end (a timetable's last offset) are still
			// its to take, so the end waits for its first claim.
			r.closed = true
			r.dropUnclaimed(r.due.index, r.start.Add(r.regular))
		}
		// An unclaimed arrival that is due found every VU busy (a VU that
		// just joined is about to claim it).
		waiting := !r.closed && !r.next.end && r.next.off <= el && r.fresh == 0
		backlog := r.setBacklog()
		r.limit = r.hardStop
		if el < r.regular {
			r.limit = r.regular
		}
		wake := r.limit
		r.forNext = false
		switch {
		case r.closed:
		case waiting && !r.due.end:
			wake = watchAfter(r.due.off, el) // watch the backlog grow
		case !waiting && !r.next.end:
			wake = watchAfter(r.next.off, el) // is it claimed by then?
			r.forNext = wake < r.limit
		}
		wake = min(wake, r.limit)
		if wake != r.armed {
			r.timer.Reset(wake - el)
			r.armed = wake
		}
		done := r.next.end || r.closed
		r.mu.Unlock()

		if done {
			r.stopInits()
			if r.live.Load() == 0 && el >= r.regular {
				return
			}
		} else if waiting {
			r.grow(backlog)
		}
		select {
		case <-r.timer.C():
			fired = true
		case <-r.exited:
		case in := <-r.initCh:
			r.initing--
			r.joined(in)
		case <-ctx.Done():
		}
	}
}

// watchTick is the shortest interval between two looks of the watching
// goroutine at arrivals coming due. Arrivals closer together than that
// (above 1,000/s while every VU is busy, or with few VUs) are seen in
// groups: without it the watcher woke once per arrival, at 20,000/s as
// often as the VUs themselves, for CPU the VUs needed exactly when they
// were behind. It delays only the Backlog gauge and the start of VU
// initialisations, never an arrival: the VUs claim arrivals themselves,
// and each claim measures the backlog, so PeakBacklog stays exact.
const watchTick = time.Millisecond

// watchAfter is when the watcher looks again for an arrival due at off,
// the time being el: at off, but not before a watchTick has passed.
func watchAfter(off, el time.Duration) time.Duration {
	return max(off, el+watchTick)
}

// advance makes every arrival with an offset up to el due. r.mu is held.
func (r *arrivalRun) advance(el time.Duration) {
	for !r.due.end && r.due.off <= el {
		r.due.step()
	}
}

// setBacklog publishes the number of due, unclaimed arrivals of
// intended-arrival-rate (k6's executors drop those) and returns it. r.mu is
// held.
func (r *arrivalRun) setBacklog() int64 {
	if !r.e.cfg.queue {
		return 0
	}
	st := r.e.cfg.stripe
	b := max(st.Scale(r.due.index)-st.Scale(r.next.index), 0)
	r.e.Backlog.Store(b)
	if b > r.e.peakBacklog.Load() {
		r.e.peakBacklog.Store(b)
	}
	return b
}

// claim gives a worker that has been free since freeSince the oldest
// unclaimed arrival. For k6's executors the arrivals that came due before
// freeSince, while every VU was busy, are dropped first and charged up to
// freeSince, the moment this VU became free. An arrival that came due
// after freeSince is not dropped, however late the worker's goroutine got
// to claim it (it starts late, and its lag says so): k6 drops an arrival
// only when no VU is idle at its time. It returns false when there is
// nothing left to claim.
func (r *arrivalRun) claim(freeSince time.Time, first bool) (int64, time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if first {
		r.fresh--
	}
	el := freeSince.Sub(r.start)
	r.advance(el)
	if !r.e.cfg.queue && !r.closed {
		r.dropMissed(el, freeSince)
	}
	if r.closed || r.next.end {
		return 0, 0, false
	}
	i, off := r.next.index, r.next.off
	r.setBacklog() // the claimed arrival was waiting too
	r.next.step()
	r.setBacklog()
	r.moveLook()
	return i, off, true
}

// moveLook moves the watcher's look at whether next is claimed in time to
// the new next, once a claim took the arrival it was to look at: without
// it the watcher woke once per arrival (once per watchTick above 1,000/s)
// to find the arrival claimed, a thread wake-up each time when the
// process was idle, for nothing while the VUs keep up. A look is only
// ever moved later, so the watcher still looks at most once a watchTick.
// r.mu is held.
func (r *arrivalRun) moveLook() {
	if !r.forNext || r.armed < 0 {
		return
	}
	wake := r.limit
	if !r.next.end {
		wake = min(max(r.armed, r.next.off), r.limit)
	}
	if wake == r.armed {
		return
	}
	r.forNext = wake < r.limit
	r.timer.Reset(r.start.Add(wake).Sub(r.deps.Clock.Now()))
	r.armed = wake
}

// dropMissed drops the unclaimed arrivals due before el, charged up to
// giveUp. r.mu is held.
func (r *arrivalRun) dropMissed(el time.Duration, giveUp time.Time) {
	for !r.next.end && r.next.off < el {
		r.dropNext(giveUp)
	}
}

// dropUnclaimed drops the unclaimed arrivals with an index below end,
// charged up to giveUp. r.mu is held.
func (r *arrivalRun) dropUnclaimed(end int64, giveUp time.Time) {
	for !r.next.end && r.next.index < end {
		r.dropNext(giveUp)
	}
}

// dropNext drops arrival next. r.mu is held.
func (r *arrivalRun) dropNext(giveUp time.Time) {
	r.e.Dropped.Add(1)
	r.deps.Drop(r.start.Add(r.next.off), giveUp)
	r.next.step()
}

// giveBack returns an arrival a worker claimed but did not start before
// the end.
func (r *arrivalRun) giveBack(i int64, off time.Duration) {
	r.mu.Lock()
	r.returned = append(r.returned, arrivalClaim{i, off})
	r.mu.Unlock()
}

// finish ends the scenario at this moment: iterations still running are
// interrupted, and arrivals that came due but never started are dropped,
// charged up to now.
func (r *arrivalRun) finish(hardCancel context.CancelFunc) {
	end := r.deps.Clock.Now()
	r.mu.Lock()
	r.closed = true
	r.advance(end.Sub(r.start))
	r.setBacklog()
	r.mu.Unlock()
	hardCancel()
	r.release()

	r.mu.Lock()
	defer r.mu.Unlock()
	slices.SortFunc(r.returned, func(a, b arrivalClaim) int { return cmp.Compare(a.index, b.index) })
	for _, c := range r.returned {
		if c.index < r.due.index {
			r.e.Dropped.Add(1)
			r.deps.Drop(r.start.Add(c.off), end)
		}
	}
	r.dropUnclaimed(r.due.index, end)
	r.e.Backlog.Store(0)
}

// grow starts background VU initialisations where the scenario needs more
// VUs: k6's executors one at a time while arrivals find every VU busy,
// intended-arrival-rate as many as the backlog asks for (at most one per
// CPU at once). Nothing waits for them.
func (r *arrivalRun) grow(backlog int64) {
	e := r.e
	need := 1
	limit := 1
	if e.cfg.queue {
		need = int(min(backlog, int64(e.cfg.maxVUs))) - r.initing
		limit = runtime.GOMAXPROCS(0)
	}
	if need <= 0 || r.initErr != nil || r.initCtx.Err() != nil {
		return
	}
	for ; need > 0 && r.initing < limit; need-- {
		if len(r.workers)+r.initing >= e.cfg.maxVUs {
			if !r.warned && r.initing == 0 {
				r.warned = true
				r.warn()
			}
			return
		}
		r.initing++
		go func() {
			vu, err := r.deps.Pool.Get(r.initCtx)
			r.initCh <- arrivalInit{vu, err}
		}()
	}
}

func (r *arrivalRun) warn() {
	if r.deps.Logf == nil {
		return
	}
	if r.e.cfg.queue {
		r.deps.Logf("scenarios.%s: all %d VUs (maxVUs) are busy, arrivals are waiting in a backlog; their wait is charged to corrected_latency",
			r.e.cfg.scenario.Name, r.e.cfg.maxVUs)
		return
	}
	r.deps.Logf("scenarios.%s: insufficient VUs, reached %d active VUs and cannot initialize more", r.e.cfg.scenario.Name, r.e.cfg.maxVUs)
}

// joined takes the outcome of a background initialisation.
func (r *arrivalRun) joined(in arrivalInit) {
	if in.err != nil {
		if r.initCtx.Err() == nil && r.initErr == nil {
			r.initErr = fmt.Errorf("scenario %s: initialising a VU: %w", r.e.cfg.scenario.Name, in.err)
			if r.deps.Logf != nil {
				r.deps.Logf("%v; the scenario continues with the VUs it has", r.initErr)
			}
		}
		return
	}
	if r.initCtx.Err() != nil {
		r.deps.Pool.Put(in.vu)
		return
	}
	r.addWorker(in.vu, r.deps.Clock.Now())
}

// addWorker starts the goroutine of a VU the scenario holds from joined
// on.
func (r *arrivalRun) addWorker(vu VU, joined time.Time) {
	w := &arrivalWorker{vu: vu, sleep: clock.Sleeper{Clock: r.deps.Clock, Coarse: r.coarse}, free: joined}
	r.workers = append(r.workers, w)
	r.mu.Lock()
	r.fresh++
	r.mu.Unlock()
	r.live.Add(1)
	r.wg.Add(1)
	go r.work(w)
}

// work claims and runs arrivals on one VU until none is left to claim.
func (r *arrivalRun) work(w *arrivalWorker) {
	defer func() {
		w.sleep.Stop()
		r.live.Add(-1)
		select {
		case r.exited <- struct{}{}:
		default:
		}
		r.wg.Done()
	}()
	e, deps := r.e, r.deps
	for first := true; ; first = false {
		free := w.free
		i, off, ok := r.claim(free, first)
		if !ok {
			return
		}
		intended := r.start.Add(off)
		if !w.sleep.Until(intended, r.hardCtx.Done()) {
			r.giveBack(i, off)
			return
		}
		it := Iteration{Scenario: e.cfg.scenario, Index: e.cfg.first + i,
			LocalIndex: e.cfg.firstLocal + e.cfg.stripe.Scale(i), Intended: intended}
		e.Active.Add(1)
		if deps.State != nil {
			deps.State.VUsActive.Add(1)
		}
		res := w.vu.Run(r.hardCtx, it)
		w.free = deps.Clock.Now()
		if deps.State != nil {
			deps.State.VUsActive.Add(-1)
		}
		e.Active.Add(-1)
		if res.Start.Sub(it.Intended) <= OnTimeTolerance {
			e.onTime.Add(1)
		} else {
			e.late.Add(1)
			if free.After(intended) {
				e.lateForVU.Add(1)
			}
		}
		if deps.Account(w.vu, it, res) {
			e.Completed.Add(1)
		} else {
			e.Interrupted.Add(1)
		}
	}
}

// release waits for background initialisations and every worker, and
// returns every VU to the pool.
func (r *arrivalRun) release() {
	r.stopInits()
	for r.initing > 0 {
		in := <-r.initCh
		r.initing--
		if in.err == nil {
			r.deps.Pool.Put(in.vu)
		}
	}
	r.wg.Wait()
	for _, w := range r.workers {
		// The VU's last samples go to the engine now rather than with its
		// next iteration, so that what the scenario recorded is all in
		// once Run returns (an executor that judges a span of its own
		// reads it then).
		if f, ok := w.vu.Recorder().(interface{ Flush() }); ok {
			f.Flush()
		}
		r.deps.Pool.Put(w.vu)
	}
}

// ArrivalOptions holds the option checks of the arrival-rate executors,
// built-in or not, so that each option means and is refused the same in
// all of them; every error names the option path
// scenarios.<Scenario>.<option>.
type ArrivalOptions struct{ Scenario string }

// Errorf returns the error of one option, with its path.
func (p ArrivalOptions) Errorf(option, format string, args ...any) error {
	return fmt.Errorf("scenarios.%s.%s: %s", p.Scenario, option, fmt.Sprintf(format, args...))
}

// TimeUnit checks timeUnit, 1s when absent.
func (p ArrivalOptions) TimeUnit(d *duration.Duration) (time.Duration, error) {
	if d == nil {
		return time.Second, nil
	}
	if *d <= 0 {
		return 0, p.Errorf("timeUnit", "must be greater than 0")
	}
	return d.Std(), nil
}

// rate checks a required constant rate.
func (p ArrivalOptions) rate(rate *int64, unit time.Duration) (int64, error) {
	switch {
	case rate == nil:
		return 0, p.Errorf("rate", "required: the number of iterations to start per timeUnit")
	case *rate <= 0:
		return 0, p.Errorf("rate", "must be greater than 0")
	case *rate > int64(unit):
		return 0, p.Errorf("rate", "%d per %s is more than one iteration per nanosecond", *rate, unit)
	}
	return *rate, nil
}

// duration checks a required duration of at least 1s, as k6 does.
func (p ArrivalOptions) duration(d *duration.Duration) (time.Duration, error) {
	switch {
	case d == nil:
		return 0, p.Errorf("duration", "required")
	case *d < duration.Duration(time.Second):
		return 0, p.Errorf("duration", "must be at least 1s, got %s", d)
	}
	return d.Std(), nil
}

// given reports whether a JSON option was set to something other than null.
func arrivalGiven(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// stages checks startRate and the stages of a ramp, read by the options
// grammar's one stage parser: a target may be at most one iteration per
// nanosecond, timeUnit's length in nanoseconds.
func (p ArrivalOptions) stages(startRate *int64, stagesRaw json.RawMessage, unit time.Duration) (int64, []schedule.RateStage, error) {
	var start int64
	if startRate != nil {
		start = *startRate
		if start < 0 {
			return 0, nil, p.Errorf("startRate", "must not be negative")
		}
		if start > int64(unit) {
			return 0, nil, p.Errorf("startRate", "%d per %s is more than one iteration per nanosecond", start, unit)
		}
	}
	stages, err := optdecode.RequiredStages("scenarios."+p.Scenario+".stages", stagesRaw, int64(unit))
	if err != nil {
		return 0, nil, err
	}
	out := make([]schedule.RateStage, len(stages))
	var total time.Duration
	for k, st := range stages {
		if st.Duration.Std() > math.MaxInt64/2-total {
			return 0, nil, p.Errorf(fmt.Sprintf("stages[%d].duration", k), "the stages are too long")
		}
		out[k] = schedule.RateStage{Duration: st.Duration.Std(), Target: *st.Target}
		total += out[k].Duration
	}
	if total <= 0 {
		return 0, nil, p.Errorf("stages", "the stages must last longer than 0s in total")
	}
	return start, out, nil
}

// VUs checks preAllocatedVUs (required) and maxVUs (preAllocatedVUs when
// absent), each at most 100,000,000 as in k6. needOne rejects a scenario that could never hold a VU.
func (p ArrivalOptions) VUs(pre, maxVUs *int64, needOne bool) (int, int, error) {
	if pre == nil {
		return 0, 0, p.Errorf("preAllocatedVUs", "required: the number of VUs to initialise before the scenario starts")
	}
	if *pre < 0 {
		return 0, 0, p.Errorf("preAllocatedVUs", "must not be negative")
	}
	if *pre > arrivalMaxVUs {
		return 0, 0, p.Errorf("preAllocatedVUs", "must not exceed %d", arrivalMaxVUs)
	}
	m := *pre
	if maxVUs != nil {
		m = *maxVUs
		if m < *pre {
			return 0, 0, p.Errorf("maxVUs", "must not be less than preAllocatedVUs (%d)", *pre)
		}
		if m > arrivalMaxVUs {
			return 0, 0, p.Errorf("maxVUs", "must not exceed %d", arrivalMaxVUs)
		}
	}
	if needOne && m == 0 {
		return 0, 0, p.Errorf("maxVUs", "must be greater than 0: with no VU every arrival would be dropped")
	}
	return int(*pre), int(m), nil
}

// arrivalMaxVUs bounds preAllocatedVUs and maxVUs (k6 caps VU targets at
// the same number).
const arrivalMaxVUs = 100_000_000

// process is an arrival process of the kit, or a ScheduleSpec.
type process interface {
	Schedule() (*schedule.Schedule, error)
}

// schedule builds the schedule of checked options; what is left to fail
// is the size of the schedule.
func (p ArrivalOptions) schedule(proc process) (*schedule.Schedule, error) {
	s, err := proc.Schedule()
	if err != nil {
		return nil, fmt.Errorf("scenarios.%s: %w", p.Scenario, err)
	}
	return s, nil
}

// config builds the part of a config the three arrival-rate executors
// share, through the kit's NewArrivalConfig: the schedule of the arrival
// process proc and the VU budget. queue makes due arrivals wait for a VU
// instead of being dropped.
func (p ArrivalOptions) config(sc *Scenario, proc process, pre, maxVUs int, queue bool) (ArrivalConfig, error) {
	s, err := p.schedule(proc)
	if err != nil {
		return ArrivalConfig{}, err
	}
	policy := Drop
	if queue {
		policy = Queue
	}
	return NewArrivalConfig(sc, s, pre, maxVUs, policy)
}
