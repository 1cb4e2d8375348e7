package counter

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/segment"
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
		return 0, fmt.Errorf("scenarios.%s.%s: required: %s, e.g. \"1s\"", scenario, option, what)
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

// Segmented refuses execution segments: each VU's beat is placed by its
// number among all the scenario's VUs, which one instance of a split test
// does not know.
func (c *PacingVUsConfig) Segmented(*segment.Tuple) (executor.Config, error) {
	return nil, executor.ErrNoSegments
}

// Model is closed: a VU never runs two iterations at once.
func (c *PacingVUsConfig) Model() executor.Model { return executor.ModelClosed }

// New builds the executor on the kit's closed loop, which owns the
// deadlines, the VUs, the accounting and the progress counters.
func (c *PacingVUsConfig) New(deps executor.Deps) executor.Executor {
	return &pacingVUs{cfg: c, clk: deps.Clock, logf: deps.Logf,
		loop: executor.NewClosedLoop(deps, c.Scenario, c.Duration, c.VUs, executor.ExpectedInterval{}, nil)}
}

// pacingVUs runs one pacing-vus scenario: what is its own is where each
// VU's slots fall and what happens to the ones it misses.
type pacingVUs struct {
	cfg  *PacingVUsConfig
	clk  clock.Clock
	logf func(format string, args ...any)
	loop *executor.ClosedLoop
}

// Run runs one worker per VU, each keeping its own beat.
func (e *pacingVUs) Run(ctx context.Context) error {
	n := time.Duration(e.cfg.VUs)
	iv := e.cfg.Interval
	err := e.loop.Run(ctx, e.cfg.VUs, func(hard context.Context, v int, vu executor.VU) {
		// ⌊iv·v/n⌋, without the overflow of iv·v.
		offset := iv/n*time.Duration(v) + iv%n*time.Duration(v)/n
		end := e.loop.RegularEnd()
		e.beat(hard, vu, end.Add(offset-e.cfg.Duration), end)
	})
	if d := e.loop.Tracker().Dropped.Load(); d > 0 && e.logf != nil {
		e.logf("scenarios.%s: %d iterations were dropped because their VU was not free when their slot came (the interval is %s)",
			e.cfg.Scenario.Name, d, iv)
	}
	return err
}

// beat starts an iteration on vu at each of its slots (first,
// first+interval, ...) before end.
func (e *pacingVUs) beat(hard context.Context, vu executor.VU, slot, end time.Time) {
	l, iv := e.loop, e.cfg.Interval
	for slot.Before(end) {
		now := e.clk.Now()
		if now.Before(slot) {
			if !clock.Sleep(e.clk, slot.Sub(now), hard.Done()) {
				break
			}
			now = e.clk.Now()
		}
		if !l.CanStart() {
			break
		}
		// The VU was busy (or still being initialised) for whole slots:
		// run the latest one now, drop the ones before it.
		for ; now.Sub(slot) >= iv; slot = slot.Add(iv) {
			l.DropIntended(slot, now)
		}
		l.IterateAt(hard, vu, l.NextIndex(), slot)
		slot = slot.Add(iv)
	}
	// The regular end or the hard stop came while slots were due that
	// never started: they are dropped. Slots still in the future (after an
	// abort) were never due and are not counted.
	now := e.clk.Now()
	for ; slot.Before(end) && !slot.After(now); slot = slot.Add(iv) {
		l.DropIntended(slot, now)
	}
}

// Progress reports Total as duration plus gracefulStop, as MaxDuration does.
func (e *pacingVUs) Progress() executor.Progress { return e.loop.Progress() }
