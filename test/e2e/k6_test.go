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

// k6Binary is the real k6 the suite compares against: $K6_BINARY, "" when
// it is not set. A k6 on PATH is not used: re-running k6 is asked for, not
// implied by a k6 user's machine. Without it the tests check metronome
// against the results recorded from k6.
func k6Binary() string {
	return os.Getenv("K6_BINARY")
}

// runner is a program that runs k6 scripts: metronome, or real k6.
type runner struct {
	name string
	run  func(t *testing.T, s runSpec) run
}

// eachRunner runs f as a subtest for metronome and one for real k6; the
// k6 one is skipped, saying so, when K6_BINARY is not set.
func eachRunner(t *testing.T, f func(t *testing.T, rn runner)) {
	t.Run("metronome", func(t *testing.T) { f(t, runner{"metronome", metronome}) })
	t.Run("k6", func(t *testing.T) {
		if k6Binary() == "" {
			t.Skip("K6_BINARY is not set: set it to a k6 binary to re-run this script in real k6")
		}
		f(t, runner{"k6", runK6})
	})
}

// runK6 runs real k6 with the same arguments and environment rules as
// metronome(): from the package directory, without K6_* variables from
// the test's environment, under a timeout, and with usage reports and
// automatic extension resolution (a build service on the internet) off so
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
	cmd.Env = append(append(hermeticEnv(t), "K6_NO_USAGE_REPORT=true", "K6_AUTO_EXTENSION_RESOLUTION=false"), s.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := run{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	r.code = exitCode(t, ctx, err, "k6 "+strings.Join(s.args, " "), timeout, r.stderr)
	return r
}
