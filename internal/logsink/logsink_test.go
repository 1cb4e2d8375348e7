package logsink

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseOutput(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Output
	}{
		{"", Output{Kind: Stderr, Level: Info}},
		{"stderr", Output{Kind: Stderr, Level: Info}},
		{"stdout", Output{Kind: Stdout, Level: Info}},
		{"none", Output{Kind: None, Level: Info}},
		{"file=/tmp/x.log", Output{Kind: File, Path: "/tmp/x.log", Level: Info}},
		{"file=x.log,level=warning", Output{Kind: File, Path: "x.log", Level: Warn}},
		{"file=x.log,level=warn", Output{Kind: File, Path: "x.log", Level: Warn}},
		{"file=x.log,level=error", Output{Kind: File, Path: "x.log", Level: Error}},
	} {
		got, err := ParseOutput(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseOutput(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"bogus", "file", "file=", "file=x,level=loud", "file=x,size=1", "stderrx"} {
		if _, err := ParseOutput(bad); err == nil {
			t.Errorf("ParseOutput(%q) accepted a bad value", bad)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"": Text, "text": Text, "json": JSON, "raw": Raw} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseFormat("xml"); err == nil || !strings.Contains(err.Error(), "xml") {
		t.Errorf("ParseFormat(xml) error %v, want one naming the value", err)
	}
}

// fakeNow starts at t0 and moves by the returned function.
func fakeNow(t0 time.Time) (func() time.Time, func(time.Duration)) {
	now := t0
	return func() time.Time { return now }, func(d time.Duration) { now = now.Add(d) }
}

func newSink(t *testing.T, out Output, f Format) (*Sink, *bytes.Buffer, *bytes.Buffer, func(time.Duration)) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	now, advance := fakeNow(time.Date(2026, 12, 1, 4, 31, 17, 500, time.UTC))
	s, err := New(out, f, &stdout, &stderr, now, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, &stdout, &stderr, advance
}

// TestTextLayout checks k6's layout where stderr is not a terminal:
// logfmt with the full time, the message quoted only when it must be and
// left out when empty, and the fields sorted after it.
func TestTextLayout(t *testing.T) {
	s, stdout, stderr, advance := newSink(t, Output{Kind: Stderr, Level: Info}, Text)
	s.Line(Info, "hi", "console")
	advance(12*time.Second + 900*time.Millisecond)
	s.Logf(Warn, "%d dropped", 3)
	s.Line(Debug, "hidden below info", "console")
	s.Line(Error, "say \"no\"\n\tat x.js:1:2(3)\n", "stacktrace")
	s.Line(Info, "", "console")
	s.Line(Info, "a-Z_0.9/@^+", "")
	s.line(Warn, "Request Failed", "", map[string]slog.Value{"error": slog.StringValue("dial: refused"), "a": slog.StringValue("")})
	want := `time="2026-12-01T04:31:17Z" level=info msg=hi source=console
time="2026-12-01T04:31:29Z" level=warning msg="3 dropped"
time="2026-12-01T04:31:29Z" level=error msg="say \"no\"\n\tat x.js:1:2(3)\n" source=stacktrace
time="2026-12-01T04:31:29Z" level=info source=console
time="2026-12-01T04:31:29Z" level=info msg=a-Z_0.9/@^+
time="2026-12-01T04:31:29Z" level=warning msg="Request Failed" a= error="dial: refused"
`
	if stderr.String() != want || stdout.Len() != 0 {
		t.Errorf("stderr:\n%s\nstdout %q; want stderr:\n%s", stderr, stdout, want)
	}
}

// TestTerminalLayout checks k6's layout on a terminal: the level's word
// in its colour, the message padded to 44 columns, one trailing newline
// dropped, the fields coloured as the level; and NewText's plain form.
func TestTerminalLayout(t *testing.T) {
	s, _, stderr, advance := newSink(t, Output{Kind: Stderr, Level: Debug}, Terminal)
	s.Line(Info, "hello { a: 1 }", "console")
	advance(3 * time.Second)
	s.Line(Error, "Error: boom\n\tat f\n", "stacktrace")
	s.Line(Debug, "é", "")
	s.Logf(Warn, "%s", strings.Repeat("w", 50))
	want := "\x1b[36mINFO\x1b[0m[0000] hello { a: 1 }                                \x1b[36msource\x1b[0m=console\n" +
		"\x1b[31mERRO\x1b[0m[0003] Error: boom\n\tat f" + strings.Repeat(" ", 27+2) + "\x1b[31msource\x1b[0m=stacktrace\n" +
		"\x1b[37mDEBU\x1b[0m[0003] é                                            \n" +
		"\x1b[33mWARN\x1b[0m[0003] " + strings.Repeat("w", 50) + " \n"
	if stderr.String() != want {
		t.Errorf("stderr %q\nwant   %q", stderr, want)
	}
	var b bytes.Buffer
	plain := NewText(&b)
	plain.Line(Warn, "careful", "console")
	plain.Line(Info, "x", "")
	if b.String() != "WARN[0000] careful source=console\nINFO[0000] x\n" {
		t.Errorf("NewText wrote %q", b.String())
	}
}

// The keys and level words are those real k6 v2.2.0 writes with
// --log-format=json: {"level":"warning","msg":"careful 42",
// "source":"console","time":"2026-12-01T04:31:17Z"}.
func TestJSONLines(t *testing.T) {
	s, stdout, _, _ := newSink(t, Output{Kind: Stdout, Level: Debug}, JSON)
	levels := []Level{Debug, Info, Warn, Error}
	for _, l := range levels {
		s.Line(l, `say "hi"`+"\n", "console")
	}
	s.Line(Warn, "no source", "")
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines, want 5: %q", len(lines), stdout)
	}
	for i, words := range []string{"debug", "info", "warning", "error"} {
		var m map[string]string
		if err := json.Unmarshal([]byte(lines[i]), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", lines[i], err)
		}
		want := map[string]string{"level": words, "msg": "say \"hi\"\n", "source": "console", "time": "2026-12-01T04:31:17Z"}
		if len(m) != len(want) {
			t.Errorf("line %q has keys %v, want %v", lines[i], m, want)
		}
		for k, v := range want {
			if m[k] != v {
				t.Errorf("line %q: %s = %q, want %q", lines[i], k, m[k], v)
			}
		}
	}
	if strings.Contains(lines[4], `"source":`) {
		t.Errorf("a line without source wrote one: %s", lines[4])
	}
}

func TestRawAndNone(t *testing.T) {
	s, _, stderr, _ := newSink(t, Output{Kind: Stderr, Level: Info}, Raw)
	s.Line(Error, "bad", "console")
	if stderr.String() != "bad\n" {
		t.Errorf("raw wrote %q, want %q", stderr, "bad\n")
	}
	n, stdout, stderr, _ := newSink(t, Output{Kind: None, Level: Info}, Text)
	n.Line(Error, "bad", "console")
	if stdout.Len()+stderr.Len() != 0 {
		t.Errorf("none wrote %q %q", stdout, stderr)
	}
}

// A file is appended to, as k6 does, and level= drops less severe lines.
func TestFileAppendsAndFilters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.log")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := ParseOutput("file=" + path + ",level=warning")
	if err != nil {
		t.Fatal(err)
	}
	s, stdout, stderr, _ := newSink(t, out, Raw)
	s.Line(Info, "hi", "console")
	s.Line(Warn, "careful", "console")
	s.Line(Error, "bad", "console")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "old\ncareful\nbad\n" || stdout.Len()+stderr.Len() != 0 {
		t.Errorf("file %q, stdout %q, stderr %q; want file %q", b, stdout, stderr, "old\ncareful\nbad\n")
	}
	if _, err := New(Output{Kind: File, Path: "/no/such/folder/x.log"}, Text, nil, nil, nil, nil, nil); err == nil || !strings.Contains(err.Error(), "/no/such/folder") {
		t.Errorf("a log file in a missing folder gave %v, want an error naming the folder", err)
	}
}

// TestJSONFields checks that a line's fields are keys of its JSON object
// beside level, msg and time, sorted, as real k6 v2.2.0 writes its
// Request Failed warning with --log-format=json: {"error":"Get \"…\": dial
// tcp …","level":"warning","msg":"Request Failed","time":"…"}.
func TestJSONFields(t *testing.T) {
	s, stdout, _, _ := newSink(t, Output{Kind: Stdout, Level: Debug}, JSON)
	s.Slog(slog.LevelInfo).Warn("Request Failed", "error", `Get "http://127.0.0.1:1/": refused`)
	s.line(Info, "m", "console", map[string]slog.Value{"b": slog.StringValue("2")})
	// k6 v2.2.0's --http-debug line: iter and vu are numbers, the message
	// escaped as encoding/json escapes it (& as \u0026).
	s.Slog(slog.LevelInfo).Info("Request:\nPOST /raw HTTP/1.1\n\na=1&b=two\n", "group", "", "iter", int64(0),
		"request_id", "3b19a9f6-8067-43ab-969c-2632bc1373a2", "scenario", "default", "source", "http-debug", "vu", uint64(1))
	want := `{"error":"Get \"http://127.0.0.1:1/\": refused","level":"warning","msg":"Request Failed","time":"2026-12-01T04:31:17Z"}
{"b":"2","level":"info","msg":"m","source":"console","time":"2026-12-01T04:31:17Z"}
{"group":"","iter":0,"level":"info","msg":"Request:\nPOST /raw HTTP/1.1\n\na=1\u0026b=two\n","request_id":"3b19a9f6-8067-43ab-969c-2632bc1373a2","scenario":"default","source":"http-debug","time":"2026-12-01T04:31:17Z","vu":1}
`
	if stdout.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", stdout, want)
	}
}

// TestSlog checks the structured logger modules get: levels map onto the
// sink's, records under the logger's minimum are dropped, attributes
// follow the message and an attribute named source is the line's source.
func TestSlog(t *testing.T) {
	s, _, stderr, _ := newSink(t, Output{Kind: Stderr, Level: Debug}, Text)
	log := s.Slog(slog.LevelInfo)
	log.Debug("below the minimum")
	log.With("source", "xk6-probe").Info("connected", "addr", "127.0.0.1:6379", "n", 2)
	log.WithGroup("pool").Warn("slow", "size", 3)
	log.Error("failed")
	want := `time="2026-12-01T04:31:17Z" level=info msg=connected addr="127.0.0.1:6379" n=2 source=xk6-probe
time="2026-12-01T04:31:17Z" level=warning msg=slow pool.size=3
time="2026-12-01T04:31:17Z" level=error msg=failed
`
	if stderr.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, want)
	}
	if s.Slog(slog.LevelDebug).Enabled(context.Background(), slog.LevelDebug) != true {
		t.Error("a logger made with the debug minimum does not take debug records")
	}
}

// TestSlogRaw checks that the raw layout writes a record's message alone.
func TestSlogRaw(t *testing.T) {
	s, _, stderr, _ := newSink(t, Output{Kind: Stderr, Level: Debug}, Raw)
	s.Slog(slog.LevelInfo).Info("connected", "addr", "127.0.0.1:6379")
	if stderr.String() != "connected\n" {
		t.Errorf("stderr %q, want the message alone", stderr)
	}
}
