package js_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/js"
	"github.com/metronome-load/metronome/js/jstest"
)

// exceptionLine is what an Exception logs, as slog's text handler writes
// it without the time.
func exceptionLine(t *testing.T, err error) string {
	t.Helper()
	var ex *js.Exception
	if !errors.As(err, &ex) {
		t.Fatalf("%v (%T) is no *js.Exception", err, err)
	}
	var b bytes.Buffer
	ex.Log(slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})))
	return b.String()
}

// An exception of the init context is logged as k6 v2.2.0 logs it: the
// thrown value and the frames of the stack an Error took when it was made,
// none for another value (k6 evaluates ES modules, whose exceptions keep
// no other stack), with hint and source; exit code 107.
func TestInitExceptionLoggedAsK6(t *testing.T) {
	for _, tc := range []struct {
		name, script, want string
	}{
		{"an Error", "export default function () {}\nif (true) { throw new Error('broke'); }\n",
			`^level=ERROR msg="Error: broke\\n\\tat file:///\S+/script\.js:2:19\(\d+\)\\n" hint="script exception" source=stacktrace\n$`},
		{"a string thrown in a function", "function f() { throw 'a string'; }\nf();\nexport default function () {}\n",
			`^level=ERROR msg="a string\\n" hint="script exception" source=stacktrace\n$`},
		{"an object", "throw { a: 1 };\nexport default function () {}\n",
			`^level=ERROR msg="\[object Object\]\\n" hint="script exception" source=stacktrace\n$`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := jstest.TryLoad(t, map[string]string{"script.js": tc.script}, nil)
			if exitcode.Of(err) != exitcode.ScriptException {
				t.Fatalf("exit code %d, want %d (%v)", exitcode.Of(err), exitcode.ScriptException, err)
			}
			if got := exceptionLine(t, err); !regexp.MustCompile(tc.want).MatchString(got) {
				t.Errorf("logged %q, want it to match %s", got, tc.want)
			}
		})
	}
}

// setup's exception names its function in its frame; the rejection of an
// async setup is logged as "Uncaught (in promise)" without hint or
// source, and exits 255 as in k6, which gives it no exit code.
func TestSetupExceptionLoggedAsK6(t *testing.T) {
	for _, tc := range []struct {
		name, script, want string
		code               int
	}{
		{"an Error", "export function setup() {\n  throw new Error('no login');\n}\nexport default function () {}\n",
			`^level=ERROR msg="Error: no login\\n\\tat setup \(file:///\S+/script\.js:2:9\(\d+\)\)\\n" hint="script exception" source=stacktrace\n$`,
			exitcode.ScriptException},
		{"a rejection", "export async function setup() {\n  await 1;\n  throw new Error('no login');\n}\nexport default function () {}\n",
			`^level=ERROR msg="Uncaught \(in promise\) Error: no login\\n\\tat setup \(file:///\S+/script\.js:3:9\(\d+\)\)\\n"\n$`,
			exitcode.Generic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := jstest.Load(t, map[string]string{"script.js": tc.script}, nil)
			_, err := r.Script.Setup(context.Background(), nil)
			if exitcode.Of(err) != tc.code {
				t.Fatalf("exit code %d, want %d (%v)", exitcode.Of(err), tc.code, err)
			}
			if got := exceptionLine(t, err); !regexp.MustCompile(tc.want).MatchString(got) {
				t.Errorf("logged %q, want it to match %s", got, tc.want)
			}
		})
	}
}

// A script that does not compile or imports what cannot be loaded is
// logged in k6's words, "could not initialize" the script as given,
// "could not load JS test" its file URL, around metronome's own
// file:line:col and message, with no field and exit code 107; a retired
// module as k6's exception; a script that is not there exits 255 as in k6.
func TestLoadErrorLoggedAsK6(t *testing.T) {
	const load = `^level=ERROR msg="could not initialize '\S+/script\.js': could not load JS test 'file:///\S+/script\.js': `
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
		code  int
	}{
		{"a syntax error", map[string]string{"script.js": "export default function () {\n  let x = ;\n}\n"},
			load + `\S+/script\.js:2:11: SyntaxError: Unexpected \\";\\""\n$`, exitcode.ScriptException},
		{"an unknown module", map[string]string{"script.js": "import x from 'k6/does-not-exist';\nexport default function () {}\n"},
			load + `\S+/script\.js:1:1: unknown module \\"k6/does-not-exist\\": no such built-in or extension module"\n$`, exitcode.ScriptException},
		{"a missing file", map[string]string{"script.js": "import x from './missing.js';\nexport default function () {}\n"},
			load + `\S+/script\.js:1:1: cannot import \\"\./missing\.js\\": \S+/missing\.js does not exist"\n$`, exitcode.ScriptException},
		// k6 throws a retired module's sentence when the init context
		// requires it: an exception with no frame.
		{"a retired module", map[string]string{"script.js": "import r from 'k6/experimental/redis';\nexport default function () {}\n"},
			`^level=ERROR msg="GoError: k6/experimental/redis has been removed\. Please migrate to the new version by changing your import to 'k6/x/redis'\. Read more here: https://grafana\.com/docs/k6/latest/javascript-api/k6-x-redis\\n" hint="script exception" source=stacktrace\n$`,
			exitcode.ScriptException},
		{"no script", map[string]string{"other.js": ""},
			`^level=ERROR msg="script \S+/script\.js does not exist or is not a file"\n$`, exitcode.Generic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := jstest.TryLoad(t, tc.files, nil)
			if exitcode.Of(err) != tc.code {
				t.Fatalf("exit code %d, want %d (%v)", exitcode.Of(err), tc.code, err)
			}
			if got := exceptionLine(t, err); !regexp.MustCompile(tc.want).MatchString(got) {
				t.Errorf("logged %q, want it to match %s", got, tc.want)
			}
		})
	}
}

// exec.test.abort() in setup or teardown is logged as k6 logs it, "test
// aborted" and the reason if any, with no field, and exits 108.
func TestLifecycleAbortLoggedAsK6(t *testing.T) {
	for _, tc := range []struct {
		name, script, want string
	}{
		{"setup with a reason", "import exec from 'k6/execution';\nexport function setup() { exec.test.abort('no login'); }\nexport default function () {}\n",
			"level=ERROR msg=\"test aborted: no login\"\n"},
		{"setup without one", "import exec from 'k6/execution';\nexport function setup() { exec.test.abort(); }\nexport default function () {}\n",
			"level=ERROR msg=\"test aborted\"\n"},
		{"teardown", "import exec from 'k6/execution';\nexport default function () {}\nexport function teardown() { exec.test.abort('dirty'); }\n",
			"level=ERROR msg=\"test aborted: dirty\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := jstest.Load(t, map[string]string{"script.js": tc.script}, nil)
			var err error
			if strings.HasPrefix(tc.name, "setup") {
				_, err = r.Script.Setup(context.Background(), nil)
			} else {
				err = r.Script.Teardown(context.Background(), nil, nil)
			}
			if exitcode.Of(err) != exitcode.ScriptAborted {
				t.Fatalf("exit code %d, want %d (%v)", exitcode.Of(err), exitcode.ScriptAborted, err)
			}
			if got := exceptionLine(t, err); got != tc.want {
				t.Errorf("logged %q, want %q", got, tc.want)
			}
		})
	}
}
