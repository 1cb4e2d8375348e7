package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runClosedStdout runs metronome with its standard output on a pipe whose
// reader takes 10 bytes and goes away, as `metronome run … | head -c 10`.
func runClosedStdout(t *testing.T, args ...string) run {
	t.Helper()
	statSources()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = hermeticEnv(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(stdout, make([]byte, 10)); err != nil {
		t.Fatalf("reading the first 10 bytes of stdout: %v", err)
	}
	stdout.Close()
	err = cmd.Wait()
	r := run{stderr: stderr.String(), elapsed: time.Since(start)}
	r.code = exitCode(t, ctx, err, "metronome", 60*time.Second, r.stderr)
	return r
}

// A closed standard output does not end the run early: the run goes on,
// and its files are complete — the gzip stream ends properly, the
// HdrHistogram log holds its intervals, the summary export is written.
func TestClosedStdoutKeepsOutputsWhole(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	dir := t.TempDir()
	gz, hlog, exp := filepath.Join(dir, "out.json.gz"), filepath.Join(dir, "out.hlog"), filepath.Join(dir, "summary.json")
	r := runClosedStdout(t, "run", "-e", "TARGET="+tg.URL, "-o", "json="+gz, "-o", "hdrlog="+hlog,
		"--summary-export", exp, script("outputs/pipe.js"))
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0 (a closed stdout loses only the summary text)\nstderr:\n%s", r.code, r.stderr)
	}
	f, err := os.Open(gz)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s is not gzip: %v", gz, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s is truncated: %v", gz, err)
	}
	served := tg.requests.Load()
	if got := int64(strings.Count(string(data), `"metric":"http_reqs"`)) - 1; got != served {
		t.Errorf("the JSON output has %d http_reqs points, the server answered %d requests", got, served)
	}
	log, err := os.ReadFile(hlog)
	if err != nil {
		t.Fatal(err)
	}
	// One line an interval for each request name (the test has one).
	if n := len(regexp.MustCompile(`(?m)^Tag=metric=http_req_duration;scenario=s[,;]`).FindAllIndex(log, -1)); n < 2 {
		t.Errorf("the hdrlog has %d http_req_duration intervals, want at least 2 of the 1.5 s run:\n%s", n, log)
	}
	readExport(t, exp)
}

// With -o json=- the closed stdout is the output's own destination: the
// run still finishes, and says how many samples it could not write.
func TestClosedStdoutAsOutputIsReported(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	r := runClosedStdout(t, "run", "-q", "--no-summary", "-e", "TARGET="+tg.URL, "-o", "json=-", script("outputs/pipe.js"))
	if r.code != 255 {
		t.Fatalf("exit code %d, want 255 (results were lost)\nstderr:\n%s", r.code, r.stderr)
	}
	lines := errorLines(r.stderr)
	if len(lines) != 1 || !strings.Contains(lines[0], "json (stdout)") || !strings.Contains(lines[0], "broken pipe") ||
		!strings.Contains(lines[0], "samples were not written") {
		t.Errorf("want one ERROR line naming json (stdout), the broken pipe and the count lost, got %q\nstderr:\n%s", lines, r.stderr)
	}
}

// A reader that takes nothing from -o json=- holds the exit for a bounded
// time after the test (10 s of patience for standard output), not until
// it goes away; the run says what was lost and exits 255.
func TestStuckStdoutExitWaitIsBounded(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	statSources()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "run", "-q", "-e", "TARGET="+tg.URL, "-o", "json=-", script("outputs/pipe.js"))
	cmd.Env = hermeticEnv(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe() // never read until the process has ended
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-exited:
	case <-time.After(60 * time.Second):
		stdout.Close()
		t.Fatalf("metronome still waits for its stuck stdout 60 s after it started (a 1.5 s test)\nstderr:\n%s", stderr.String())
	}
	elapsed := time.Since(start)
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() != 255 {
		t.Fatalf("exit: %v after %v, want code 255\nstderr:\n%s", werr, elapsed, stderr.String())
	}
	lines := errorLines(stderr.String())
	if len(lines) != 1 || !strings.Contains(lines[0], "json (stdout)") || !strings.Contains(lines[0], "samples were not written") {
		t.Errorf("want one ERROR line naming json (stdout) and what it lost, got %q\nstderr:\n%s", lines, stderr.String())
	}
	t.Logf("exited after %v", elapsed)
}
