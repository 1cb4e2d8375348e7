package e2e

import (
	"strings"
	"testing"
)

// ES module imports across files, require() of CommonJS modules and
// open() all resolve relative to the file that names them: metronome runs
// from the package directory, not the script's.
func TestModulesImportRequireOpen(t *testing.T) {
	t.Parallel()
	r := metronome(t, runSpec{args: []string{"run", "-q", "--no-summary", script("modules/main.js")}})
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	want := "RESULT add=5 twice=8 label=the-label cjs=cjs:12:helper-value lines=3 bytes=17 libdata=beta"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("console output lacks %q\nstderr:\n%s", want, r.stderr)
	}
}

// A TypeScript script's errors point at the .ts file and its own lines.
func TestTypeScriptErrorLines(t *testing.T) {
	t.Parallel()
	t.Run("iteration", func(t *testing.T) {
		t.Parallel()
		r := metronome(t, runSpec{args: []string{"run", "-q", "--no-summary", script("ts/iteration_error.ts")}})
		// An exception inside an iteration is logged; the run still
		// succeeds, as in k6.
		if r.code != 0 {
			t.Fatalf("exit code %d, want 0\nstderr:\n%s", r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, "iteration_error.ts:13") || !strings.Contains(r.stderr, "typed failure 5") {
			t.Errorf("want the error at iteration_error.ts:13 with its message\nstderr:\n%s", r.stderr)
		}
	})
	t.Run("init", func(t *testing.T) {
		t.Parallel()
		r := metronome(t, runSpec{args: []string{"run", "-q", "--no-summary", script("ts/init_error.ts")}})
		wantOneError(t, r, 107, "init_error.ts:8", "too many retries")
	})
}
