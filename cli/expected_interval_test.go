package cli

import (
	"strings"
	"testing"

	"github.com/metronome-load/metronome/exitcode"
)

// The test-wide expectedInterval comes, like every option, from the script,
// then K6_EXPECTED_INTERVAL, then --expected-interval.
func TestExpectedIntervalPrecedence(t *testing.T) {
	for _, c := range []struct {
		script string
		env    map[string]string
		args   []string
		want   string
	}{
		{`{"expectedInterval": "5ms"}`, nil, nil, "5ms"},
		{`{"expectedInterval": "5ms"}`, map[string]string{"K6_EXPECTED_INTERVAL": "auto"}, nil, "auto"},
		{`{"expectedInterval": "5ms"}`, map[string]string{"K6_EXPECTED_INTERVAL": "auto"}, []string{"--expected-interval", "off"}, "off"},
		{`{}`, nil, []string{"--expected-interval=20ms"}, "20ms"},
	} {
		h := newHarness(t, c.script)
		args := append(append([]string{"run", "-q"}, c.args...), "script.js")
		if code, _, stderr := h.run(c.env, args...); code != 0 {
			t.Fatalf("%v %v: exit code %d: %s", c.env, c.args, code, stderr)
		}
		if got := h.ran.Options.ExpectedInterval; got == nil || *got != c.want {
			t.Errorf("script %s, env %v, flags %v: expectedInterval %v, want %s", c.script, c.env, c.args, got, c.want)
		}
	}
}

func TestExpectedIntervalErrors(t *testing.T) {
	for _, c := range []struct {
		script string
		env    map[string]string
		args   []string
		want   string
	}{
		{"", nil, []string{"--expected-interval", "sometimes"}, `"--expected-interval" flag: must be "auto", "off" or a duration such as "10ms", got "sometimes"`},
		{"", nil, []string{"--expected-interval=-1s"}, `"--expected-interval" flag: must not be negative, got -1s`},
		{"", map[string]string{"K6_EXPECTED_INTERVAL": "fast"}, nil, `K6_EXPECTED_INTERVAL: must be "auto", "off" or a duration such as "10ms", got "fast"`},
		{`{"expectedInterval": "never"}`, nil, nil, `options.expectedInterval: must be "auto", "off" or a duration such as "10ms", got "never" (in script options)`},
		{`{"expectedInterval": 10}`, nil, nil, `options.expectedInterval: expected a string, got 10 (in script options)`},
		{`{"scenarios": {"a": {"executor": "constant-vus", "duration": "10s", "expectedInterval": "often"}}}`, nil, nil,
			`scenarios.a.expectedInterval: must be "auto", "off" or a duration such as "10ms", got "often"`},
	} {
		h := newHarness(t, c.script)
		args := append(append([]string{"run"}, c.args...), "script.js")
		code, _, stderr := h.run(c.env, args...)
		if code != exitcode.InvalidConfig || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s %v %v: exit code %d, stderr %q; want 104 and one line containing %q", c.script, c.env, c.args, code, stderr, c.want)
		}
	}
}
