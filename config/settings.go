package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/metronome-load/metronome/exitcode"
)

// Settings are the run settings that are not options: k6 takes them from
// flags and K6_* variables (and -o from the config file too), never from a
// script's options. DefaultSettings gives their defaults, and Layer lays
// the K6_* variables and the flags over them.
type Settings struct {
	// Outputs are the -o values (K6_OUT, --out).
	Outputs []string
	// SummaryExport is --summary-export's path, "" for none.
	SummaryExport string
	// SummaryMode is compact, full or disabled.
	SummaryMode string
	// MachineSummary is --new-machine-readable-summary.
	MachineSummary bool
	Quiet          bool
	// NoColor is K6_NO_COLOR; the command adds NO_COLOR and --no-color.
	NoColor bool
	// IncludeSystemEnvVars gives the script the process environment.
	IncludeSystemEnvVars bool
	// Address is the REST API's, "" for none; Paused waits for it to
	// resume the test.
	Address string
	Paused  bool
}

// DefaultSettings are the settings before any variable or flag: outputs
// are those of the config file.
func DefaultSettings(address string, fileOutputs []string) Settings {
	return Settings{Outputs: fileOutputs, SummaryMode: "compact", IncludeSystemEnvVars: true, Address: address}
}

// settingSpec describes one setting, as spec describes an option.
type settingSpec struct {
	env, flag string
	// field returns a pointer to the setting in s: *[]string, *string or
	// *bool.
	field func(s *Settings) any
	// blankUnset makes a variable that is empty or blank leave the value
	// below alone; otherwise a variable that is present sets it (a blank
	// boolean is false).
	blankUnset bool
	// raw keeps a string variable as it is rather than trimmed.
	raw bool
	// check validates a string setting's final value; the error does not
	// name the setting, Layer adds where the value came from.
	check func(v string) error
}

var settingSpecs = []settingSpec{
	{env: "K6_OUT", flag: "out", field: func(s *Settings) any { return &s.Outputs }, blankUnset: true},
	{env: "K6_SUMMARY_EXPORT", flag: "summary-export", field: func(s *Settings) any { return &s.SummaryExport }, raw: true},
	{env: "K6_SUMMARY_MODE", flag: "summary-mode", field: func(s *Settings) any { return &s.SummaryMode }, blankUnset: true, check: checkSummaryMode},
	{env: "K6_NEW_MACHINE_READABLE_SUMMARY", flag: "new-machine-readable-summary", field: func(s *Settings) any { return &s.MachineSummary }},
	{env: "K6_QUIET", flag: "quiet", field: func(s *Settings) any { return &s.Quiet }},
	{env: "K6_NO_COLOR", field: func(s *Settings) any { return &s.NoColor }},
	{env: "K6_INCLUDE_SYSTEM_ENV_VARS", flag: "include-system-env-vars", field: func(s *Settings) any { return &s.IncludeSystemEnvVars }, blankUnset: true},
	{env: "K6_ADDRESS", flag: "address", field: func(s *Settings) any { return &s.Address }},
	{env: "K6_PAUSED", flag: "paused", field: func(s *Settings) any { return &s.Paused }},
}

// checkSummaryMode refuses a summary mode other than compact, full and
// disabled.
func checkSummaryMode(mode string) error {
	switch mode {
	case "compact", "full", "disabled":
		return nil
	}
	return fmt.Errorf("unknown summary mode %q; use compact, full or disabled", mode)
}

// Layer lays the K6_* variables of env over s, then the flags the user
// set: flags maps a setting's flag name to its value, []string, string or
// bool as the setting's type. A bad value is an InvalidConfig error
// naming the variable or flag; a checked setting is checked once, on the
// value that wins.
func (s *Settings) Layer(env map[string]string, flags map[string]any) error {
	for _, sp := range settingSpecs {
		from := ""
		if v, ok := env[sp.env]; ok && !(sp.blankUnset && strings.TrimSpace(v) == "") {
			if err := sp.setText(s, v); err != nil {
				return err
			}
			from = sp.env
		}
		if v, ok := flags[sp.flag]; ok && sp.flag != "" && !(sp.blankUnset && v == "") {
			switch dst := sp.field(s).(type) {
			case *[]string:
				*dst = v.([]string)
			case *string:
				*dst = v.(string)
			case *bool:
				*dst = v.(bool)
			}
			from = "--" + sp.flag
		}
		if sp.check != nil && from != "" {
			if err := sp.check(*sp.field(s).(*string)); err != nil {
				return exitcode.Errorf(exitcode.InvalidConfig, "%s: %v", from, err)
			}
		}
	}
	if s.Paused && s.Address == "" {
		// k6 waits for ever here: nothing could ever resume the test.
		return exitcode.Errorf(exitcode.InvalidConfig, "--paused needs the REST API to resume the test: set --address (e.g. localhost:6565)")
	}
	return nil
}

// setText sets the setting from its variable's text v.
func (sp settingSpec) setText(s *Settings, v string) error {
	t := strings.TrimSpace(v)
	switch dst := sp.field(s).(type) {
	case *[]string:
		*dst = SplitList(v)
	case *string:
		if sp.raw {
			t = v
		}
		*dst = t
	case *bool:
		b := false
		if t != "" {
			var err error
			if b, err = strconv.ParseBool(t); err != nil {
				return exitcode.Errorf(exitcode.InvalidConfig, "%s: %q is not true or false", sp.env, t)
			}
		}
		*dst = b
	}
	return nil
}
