package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// k6Binary is the real k6 the suite compares against: $K6_BINARY, else k6
// on PATH; "" when there is neither. CI has none and checks metronome
// against the results recorded from k6 instead.
func k6Binary() string {
	if b := os.Getenv("K6_BINARY"); b != "" {
		return b
	}
	if b, err := exec.LookPath("k6"); err == nil {
		return b
	}
	return ""
}

// runner is a program that runs k6 scripts: metronome, or real k6.
type runner struct {
	name string
	run  func(t *testing.T, s runSpec) run
}

// eachRunner runs f as a subtest for metronome and one for real k6; the
// k6 one is skipped, saying so, when no k6 binary is present.
func eachRunner(t *testing.T, f func(t *testing.T, rn runner)) {
	t.Run("metronome", func(t *testing.T) { f(t, runner{"metronome", metronome}) })
	t.Run("k6", func(t *testing.T) {
		if k6Binary() == "" {
			t.Skip("no k6 binary: set $K6_BINARY or put k6 on PATH to re-run this script in real k6")
		}
		f(t, runner{"k6", runK6})
	})
}

// runK6 runs real k6 with the same arguments and environment rules as
// metronome(): from the package directory, without K6_* variables from
// the test's environment, under a timeout, and with usage reports off so
// that nothing leaves the machine.
func runK6(t *testing.T, s runSpec) run {
	t.Helper()
	statSources()
	timeout := s.timeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, k6Binary(), s.args...)
	cmd.Env = append(append(hermeticEnv(t), "K6_NO_USAGE_REPORT=true"), s.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := run{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	r.code = exitCode(t, ctx, err, "k6 "+strings.Join(s.args, " "), timeout, r.stderr)
	return r
}
