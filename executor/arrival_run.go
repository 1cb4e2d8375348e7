package executor

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/executor/schedule"
	"github.com/metronome-load/metronome/executor/segment"
)

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
	held      atomic.Int64  // workers holding a claimed arrival (waiting for it or running it)
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
	// tally stands at the first arrival not yet counted in
	// dropped_iterations: those before it and after next were counted the
	// moment they found every VU busy (see countMissed).
	tally    scheduleHead
	closed   bool // no more claims: k6's regular end, the hard stop, an abort
	fresh    int  // workers started that have not claimed yet
	returned []arrivalClaim

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
		tally:    newScheduleHead(e.cfg),
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
		r.held.Add(-1) // before the clock: see countMissed
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
