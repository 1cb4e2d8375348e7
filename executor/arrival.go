package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/metronome-load/metronome/duration"
)

// OnTimeTolerance is how late an open-model iteration may start and still
// count as started on time in the scenario's Account. One millisecond is
// the accuracy wrk2 claims for its own pacing and the threshold beyond
// which Perf Analyzer calls a request delayed; a lag below it is the cost
// of handing the iteration to a VU, not a sign that the generator fell
// behind.
const OnTimeTolerance = time.Millisecond

// Account is the end-of-test account of one open-model scenario
// (DESIGN §2.4). Every arrival that became due ends exactly once, so
// Intended == Completed + Interrupted + Dropped and
// Intended == OnTime + Late + Dropped once the scenario has finished.
type Account struct {
	// Intended counts the arrivals whose intended start came during the
	// run (the whole schedule, unless the test was aborted).
	Intended int64
	// OnTime and Late split the arrivals that started by their schedule
	// lag: at most OnTimeTolerance, or more.
	OnTime, Late int64
	// Completed arrivals ran to the end (an exception still counts);
	// Interrupted ones were cut off by the hard stop.
	Completed, Interrupted int64
	// Dropped arrivals never started.
	Dropped int64
	// PeakBacklog is the most arrivals that were due and waiting for a VU
	// at once (intended-arrival-rate only; the k6 executors drop instead).
	PeakBacklog int64
}

// Accounter is implemented by the executors of open-model scenarios, so
// that the summary can print their account.
type Accounter interface {
	Account() Account
}

// arrivalConfig is what the three arrival-rate executors share once their
// options are parsed.
type arrivalConfig struct {
	scenario     *Scenario
	schedule     *Schedule
	preAllocated int
	maxVUs       int
	// queue makes due arrivals that find no idle VU wait in a backlog
	// (intended-arrival-rate) instead of being dropped (k6's executors).
	queue bool
}

// Base returns the common options.
func (c *arrivalConfig) Base() *Scenario { return c.scenario }

// MaxVUs is maxVUs.
func (c *arrivalConfig) MaxVUs() int { return c.maxVUs }

// InitialVUs is preAllocatedVUs.
func (c *arrivalConfig) InitialVUs() int { return c.preAllocated }

// MaxDuration is the schedule's duration plus gracefulStop.
func (c *arrivalConfig) MaxDuration() time.Duration {
	return c.schedule.Duration() + c.scenario.GracefulStop
}

// Schedule returns the scenario's intended schedule.
func (c *arrivalConfig) Schedule() *Schedule { return c.schedule }

// New builds the executor.
func (c *arrivalConfig) New(deps Deps) Executor {
	return &arrivalExecutor{cfg: c, deps: deps}
}

// arrivalInfo is the parenthesised tail of an arrival-rate description.
func (c *arrivalConfig) arrivalInfo() string {
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

// arrivalRatePerSecond is a rate per time unit expressed per second.
func arrivalRatePerSecond(rate int64, unit time.Duration) float64 {
	return float64(rate) * float64(time.Second) / float64(unit)
}

// peakRate is the highest rate of a schedule spec, per its time unit.
func (s ScheduleSpec) peakRate() int64 {
	if len(s.Stages) == 0 {
		return s.Rate
	}
	peak := s.StartRate
	for _, st := range s.Stages {
		peak = max(peak, st.Target)
	}
	return peak
}

// arrivalExecutor runs an arrival-rate scenario. One dispatcher goroutine
// (the one in Run) owns the schedule and the idle VUs; each VU the scenario
// holds has a goroutine that runs the iterations handed to it and reports
// back when it is free again.
type arrivalExecutor struct {
	cfg  *arrivalConfig
	deps Deps

	Tracker
	intended    atomic.Int64
	onTime      atomic.Int64
	late        atomic.Int64
	peakBacklog atomic.Int64
}

// Progress reports where the scenario is.
func (e *arrivalExecutor) Progress() Progress {
	return e.Tracker.Progress(e.deps.Clock.Now(), e.cfg.MaxDuration(), e.cfg.maxVUs)
}

// Account returns the scenario's account so far; it is final once Run has
// returned.
func (e *arrivalExecutor) Account() Account {
	return Account{
		Intended:    e.intended.Load(),
		OnTime:      e.onTime.Load(),
		Late:        e.late.Load(),
		Completed:   e.Completed.Load(),
		Interrupted: e.Interrupted.Load(),
		Dropped:     e.Dropped.Load(),
		PeakBacklog: e.peakBacklog.Load(),
	}
}

// arrivalWorker is one VU the scenario holds, with the channel its
// goroutine takes iterations from.
type arrivalWorker struct {
	vu   VU
	work chan Iteration
}

// arrivalInit is the outcome of one background VU initialisation.
type arrivalInit struct {
	vu  VU
	err error
}

// arrivalRun is the dispatcher's state for one Run.
type arrivalRun struct {
	e     *arrivalExecutor
	deps  *Deps
	start time.Time

	hardCtx   context.Context // cancelled at the hard stop: interrupts iterations
	initCtx   context.Context // cancelled when no more VUs can be of use
	stopInits context.CancelFunc
	wg        sync.WaitGroup

	workers []*arrivalWorker
	idle    []*arrivalWorker
	doneCh  chan *arrivalWorker
	initCh  chan arrivalInit
	running int // iterations handed out and not yet reported back
	initing int // background initialisations in flight
	initErr error
	warned  bool

	// Arrivals with index < head are resolved (started, or dropped and
	// charged). Those in [head, due) are due and unresolved: the backlog
	// when queueing, the drops awaiting their charge otherwise. dueOff is
	// the offset of index due-1, the last arrival that became due.
	due, head   int64
	dueOff      time.Duration
	dueCur      *Cursor
	headCur     *Cursor
	exhausted   bool // every arrival of the schedule is due
	regularOver bool
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
		doneCh:  make(chan *arrivalWorker, min(e.cfg.maxVUs, 1024)),
		initCh:  make(chan arrivalInit),
		dueCur:  e.cfg.schedule.Cursor(),
		headCur: e.cfg.schedule.Cursor(),
	}
	for range e.cfg.preAllocated {
		vu, err := deps.Pool.Get(ctx)
		if err != nil {
			r.release()
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("scenario %s: %w", e.cfg.scenario.Name, err)
		}
		r.idle = append(r.idle, r.addWorker(vu))
	}
	r.start = deps.Clock.Now()
	e.Begin(r.start)
	r.loop(ctx)

	// The end: whatever is still due and unresolved is dropped, whatever
	// still runs is interrupted.
	r.resolve(deps.Clock.Now())
	hardCancel()
	for r.running > 0 {
		r.idle = append(r.idle, <-r.doneCh)
		r.running--
	}
	r.release()
	return r.initErr
}

// loop dispatches arrivals until the scenario ends: at the hard stop, on
// abort, or once the schedule is over and nothing runs or waits.
func (r *arrivalRun) loop(ctx context.Context) {
	e, clk := r.e, r.deps.Clock
	regular := e.cfg.schedule.Duration()
	hardStop := regular + e.cfg.scenario.GracefulStop
	timer := clk.NewTimer(time.Hour)
	defer timer.Stop()
	armed := time.Duration(-1) // the offset the timer is set for
	for {
		if ctx.Err() != nil {
			return
		}
		el := clk.Now().Sub(r.start)
		r.arrive(el)
		if !r.regularOver && r.exhausted && el >= regular {
			r.regularOver = true
			if !e.cfg.queue {
				// k6 starts nothing after the regular duration: charge
				// the pending drops and stop initialising VUs.
				r.resolve(r.start.Add(el))
				r.stopInits()
			}
		}
		if el >= hardStop {
			return
		}
		if r.regularOver && r.running == 0 && r.head == r.due {
			return
		}

		wake := hardStop
		switch {
		case !r.exhausted:
			wake, _ = r.dueCur.Offset(r.due)
		case !r.regularOver:
			wake = regular
		}
		if wake != armed {
			timer.Reset(wake - el)
			armed = wake
		}
		select {
		case <-timer.C():
			armed = -1
		case w := <-r.doneCh:
			r.running--
			r.free(w, clk.Now())
		case in := <-r.initCh:
			r.initing--
			r.joined(in, clk.Now())
		case <-ctx.Done():
		}
	}
}

// arrive makes every arrival with an offset up to el due, and hands out
// what it can.
func (r *arrivalRun) arrive(el time.Duration) {
	e := r.e
	for !r.exhausted {
		off, ok := r.dueCur.Offset(r.due)
		if !ok {
			r.exhausted = true
			break
		}
		if off > el {
			break
		}
		r.due++
		r.dueOff = off
		e.intended.Add(1)
		switch {
		case e.cfg.queue:
			r.dispatch()
		case len(r.idle) > 0 && r.head == r.due-1:
			r.startIteration(r.due-1, off)
			r.head = r.due
		default:
			// k6: no idle VU, so the arrival is dropped; its charge waits
			// for the next VU to become free.
			e.Dropped.Add(1)
			r.grow()
		}
	}
	if e.cfg.queue {
		r.setBacklog()
		r.grow()
	}
}

// dispatch starts backlog arrivals, oldest first, while VUs are idle.
func (r *arrivalRun) dispatch() {
	for r.head < r.due && len(r.idle) > 0 {
		off := r.dueOff
		if r.head != r.due-1 {
			off, _ = r.headCur.Offset(r.head)
		}
		r.startIteration(r.head, off)
		r.head++
	}
}

func (r *arrivalRun) setBacklog() {
	b := r.due - r.head
	r.e.Backlog.Store(b)
	if b > r.e.peakBacklog.Load() {
		r.e.peakBacklog.Store(b)
	}
}

// startIteration hands arrival i to an idle VU.
func (r *arrivalRun) startIteration(i int64, off time.Duration) {
	w := r.idle[len(r.idle)-1]
	r.idle = r.idle[:len(r.idle)-1]
	r.running++
	w.work <- Iteration{Scenario: r.e.cfg.scenario, Index: i, LocalIndex: i, Intended: r.start.Add(off)}
}

// free takes back a VU that finished an iteration, or a new one, at now.
func (r *arrivalRun) free(w *arrivalWorker, now time.Time) {
	r.idle = append(r.idle, w)
	if r.e.cfg.queue {
		r.dispatch()
		r.setBacklog()
		return
	}
	// k6: the drops since the last free VU are charged up to now.
	r.resolve(now)
}

// resolve charges every due, unresolved arrival as dropped at giveUp.
func (r *arrivalRun) resolve(giveUp time.Time) {
	if r.head == r.due {
		return
	}
	if r.e.cfg.queue {
		r.e.Dropped.Add(r.due - r.head)
	}
	for ; r.head < r.due; r.head++ {
		off, _ := r.headCur.Offset(r.head)
		r.deps.Drop(r.start.Add(off), giveUp)
	}
	if r.e.cfg.queue {
		r.setBacklog()
	}
}

// grow starts background VU initialisations where the scenario needs more
// VUs: k6's executors one at a time after a drop, intended-arrival-rate as
// many as the backlog asks for (at most one per CPU at once). The
// dispatcher never waits for them.
func (r *arrivalRun) grow() {
	e := r.e
	need := 1
	limit := 1
	if e.cfg.queue {
		need = int(min(r.due-r.head, int64(e.cfg.maxVUs))) - r.initing
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
func (r *arrivalRun) joined(in arrivalInit, now time.Time) {
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
	r.free(r.addWorker(in.vu), now)
	if r.e.cfg.queue {
		r.grow()
	}
}

// addWorker starts the goroutine of a VU the scenario now holds.
func (r *arrivalRun) addWorker(vu VU) *arrivalWorker {
	w := &arrivalWorker{vu: vu, work: make(chan Iteration, 1)}
	r.workers = append(r.workers, w)
	r.wg.Add(1)
	go r.work(w)
	return w
}

// work runs the iterations handed to one VU.
func (r *arrivalRun) work(w *arrivalWorker) {
	defer r.wg.Done()
	e, deps := r.e, r.deps
	for it := range w.work {
		e.Active.Add(1)
		if deps.State != nil {
			deps.State.VUsActive.Add(1)
		}
		res := w.vu.Run(r.hardCtx, it)
		if deps.State != nil {
			deps.State.VUsActive.Add(-1)
		}
		e.Active.Add(-1)
		if res.Start.Sub(it.Intended) <= OnTimeTolerance {
			e.onTime.Add(1)
		} else {
			e.late.Add(1)
		}
		if deps.Account(w.vu, it, res, 0) {
			e.Completed.Add(1)
		} else {
			e.Interrupted.Add(1)
		}
		r.doneCh <- w
	}
}

// release stops every worker, waits for background initialisations, and
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
	for _, w := range r.workers {
		close(w.work)
	}
	r.wg.Wait()
	for _, w := range r.workers {
		r.deps.Pool.Put(w.vu)
	}
}

// arrivalStageOption is one stage as a script writes it.
type arrivalStageOption struct {
	Duration *duration.Duration `json:"duration"`
	Target   *int64             `json:"target"`
}

// arrivalOptions holds the option checks of the arrival-rate executors;
// every error names the option path scenarios.<name>.<option>.
type arrivalOptions struct{ scenario string }

func (p arrivalOptions) errorf(option, format string, args ...any) error {
	return fmt.Errorf("scenarios.%s.%s: %s", p.scenario, option, fmt.Sprintf(format, args...))
}

// timeUnit checks timeUnit, 1s when absent.
func (p arrivalOptions) timeUnit(d *duration.Duration) (time.Duration, error) {
	if d == nil {
		return time.Second, nil
	}
	if *d <= 0 {
		return 0, p.errorf("timeUnit", "must be greater than 0")
	}
	return d.Std(), nil
}

// rate checks a required constant rate.
func (p arrivalOptions) rate(rate *int64, unit time.Duration) (int64, error) {
	switch {
	case rate == nil:
		return 0, p.errorf("rate", "required: the number of iterations to start per timeUnit")
	case *rate <= 0:
		return 0, p.errorf("rate", "must be greater than 0")
	case *rate > int64(unit):
		return 0, p.errorf("rate", "%d per %s is more than one iteration per nanosecond", *rate, unit)
	}
	return *rate, nil
}

// duration checks a required duration of at least 1s, as k6 does.
func (p arrivalOptions) duration(d *duration.Duration) (time.Duration, error) {
	switch {
	case d == nil:
		return 0, p.errorf("duration", "required")
	case *d < duration.Duration(time.Second):
		return 0, p.errorf("duration", "must be at least 1s, got %s", d)
	}
	return d.Std(), nil
}

// given reports whether a JSON option was set to something other than null.
func arrivalGiven(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// stages checks startRate and the stages of a ramp. Each stage is decoded
// on its own, so that an error names its index.
func (p arrivalOptions) stages(startRate *int64, stagesRaw json.RawMessage, unit time.Duration) (int64, []RateStage, error) {
	var start int64
	if startRate != nil {
		start = *startRate
		if start < 0 {
			return 0, nil, p.errorf("startRate", "must not be negative")
		}
		if start > int64(unit) {
			return 0, nil, p.errorf("startRate", "%d per %s is more than one iteration per nanosecond", start, unit)
		}
	}
	const example = `{"duration": "30s", "target": 10}`
	var raw []json.RawMessage
	if arrivalGiven(stagesRaw) {
		if err := json.Unmarshal(stagesRaw, &raw); err != nil {
			return 0, nil, p.errorf("stages", "must be an array of stages like %s", example)
		}
	}
	if len(raw) == 0 {
		return 0, nil, p.errorf("stages", "required: at least one stage like %s", example)
	}
	stages := make([]arrivalStageOption, len(raw))
	for k, r := range raw {
		if len(r) == 0 || r[0] != '{' {
			return 0, nil, p.errorf(fmt.Sprintf("stages[%d]", k), "must be an object like %s", example)
		}
		if err := DecodeStrict(fmt.Sprintf("%s.stages[%d]", p.scenario, k), r, &stages[k]); err != nil {
			return 0, nil, err
		}
	}
	out := make([]RateStage, len(stages))
	var total time.Duration
	for k, st := range stages {
		switch {
		case st.Duration == nil:
			return 0, nil, p.errorf(fmt.Sprintf("stages[%d].duration", k), "required")
		case *st.Duration < 0:
			return 0, nil, p.errorf(fmt.Sprintf("stages[%d].duration", k), "must not be negative")
		case st.Target == nil:
			return 0, nil, p.errorf(fmt.Sprintf("stages[%d].target", k), "required")
		case *st.Target < 0:
			return 0, nil, p.errorf(fmt.Sprintf("stages[%d].target", k), "must not be negative")
		case *st.Target > int64(unit):
			return 0, nil, p.errorf(fmt.Sprintf("stages[%d].target", k), "%d per %s is more than one iteration per nanosecond", *st.Target, unit)
		case st.Duration.Std() > math.MaxInt64/2-total:
			return 0, nil, p.errorf(fmt.Sprintf("stages[%d].duration", k), "the stages are too long")
		}
		out[k] = RateStage{Duration: st.Duration.Std(), Target: *st.Target}
		total += out[k].Duration
	}
	if total <= 0 {
		return 0, nil, p.errorf("stages", "the stages must last longer than 0s in total")
	}
	return start, out, nil
}

// vus checks preAllocatedVUs (required) and maxVUs (preAllocatedVUs when
// absent). needOne rejects a scenario that could never hold a VU.
func (p arrivalOptions) vus(pre, maxVUs *int64, needOne bool) (int, int, error) {
	if pre == nil {
		return 0, 0, p.errorf("preAllocatedVUs", "required: the number of VUs to initialise before the scenario starts")
	}
	if *pre < 0 {
		return 0, 0, p.errorf("preAllocatedVUs", "must not be negative")
	}
	if *pre > arrivalMaxVUs {
		return 0, 0, p.errorf("preAllocatedVUs", "must not exceed %d", arrivalMaxVUs)
	}
	m := *pre
	if maxVUs != nil {
		m = *maxVUs
		if m < *pre {
			return 0, 0, p.errorf("maxVUs", "must not be less than preAllocatedVUs (%d)", *pre)
		}
		if m > arrivalMaxVUs {
			return 0, 0, p.errorf("maxVUs", "must not exceed %d", arrivalMaxVUs)
		}
	}
	if needOne && m == 0 {
		return 0, 0, p.errorf("maxVUs", "must be greater than 0: with no VU every arrival would be dropped")
	}
	return int(*pre), int(m), nil
}

// arrivalMaxVUs bounds preAllocatedVUs and maxVUs (k6 caps VU targets at
// the same number).
const arrivalMaxVUs = 100_000_000

// schedule builds the schedule of checked options; what is left to fail
// is the size of the schedule.
func (p arrivalOptions) schedule(spec ScheduleSpec) (*Schedule, error) {
	s, err := NewSchedule(spec)
	if err != nil {
		return nil, fmt.Errorf("scenarios.%s: %w", p.scenario, err)
	}
	return s, nil
}

// config builds the part of a config the three arrival-rate executors
// share: the schedule of spec and the VU budget. queue makes due arrivals
// wait for a VU instead of being dropped.
func (p arrivalOptions) config(sc *Scenario, spec ScheduleSpec, pre, maxVUs int, queue bool) (arrivalConfig, error) {
	if pre < 0 || maxVUs < pre {
		return arrivalConfig{}, fmt.Errorf("scenarios.%s: need 0 ≤ preAllocatedVUs ≤ maxVUs, got %d and %d", p.scenario, pre, maxVUs)
	}
	s, err := p.schedule(spec)
	if err != nil {
		return arrivalConfig{}, err
	}
	return arrivalConfig{scenario: sc, schedule: s, preAllocated: pre, maxVUs: maxVUs, queue: queue}, nil
}
