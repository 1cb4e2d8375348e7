package config

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
)

// MaxArrivalRate is the highest arrival rate, in arrivals per second, that
// one open-model scenario may ask for. Every arrival costs bookkeeping even
// when no VU is free to run it (it is then dropped and charged to
// corrected_latency), 0.15-0.25 µs of CPU on this project's 2-core
// machine: 3 s at 1,000,000/s took 3.2 s (2.8 million drops), 3 s at
// 10,000,000/s took 21 s, and 1/ns would take minutes per second of
// schedule. At this limit the drops of a run whose VUs all hang cost at
// most about a fifth of the time they accrued over. A faster rate could
// only drop arrivals behind schedule, so it is refused before the run
// starts.
const MaxArrivalRate = 1_000_000

// MaxVUs is the most VUs a scenario may hold on any machine: k6's cap on
// a stage's target. The memory check (VULimit) is usually far lower.
const MaxVUs = maxStageTarget

// VULimit is the most VUs this machine can hold, and why.
type VULimit struct {
	Max int64
	// Why explains Max in a sentence that follows "more than".
	Why string
}

// CheckLimits refuses, with exit code 104 and the option path, what cannot
// run on this machine: a scenario faster than MaxArrivalRate, or one that
// holds more VUs than lim.Max. cfgs are the parsed scenarios of o.
func CheckLimits(o *Options, cfgs []executor.Config, lim VULimit) error {
	raw, from, err := o.resolve()
	if err != nil {
		return err
	}
	for _, c := range cfgs {
		name := c.Base().Name
		err := checkRate(name, c)
		if err == nil {
			err = checkVUs(name, c, raw[name], lim)
		}
		if err != nil {
			if from != "" {
				err = fmt.Errorf("%w (the %q scenario is made from the %s options)", err, DefaultScenarioName, from)
			}
			return exitcode.Wrap(exitcode.InvalidConfig, err)
		}
	}
	return nil
}

// checkRate refuses an open-model scenario whose peak rate exceeds
// MaxArrivalRate, naming the option that asks for it.
func checkRate(name string, c executor.Config) error {
	sched := executor.Ask(c, nil).RateSchedule()
	if sched == nil {
		return nil
	}
	spec := sched.Spec()
	perSecond := func(r int64) float64 { return float64(r) * float64(time.Second) / float64(spec.TimeUnit) }
	too := func(option string, r int64) error {
		return fmt.Errorf("scenarios.%s.%s: %d per %s is %s arrivals/s, more than the %s/s one scenario can schedule "+
			"(each arrival costs bookkeeping even when it is dropped); lower the rate or split it over several instances",
			name, option, r, spec.TimeUnit, grouped(perSecond(r)), grouped(MaxArrivalRate))
	}
	if len(spec.Stages) == 0 {
		if perSecond(spec.Rate) > MaxArrivalRate {
			return too("rate", spec.Rate)
		}
		return nil
	}
	if perSecond(spec.StartRate) > MaxArrivalRate {
		return too("startRate", spec.StartRate)
	}
	for k, st := range spec.Stages {
		if perSecond(st.Target) > MaxArrivalRate {
			return too(fmt.Sprintf("stages[%d].target", k), st.Target)
		}
	}
	return nil
}

// vuOptions are the scenario options that ask for VUs, in the order they
// are checked.
var vuOptions = []string{"vus", "startVUs", "preAllocatedVUs", "maxVUs"}

// checkVUs refuses a scenario that may hold more VUs than lim or MaxVUs,
// naming the option that asks for them.
func checkVUs(name string, c executor.Config, raw json.RawMessage, lim VULimit) error {
	// A zero lim is a machine whose memory is unknown: only MaxVUs holds.
	limit, why := int64(MaxVUs), fmt.Sprintf("the %s VUs metronome allows on any machine", grouped(MaxVUs))
	if lim.Max > 0 && lim.Max < MaxVUs {
		limit, why = lim.Max, lim.Why
	}
	if int64(c.MaxVUs()) <= limit {
		return nil
	}
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(raw, &fields) // the scenario parsed, so raw is an object
	too := func(option string, n int64) error {
		return fmt.Errorf("scenarios.%s.%s: %d VUs are more than %s", name, option, n, why)
	}
	for _, opt := range vuOptions {
		var n int64
		if json.Unmarshal(fields[opt], &n) == nil && n > limit {
			return too(opt, n)
		}
	}
	if rv := executor.Ask(c, nil).VUStages; rv != nil {
		// The parsed stages, not raw's: a target written "1500" is 1500.
		for k, st := range rv.VUStages() {
			if st.Target > limit {
				return too(fmt.Sprintf("stages[%d].target", k), st.Target)
			}
		}
	}
	return fmt.Errorf("scenarios.%s: %d VUs are more than %s", name, c.MaxVUs(), why)
}

// grouped writes n with thousands separators: 1,000,000.
func grouped(n float64) string {
	if n >= 1e15 {
		return strconv.FormatFloat(n, 'g', 3, 64)
	}
	s := strconv.FormatInt(int64(n), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
