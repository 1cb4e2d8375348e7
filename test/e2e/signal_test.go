package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/testkit/logtest"
)

// signalStep sends sig once stderr contains after (at once when empty),
// no earlier than notBefore after the start.
type signalStep struct {
	after     string
	notBefore time.Duration
	// gap is the least time since the previous signal: a person's
	// second Ctrl+C, which a repeat within 100 ms is not.
	gap time.Duration
	sig syscall.Signal
}

// runSignalled runs metronome with args and sends each step's signal in
// turn, and returns the run and how long it lasted after the last signal.
// It fails the test when a step's marker does not appear within 20 s, when
// the process outlives timeout, or when a Go stack trace reaches its
// output.
func runSignalled(t *testing.T, timeout time.Duration, steps []signalStep, args ...string) (run, time.Duration) {
	t.Helper()
	statSources()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = hermeticEnv(t)
	var stdout, stderr logtest.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting metronome: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
	done := false
	lastSignal := start
	for i, st := range steps {
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(stderr.String(), st.after) || time.Since(start) < st.notBefore || time.Since(lastSignal) < st.gap {
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				<-exited
				t.Fatalf("signal %d: %q did not appear on stderr within 20 s\nstderr:\n%s", i+1, st.after, stderr.String())
			}
			select {
			case err = <-exited:
				done = true
			case <-time.After(10 * time.Millisecond):
			}
			if done {
				t.Fatalf("metronome exited (%v) before signal %d\nstderr:\n%s", err, i+1, stderr.String())
			}
		}
		if e := cmd.Process.Signal(st.sig); e != nil {
			t.Fatalf("signal %d: %v", i+1, e)
		}
		lastSignal = time.Now()
	}
	err = <-exited
	after := time.Since(lastSignal)
	r := run{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("metronome %s did not finish within %v\nstderr:\n%s", strings.Join(args, " "), timeout, r.stderr)
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("metronome %s: %v", strings.Join(args, " "), err)
	}
	for _, sign := range []string{"goroutine ", "panic:", "runtime error", ".go:"} {
		if strings.Contains(r.stderr, sign) || strings.Contains(r.stdout, sign) {
			t.Errorf("metronome printed what looks like a Go stack trace (%q):\nstderr:\n%s", sign, r.stderr)
			break
		}
	}
	return r, after
}

// A signal is honoured at every stage of a run: the test stops there with
// exit code 105, and from the VUs' initialisation on the summary and the
// export still come out; teardown() is let finish on the first signal, and
// a second one ends the process at once. k6 (v2.2.0, same scripts on this
// machine) is recorded beside each case; where metronome does otherwise,
// the reason is given.
func TestSignalAtEachStage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		script string
		steps  []signalStep
		code   int
		// k6 is k6's exit code; 130/143 mean killed by SIGINT/SIGTERM.
		k6 int
		// deviation says why metronome's behaviour differs from k6's.
		deviation string
		summary   bool // the export and the text summary are written
		stderr    []string
		notStderr []string
		stdout    string
		within    time.Duration // the process ends this soon after the last signal
	}{
		{
			name: "init context", script: "signal/init_context.js",
			steps: []signalStep{{after: "INIT-SLOW 0", sig: syscall.SIGTERM}},
			code:  105, k6: 143,
			deviation: "k6 has no handler yet and dies of the signal; metronome says why it stopped",
			stderr:    []string{"init context"}, notStderr: []string{"DEFAULT-RAN"},
			within: 10 * time.Second,
		},
		{
			// Exited 107 ("iteration interrupted") before.
			name: "VUs initialising", script: "signal/vu_init.js",
			steps: []signalStep{{after: "INIT-SLOW ", sig: syscall.SIGINT}},
			code:  105, k6: 105, summary: true,
			notStderr: []string{"DEFAULT-RAN", "TEARDOWN-RAN"},
			within:    10 * time.Second,
		},
		{
			// Exited 255 ("setup() was interrupted") before, and the
			// warning was stamped [0000] however late it came.
			name: "setup", script: "signal/setup.js",
			steps: []signalStep{{after: "SETUP-START", notBefore: 3 * time.Second, sig: syscall.SIGINT}},
			code:  105, k6: 105, summary: true,
			deviation: "k6 sometimes runs teardown() after an interrupted setup(); metronome never does, as after a failed one",
			notStderr: []string{"DEFAULT-RAN", "TEARDOWN-RAN"},
			within:    10 * time.Second,
		},
		{
			name: "teardown, one signal", script: "signal/teardown.js",
			steps: []signalStep{{after: "TEARDOWN-START", sig: syscall.SIGINT}},
			code:  105, k6: 105, summary: true,
			stderr: []string{"TEARDOWN-END"},
			within: 15 * time.Second,
		},
		{
			// GNU timeout signals the process and its group: one signal
			// arrives twice, microseconds apart. Both runners took the
			// copy for a second signal in some runs and cut teardown,
			// the summary and the outputs short.
			name: "teardown, one signal delivered twice", script: "signal/teardown.js",
			steps: []signalStep{{after: "TEARDOWN-START", sig: syscall.SIGTERM}, {after: "TEARDOWN-START", sig: syscall.SIGTERM}},
			code:  105, k6: 105, summary: true,
			stderr: []string{"TEARDOWN-END"}, notStderr: []string{"a second signal"},
			within: 15 * time.Second,
		},
		{
			name: "teardown, two signals", script: "signal/teardown.js",
			steps: []signalStep{{after: "TEARDOWN-START", sig: syscall.SIGINT}, {after: "received", gap: 300 * time.Millisecond, sig: syscall.SIGINT}},
			code:  105, k6: 105,
			notStderr: []string{"TEARDOWN-END"},
			within:    2500 * time.Millisecond,
		},
		{
			// Ran the 20 s loop to its end before.
			name: "handleSummary", script: "signal/handle_summary.js",
			steps: []signalStep{{after: "SUMMARY-START", sig: syscall.SIGINT}},
			code:  105, k6: 130,
			deviation: "k6 has no handler while handleSummary runs and dies of SIGINT without a summary; " +
				"metronome interrupts handleSummary and prints the default summary",
			summary: true, stderr: []string{"interrupted"},
			within: 10 * time.Second,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			exp := t.TempDir() + "/summary.json"
			r, after := runSignalled(t, 40*time.Second, tc.steps, "run", "-q", "--summary-export", exp, script(tc.script))
			why := ""
			if tc.k6 != tc.code {
				why = "; k6 exits " + strconv.Itoa(tc.k6) + ": " + tc.deviation
			}
			if r.code != tc.code {
				t.Fatalf("exit code %d, want %d%s\nstderr:\n%s", r.code, tc.code, why, r.stderr)
			}
			if lines := errorLines(r.stderr); len(lines) != 1 || !strings.Contains(lines[0], "signal") {
				t.Errorf("want one ERROR line naming the signal, got %q", lines)
			}
			if after > tc.within {
				t.Errorf("the run went on for %v after its last signal; want under %v", after, tc.within)
			}
			for _, s := range tc.stderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
			for _, s := range tc.notStderr {
				if strings.Contains(r.stderr, s) {
					t.Errorf("stderr has %q:\n%s", s, r.stderr)
				}
			}
			_, statErr := os.Stat(exp)
			if tc.summary {
				if statErr != nil {
					t.Errorf("no summary export: %v", statErr)
				}
				if !strings.Contains(r.stdout, "TOTAL RESULTS") {
					t.Errorf("no end-of-test summary on stdout:\n%s", r.stdout)
				}
			} else if statErr == nil || strings.Contains(r.stdout, "TOTAL RESULTS") {
				t.Errorf("a summary was written, want none\nstdout:\n%s", r.stdout)
			}
			if tc.steps[0].notBefore > 0 {
				// The warning is stamped with the seconds since the
				// start, as k6 stamps it, not [0000].
				m := regexp.MustCompile(`WARN\[(\d{4})\] received`).FindStringSubmatch(r.stderr)
				if m == nil {
					t.Fatalf("no stamped signal warning:\n%s", r.stderr)
				}
				if n, _ := strconv.Atoi(m[1]); n < 2 {
					t.Errorf("signal warning stamped [%s], want at least [0002]: it came %v after the start", m[1], tc.steps[0].notBefore)
				}
			}
		})
	}
}

// A handleSummary that outlives handleSummaryTimeout exits 102 (it exited
// 0), and the default summary is printed in its place. k6 v2.2.0 exits 0
// and prints no summary at all: the results the script asked for are lost
// without a failing exit code, which k6's own code table reserves 102 for.
func TestHandleSummaryTimeout(t *testing.T) {
	t.Parallel()
	r := metronome(t, runSpec{args: []string{"run", "-q", script("signal/handle_summary_timeout.js")}, timeout: 30 * time.Second})
	wantOneError(t, r, 102, "handleSummary", "1s")
	if !strings.Contains(r.stdout, "TOTAL RESULTS") || strings.Contains(r.stdout, "HANDLE-SUMMARY-DONE") {
		t.Errorf("want the default summary instead of handleSummary's\nstdout:\n%s", r.stdout)
	}
}

// What this machine cannot run is refused before anything starts, with
// exit 104 and the option path. Before, each ran: the VU counts initialised
// VUs until the kernel killed the process, the 1/ns rate spent minutes
// dropping arrivals one by one and ignored the first SIGTERM. k6 v2.2.0
// (same scripts, 3 GB address-space limit, stopped after 8 s): vus: 1e12
// dies with Go's "fatal error: out of memory" and a stack trace (exit 2);
// preAllocatedVUs: 1e7 initialises VUs until stopped (1,070 in 8 s); the
// 1/ns rate runs, counting 1.65 million dropped_iterations in 8 s of the
// 8·10^9 arrivals it was asked for.
func TestLimitsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, script string
		want         []string
	}{
		{"vus", "limits/vus_huge.js", []string{"scenarios.default.vus", "1000000000000", "memory"}},
		{"preAllocatedVUs", "limits/prealloc_huge.js", []string{"scenarios.s.preAllocatedVUs", "10000000", "memory"}},
		{"rate", "limits/rate_per_ns.js", []string{"scenarios.s.rate", "1,000,000,000 arrivals/s", "1,000,000/s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := metronome(t, runSpec{args: []string{"run", "-q", script(tc.script)}, timeout: 20 * time.Second})
			wantOneError(t, r, 104, tc.want...)
			if strings.Contains(r.stderr, "DEFAULT-RAN") {
				t.Errorf("the test started\nstderr:\n%s", r.stderr)
			}
		})
	}
}
