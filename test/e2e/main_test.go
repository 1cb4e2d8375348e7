// Package e2e runs the metronome binary as a user would: it builds it once,
// runs scripts from testdata against loopback servers, and checks exit
// codes, stderr, the summary export, handleSummary files and the outputs.
//
// Every load is bounded: scripts fix their iterations or a short duration,
// and every process runs under a timeout. The real-time stall experiments
// (about 7 s each) are skipped with -short. METRONOME_E2E_BINARY names a
// prebuilt binary to test instead of building ../cmd/metronome.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// binary is the metronome binary TestMain builds, or the one
// $METRONOME_E2E_BINARY names.
var binary string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	if b := os.Getenv("METRONOME_E2E_BINARY"); b != "" {
		// Test a binary built elsewhere (a release, or a patched tree).
		binary = b
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "metronome-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "metronome")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "build", "-o", binary, "../../cmd/metronome").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: building metronome: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// statSources stats every source file of the module. The binary under
// test and the scripts it runs are read by other processes, which go
// test's result cache does not see; files the test process itself stats
// while tests run are part of the cache key, so a change anywhere in the
// module reruns the tests instead of replaying a stale result.
var statSources = sync.OnceFunc(func() {
	_ = filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if name := d.Name(); path != "../.." && (strings.HasPrefix(name, ".") || name == "bin" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".js", ".ts", ".json", ".txt", ".mod", ".sum":
			_, _ = os.Stat(path)
		}
		return nil
	})
})

// run is one finished metronome process.
type run struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

// runSpec describes a metronome invocation.
type runSpec struct {
	args []string
	env  []string // extra NAME=VALUE entries for the process
	// timeout bounds the process; 60 s when zero.
	timeout time.Duration
	// interrupt, when set, is called once the process has started; it
	// returns when the process should get os.Interrupt.
	interrupt func()
}

// metronome runs the binary with args from the package directory and
// fails the test if it does not end within the timeout or if a Go stack
// trace reaches its output.
func metronome(t *testing.T, s runSpec) run {
	t.Helper()
	statSources()
	timeout := s.timeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, s.args...)
	cmd.Env = append(hermeticEnv(t), s.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting metronome: %v", err)
	}
	if s.interrupt != nil {
		s.interrupt()
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Errorf("interrupting metronome: %v", err)
		}
	}
	err := cmd.Wait()
	r := run{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	r.code = exitCode(t, ctx, err, "metronome "+strings.Join(s.args, " "), timeout, r.stderr)
	for _, sign := range []string{"goroutine ", "panic:", "runtime error", ".go:"} {
		if strings.Contains(r.stderr, sign) || strings.Contains(r.stdout, sign) {
			t.Errorf("metronome %s printed what looks like a Go stack trace or Go source position (%q):\nstderr:\n%s",
				strings.Join(s.args, " "), sign, r.stderr)
			break
		}
	}
	return r
}

// hermeticEnv is the test process's environment without K6_* variables or
// a config directory that could change a run's options.
func hermeticEnv(t *testing.T) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "K6_") || name == "NO_COLOR" || name == "XDG_CONFIG_HOME" {
			continue
		}
		env = append(env, kv)
	}
	// The REST API (off by default, as in k6 v2) is turned on at a free
	// loopback port in every run, so that the e2e runs exercise it side
	// by side; a test that needs a known address passes --address, which
	// wins.
	return append(env, "XDG_CONFIG_HOME="+t.TempDir(), "K6_ADDRESS=127.0.0.1:0")
}

// target is a loopback HTTP server that counts the requests it answered.
type target struct {
	*httptest.Server
	requests atomic.Int64
}

// newTarget starts a target answering 200 "ok" to every request.
func newTarget(t *testing.T) *target {
	t.Helper()
	tg := &target{}
	tg.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		tg.requests.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok\n"))
	}))
	t.Cleanup(tg.Close)
	return tg
}

// export is the --summary-export file: k6's legacy summary shape.
type export struct {
	RootGroup struct {
		Name   string                 `json:"name"`
		Path   string                 `json:"path"`
		ID     string                 `json:"id"`
		Groups map[string]any         `json:"groups"`
		Checks map[string]exportCheck `json:"checks"`
	} `json:"root_group"`
	Metrics   map[string]map[string]any `json:"metrics"`
	SetupData any                       `json:"setup_data"`
}

type exportCheck struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	ID     string `json:"id"`
	Passes int64  `json:"passes"`
	Fails  int64  `json:"fails"`
}

// runExported runs "metronome run --summary-export FILE args...", fails
// the test unless it exits with code, and returns the run and the export.
func runExported(t *testing.T, code int, args ...string) (run, export) {
	t.Helper()
	exp := filepath.Join(t.TempDir(), "summary.json")
	r := metronome(t, runSpec{args: append([]string{"run", "--summary-export", exp}, args...)})
	if r.code != code {
		t.Fatalf("exit code %d after %v, want %d\nstderr:\n%s", r.code, r.elapsed, code, r.stderr)
	}
	return r, readExport(t, exp)
}

// readExport parses a summary export file.
func readExport(t *testing.T, path string) export {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("summary export: %v", err)
	}
	var e export
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("summary export %s is not JSON: %v\n%s", path, err, raw)
	}
	return e
}

// num returns a metric's stat from the export, failing the test when the
// metric or the stat is missing.
func (e export) num(t *testing.T, metric, stat string) float64 {
	t.Helper()
	m, ok := e.Metrics[metric]
	if !ok {
		t.Fatalf("summary export has no metric %q", metric)
	}
	v, ok := m[stat].(float64)
	if !ok {
		t.Fatalf("summary export: %s has no numeric %q (%v)", metric, stat, m)
	}
	return v
}

// thresholds returns a metric's threshold map from the export.
func (e export) thresholds(t *testing.T, metric string) map[string]bool {
	t.Helper()
	m, ok := e.Metrics[metric]
	if !ok {
		t.Fatalf("summary export has no metric %q", metric)
	}
	raw, ok := m["thresholds"].(map[string]any)
	if !ok {
		t.Fatalf("summary export: %s has no thresholds (%v)", metric, m)
	}
	out := make(map[string]bool, len(raw))
	for k, v := range raw {
		b, ok := v.(bool)
		if !ok {
			t.Fatalf("summary export: %s threshold %q is %v, want a boolean", metric, k, v)
		}
		out[k] = b
	}
	return out
}

// errorLines returns the lines of stderr with which a run ends in error:
// metronome's "ERROR: …", and an exception of the script outside an
// iteration as k6 logs it, a logfmt line with hint="script exception" and
// no scenario.
func errorLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "ERROR:") || isErrorLine(l) {
			out = append(out, l)
		}
	}
	return out
}

// isErrorLine tells whether l is an error of the test outside an
// iteration logged as k6 logs it, an exception or a line such as a syntax
// error's.
func isErrorLine(l string) bool {
	return strings.HasPrefix(l, "time=") && strings.Contains(l, " level=error ") && !strings.Contains(l, " scenario=")
}

// isExceptionLine tells whether l is an exception thrown outside an
// iteration, logged as k6 logs it.
func isExceptionLine(l string) bool {
	return strings.HasPrefix(l, "time=") && strings.Contains(l, " level=error ") &&
		strings.Contains(l, ` hint="script exception"`) && strings.HasSuffix(l, " source=stacktrace") &&
		!strings.Contains(l, " scenario=")
}

// wantOneError fails the test unless r exited with code and printed
// exactly one error line (see errorLines), which mentions each of want.
func wantOneError(t *testing.T, r run, code int, want ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstderr:\n%s", r.code, code, r.stderr)
	}
	lines := errorLines(r.stderr)
	if len(lines) != 1 {
		t.Fatalf("want exactly one ERROR line, got %d\nstderr:\n%s", len(lines), r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(lines[0], w) {
			t.Errorf("ERROR line %q does not mention %q", lines[0], w)
		}
	}
}

// script returns the path of a testdata script, relative to the package
// directory where metronome runs.
func script(name string) string { return filepath.Join("testdata", name) }

// exitCode is the exit status of a process that ended with err (-1 when a
// signal killed it); it fails the test when the process outlived ctx, whose
// timeout was timeout, or could not be waited for.
func exitCode(t *testing.T, ctx context.Context, err error, what string, timeout time.Duration, stderr string) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("%s did not finish within %v\nstderr:\n%s", what, timeout, stderr)
	case errors.As(err, &ee):
		return ee.ExitCode()
	case err != nil:
		t.Fatalf("%s: %v", what, err)
	}
	return 0
}
