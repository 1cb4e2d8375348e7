package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// The flags build one sink that the script and the engine share, the
// flag beats K6_LOG_OUTPUT/K6_LOG_FORMAT, and the cli's own warnings go
// through it too.
func TestLogFlagsReachScriptAndEngine(t *testing.T) {
	h := newHarness(t, `{"scenarios": {"s": {"executor": "constant-vus", "vus": 1, "duration": "10s"}}}`)
	env := map[string]string{"K6_LOG_OUTPUT": "none", "K6_LOG_FORMAT": "raw"}
	code, stdout, stderr := h.run(env, "run", "--log-output=stdout", "--log-format=json", "-u", "2", "s.js")
	if code != 0 {
		t.Fatalf("code %d: %s", code, stderr)
	}
	if h.loaded.Log == nil || h.ran == nil || h.ran.Log != h.loaded.Log {
		t.Fatalf("script got sink %p, engine %v; want one shared sink", h.loaded.Log, h.ran)
	}
	var m map[string]string
	line, _, _ := strings.Cut(stdout, "\n")
	if err := json.Unmarshal([]byte(line), &m); err != nil || m["level"] != "warning" ||
		!strings.Contains(m["msg"], "scenarios from script options are replaced") {
		t.Errorf("the override warning on stdout is %q (%v); want a JSON warning line", line, err)
	}
	if strings.Contains(stderr, "scenarios from script options") {
		t.Errorf("the warning also went to stderr: %q", stderr)
	}
}

// Without the flags the environment decides.
func TestLogEnvWithoutFlags(t *testing.T) {
	h := newHarness(t, `{"scenarios": {"s": {"executor": "constant-vus", "vus": 1, "duration": "10s"}}}`)
	code, stdout, stderr := h.run(map[string]string{"K6_LOG_OUTPUT": "none"}, "run", "-u", "2", "s.js")
	if code != 0 || strings.Contains(stdout+stderr, "scenarios from script options") {
		t.Errorf("code %d; K6_LOG_OUTPUT=none still printed the warning:\nstdout %q\nstderr %q", code, stdout, stderr)
	}
}
