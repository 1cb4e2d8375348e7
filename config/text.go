package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/optdecode"
)

// Set sets the option called name (its JSON name, e.g. "summaryTrendStats")
// from its textual form, the way K6_* variables and flags write it:
//
//   - numbers: "10"; booleans: true/false/1/0 (strconv.ParseBool);
//   - durations: "30s", "1m30s", "1d2h", or a bare number of milliseconds;
//   - lists (systemTags, summaryTrendStats): comma-separated, "" for none;
//   - stages: "30s:10,1m:0" (duration:target pairs, see ParseStages);
//   - tags: "k=v,k2=v2" (see ParseTags);
//   - httpDebug: "headers", "full", or true/false;
//   - expectedInterval: "auto", "off" or a duration;
//   - dns: "ttl=5m,select=first,policy=preferIPv4" (any of the three);
//   - localIPs: "10.0.0.1-10.0.0.20,10.0.1.0/30" (as written: no spaces).
//
// The error says what is wrong with value without naming the option, so
// that callers can name the variable or flag the user typed. scenarios and
// thresholds have no textual form.
func (o *Options) Set(name, value string) error {
	s, ok := specByName[name]
	if !ok {
		return fmt.Errorf("unknown option %q", name)
	}
	if s.text != nil {
		value = s.text(value)
	}
	if err := setText(s.field(o), strings.TrimSpace(value)); err != nil {
		return err
	}
	if err := s.validate(o); err != nil {
		var se *subError
		if errors.As(err, &se) {
			return se.err
		}
		return err
	}
	return nil
}

func setText(dst any, v string) error {
	switch p := dst.(type) {
	case **int64:
		n, err := optdecode.TextInt(v)
		if err != nil {
			return err
		}
		*p = &n
	case **bool:
		b, err := optdecode.TextBool(v)
		if err != nil {
			return err
		}
		*p = &b
	case **string:
		*p = &v
	case **duration.Duration:
		d, err := optdecode.TextDuration(v)
		if err != nil {
			return err
		}
		*p = &d
	case *[]string:
		*p = SplitList(v)
	case *map[string]string:
		tags, err := ParseTags(v)
		if err != nil {
			return err
		}
		*p = tags
	case *[]Stage:
		stages, err := ParseStages(v)
		if err != nil {
			return err
		}
		*p = stages
	case *DNS:
		d, err := parseDNSText(v)
		if err != nil {
			return err
		}
		*p = d
	default:
		return errors.New("cannot be set from the command line or the environment")
	}
	return nil
}

// SplitList splits a comma-separated list, trimming spaces and dropping
// empty items; "" gives an empty, non-nil list.
func SplitList(s string) []string { return optdecode.SplitList(s) }

// ParseStage reads one stage written "duration:target", e.g. "30s:10".
func ParseStage(s string) (Stage, error) { return optdecode.ParseStage(s, maxStageTarget) }

// ParseStages reads a comma-separated list of stages ("10s:5,20s:10"), the
// K6_STAGES format; each --stage flag value may also hold several.
func ParseStages(s string) ([]Stage, error) { return optdecode.ParseStages(s, maxStageTarget) }

// ParseTag reads one run tag "name=value". For compatibility with k6's
// K6_TAGS, "name:value" is accepted when the item holds no '='.
func ParseTag(s string) (name, value string, err error) {
	sep := "="
	if !strings.Contains(s, "=") {
		sep = ":"
	}
	name, value, ok := strings.Cut(s, sep)
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return "", "", fmt.Errorf("tag %q must be written name=value", s)
	}
	return name, value, nil
}

// ParseTags reads K6_TAGS: comma-separated name=value pairs
// ("env=staging,team=core"); a value cannot contain a comma there (use
// repeated --tag flags for that). "" gives an empty map.
func ParseTags(s string) (map[string]string, error) {
	tags := map[string]string{}
	for _, item := range SplitList(s) {
		k, v, err := ParseTag(item)
		if err != nil {
			return nil, err
		}
		tags[k] = v
	}
	return tags, nil
}

// FromEnv reads the K6_* variables that set options (see EnvVars for the
// list: K6_VUS, K6_DURATION, K6_STAGES, K6_TAGS, K6_SYSTEM_TAGS ...). An
// empty variable counts as unset. A bad value is an error with exit code
// 104 naming the variable: `K6_VUS: "abc" is not a whole number`.
// Variables are read in a fixed order, so the first error is stable.
func FromEnv(env map[string]string) (*Options, error) {
	o := &Options{Source: "environment"}
	names := make([]string, 0, len(specs))
	for _, s := range specs {
		if s.env != "" {
			names = append(names, s.env)
		}
	}
	slices.Sort(names)
	vars := EnvVars()
	for _, name := range names {
		v, ok := env[name]
		if !ok || strings.TrimSpace(v) == "" {
			continue
		}
		if err := o.Set(vars[name], v); err != nil {
			return nil, exitcode.Errorf(exitcode.InvalidConfig, "%s: %v", name, err)
		}
	}
	return o, nil
}
