package executor

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/executor/schedule"
	"github.com/metronome-load/metronome/optdecode"
)

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
