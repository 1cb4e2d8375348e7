package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/schedule"
	"github.com/metronome-load/metronome/health"
	"github.com/metronome-load/metronome/metrics"
)

// Limit says what ended the search, or a step.
type Limit uint8

// The limits.
const (
	// NoLimit: the step met the objective.
	NoLimit Limit = iota
	// Server: the objective failed on what the server answered, and
	// nothing says the generator held it back.
	Server
	// Generator: the generator was short of CPU, scheduling, memory or
	// VUs, so the failure may be its own.
	Generator
)

// String names the verdict of a step: "met", "server" or "generator".
func (l Limit) String() string {
	switch l {
	case Server:
		return "server"
	case Generator:
		return "generator"
	}
	return "met"
}

// Step is one step of the search and its verdict.
type Step struct {
	// Rate is the step's arrival rate per timeUnit; PerSecond per second.
	Rate      int64
	PerSecond float64
	Start     time.Time
	// Objective is corrected_latency's value of the objective's
	// aggregation, RawObjective the requests' own durations' (NaN when
	// they recorded none); then the p50 and p99 of each (ms).
	Objective, RawObjective    float64
	CorrectedP50, CorrectedP99 float64
	RawP50, RawP99             float64
	// Requests counts http_req_failed samples and ErrorRate is their
	// share that failed.
	Requests  int64
	ErrorRate float64
	// Account is the step's own account of its arrivals; Health the
	// generator's health over the step.
	Account executor.Account
	Health  health.Interval
	// Limit is NoLimit when the step met the objective; Why says what
	// failed and, for Generator, what held the generator back.
	Limit Limit
	Why   string
	// arrivals counts the arrivals the step intended, over every
	// instance.
	arrivals int64
}

// Result is where a search ended.
type Result struct {
	// Steps are the steps run, in order.
	Steps []Step
	// Limit is whose limit the search found: Server when the lowest
	// failing rate failed on the server's answers, Generator when the
	// generator may have caused it, NoLimit when every step passed up to
	// maxRate (or none ran).
	Limit Limit
	// Capacity is the highest rate per second that met the objective, 0
	// when none did. With Limit Server it is the server's capacity at
	// the search's precision; with Generator a lower bound of it; with
	// NoLimit at least maxRate.
	Capacity float64
	// FailedAt is the lowest rate per second that failed, 0 for none.
	FailedAt float64
	// Why says what the lowest failing step reported.
	Why string
	// Err is why the search stopped early, nil when it ran its course.
	Err error
}

// Summary is a sentence for the end of the test.
func (r Result) Summary() string {
	switch {
	case r.Err != nil:
		return fmt.Sprintf("no capacity: %v", r.Err)
	case len(r.Steps) == 0:
		return "no capacity: no step ran"
	case r.Limit == Generator:
		s := fmt.Sprintf("no capacity: the generator was the limit at %.2f/s (%s)", r.FailedAt, r.Why)
		if r.Capacity > 0 {
			s += fmt.Sprintf("; the objective held up to %.2f/s, so the server serves at least that", r.Capacity)
		}
		return s
	case r.Limit == Server && r.Capacity == 0:
		return fmt.Sprintf("no capacity: the objective failed at the start rate, %.2f/s (%s); lower startRate", r.FailedAt, r.Why)
	case r.Limit == Server:
		return fmt.Sprintf("capacity %.2f/s: the server's limit, the objective failed at %.2f/s (%s)", r.Capacity, r.FailedAt, r.Why)
	}
	return fmt.Sprintf("capacity at least %.2f/s: the objective held at every step up to maxRate", r.Capacity)
}

// Executor runs a capacity-search scenario.
type Executor struct {
	cfg  *Config
	deps executor.Deps
	executor.Tracker

	mu     sync.Mutex
	cur    executor.Executor // the step running, nil between steps
	done   executor.Account  // the finished steps' accounts, summed
	result Result
	logged map[string]bool
}

// logOnce passes a step's warning on the first time it comes: every step
// past the capacity runs out of VUs, and one line says so.
func (e *Executor) logOnce(format string, args ...any) {
	if e.deps.Logf == nil {
		return
	}
	e.mu.Lock()
	seen := e.logged[format]
	if e.logged == nil {
		e.logged = map[string]bool{}
	}
	e.logged[format] = true
	e.mu.Unlock()
	if !seen {
		e.deps.Logf(format, args...)
	}
}

// Progress reports where the search is; Total is its longest possible
// length.
func (e *Executor) Progress() executor.Progress {
	e.mu.Lock()
	cur, done := e.cur, e.done
	e.mu.Unlock()
	p := e.Tracker.Progress(e.deps.Clock.Now(), e.cfg.MaxDuration(), e.cfg.MaxVUs())
	p.Completed += done.Completed
	p.Interrupted += done.Interrupted
	p.Dropped += done.Dropped
	if cur != nil {
		cp := cur.Progress()
		p.ActiveVUs, p.Backlog = cp.ActiveVUs, cp.Backlog
		p.Completed += cp.Completed
		p.Interrupted += cp.Interrupted
		p.Dropped += cp.Dropped
	}
	return p
}

// Account is the scenario's account so far, every step's summed.
func (e *Executor) Account() executor.Account {
	e.mu.Lock()
	defer e.mu.Unlock()
	a := e.done
	if acc := executor.Ask(nil, e.cur).Account; acc != nil {
		a = addAccounts(a, acc.Account())
	}
	return a
}

// Search returns where the search ended; final once Run has returned.
func (e *Executor) Search() Result {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.result
	r.Steps = append([]Step(nil), r.Steps...)
	return r
}

// CapacityReport is the search's result as the summary reports it (see
// executor.CapacityReporter); final once Run has returned.
func (e *Executor) CapacityReport() executor.CapacityReport {
	res := e.Search()
	rep := executor.CapacityReport{Capacity: res.Capacity, FailedAt: res.FailedAt, Verdict: res.Summary()}
	if rep.Limit = res.Limit.String(); res.Limit == NoLimit {
		rep.Limit = "none"
	}
	if res.Err == nil && res.Limit == Generator {
		// A search that stopped on an error ends the run with it.
		rep.Warning = res.Summary()
	}
	for _, st := range res.Steps {
		rep.Steps = append(rep.Steps, executor.CapacityStep{
			Rate: st.PerSecond, Objective: st.Objective,
			CorrectedP50: st.CorrectedP50, CorrectedP99: st.CorrectedP99, RawP50: st.RawP50, RawP99: st.RawP99,
			ErrorRate: st.ErrorRate, CPU: st.Health.CPU, SchedP99: metrics.Milliseconds(st.Health.SchedP99),
			Verdict: st.Limit.String(), Why: st.Why,
		})
	}
	return rep
}

func addAccounts(a, b executor.Account) executor.Account {
	return executor.Account{
		Intended: a.Intended + b.Intended, OnTime: a.OnTime + b.OnTime, Late: a.Late + b.Late,
		LateForVU: a.LateForVU + b.LateForVU, Completed: a.Completed + b.Completed,
		Interrupted: a.Interrupted + b.Interrupted, Dropped: a.Dropped + b.Dropped,
		PeakBacklog: max(a.PeakBacklog, b.PeakBacklog),
	}
}

// errNoMeter is the error of a run that cannot measure its steps.
var errNoMeter = errors.New("capacity-search needs the engine's meter to judge its steps, and this run offers none")

// Run runs the steps the search asks for, each an intended-arrival-rate
// run of stepDuration followed by its drain (gracefulStop), on a fixed
// grid from the scenario's start so that the instances of a distributed
// test step together; it judges each step as it ends, records
// capacity_search_rate at the end, and returns once every VU it took is
// back in the pool.
func (e *Executor) Run(ctx context.Context) error {
	deps, c := &e.deps, e.cfg
	start := deps.Clock.Now()
	e.Begin(start)
	defer func() { e.End(deps.Clock.Now().Sub(start)) }()
	if deps.Meter == nil {
		e.finish(errNoMeter)
		return fmt.Errorf("scenario %s: %w", c.scenario.Name, errNoMeter)
	}
	s := c.search
	var first, firstLocal int64
	at := start
	for {
		rate, ok := s.next()
		if !ok || ctx.Err() != nil {
			break
		}
		if !clock.Sleep(deps.Clock, at.Sub(deps.Clock.Now()), ctx.Done()) {
			break
		}
		step, err := e.runStep(ctx, rate, first, firstLocal)
		if err != nil {
			e.finish(err)
			return fmt.Errorf("scenario %s: %w", c.scenario.Name, err)
		}
		if ctx.Err() != nil {
			// An aborted step is not a verdict.
			break
		}
		s.record(rate, step.Limit == NoLimit)
		e.mu.Lock()
		e.result.Steps = append(e.result.Steps, step)
		e.mu.Unlock()
		// The global numbering counts every instance's arrivals, the
		// local one this instance's.
		first += step.arrivals
		firstLocal += step.Account.Intended
		// The next step starts a period after this one did, or now if
		// judging ran over.
		at = step.Start.Add(c.period())
	}
	e.finish(nil)
	return nil
}

// runStep runs one step at rate and judges it.
func (e *Executor) runStep(ctx context.Context, rate, first, firstLocal int64) (Step, error) {
	deps, c := &e.deps, e.cfg
	tt, err := schedule.Constant{Rate: rate, TimeUnit: c.unit, Duration: c.step}.Schedule()
	if err != nil {
		return Step{}, err
	}
	ac, err := executor.NewArrivalConfig(c.scenario, tt, c.stepVUs(rate), c.maxVUs, executor.Queue)
	if err != nil {
		return Step{}, err
	}
	ac = ac.Segment(c.tuple).Numbered(first, firstLocal)
	stepDeps := *deps
	stepDeps.Logf = e.logOnce
	x := ac.New(stepDeps)
	e.mu.Lock()
	e.cur = x
	e.mu.Unlock()

	begin := deps.Clock.Now()
	deps.Meter.Begin(begin)
	runErr := x.Run(ctx)
	span, err := deps.Meter.End(ctx, deps.Clock.Now())

	acc := executor.Ask(nil, x).Account.Account() // the arrival loop always keeps one
	e.mu.Lock()
	e.cur = nil
	e.done = addAccounts(e.done, acc)
	e.mu.Unlock()
	if runErr != nil {
		return Step{}, runErr
	}
	if err != nil {
		if ctx.Err() != nil {
			return Step{Start: begin}, nil
		}
		return Step{}, err
	}
	// The step's own arrivals, not the whole process's.
	span.Health.Arrivals, span.Health.LateWakeup, span.Health.LateForVU = acc.OnTime+acc.Late, acc.Late-acc.LateForVU, acc.LateForVU
	step := Step{Rate: rate, PerSecond: c.perSecond(rate), Start: begin, Account: acc, Health: span.Health, arrivals: tt.Count()}
	return step, e.judge(&step, span)
}

// stepVUs is how many VUs a step at rate starts with: preAllocatedVUs, or
// more when a rate that holds each request for the objective's bound
// would need more (Little's law, twice over), up to maxVUs. VUs
// initialised mid-step would make arrivals wait for them, a delay of the
// generator's that would count against the server.
func (c *Config) stepVUs(rate int64) int {
	need := 2 * c.perSecond(rate) * c.objective.Bound / 1000
	return min(c.maxVUs, max(c.pre, int(math.Ceil(need))))
}

// errNoLatency is the error of a step whose requests recorded no
// corrected_latency.
var errNoLatency = errors.New("the step's iterations recorded no corrected_latency (make requests with k6/http, gRPC or WebSocket), so the objective cannot be judged")

// judge decides a step's verdict from what the meter measured. The step
// meets the objective when corrected_latency does and no more than
// maxErrorRate of its requests failed. A failure is the server's only
// when nothing says the generator caused it: the generator was not short
// of CPU, scheduling or the collector's time over the step (health), and
// the requests' own durations fail the objective too, even less the
// generator's scheduling p99 (how long an answer may have waited to be
// read). When the requests meet it, the failure is the time arrivals
// waited to start, which is the generator's: its VUs (maxVUs) or its own
// wake-ups.
func (e *Executor) judge(step *Step, span executor.Span) error {
	c := e.cfg
	if span.Corrected == nil || span.Corrected.IsEmpty() {
		return errNoLatency
	}
	step.Objective, _ = c.objective.Aggregate(span.Corrected, 0)
	step.CorrectedP50, step.CorrectedP99 = span.Corrected.Percentile(50), span.Corrected.Percentile(99)
	step.RawObjective = math.NaN()
	if span.Raw != nil && !span.Raw.IsEmpty() {
		step.RawObjective, _ = c.objective.Aggregate(span.Raw, 0)
		step.RawP50, step.RawP99 = span.Raw.Percentile(50), span.Raw.Percentile(99)
	}
	step.Requests, step.ErrorRate = span.Failed.Total, span.Failed.Rate()
	latencyOK := c.objective.Holds(step.Objective)
	errorsOK := step.ErrorRate <= c.maxErrorRate
	if latencyOK && errorsOK {
		return nil
	}
	var failed string
	switch {
	case !latencyOK:
		failed = fmt.Sprintf("corrected_latency %s=%s", c.objective.AggName(), msText(step.Objective))
	default:
		failed = fmt.Sprintf("%.2f%% of requests failed", 100*step.ErrorRate)
	}
	step.Limit, step.Why = Server, failed
	if why := generatorShort(step.Health, c.objective.Bound); why != "" {
		step.Limit, step.Why = Generator, failed+"; the generator was "+why
		return nil
	}
	if !latencyOK && errorsOK && !math.IsNaN(step.RawObjective) {
		agg, raw := c.objective.AggName(), msText(step.RawObjective)
		a := step.Account
		sched := metrics.Milliseconds(step.Health.SchedP99)
		switch {
		case c.objective.Holds(step.RawObjective) && a.LateForVU*2 >= a.Late:
			// The server answered within the objective: the excess is the
			// wait before the iterations started, for a VU.
			step.Limit = Generator
			step.Why = fmt.Sprintf("%s while the requests' own %s=%s: arrivals waited for a free VU (peak backlog %d), raise maxVUs (%d)",
				failed, agg, raw, a.PeakBacklog, c.maxVUs)
		case c.objective.Holds(step.RawObjective):
			step.Limit = Generator
			step.Why = fmt.Sprintf("%s while the requests' own %s=%s: the generator started %d arrivals late with a VU free",
				failed, agg, raw, a.Late-a.LateForVU)
		case c.objective.Holds(step.RawObjective - sched):
			// Each answer may have waited up to the scheduling p99 to be
			// read; without that the requests would meet the objective.
			step.Limit = Generator
			step.Why = fmt.Sprintf("%s and the requests' own %s=%s, of which up to %s may be the generator's delay in reading the answers",
				failed, agg, raw, msText(sched))
		}
	}
	return nil
}

// generatorShort says how the generator was short of capacity over a step,
// "" when it was not: CPU-bound; slow to schedule goroutines, by at least
// a tenth of the objective's bound (a response waits that long to be
// read, so less cannot explain a failure); or stopped by the collector.
// Late starts are judged by their effect instead (see judge).
func generatorShort(iv health.Interval, bound float64) string {
	why := iv.Limited() &^ health.ReasonWakeup
	if float64(iv.SchedP99) < bound/10*float64(time.Millisecond) {
		why &^= health.ReasonSched
	}
	if why == 0 {
		return ""
	}
	cpu := "cpu n/a"
	if !math.IsNaN(iv.CPU) {
		cpu = fmt.Sprintf("cpu %.0f%%", 100*iv.CPU)
	}
	return fmt.Sprintf("%s: %s, sched p99 %s, gc pauses %s", why, cpu,
		msText(metrics.Milliseconds(iv.SchedP99)), msText(metrics.Milliseconds(iv.GCPause)))
}

// msText writes milliseconds as the summary does.
func msText(v float64) string { return fmt.Sprintf("%.2fms", v) }

// finish settles the result and records capacity_search_rate: the highest
// rate per second that met the objective, unless the generator was the
// limit (then no rate is the server's capacity and none is recorded).
func (e *Executor) finish(err error) {
	e.mu.Lock()
	r := &e.result
	r.Err = err
	var lowest *Step
	for i := range r.Steps {
		st := &r.Steps[i]
		if st.Limit == NoLimit {
			r.Capacity = max(r.Capacity, st.PerSecond)
		} else if lowest == nil || st.Rate < lowest.Rate {
			lowest = st
		}
	}
	if lowest != nil {
		r.Limit, r.FailedAt, r.Why = lowest.Limit, lowest.PerSecond, lowest.Why
	}
	record := err == nil && r.Limit != Generator && r.Capacity > 0
	value := r.Capacity
	e.mu.Unlock()
	if !record {
		return
	}
	d := &e.deps
	d.Recorder.Record(metrics.Sample{Metric: d.Metrics.CapacitySearchRate, Tags: d.Tags, Time: d.Clock.Now(), Value: value})
	if f, ok := d.Recorder.(interface{ Flush() }); ok {
		f.Flush()
	}
}
