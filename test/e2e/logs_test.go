package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// k6 v2.2.0 with --log-output=file=PATH,level=warning --log-format=json
// appends to PATH (here after "old"):
//
//	{"level":"warning","msg":"careful 42","source":"console","time":"2026-12-01T04:31:18Z"}
//	{"level":"error","msg":"bad","source":"console","time":"2026-12-01T04:31:18Z"}
//
// and prints no log line to stdout or stderr.
func TestLogOutputFileJSON(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.log")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := metronome(t, runSpec{args: []string{"run", "-q", "--summary-mode=disabled",
		"--log-output=file=" + path + ",level=warning", "--log-format=json", script("logs/console.js")}})
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, "careful") {
		t.Errorf("a console line reached stdout or stderr:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 3 || lines[0] != "old" {
		t.Fatalf("log file %q: want the old line and two appended JSON lines", b)
	}
	for i, want := range []struct{ level, msg string }{{"warning", "careful 42"}, {"error", "bad"}} {
		var m map[string]string
		if err := json.Unmarshal([]byte(lines[i+1]), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", lines[i+1], err)
		}
		if m["level"] != want.level || m["msg"] != want.msg || m["source"] != "console" || m["time"] == "" {
			t.Errorf("line %q: want level %q, msg %q, source console and a time", lines[i+1], want.level, want.msg)
		}
	}
}

// Each form prints what k6 v2.2.0 prints for the same script.
func TestLogOutputForms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		args, env []string
		stdout    string // lines that must appear on stdout
		stderr    string // and on stderr
		notStdout string // text that must not appear on stdout
		notStderr string
	}{
		// Not on a terminal, k6 writes logfmt with the full time.
		{name: "default text on stderr", stderr: " level=info msg=hi source=console\n", notStdout: "hi"},
		{name: "stdout", args: []string{"--log-output=stdout"}, stdout: ` level=warning msg="careful 42" source=console`, notStderr: "careful"},
		{name: "no colours on a file", args: []string{"--log-output=file=/dev/stderr"}, stderr: " level=error msg=bad source=console\n"},
		{name: "env K6_LOG_OUTPUT and K6_LOG_FORMAT", env: []string{"K6_LOG_OUTPUT=stdout", "K6_LOG_FORMAT=raw"}, stdout: "careful 42\nbad\n", notStderr: "careful"},
		{name: "raw", args: []string{"--log-format=raw"}, stderr: "hi\ncareful 42\nbad\n"},
		{name: "none", args: []string{"--log-output=none"}, notStdout: "careful", notStderr: "careful"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", "-q", "--summary-mode=disabled"}, tc.args...)
			r := metronome(t, runSpec{args: append(args, script("logs/console.js")), env: tc.env})
			if r.code != 0 {
				t.Fatalf("exit code %d, want 0\nstderr:\n%s", r.code, r.stderr)
			}
			if !strings.Contains(r.stdout, tc.stdout) || !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("want stdout to hold %q and stderr %q\nstdout:\n%s\nstderr:\n%s", tc.stdout, tc.stderr, r.stdout, r.stderr)
			}
			if (tc.notStdout != "" && strings.Contains(r.stdout, tc.notStdout)) || (tc.notStderr != "" && strings.Contains(r.stderr, tc.notStderr)) {
				t.Errorf("a console line went to the wrong stream\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			}
		})
	}
}

// k6 v2.2.0 exits 255 for a --log-output it does not know ("unsupported
// log output 'bogus'") and for file without a path. metronome does the
// same, and also for a bad --log-format (which k6 silently treats as
// text), and for a loki value k6 refuses.
func TestLogFlagsBadValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flag string
		code int
		want string
	}{
		{"--log-output=bogus", 255, "bogus"},
		{"--log-output=file", 255, "path"},
		{"--log-output=file=/no/such/folder/x.log", 255, "/no/such/folder"},
		{"--log-format=xml", 255, "xml"},
		{"--log-output=loki=http://127.0.0.1:1/push,limit=0", 255, "limit"},
		{"--log-output=loki=http://127.0.0.1:1/push,colour=red", 255, "colour"},
	} {
		r := metronome(t, runSpec{args: []string{"run", "-q", tc.flag, script("logs/console.js")}})
		wantOneError(t, r, tc.code, tc.want)
		if strings.Contains(r.stderr, "msg=hi") {
			t.Errorf("%s: the script ran despite the bad flag", tc.flag)
		}
	}
}

// Ctrl+C with a Loki that takes pushes and never answers: the lines
// logged so far go out in one last push and the run ends within that
// push's end wait (5 s, as pushPeriod=30s is longer) where k6 would wait
// the whole push period. K6_LOG_OUTPUT works as the flag does.
func TestLogOutputLokiStalledCtrlC(t *testing.T) {
	t.Parallel()
	started, pushed := make(chan struct{}, 1), make(chan string, 10)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/started" {
			started <- struct{}{}
			return
		}
		b, _ := io.ReadAll(r.Body)
		pushed <- string(b)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	var interrupted time.Time
	r := metronome(t, runSpec{
		args: []string{"run", "-q", "--summary-mode=disabled", script("logs/loki-loop.js")},
		env:  []string{"STAND_IN=" + srv.URL, "K6_LOG_OUTPUT=loki=" + srv.URL + "/push,pushPeriod=30s"},
		interrupt: func() {
			select {
			case <-started:
			case <-time.After(30 * time.Second):
				t.Error("the script did not start within 30 s")
			}
			time.Sleep(500 * time.Millisecond) // a few lines
			interrupted = time.Now()
		},
	})
	// 5 s of end wait, and as much again for the process to wind down on
	// a loaded machine; k6 would take the push period, 30 s.
	if after := time.Since(interrupted); after > 10*time.Second {
		t.Errorf("the run ended %v after Ctrl+C with a stalled Loki, want at most 10 s", after)
	}
	select {
	case body := <-pushed:
		if !strings.Contains(body, `"tick"`) || !strings.Contains(body, `"source":"console"`) {
			t.Errorf("the last push %s lacks the console lines", body)
		}
	default:
		t.Errorf("no push reached Loki after Ctrl+C (exit %d)\nstderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "Error while sending logs to loki") {
		t.Errorf("stderr lacks the failed push:\n%s", r.stderr)
	}
}
