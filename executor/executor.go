// Package executor turns scenarios into iterations: it decides when each
// iteration starts and on which VU, and accounts for every iteration that
// was intended. It knows nothing of JavaScript; it drives the VU interface,
// which the js package implements and tests fake.
package executor

import (
	"context"
	"encoding/json"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/executor/segment"
	"github.com/metronome-load/metronome/extension"
	"github.com/metronome-load/metronome/metrics"
)

// Scenario holds the options every executor shares (k6's common scenario
// options). Executor-specific options live in each executor's Config.
type Scenario struct {
	Name         string
	Executor     string
	StartTime    time.Duration
	GracefulStop time.Duration
	Exec         string
	Env          map[string]string
	Tags         map[string]string
	// TagSets are the tag sets of the scenario's samples, computed once
	// by the engine (NewScenarioTags) before the scenario runs and read
	// by both its executor and its VUs; nil until then.
	TagSets *ScenarioTags
}

// Iteration describes one iteration handed to a VU.
type Iteration struct {
	Scenario *Scenario
	// Index is the scenario's global 0-based iteration index
	// (exec.scenario.iterationInTest).
	Index int64
	// LocalIndex is the 0-based index among the iterations this instance
	// runs (exec.scenario.iterationInInstance).
	LocalIndex int64
	// Intended is the iteration's intended start time; zero for closed-model
	// executors.
	Intended time.Time
	// BackFill, set by a closed-model scenario that back-fills, is the
	// VU's back-fill state: the iteration's requests record their
	// corrected_latency back-filled with its interval. Nil otherwise.
	BackFill *BackFiller
}

// Outcome says how an iteration ended.
type Outcome uint8

// The outcomes. A Failed iteration threw an exception but still counts as
// completed, as in k6; an Interrupted one was cut off by the hard stop.
const (
	Completed Outcome = iota
	Failed
	Interrupted
)

// Result is what a VU reports about one iteration.
type Result struct {
	Outcome Outcome
	// Start and End bracket the call of the exec function (including its
	// event loop), read by the VU from its own clock: the JavaScript VU
	// reads the wall clock (time.Now), executortest's fake VUs the clock
	// of their test. Executors compare them with their clock's times, so
	// both must be the same time source.
	Start, End time.Time
	// Tags are the tags of iteration-level samples: run tags, scenario
	// tags, the scenario and group system tags and any exec.vu.tags.
	Tags *metrics.TagSet
}

// VU is one initialised virtual user as an executor sees it.
type VU interface {
	// ID is the VU's 1-based number in this instance (__VU).
	ID() uint64
	// Run runs one iteration. When ctx is cancelled (the hard stop or a
	// test abort) the VU must interrupt the iteration and return promptly.
	Run(ctx context.Context, it Iteration) Result
	// Recorder takes the samples the executor emits for this VU's
	// iterations; it is the VU's own buffer, so recording takes no lock.
	Recorder() metrics.Recorder
}

// Pool hands out initialised VUs. One pool serves every scenario of a run,
// so a VU freed by one scenario is reused by a later one.
type Pool interface {
	// Get returns an idle VU, initialising a new one if none is idle.
	// Initialising runs the script's init context and can take
	// milliseconds; arrival-rate executors call it off their dispatch path.
	Get(ctx context.Context) (VU, error)
	// Put returns a VU to the pool.
	Put(VU)
}

// Executor runs one scenario.
type Executor interface {
	// Run runs the scenario to its end: its regular duration, then the
	// graceful stop. It returns when every VU it took is back in the pool.
	// Cancelling ctx is a whole-test abort: running iterations are
	// interrupted at once.
	Run(ctx context.Context) error
	// Progress reports where the scenario is, for the live display and
	// the vus gauge. Safe to call from any goroutine.
	Progress() Progress
}

// Progress is a snapshot of a running scenario.
type Progress struct {
	Elapsed, Total time.Duration
	// ActiveVUs are the VUs the scenario holds (closed model) or that are
	// running an iteration (open model), as k6's vus metric counts them.
	ActiveVUs int
	MaxVUs    int
	Completed int64
	// Interrupted counts iterations cut off by the hard stop.
	Interrupted int64
	// Dropped counts intended iterations that never started.
	Dropped int64
	// Backlog is the number of due iterations waiting for a VU
	// (intended-arrival-rate only).
	Backlog int64
	Done    bool
}

// Config is one parsed and validated scenario.
type Config interface {
	// Base returns the common options.
	Base() *Scenario
	// Model says whether the scenario is open (iterations have intended
	// starts, the executor reports an Account) or closed; the summary's
	// account of the scenario follows it.
	Model() Model
	// MaxVUs is the most VUs the scenario can hold at once.
	MaxVUs() int
	// InitialVUs is how many VUs the scenario needs when it starts, for
	// pre-initialisation.
	InitialVUs() int
	// MaxDuration is the regular duration plus the graceful stop.
	MaxDuration() time.Duration
	// Description is the banner line, e.g. "10 looping VUs for 30s".
	Description() string
	// New builds the executor.
	New(deps Deps) Executor
	// Segmented returns a copy of the config as the instance of the
	// execution segment t runs it (its share of the VUs, iterations or
	// arrivals, striped as k6 stripes them), leaving the config itself
	// unchanged; t is never nil. A config that cannot be split over
	// instances returns ErrNoSegments.
	Segmented(t *segment.Tuple) (Config, error)
}

// Deps is what an executor needs from the run around it.
type Deps struct {
	Pool  Pool
	Clock clock.Clock
	// Metrics are the run's built-in metrics.
	Metrics *metrics.Builtin
	// Tags are the tags of executor-level samples: the run tags plus the
	// scenario system tag (k6 tags dropped_iterations with these only).
	Tags *metrics.TagSet
	// IterationTags are the tags of iteration samples the executor emits
	// on behalf of an iteration that never ran on a VU (dropped
	// iterations' corrected_latency): run tags, scenario tags, scenario and
	// group system tags.
	IterationTags *metrics.TagSet
	// Recorder takes executor-level samples (dropped_iterations and the
	// corrected_latency of iterations that never reached a VU).
	Recorder metrics.Recorder
	// State counts iterations and VUs across the instance
	// (k6/execution's exec.instance).
	State *State
	// Logf reports warnings such as "insufficient VUs".
	Logf func(format string, args ...any)
	// Meter measures spans of the scenario, for an executor that adapts
	// to what it measured (see Meter); nil where the run offers none.
	Meter Meter
}

// Type is a registered executor: its name and how to parse its options.
type Type struct {
	Name string
	// Parse decodes and validates one scenario's options, given as the
	// scenario's JSON object. Errors name the option path, for example
	// "scenarios.api.rate: must be greater than 0".
	Parse func(scenario string, raw json.RawMessage) (Config, error)
}

// Register makes an executor type available to scripts.
func Register(t Type) { extension.Register(extension.Executor, t.Name, t) }

// Lookup returns the registered executor type called name.
func Lookup(name string) (Type, bool) {
	e, ok := extension.Get(extension.Executor, name)
	if !ok {
		return Type{}, false
	}
	t, ok := e.Value.(Type)
	return t, ok
}
