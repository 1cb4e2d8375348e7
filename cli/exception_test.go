package cli

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/engine"
)

// fakeException is a script's exception outside an iteration, as the js
// package's Exception is: one line as its error, k6's line as its log.
type fakeException struct{ code int }

func (e fakeException) Error() string { return "s.js:2:7: Error: init failed" }

func (e fakeException) Unwrap() error { return exitcode.Wrap(e.code, errors.New("init failed")) }

func (e fakeException) Log(log *slog.Logger) {
	log.Error("Error: init failed\n\tat file:///s.js:2:7(7)\n", "hint", "script exception", "source", "stacktrace")
}

// run, inspect and archive end with a script's exception logged as k6
// logs it, through --log-format, in place of the ERROR line, and with its
// exit code: 107, or 255 for a rejection, which k6 gives no code.
func TestExceptionLoggedInPlaceOfErrorLine(t *testing.T) {
	logfmt := regexp.MustCompile(`^time="[^"]+" level=error msg="Error: init failed\\n\\tat file:///s.js:2:7\(7\)\\n" hint="script exception" source=stacktrace\n$`)
	json := regexp.MustCompile(`^\{"hint":"script exception","level":"error","msg":"Error: init failed\\n\\tat file:///s.js:2:7\(7\)\\n","source":"stacktrace","time":"[^"]+"\}\n$`)
	for _, tc := range []struct {
		name   string
		args   []string
		inLoad bool
		code   int
		want   *regexp.Regexp
	}{
		{"run, init", []string{"run", "s.js"}, true, exitcode.ScriptException, logfmt},
		{"run, setup", []string{"run", "s.js"}, false, exitcode.ScriptException, logfmt},
		{"run, rejection", []string{"run", "s.js"}, false, exitcode.Generic, logfmt},
		{"run, json", []string{"run", "--log-format=json", "s.js"}, false, exitcode.ScriptException, json},
		{"inspect", []string{"inspect", "s.js"}, true, exitcode.ScriptException, logfmt},
		{"archive", []string{"archive", "-O", filepath.Join(t.TempDir(), "a.tar"), "s.js"}, true, exitcode.ScriptException, logfmt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, `{}`)
			var err error = fakeException{tc.code}
			if _, ok := err.(engine.LoggedError); !ok {
				t.Fatal("fakeException is no engine.LoggedError")
			}
			if tc.inLoad {
				h.loadErr = err
			} else {
				h.engine = func(ctx context.Context, cfg engine.Config) error { return err }
			}
			code, _, stderr := h.run(nil, tc.args...)
			if code != tc.code || !tc.want.MatchString(stderr) {
				t.Errorf("exit %d, stderr %q; want %d and k6's line alone", code, stderr, tc.code)
			}
		})
	}
}
