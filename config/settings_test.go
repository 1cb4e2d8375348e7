package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/exitcode"
)

// Each setting: a variable over the default, a flag over the variable, a
// blank variable where it leaves the default alone, and the errors.
func TestSettingsLayer(t *testing.T) {
	layer := func(env map[string]string, flags map[string]any) (Settings, error) {
		s := DefaultSettings("localhost:6565", []string{"json=file.json"})
		return s, s.Layer(env, flags)
	}
	s, err := layer(map[string]string{
		"K6_OUT": "csv=a.csv,json=b.json", "K6_SUMMARY_MODE": " full ", "K6_QUIET": "true", "K6_NO_COLOR": "1",
		"K6_INCLUDE_SYSTEM_ENV_VARS": " ", "K6_ADDRESS": " 127.0.0.1:0 ", "K6_SUMMARY_EXPORT": "x.json",
	}, map[string]any{"quiet": false, "summary-export": "y.json"})
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{Outputs: []string{"csv=a.csv", "json=b.json"}, SummaryExport: "y.json", SummaryMode: "full", NoColor: true,
		IncludeSystemEnvVars: true, Address: "127.0.0.1:0"}
	if !slices.Equal(s.Outputs, want.Outputs) || s.SummaryExport != want.SummaryExport || s.SummaryMode != want.SummaryMode ||
		s.Quiet || !s.NoColor || !s.IncludeSystemEnvVars || s.Address != want.Address || s.Paused || s.MachineSummary {
		t.Errorf("settings %+v, want %+v", s, want)
	}
	if s, err := layer(map[string]string{"K6_OUT": " ", "K6_SUMMARY_MODE": "", "K6_ADDRESS": ""}, nil); err != nil ||
		!slices.Equal(s.Outputs, []string{"json=file.json"}) || s.SummaryMode != "compact" || s.Address != "" {
		t.Errorf("blank variables: %+v, %v; want the file's output, compact and the API off", s, err)
	}
	// Only the value that wins is checked.
	if s, err := layer(map[string]string{"K6_SUMMARY_MODE": "loud"}, map[string]any{"summary-mode": "disabled"}); err != nil || s.SummaryMode != "disabled" {
		t.Errorf("a flag over a bad variable: %+v, %v", s, err)
	}
	for _, c := range []struct {
		env   map[string]string
		flags map[string]any
		want  string
	}{
		{map[string]string{"K6_SUMMARY_MODE": "loud"}, nil, `K6_SUMMARY_MODE: unknown summary mode "loud"`},
		{nil, map[string]any{"summary-mode": "loud"}, `--summary-mode: unknown summary mode "loud"`},
		{map[string]string{"K6_PAUSED": "yes"}, nil, `K6_PAUSED: "yes" is not true or false`},
		{map[string]string{"K6_PAUSED": "true", "K6_ADDRESS": ""}, nil, "--paused needs the REST API"},
		{nil, map[string]any{"paused": true, "address": ""}, "--paused needs the REST API"},
	} {
		_, err := layer(c.env, c.flags)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || exitcode.Of(err) != exitcode.InvalidConfig {
			t.Errorf("%v %v: error %v (exit code %d), want %q and exit code %d", c.env, c.flags, err, exitcode.Of(err), c.want, exitcode.InvalidConfig)
		}
	}
}
