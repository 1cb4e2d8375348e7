package counter

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/executor"
)

// PacingVUsName is the executor name scenarios use.
const PacingVUsName = "pacing-vus"

// maxPacingVUs bounds the vus option: far beyond what one instance runs,
// low enough that the slot arithmetic cannot overflow.
const maxPacingVUs = 1_000_000

func init() {
	executor.Register(executor.Type{Name: PacingVUsName, Parse: parsePacingVUs})
}

// PacingVUsConfig is a parsed pacing-vus scenario: VUs virtual users, each
// starting an iteration every Interval for Duration (constant pacing, as
// load testers know it from tools that model users with a fixed cycle
// time). It is a closed model, since a VU never runs two iterations at
// once, but every iteration has an intended start, so lateness is measured:
//
//   - VU v (0-based) has its slots at startTime + v·Interval/VUs + k·Interval,
//     spreading the VUs evenly over one interval instead of starting them
//     all at once;
//   - an iteration starts at its slot, or as soon as the VU is free if the
//     previous iteration overran; the iteration's schedule_lag and
//     corrected_latency count from the slot;
//   - when an iteration overran by more than one interval, the VU runs the
//     latest slot that is due and drops the ones it skipped: each adds to
//     dropped_iterations and is charged a corrected_latency sample from
//     its slot to the moment the VU became free (outcome=dropped);
//   - after Duration no iteration starts; running ones get gracefulStop to
//     finish, then are interrupted.
type PacingVUsConfig struct {
	Scenario *executor.Scenario
	VUs      int
	Interval time.Duration
	Duration time.Duration
}

// pacingVUsOptions are the JSON options: the common ones, plus vus,
// interval and duration.
type pacingVUsOptions struct {
	executor.BaseOptions
	VUs      *int64             `json:"vus"`
	Interval *duration.Duration `json:"interval"`
	Duration *duration.Duration `json:"duration"`
}

// parsePacingVUs decodes and validates one pacing-vus scenario. Every
// error names the option path.
func parsePacingVUs(name string, raw json.RawMessage) (executor.Config, error) {
	var o pacingVUsOptions
	s, err := executor.DecodeScenario(name, raw, &o)
	if err != nil {
		return nil, err
	}
	c := &PacingVUsConfig{Scenario: s, VUs: 1}
	if o.VUs != nil {
		if *o.VUs < 1 || *o.VUs > maxPacingVUs {
			return nil, fmt.Errorf("scenarios.%s.vus: must be between 1 and %d, got %d", name, maxPacingVUs, *o.VUs)
		}
		c.VUs = int(*o.VUs)
	}
	if c.Interval, err = positiveDuration(name, "interval", o.Interval, "how often each VU starts an iteration"); err != nil {
		return nil, err
	}
	if c.Duration, err = positiveDuration(name, "duration", o.Duration, "how long iterations keep starting"); err != nil {
		return nil, err
	}
	if c.Duration > math.MaxInt64-s.GracefulStop {
		return nil, fmt.Errorf("scenarios.%s.duration: is too long", name)
	}
	return c, nil
}

// positiveDuration checks a required duration option that must be greater
// than zero; what says what the option is for.
func positiveDuration(scenario, option string, v *duration.Duration, what string) (time.Duration, error) {
	if v == nil {
		return 0, fmt.Errorf("scenarios.%s.%s: is required (%s, e.g. \"1s\")", scenario, option, what)
	}
	if *v <= 0 {
		return 0, fmt.Errorf("scenarios.%s.%s: must be greater than 0, got %s", scenario, option, v.Std())
	}
	return v.Std(), nil
}

// Base returns the common options.
func (c *PacingVUsConfig) Base() *executor.Scenario { return c.Scenario }

// MaxVUs is the number of VUs.
func (c *PacingVUsConfig) MaxVUs() int { return c.VUs }

// InitialVUs is the number of VUs.
func (c *PacingVUsConfig) InitialVUs() int { return c.VUs }

// MaxDuration is the duration plus gracefulStop.
func (c *PacingVUsConfig) MaxDuration() time.Duration { return c.Duration + c.Scenario.GracefulStop }

// Description is the banner line, e.g. "2 VUs starting an iteration every
// 200ms each, for 2s (gracefulStop: 30s)".
func (c *PacingVUsConfig) Description() string {
	vus := "VUs"
	if c.VUs == 1 {
		vus = "VU"
	}
	d := fmt.Sprintf("%d %s starting an iteration every %s each, for %s", c.VUs, vus, c.Interval, c.Duration)
	var facts []string
	if c.Scenario.Exec != "" && c.Scenario.Exec != "default" {
		facts = append(facts, "exec: "+c.Scenario.Exec)
	}
	if c.Scenario.StartTime > 0 {
		facts = append(facts, "startTime: "+c.Scenario.StartTime.String())
	}
	facts = append(facts, "gracefulStop: "+c.Scenario.GracefulStop.String())
	return d + " (" + strings.Join(facts, ", ") + ")"
}

// New builds the executor.
func (c *PacingVUsConfig) New(deps executor.Deps) executor.Executor {
	return &pacingVUs{cfg: c, deps: deps}
}

// pacingVUs runs one pacing-vus scenario. Progress reads it from other
// goroutines; executor.Tracker keeps the counters it reports.
type pacingVUs struct {
	cfg  *PacingVUsConfig
	deps executor.Deps

	executor.Tracker
	index atomic.Int64 // next iteration index

	errOnce sync.Once
	err     error
}

// Run starts one goroutine per VU, each keeping its own beat, and returns
// when all of them have given their VU back.
func (e *pacingVUs) Run(ctx context.Context) error {
	c := e.deps.Clock
	start := c.Now()
	e.Begin(start)

	// The hard stop: the regular duration plus gracefulStop, or an abort.
	hard, stop := context.WithCancel(ctx)
	defer stop()
	timer := c.NewTimer(e.cfg.MaxDuration())
	defer timer.Stop()
	go func() {
		select {
		case <-timer.C():
			stop()
		case <-hard.Done():
		}
	}()

	end := start.Add(e.cfg.Duration)
	n := time.Duration(e.cfg.VUs)
	iv := e.cfg.Interval
	var wg sync.WaitGroup
	for v := range n {
		// ⌊iv·v/n⌋, without the overflow of iv·v.
		offset := iv/n*v + iv%n*v/n
		wg.Go(func() { e.loop(hard, stop, start.Add(offset), end) })
	}
	wg.Wait()

	e.End(min(c.Now().Sub(start), e.cfg.MaxDuration()))
	if d := e.Dropped.Load(); d > 0 && e.deps.Logf != nil {
		e.deps.Logf("scenarios.%s: %d iterations were dropped because their VU was not free when their slot came (the interval is %s)",
			e.cfg.Scenario.Name, d, iv)
	}
	return e.err
}

// loop is one VU's life: take a VU, then start an iteration at each of its
// slots (first, first+interval, ...) before end.
func (e *pacingVUs) loop(hard context.Context, stop context.CancelFunc, slot, end time.Time) {
	if !slot.Before(end) {
		return // a duration shorter than the interval leaves this VU no slot
	}
	c := e.deps.Clock
	vu, err := e.deps.Pool.Get(hard)
	if err != nil {
		if hard.Err() == nil {
			e.errOnce.Do(func() { e.err = fmt.Errorf("scenarios.%s: getting a VU: %w", e.cfg.Scenario.Name, err) })
			stop()
		}
		return
	}
	e.hold(1)
	defer func() {
		e.deps.Pool.Put(vu)
		e.hold(-1)
	}()

	iv := e.cfg.Interval
	for {
		now := c.Now()
		if now.Before(slot) {
			if !clock.Sleep(c, slot.Sub(now), hard.Done()) {
				break
			}
			now = c.Now()
		}
		if hard.Err() != nil || !now.Before(end) {
			break
		}
		if late := now.Sub(slot); late >= iv {
			// The VU was busy (or still being initialised) for whole
			// slots: run the latest one now, drop the ones before it.
			skip := int64(late / iv)
			for range skip {
				e.deps.Drop(slot, now)
				slot = slot.Add(iv)
			}
			e.Dropped.Add(skip)
		}
		i := e.index.Add(1) - 1
		it := executor.Iteration{Scenario: e.cfg.Scenario, Index: i, LocalIndex: i, Intended: slot}
		res := vu.Run(hard, it)
		if e.deps.Account(vu, it, res, 0) {
			e.Completed.Add(1)
		} else {
			e.Interrupted.Add(1)
		}
		slot = slot.Add(iv)
		if !slot.Before(end) {
			return
		}
	}

	// The regular end or the hard stop came while slots were due that
	// never started: they are dropped. Slots still in the future (after an
	// abort) were never due and are not counted.
	now := c.Now()
	var n int64
	for ; slot.Before(end) && !slot.After(now); slot = slot.Add(iv) {
		e.deps.Drop(slot, now)
		n++
	}
	e.Dropped.Add(n)
}

// hold counts a VU taken (+1) or given back (-1).
func (e *pacingVUs) hold(d int64) {
	e.Active.Add(d)
	if e.deps.State != nil {
		e.deps.State.VUsActive.Add(d)
	}
}

// Progress reports Total as duration plus gracefulStop, as MaxDuration does.
func (e *pacingVUs) Progress() executor.Progress {
	return e.Tracker.Progress(e.deps.Clock.Now(), e.cfg.MaxDuration(), e.cfg.VUs)
}
