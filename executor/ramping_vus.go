package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"sync"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/executor/segment"
	"github.com/metronome-load/metronome/optdecode"
)

// RampingVUsName is the executor name scripts use.
const RampingVUsName = "ramping-vus"

// maxRampTarget is the most VUs a ramping-vus stage may ask for, as in k6.
const maxRampTarget = 100_000_000

// defaultGracefulRampDown is k6's default gracefulRampDown.
const defaultGracefulRampDown = 30 * time.Second

func init() {
	Register(Type{Name: RampingVUsName, Parse: parseRampingVUs})
}

// VUStage is one ramping-vus stage: go linearly from the previous stage's
// target to Target VUs over Duration.
type VUStage struct {
	Duration time.Duration
	Target   int64
}

// RampingVUsConfig is a parsed ramping-vus scenario: the number of looping
// VUs starts at StartVUs and follows Stages. A VU removed by a ramp-down
// finishes its iteration but is interrupted after GracefulRampDown.
type RampingVUsConfig struct {
	Scenario         *Scenario
	StartVUs         int64
	Stages           []VUStage
	GracefulRampDown time.Duration
	// ExpectedInterval, when on, back-fills corrected_latency (docs/DESIGN.md §2.3).
	ExpectedInterval ExpectedInterval
	// stripe is the instance's execution segment (nil: the whole test):
	// it holds its share of the global VU count at every step.
	stripe *segment.Tuple
}

type rampingVUsOptions struct {
	BaseOptions
	StartVUs         *int64             `json:"startVUs"`
	Stages           json.RawMessage    `json:"stages"`
	GracefulRampDown *duration.Duration `json:"gracefulRampDown"`
	ExpectedInterval *ExpectedInterval  `json:"expectedInterval"`
}

func parseRampingVUs(name string, raw json.RawMessage) (Config, error) {
	var o rampingVUsOptions
	s, err := DecodeScenario(name, raw, &o)
	if err != nil {
		return nil, err
	}
	c := &RampingVUsConfig{Scenario: s, StartVUs: 1, GracefulRampDown: defaultGracefulRampDown}
	if o.StartVUs != nil {
		if *o.StartVUs < 0 || *o.StartVUs > maxRampTarget {
			return nil, fmt.Errorf("scenarios.%s.startVUs: must be between 0 and %d, got %d", name, maxRampTarget, *o.StartVUs)
		}
		c.StartVUs = *o.StartVUs
	}
	stages, err := optdecode.RequiredStages("scenarios."+name+".stages", o.Stages, maxRampTarget)
	if err != nil {
		return nil, err
	}
	var total time.Duration
	peak := c.StartVUs
	for _, st := range stages {
		if st.Duration.Std() > math.MaxInt64-total {
			return nil, fmt.Errorf("scenarios.%s.stages: the stages' total duration is too long", name)
		}
		total += st.Duration.Std()
		peak = max(peak, *st.Target)
		c.Stages = append(c.Stages, VUStage{Duration: st.Duration.Std(), Target: *st.Target})
	}
	if peak == 0 {
		return nil, fmt.Errorf("scenarios.%s.stages: startVUs or one stage's target must be greater than 0", name)
	}
	if err = fitsHardStop(s, "stages", total); err != nil {
		return nil, err
	}
	if o.GracefulRampDown != nil {
		if *o.GracefulRampDown < 0 {
			return nil, fmt.Errorf("scenarios.%s.gracefulRampDown: must not be negative, got %s", name, o.GracefulRampDown.Std())
		}
		c.GracefulRampDown = o.GracefulRampDown.Std()
	}
	c.ExpectedInterval = expectedIntervalOption(o.ExpectedInterval)
	return c, nil
}

// DefaultExpectedInterval gives a scenario that set no expectedInterval
// def, or auto, as for constant-vus.
func (c *RampingVUsConfig) DefaultExpectedInterval(def ExpectedInterval) {
	c.ExpectedInterval = withDefault(c.ExpectedInterval, def, IntervalAuto)
}

// BackFillInterval is the scenario's expectedInterval.
func (c *RampingVUsConfig) BackFillInterval() ExpectedInterval { return c.ExpectedInterval }

// Base returns the common options.
func (c *RampingVUsConfig) Base() *Scenario { return c.Scenario }

// VUStages are the stages, as parsed (see VUStaged).
func (c *RampingVUsConfig) VUStages() []VUStage { return c.Stages }

// Model is ModelClosed.
func (c *RampingVUsConfig) Model() Model { return ModelClosed }

// MaxVUs is the largest of startVUs and the stage targets (this
// instance's share of it).
func (c *RampingVUsConfig) MaxVUs() int {
	m := c.StartVUs
	for _, s := range c.Stages {
		m = max(m, s.Target)
	}
	return int(c.stripe.Scale(m))
}

// InitialVUs is startVUs (this instance's share of it).
func (c *RampingVUsConfig) InitialVUs() int { return int(c.stripe.Scale(c.StartVUs)) }

// StagesDuration is the sum of the stage durations, the regular duration.
func (c *RampingVUsConfig) StagesDuration() time.Duration {
	var d time.Duration
	for _, s := range c.Stages {
		d += s.Duration
	}
	return d
}

// MaxDuration is the stages' total plus gracefulStop.
func (c *RampingVUsConfig) MaxDuration() time.Duration {
	return c.StagesDuration() + c.Scenario.GracefulStop
}

// Description is the banner line.
func (c *RampingVUsConfig) Description() string {
	return fmt.Sprintf("Up to %d looping VUs for %s over %d stages", c.MaxVUs(), c.StagesDuration(), len(c.Stages)) +
		bannerFacts(c.Scenario, c.ExpectedInterval, "gracefulRampDown: "+c.GracefulRampDown.String())
}

// New builds the executor.
func (c *RampingVUsConfig) New(deps Deps) Executor {
	return &rampingVUs{cfg: c, loop: NewClosedLoop(deps, c.Scenario, c.StagesDuration(), c.MaxVUs(), c.ExpectedInterval, c.stripe)}
}

// Segmented keeps the stages and gives the instance its stripe: at every
// moment it holds its share of the VUs the stages call for.
func (c *RampingVUsConfig) Segmented(t *segment.Tuple) (Config, error) {
	cp := *c
	cp.stripe = t
	return &cp, nil
}

// rampStepper walks the VU-count changes of a ramping-vus schedule in time
// order, one at a time, so that a ramp to millions of VUs needs no table.
// All arithmetic is in integer nanoseconds with truncating division.
type rampStepper struct {
	stages []VUStage
	stage  int
	start  time.Duration // start of the current stage
	from   int64         // VUs at the start of the current stage
	k      int64         // steps of the current stage already taken
}

// next returns the offset from the scenario start of the next change and
// the VU count from then on; ok is false after the last change.
func (s *rampStepper) next() (at time.Duration, vus int64, ok bool) {
	for s.stage < len(s.stages) {
		st := s.stages[s.stage]
		f, t, d := s.from, st.Target, st.Duration
		steps := t - f
		if steps < 0 {
			steps = -steps
		}
		if d == 0 && steps > 0 {
			steps = 1
		}
		if s.k < steps {
			s.k++
			switch {
			case d == 0:
				return s.start, t, true
			case t > f:
				// VU f+k starts at S + D·k/(T−F).
				return s.start + mulDiv(d, s.k, t-f), f + s.k, true
			default:
				// The count drops from F−k+1 to F−k at S + D·k/(F−T).
				return s.start + mulDiv(d, s.k, f-t), f - s.k, true
			}
		}
		s.start += d
		s.from = t
		s.stage++
		s.k = 0
	}
	return 0, 0, false
}

// mulDiv returns d·k/n truncated, for 0 ≤ k ≤ n, without overflowing.
func mulDiv(d time.Duration, k, n int64) time.Duration {
	hi, lo := bits.Mul64(uint64(d), uint64(k))
	q, _ := bits.Div64(hi, lo, uint64(n))
	return time.Duration(q)
}

type rampingVUs struct {
	cfg  *RampingVUsConfig
	loop *ClosedLoop
}

func (e *rampingVUs) Progress() Progress { return e.loop.Progress() }

// BackFillAccount is the loop's (see BackFillAccounter).
func (e *rampingVUs) BackFillAccount() BackFillAccount { return e.loop.BackFillAccount() }

// rampHandle is one slot of the ramping schedule: VU number i+1 of the
// schedule is handle i, and handle i is active while the schedule wants
// more than i VUs, which makes ramp-downs LIFO. A handle keeps its VU
// while it runs an iteration after being deactivated, so a ramp-up within
// gracefulRampDown reuses the VU instead of taking another.
type rampHandle struct {
	mu      sync.Mutex
	active  bool
	running bool   // a worker goroutine holds a VU for this handle
	gen     uint64 // bumped on every (de)activation
	ctx     context.Context
	cancel  context.CancelFunc
}

// rampStop is the hard stop due gracefulRampDown after a deactivation; it
// is void if the handle was activated again since (gen differs).
type rampStop struct {
	h   *rampHandle
	gen uint64
	at  time.Duration
}

// rampController runs one ramping-vus scenario. Only the goroutine in Run
// touches handles, count and stops; workers touch their own handle under
// its lock.
type rampController struct {
	l        *ClosedLoop
	hard     context.Context
	rampDown time.Duration

	handles []*rampHandle
	count   int64
	stops   []rampStop // pending, in time order since rampDown is fixed
	wg      sync.WaitGroup
}

// Run follows the schedule: it wakes at each change of the VU count and at
// each ramp-down hard stop, activating and deactivating handles. After the
// last stage it waits for the VUs still finishing, up to gracefulStop.
func (e *rampingVUs) Run(ctx context.Context) error {
	l := e.loop
	r := l.run
	hard := l.Begin(ctx)
	defer l.Stop()
	clk := r.deps.Clock
	start := r.Began()
	c := &rampController{l: l, hard: hard, rampDown: e.cfg.GracefulRampDown}
	steps := &rampStepper{stages: e.cfg.Stages, from: e.cfg.StartVUs}
	at, vus, more := steps.next()
	if r.regular > 0 {
		c.setCount(e.cfg.StartVUs, 0)
	}
	for {
		next := r.regular
		if more && at < next {
			next = at
		}
		if len(c.stops) > 0 && c.stops[0].at < next {
			next = c.stops[0].at
		}
		if !clock.Sleep(clk, start.Add(next).Sub(clk.Now()), hard.Done()) {
			break
		}
		// A drop at the very end of the stages (a last stage ramping to
		// fewer VUs) is a ramp-down like the others, with its
		// gracefulRampDown, as in k6; nothing starts at the end.
		for more && at == next && (at < r.regular || r.stripe.Scale(vus) < c.count) {
			c.setCount(vus, at)
			at, vus, more = steps.next()
		}
		c.fireStops(next)
		if next >= r.regular {
			c.drain(start)
			break
		}
	}
	l.Stop()
	c.wg.Wait()
	return l.Finish()
}

// drain waits after the regular end, while no VU starts an iteration, for
// the VUs still running one; it keeps firing ramp-down hard stops and
// returns when all VUs are back or the hard stop (or an abort) comes.
func (c *rampController) drain(start time.Time) {
	clk := c.l.run.deps.Clock
	allBack := make(chan struct{})
	go func() {
		c.wg.Wait()
		close(allBack)
	}()
	for {
		var fire <-chan time.Time
		var t clock.Timer
		if len(c.stops) > 0 {
			t = clk.NewTimer(start.Add(c.stops[0].at).Sub(clk.Now()))
			fire = t.C()
		}
		select {
		case <-allBack:
		case <-c.hard.Done():
		case <-fire:
			t.Stop()
			c.fireStops(c.stops[0].at)
			continue
		}
		if t != nil {
			t.Stop()
		}
		return
	}
}

// setCount activates or deactivates handles, last in first out, until the
// schedule's count is n; at is the offset of the change.
// n is the global count; the instance holds the global VU slots of its
// stripe below n.
func (c *rampController) setCount(n int64, at time.Duration) {
	n = c.l.run.stripe.Scale(n)
	for c.count < n {
		if int64(len(c.handles)) == c.count {
			c.handles = append(c.handles, &rampHandle{})
		}
		c.activate(c.handles[c.count])
		c.count++
	}
	for c.count > n {
		c.count--
		c.deactivate(c.handles[c.count], at)
	}
}

func (c *rampController) activate(h *rampHandle) {
	h.mu.Lock()
	h.active = true
	h.gen++
	if h.ctx == nil || h.ctx.Err() != nil {
		h.ctx, h.cancel = context.WithCancel(c.hard)
	}
	spawn := !h.running
	h.running = true
	h.mu.Unlock()
	if spawn {
		c.wg.Go(func() { c.work(h) })
	}
}

func (c *rampController) deactivate(h *rampHandle, at time.Duration) {
	h.mu.Lock()
	h.active = false
	h.gen++
	gen, running := h.gen, h.running
	h.mu.Unlock()
	if running {
		c.stops = append(c.stops, rampStop{h: h, gen: gen, at: at + min(c.rampDown, math.MaxInt64-at)})
	}
}

// fireStops interrupts the iterations of handles whose ramp-down grace
// ended by offset now.
func (c *rampController) fireStops(now time.Duration) {
	for len(c.stops) > 0 && c.stops[0].at <= now {
		s := c.stops[0]
		c.stops = c.stops[1:]
		s.h.mu.Lock()
		if s.h.gen == s.gen && s.h.running {
			s.h.cancel()
		}
		s.h.mu.Unlock()
	}
}

// work is a handle's worker: it takes a VU and loops iterations while the
// handle is active, then gives the VU back.
func (c *rampController) work(h *rampHandle) {
	l := c.l
	vu, ok := l.Acquire()
	for {
		h.mu.Lock()
		if !ok || !h.active || !l.CanStart() {
			// Give the VU back under the lock so that a reactivation
			// either sees this worker still running or starts a new one
			// after the VU is back in the pool.
			h.running = false
			if ok {
				l.Release(vu)
			}
			h.mu.Unlock()
			return
		}
		ctx := h.ctx
		h.mu.Unlock()
		l.Iterate(ctx, vu, l.NextIndex())
	}
}
