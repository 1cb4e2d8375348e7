package optdecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/metronome-load/metronome/duration"
)

// Stage is one step of a ramp: reach Target over Duration. Target is nil
// when the stage does not say (an error wherever a stage is used).
type Stage struct {
	Duration duration.Duration `json:"duration"`
	Target   *int64            `json:"target"`
}

// Stages reads an array of {duration, target} stages at path, as the
// stages option and the ramping executors write them. Each stage is an
// object with exactly those keys; duration is required. Values are only
// decoded here: CheckStages checks their ranges.
func Stages(path string, raw json.RawMessage) ([]Stage, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, expected(path, "an array of {duration, target}", raw)
	}
	stages := make([]Stage, len(items))
	for i, it := range items {
		p := fmt.Sprintf("%s[%d]", path, i)
		fields, err := Object(p, it, "duration", "target")
		if err != nil {
			return nil, err
		}
		d, ok := fields["duration"]
		if !ok || IsNull(d) {
			return nil, Required(p + ".duration")
		}
		if stages[i].Duration, err = Duration(p+".duration", d); err != nil {
			return nil, err
		}
		if t, ok := fields["target"]; ok && !IsNull(t) {
			n, set, err := Int(p+".target", t)
			if err != nil {
				return nil, err
			}
			if set {
				stages[i].Target = &n
			}
		}
	}
	return stages, nil
}

// CheckStages checks decoded stages at path: durations not negative,
// every target set and between 0 and maxTarget.
func CheckStages(path string, stages []Stage, maxTarget int64) error {
	for i, st := range stages {
		p := fmt.Sprintf("%s[%d]", path, i)
		if st.Duration < 0 {
			return Errorf(p+".duration", "must not be negative, got %s", st.Duration)
		}
		if st.Target == nil {
			return Required(p + ".target")
		}
		if *st.Target < 0 || *st.Target > maxTarget {
			return Errorf(p+".target", "must be between 0 and %d, got %d", maxTarget, *st.Target)
		}
	}
	return nil
}

// RequiredStages reads and checks the stages of a ramping scenario at
// path, where at least one stage is required: absent, null and [] are all
// "required". The ramping executors parse their stages with it, so a
// scenario's stages are read and worded as the stages option is.
func RequiredStages(path string, raw json.RawMessage, maxTarget int64) ([]Stage, error) {
	if len(bytes.TrimSpace(raw)) == 0 || IsNull(raw) {
		return nil, Required(path)
	}
	stages, err := Stages(path, raw)
	if err != nil {
		return nil, err
	}
	if len(stages) == 0 {
		return nil, Required(path)
	}
	if err := CheckStages(path, stages, maxTarget); err != nil {
		return nil, err
	}
	return stages, nil
}

// ParseStage reads one stage written "duration:target", e.g. "30s:10",
// the textual form of flags and K6_STAGES.
func ParseStage(s string, maxTarget int64) (Stage, error) {
	s = strings.TrimSpace(s)
	d, t, ok := strings.Cut(s, ":")
	d, t = strings.TrimSpace(d), strings.TrimSpace(t)
	if !ok || d == "" || t == "" {
		return Stage{}, fmt.Errorf("stage %q must be written duration:target, e.g. 30s:10", s)
	}
	dur, err := duration.Parse(d)
	if err != nil {
		return Stage{}, fmt.Errorf("stage %q: %q is not a duration such as 30s or 1m30s", s, d)
	}
	if dur < 0 {
		return Stage{}, fmt.Errorf("stage %q: the duration must not be negative", s)
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return Stage{}, fmt.Errorf("stage %q: target %q is not a whole number", s, t)
	}
	if n < 0 || n > maxTarget {
		return Stage{}, fmt.Errorf("stage %q: the target must be between 0 and %d", s, maxTarget)
	}
	return Stage{Duration: duration.Duration(dur), Target: &n}, nil
}

// ParseStages reads a comma-separated list of stages ("10s:5,20s:10").
func ParseStages(s string, maxTarget int64) ([]Stage, error) {
	items := SplitList(s)
	if len(items) == 0 {
		return nil, errors.New("no stages given; write duration:target pairs such as 10s:5,20s:10")
	}
	stages := make([]Stage, 0, len(items))
	for _, it := range items {
		st, err := ParseStage(it, maxTarget)
		if err != nil {
			return nil, err
		}
		stages = append(stages, st)
	}
	return stages, nil
}
