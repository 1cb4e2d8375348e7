// Package capacity is the capacity-search executor: it looks for the
// highest arrival rate at which the target meets a latency objective on
// corrected_latency, and says whose limit it found, the server's or the
// generator's (docs/executors.md). It is written on the public executor
// kit (executor.ArrivalConfig), as an extension's executor would be: each
// step is an intended-arrival-rate run of its own, judged through the
// executor.Meter the engine provides.
package capacity

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/segment"
	"github.com/metronome-load/metronome/metrics"
)

// Name is the executor name scripts use.
const Name = "capacity-search"

func init() { executor.Register(executor.Type{Name: Name, Parse: Parse}) }

// Defaults of the options.
const (
	defaultStepDuration = 10 * time.Second
	// defaultDrain is how long a step's backlog may drain (gracefulStop)
	// unless the scenario says otherwise: long enough for a server to
	// finish what it holds, short enough not to double the search.
	defaultDrain     = time.Second
	defaultGrowth    = 2.0
	defaultPrecision = 0.05
	defaultErrors    = 0.01
)

// Bounds of the options that shape the search, so that it ends in a
// reasonable number of steps.
const (
	minGrowth, maxGrowth       = 1.05, 10.0
	minPrecision, maxPrecision = 0.01, 1.0
	maxSteps                   = 200
)

// options are the JSON options of capacity-search.
type options struct {
	executor.BaseOptions
	StartRate       *int64             `json:"startRate"`
	MaxRate         *int64             `json:"maxRate"`
	TimeUnit        *duration.Duration `json:"timeUnit"`
	StepDuration    *duration.Duration `json:"stepDuration"`
	Objective       *string            `json:"objective"`
	MaxErrorRate    *float64           `json:"maxErrorRate"`
	Growth          *float64           `json:"growth"`
	Precision       *float64           `json:"precision"`
	PreAllocatedVUs *int64             `json:"preAllocatedVUs"`
	MaxVUs          *int64             `json:"maxVUs"`
}

// Config is a parsed capacity-search scenario.
type Config struct {
	scenario     *executor.Scenario
	search       search
	unit, step   time.Duration
	objective    *metrics.ThresholdExpr
	maxErrorRate float64
	pre, maxVUs  int
	steps        int
	// tuple is the instance's execution segment, nil for the whole test.
	tuple *segment.Tuple
}

// Parse decodes and checks one scenario's options; every error names the
// option path.
func Parse(name string, raw json.RawMessage) (executor.Config, error) {
	var o options
	sc, err := executor.DecodeScenario(name, raw, &o)
	if err != nil {
		return nil, err
	}
	opts := executor.ArrivalOptions{Scenario: name}
	bad := opts.Errorf
	if key := nullOption(raw); key != "" {
		return nil, bad(key, "is null, which a script's NaN, Infinity or undefined value becomes: give a value, or leave the option out for its default")
	}
	if o.GracefulStop == nil {
		sc.GracefulStop = defaultDrain
	}
	c := &Config{scenario: sc, step: defaultStepDuration, maxErrorRate: defaultErrors,
		search: search{growth: defaultGrowth, precision: defaultPrecision}}
	if c.unit, err = opts.TimeUnit(o.TimeUnit); err != nil {
		return nil, err
	}
	switch {
	case o.StartRate == nil:
		return nil, bad("startRate", "required: the arrival rate of the first step, per timeUnit")
	case *o.StartRate <= 0:
		return nil, bad("startRate", "must be greater than 0")
	case o.MaxRate == nil:
		return nil, bad("maxRate", "required: the highest arrival rate to try, per timeUnit")
	case *o.MaxRate < *o.StartRate:
		return nil, bad("maxRate", "must not be less than startRate (%d)", *o.StartRate)
	case *o.MaxRate > int64(c.unit):
		return nil, bad("maxRate", "%d per %s is more than one iteration per nanosecond", *o.MaxRate, c.unit)
	}
	c.search.start, c.search.limit = *o.StartRate, *o.MaxRate
	if o.StepDuration != nil {
		if c.step = o.StepDuration.Std(); c.step < time.Second {
			return nil, bad("stepDuration", "must be at least 1s, got %s", o.StepDuration)
		}
	}
	if o.Objective == nil {
		return nil, bad("objective", "required: a threshold on corrected_latency each step must meet, such as 'p(99)<50'")
	}
	if c.objective, err = metrics.ParseThreshold(*o.Objective); err != nil {
		return nil, bad("objective", "%v", err)
	}
	if !c.objective.Agg.ValidFor(metrics.Trend) {
		return nil, bad("objective", "%q is not valid for corrected_latency, a trend; use avg, min, max, med or p(N)", c.objective.AggName())
	}
	if c.objective.Op != metrics.OpLess && c.objective.Op != metrics.OpLessEqual {
		return nil, bad("objective", "%q must bound latency from above, with < or <=", c.objective.Source)
	}
	if b := c.objective.Bound; b < 0 || b == 0 && c.objective.Op == metrics.OpLess {
		return nil, bad("objective", "%q is below any latency, which is never negative: no rate can meet it", c.objective.Source)
	}
	if o.MaxErrorRate != nil {
		if c.maxErrorRate = *o.MaxErrorRate; c.maxErrorRate < 0 || c.maxErrorRate > 1 {
			return nil, bad("maxErrorRate", "must be between 0 and 1, got %v", c.maxErrorRate)
		}
	}
	if o.Growth != nil {
		if c.search.growth = *o.Growth; c.search.growth < minGrowth || c.search.growth > maxGrowth {
			return nil, bad("growth", "must be between %v and %v, got %v", minGrowth, maxGrowth, c.search.growth)
		}
	}
	if o.Precision != nil {
		if c.search.precision = *o.Precision; c.search.precision < minPrecision || c.search.precision > maxPrecision {
			return nil, bad("precision", "must be between %v and %v, got %v", minPrecision, maxPrecision, c.search.precision)
		}
	}
	if c.pre, c.maxVUs, err = opts.VUs(o.PreAllocatedVUs, o.MaxVUs, true); err != nil {
		return nil, err
	}
	if c.steps = c.search.maxSteps(); c.steps > maxSteps {
		return nil, bad("growth", "the search could take %d steps, more than %d; raise growth or precision, or narrow startRate to maxRate", c.steps, maxSteps)
	}
	if c.period() > math.MaxInt64/time.Duration(c.steps) {
		return nil, bad("stepDuration", "the search would last too long")
	}
	return c, nil
}

// nullOption returns the first option of raw, in the order of options'
// fields, that is null, "" when none is: an option null by mistake (a
// script's NaN) must not take its default in silence.
func nullOption(raw json.RawMessage) string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return ""
	}
	for _, key := range []string{"startRate", "maxRate", "timeUnit", "stepDuration", "objective", "maxErrorRate", "growth", "precision", "preAllocatedVUs", "maxVUs"} {
		if v, ok := fields[key]; ok && string(v) == "null" {
			return key
		}
	}
	return ""
}

// Objective is the threshold each step must meet on corrected_latency, as
// written.
func (c *Config) Objective() string { return c.objective.Source }

// period is the time from one step's start to the next's: the step, then
// its drain (gracefulStop).
func (c *Config) period() time.Duration { return c.step + c.scenario.GracefulStop }

// Base returns the common options.
func (c *Config) Base() *executor.Scenario { return c.scenario }

// Model is ModelOpen: every arrival has an intended start.
func (c *Config) Model() executor.Model { return executor.ModelOpen }

// MaxVUs is maxVUs, the instance's share with execution segments.
func (c *Config) MaxVUs() int { return int(c.tuple.Scale(int64(c.maxVUs))) }

// InitialVUs is preAllocatedVUs, the instance's share with segments.
func (c *Config) InitialVUs() int { return int(c.tuple.Scale(int64(c.pre))) }

// MaxDuration is the longest the search can take: its most steps, each
// with its drain.
func (c *Config) MaxDuration() time.Duration { return time.Duration(c.steps) * c.period() }

// Policy is Queue: within a step, an arrival that finds every VU busy
// waits for one, and the wait is charged.
func (c *Config) Policy() executor.Policy { return executor.Queue }

// Description is the banner line: "capacity search 100.00 to 3000.00
// iterations/s, 4s steps, objective p(99)<50 on corrected_latency (maxVUs:
// 50-400, gracefulStop: 1s)".
func (c *Config) Description() string {
	vus := fmt.Sprint(c.MaxVUs())
	if c.InitialVUs() != c.MaxVUs() {
		vus = fmt.Sprintf("%d-%d", c.InitialVUs(), c.MaxVUs())
	}
	return fmt.Sprintf("capacity search %.2f to %.2f iterations/s, %s steps, objective %s on corrected_latency (maxVUs: %s, gracefulStop: %s)",
		c.perSecond(c.search.start), c.perSecond(c.search.limit), c.step, c.objective.Source, vus, c.scenario.GracefulStop)
}

// perSecond is a rate per timeUnit as a rate per second.
func (c *Config) perSecond(rate int64) float64 {
	return float64(rate) * float64(time.Second) / float64(c.unit)
}

// Segmented returns the config as the instance of the execution segment t
// runs it: each step's share of the VU budget and its stripe of the
// step's arrivals, at their global times.
func (c *Config) Segmented(t *segment.Tuple) (executor.Config, error) {
	cp := *c
	cp.tuple = t
	return &cp, nil
}

// New builds the executor.
func (c *Config) New(deps executor.Deps) executor.Executor {
	return &Executor{cfg: c, deps: deps}
}
