package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A run that does what it should exits 0, with its threshold passing and
// the server seeing every request.
func TestExitSuccess(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	r := metronome(t, runSpec{args: []string{"run", "-q", "-e", "TARGET=" + tg.URL, script("exit/ok.js")}})
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	if n := tg.requests.Load(); n != 6 {
		t.Errorf("server saw %d requests, want 6", n)
	}
	if lines := errorLines(r.stderr); len(lines) != 0 {
		t.Errorf("a successful run printed errors: %q", lines)
	}
}

// A threshold crossed at the end exits 99 and says which metric.
func TestExitThresholdFailed(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	r := metronome(t, runSpec{args: []string{"run", "-q", "-e", "TARGET=" + tg.URL, script("exit/threshold_fail.js")}})
	if r.code != 99 {
		t.Fatalf("exit code %d, want 99\nstderr:\n%s", r.code, r.stderr)
	}
	if lines := errorLines(r.stderr); len(lines) != 1 || !strings.Contains(lines[0], "http_reqs") {
		t.Errorf("want one ERROR line naming http_reqs, got %q", lines)
	}
	if n := tg.requests.Load(); n != 4 {
		t.Errorf("server saw %d requests, want 4 (the run finishes before thresholds are judged)", n)
	}
}

// An abortOnFail threshold stops a 20 s run at the first evaluation (every
// 2 s): exit 99, teardown and the summary still happen.
func TestExitAbortOnFail(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	r, e := runExported(t, 99, "-q", "-e", "TARGET="+tg.URL, script("exit/abort_on_fail.js"))
	// Evaluation every 2 s aborts at about 2 s; 10 s leaves room for a
	// loaded machine and is still half of the scenario's 20 s.
	if r.elapsed > 10*time.Second {
		t.Errorf("the run took %v; an abortOnFail threshold should stop it at about 2 s of its 20 s", r.elapsed)
	}
	if !strings.Contains(r.stderr, "TEARDOWN-RAN") {
		t.Errorf("teardown did not run after the abort\nstderr:\n%s", r.stderr)
	}
	// One iteration every ≥ 50 ms: 20 s would give up to 400, 10 s 200.
	if n := e.num(t, "iterations", "count"); n < 3 || n > 200 {
		t.Errorf("iterations = %v; want at least 3 (the threshold count<3 failed) and far fewer than 20 s allows", n)
	}
	if th := e.thresholds(t, "iterations"); !th["count<3"] {
		t.Errorf("export thresholds %v: want count<3 true (k6's export marks failed thresholds true)", th)
	}
}

// A mistake in options, flags or thresholds exits 104 with one ERROR line
// that names where the mistake is.
func TestExitInvalidConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want []string // substrings of the ERROR line
	}{
		{"bad option", []string{script("exit/bad_option.js")}, []string{"scenarios.s.duration", "ten seconds"}},
		{"bad flag", []string{"--no-such-flag", script("exit/bad_option.js")}, []string{"--no-such-flag"}},
		{"bad flag value", []string{"--vus", "many", script("exit/ok.js")}, []string{"many"}},
		{"conflicting shortcuts in options", []string{script("exit/conflicting_shortcuts.js")}, []string{"duration", "stages"}},
		{"conflicting shortcut flags", []string{"-i", "3", "-s", "1s:1", script("exit/ok.js")}, []string{"iterations", "stages"}},
		{"unknown executor", []string{script("exit/unknown_executor.js")}, []string{"scenarios.s.executor", "constant-everything"}},
		{"bad threshold expression", []string{script("exit/bad_threshold.js")}, []string{"thresholds.http_req_duration", "p95"}},
		{"bad summary mode", []string{"--summary-mode", "verbose", script("exit/ok.js")}, []string{"summary", "verbose"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := metronome(t, runSpec{args: append([]string{"run", "-q"}, tc.args...)})
			wantOneError(t, r, 104, tc.want...)
		})
	}
}

// A script that cannot start (exception in the init context or setup, an
// unknown module, a syntax error) exits 107 and names file:line: an
// exception as k6 logs it, its stack with hint="script exception" and
// source=stacktrace, the others as k6's line "could not initialize …"
// with no field.
func TestExitScriptException(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		script    string
		exception bool
		want      []string
	}{
		{"init exception", "exit/init_error.js", true,
			[]string{`msg="TypeError: Cannot read property 'field' of undefined\n\tat load (file:///`, "/init_error.js:6:"}},
		{"setup exception", "exit/setup_error.js", true,
			[]string{`msg="Error: setup could not log in\n\tat setup (file:///`, "/setup_error.js:4:"}},
		{"unknown module", "exit/unknown_module.js", false,
			[]string{`level=error msg="could not initialize '`, "unknown_module.js:1", "k6/does-not-exist"}},
		{"syntax error", "exit/syntax_error.js", false,
			[]string{`level=error msg="could not initialize '`, "syntax_error.js:4", "SyntaxError"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := metronome(t, runSpec{args: []string{"run", "-q", script(tc.script)}})
			wantOneError(t, r, 107, tc.want...)
			if line := errorLines(r.stderr)[0]; isExceptionLine(line) != tc.exception {
				t.Errorf("the error line %q is logged as k6 logs an exception: %v, want %v", line, !tc.exception, tc.exception)
			}
			if strings.Contains(r.stderr, "DEFAULT-RAN") || strings.Contains(r.stderr, "TEARDOWN-RAN") {
				t.Errorf("after a failed setup neither the scenarios nor teardown may run\nstderr:\n%s", r.stderr)
			}
		})
	}
}

// exec.test.abort() stops a 20 s run at once: exit 108, teardown runs.
func TestExitTestAbort(t *testing.T) {
	t.Parallel()
	r, e := runExported(t, 108, "-q", script("exit/test_abort.js"))
	if r.elapsed > 10*time.Second {
		t.Errorf("the run took %v; exec.test.abort() should stop its 20 s scenario at once", r.elapsed)
	}
	if !strings.Contains(r.stderr, "TEARDOWN-RAN") {
		t.Errorf("teardown did not run after exec.test.abort()\nstderr:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "enough of this") {
		t.Errorf("the abort reason is not reported\nstderr:\n%s", r.stderr)
	}
	// Iterations 0…4 start before the sixth aborts the test; the other
	// VU may then be inside one of them, which is interrupted.
	if n := e.num(t, "iterations", "count"); n < 4 || n > 5 {
		t.Errorf("iterations = %v, want 4 or 5: the test aborts in the sixth", n)
	}
}

// exec.test.fail() marks the test failed but lets it finish: exit 110.
// As k6 v2.2.0 does, each call logs its line and the run ends with one
// more, in place of an ERROR line.
func TestExitTestFail(t *testing.T) {
	t.Parallel()
	r, e := runExported(t, 110, "-q", script("exit/test_fail.js"))
	if n := e.num(t, "after_fail", "count"); n != 4 {
		t.Errorf("after_fail = %v, want 4: exec.test.fail() must not stop the iteration or the test", n)
	}
	calls := strings.Count(r.stderr, `level=error msg="test marked as failed: marked as failed"`)
	end := strings.Count(r.stderr, `level=error msg="test run was marked as failed"`)
	if calls != 4 || end != 1 || strings.Contains(r.stderr, "ERROR:") {
		t.Errorf("stderr has %d call lines and %d end lines, want k6's 4 and 1 and no ERROR line:\n%s", calls, end, r.stderr)
	}
}

// SIGINT in the middle of a run exits 105; teardown, the summary and the
// export are still written, and the export counts what the server saw.
func TestExitInterrupt(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	exp := filepath.Join(t.TempDir(), "summary.json")
	r := metronome(t, runSpec{
		args: []string{"run", "-e", "TARGET=" + tg.URL, "--summary-export", exp, script("exit/interrupt.js")},
		interrupt: func() {
			// Interrupt once the load has really started (or after 10 s,
			// which the elapsed-time check below then reports).
			deadline := time.Now().Add(10 * time.Second)
			for tg.requests.Load() < 20 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
		},
	})
	if r.code != 105 {
		t.Fatalf("exit code %d, want 105\nstderr:\n%s", r.code, r.stderr)
	}
	if r.elapsed > 15*time.Second {
		t.Errorf("the run took %v; SIGINT should stop its 20 s scenario at once", r.elapsed)
	}
	if !strings.Contains(r.stderr, "TEARDOWN-RAN") {
		t.Errorf("teardown did not run after SIGINT\nstderr:\n%s", r.stderr)
	}
	if !strings.Contains(r.stdout, "http_reqs") {
		t.Errorf("the end-of-test summary is missing after SIGINT\nstdout:\n%s", r.stdout)
	}
	if _, err := os.Stat(exp); err != nil {
		t.Fatalf("summary export after SIGINT: %v", err)
	}
	e := readExport(t, exp)
	// A request cut off by the interrupt may have reached the server
	// without being recorded: at most one per VU (2).
	got, served := e.num(t, "http_reqs", "count"), tg.requests.Load()
	if got > float64(served) || got < float64(served-2) {
		t.Errorf("export http_reqs = %v, server answered %d; want equal, or up to 2 fewer (requests in flight)", got, served)
	}
}

// Other mistakes: each gets its exit code and one clear sentence, never a
// stack trace (which metronome() checks on every run).
func TestExitOtherMistakes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		args      []string
		code      int
		errorLine string // a substring of the one ERROR line; "" for none
		stderr    string // a substring of stderr
		stdout    string // a substring of stdout
	}{
		{name: "teardown exception", args: []string{script("exit/teardown_error.js")}, code: 107,
			errorLine: `msg="Error: teardown could not clean up\n\tat teardown (file:///`, stderr: "/teardown_error.js:6:"},
		// k6 logs handleSummary's exception, prints the default summary
		// and exits 0.
		{name: "handleSummary exception", args: []string{script("exit/handle_summary_error.js")}, code: 0,
			errorLine: `msg="Error: summary template missing\n\tat handleSummary (file:///`, stderr: "/handle_summary_error.js:8:",
			stdout: "iterations"},
		{name: "metric declared in an iteration", args: []string{script("exit/late_metric.js")}, code: 0,
			stderr: "late_metric.js:8"},
		// k6 exits 255 for a script it cannot read.
		{name: "missing script", args: []string{script("exit/no_such_script.js")}, code: 255,
			errorLine: `level=error msg="script testdata/exit/no_such_script.js does not exist`},
		{name: "unknown output", args: []string{"-o", "carrier-pigeon=coop", script("exit/ok.js")}, code: 104,
			errorLine: "carrier-pigeon"},
		{name: "bad env flag", args: []string{"-e", "1X=2", script("exit/ok.js")}, code: 104,
			errorLine: "1X"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := metronome(t, runSpec{args: append([]string{"run", "-q"}, tc.args...)})
			if r.code != tc.code {
				t.Fatalf("exit code %d, want %d\nstderr:\n%s", r.code, tc.code, r.stderr)
			}
			lines := errorLines(r.stderr)
			switch {
			case tc.errorLine == "" && len(lines) != 0:
				t.Errorf("want no ERROR line, got %q", lines)
			case tc.errorLine != "" && (len(lines) != 1 || !strings.Contains(lines[0], tc.errorLine)):
				t.Errorf("want one ERROR line mentioning %q, got %q", tc.errorLine, lines)
			}
			if !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, r.stderr)
			}
			if !strings.Contains(r.stdout, tc.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.stdout, r.stdout)
			}
		})
	}
}
