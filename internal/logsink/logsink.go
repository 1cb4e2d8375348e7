// Package logsink is where every log line of a run goes: console output
// of the script and the runner's own warnings. It is built from k6's
// --log-output and --log-format flags, so a line can go to stderr, stdout,
// a file, a Grafana Loki or nowhere, as text, JSON or the bare message.
package logsink

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Level is the severity of a log line.
type Level int

// The levels, least severe first.
const (
	Debug Level = iota
	Info
	Warn
	Error
)

// text is the four-letter word of the text layout (k6's "INFO[0003]").
func (l Level) text() string {
	switch l {
	case Debug:
		return "DEBU"
	case Info:
		return "INFO"
	case Warn:
		return "WARN"
	default:
		return "ERRO"
	}
}

// String is the level's word in JSON lines and in level= options, as k6
// spells it.
func (l Level) String() string {
	switch l {
	case Debug:
		return "debug"
	case Info:
		return "info"
	case Warn:
		return "warning"
	default:
		return "error"
	}
}

// parseLevel reads a level= option; k6 takes "warn" as well as "warning".
func parseLevel(s string) (Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return Debug, nil
	case "info":
		return Info, nil
	case "warn", "warning":
		return Warn, nil
	case "error":
		return Error, nil
	}
	return 0, fmt.Errorf("unknown log level %q in --log-output (use debug, info, warning or error)", s)
}

// Format is the layout of a line.
type Format int

// The formats of --log-format, and the terminal's.
const (
	// Text is k6's text layout where the destination is not a terminal
	// (logfmt): time="2026-12-02T22:50:53Z" level=info msg="hi there"
	// source=console, the message left out when empty and a value in
	// Go's quotes when it holds more than letters, digits and -._/@^+.
	Text Format = iota
	// JSON is one object per line with level, msg, time and source.
	JSON
	// Raw is the message alone.
	Raw
	// Terminal is k6's text layout on a terminal: the level's four
	// letters in its colour, the seconds since the start, the message
	// padded to 44 columns and the fields, as in
	// "INFO[0003] hi                                            source=console".
	// NewText's sink writes it without colours or padding.
	Terminal
)

// ParseFormat reads --log-format; empty is Text.
func ParseFormat(s string) (Format, error) {
	switch s {
	case "", "text":
		return Text, nil
	case "json":
		return JSON, nil
	case "raw":
		return Raw, nil
	}
	return 0, fmt.Errorf("invalid --log-format %q: use text, json or raw", s)
}

// Kind is where lines go.
type Kind int

// The destinations of --log-output.
const (
	Stderr Kind = iota
	Stdout
	None
	File
	// Loki pushes the lines to a Grafana Loki, as k6 does.
	Loki
)

// Output is a parsed --log-output value.
type Output struct {
	Kind Kind
	// Path is the file of Kind File.
	Path string
	// Level is the least severe level written; Info unless level= says.
	Level Level
	// Loki is the push configuration of Kind Loki.
	Loki *LokiOptions
}

// ParseOutput reads --log-output: stderr (the default, also for empty),
// stdout, none, file=PATH with optional ",level=LEVEL", or loki with k6's
// keys (loki=URL,label.NAME=V,header.NAME=V,limit,level,pushPeriod,
// msgMaxSize,allowedLabels=[…]).
func ParseOutput(s string) (Output, error) {
	out := Output{Level: Info}
	head, rest, _ := strings.Cut(s, "=")
	switch head {
	case "", "stderr":
		return out, nil
	case "stdout":
		out.Kind = Stdout
		return out, nil
	case "none":
		out.Kind = None
		return out, nil
	case "loki":
		out.Kind = Loki
		return out, parseLoki(s, &out)
	case "file":
	default:
		if strings.HasPrefix(head, "loki") {
			return out, fmt.Errorf("--log-output=%s: write loki alone or loki=URL-TO-PUSH", s)
		}
		return out, fmt.Errorf("unsupported --log-output %q: use stderr, stdout, none, file=PATH or loki=URL", s)
	}
	out.Kind = File
	parts := strings.Split(rest, ",")
	out.Path = parts[0]
	if out.Path == "" {
		return out, fmt.Errorf("--log-output=%s needs a path: file=PATH", s)
	}
	for _, p := range parts[1:] {
		key, val, _ := strings.Cut(p, "=")
		if key != "level" {
			return out, fmt.Errorf("unknown option %q in --log-output=%s: only level= is supported", key, s)
		}
		lvl, err := parseLevel(val)
		if err != nil {
			return out, err
		}
		out.Level = lvl
	}
	return out, nil
}

// Sink writes log lines in one format to one destination. It is safe for
// concurrent use; each line is written whole with a single Write.
type Sink struct {
	mu     sync.Mutex
	w      io.Writer // nil for none and loki
	closer io.Closer
	loki   *lokiPusher
	redact func(string) string
	format Format
	// plain turns off the colours and padding of the Terminal layout.
	plain bool
	min   Level
	start time.Time
	now   func() time.Time
	// lastStamp is the time= text of the last second a line was written
	// in (Text layout).
	lastStamp atomic.Pointer[stamp]
}

// New makes the sink of output and format; stdout and stderr are the
// process's streams. A file is opened for appending, as k6 does, and is
// closed by Close. Lines reach their destination through through(dest),
// which hides secrets in a run; nil writes them directly. Loki gets the
// bare message, as in k6, through redact (nil keeps it), and its failed
// pushes are reported on stderr.
func New(output Output, format Format, stdout, stderr io.Writer, now func() time.Time, through func(io.Writer) io.Writer, redact func(string) string) (*Sink, error) {
	if now == nil {
		now = time.Now
	}
	s := &Sink{format: format, min: output.Level, start: now(), now: now}
	switch output.Kind {
	case Stderr:
		s.w = stderr
	case Stdout:
		s.w = stdout
	case File:
		if dir := filepath.Dir(output.Path); dir != "" {
			if _, err := os.Stat(dir); err != nil {
				return nil, fmt.Errorf("--log-output: folder %s of the log file does not exist", dir)
			}
		}
		f, err := os.OpenFile(output.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("--log-output: %v", err)
		}
		s.w, s.closer = f, f
	case Loki:
		opts := lokiDefaults()
		if output.Loki != nil {
			opts = *output.Loki
		}
		// k6 reports failed pushes in its text layout whatever
		// --log-format says.
		fallback := &Sink{w: stderr, format: Text, start: s.start, now: now}
		if through != nil && stderr != nil {
			fallback.w = through(stderr)
		}
		s.loki = newLokiPusher(opts, func(msg string, err error) {
			fallback.line(Error, msg, "", map[string]slog.Value{"error": slog.StringValue(err.Error())})
		})
		s.redact = redact
		return s, nil
	}
	if through != nil && s.w != nil {
		s.w = through(s.w)
	}
	return s, nil
}

// NewText is the sink of programs and tests that embed a run: lines to
// w, every level, in the Terminal layout without colours or padding
// ("INFO[0003] hi source=console").
func NewText(w io.Writer) *Sink {
	s, _ := New(Output{Kind: Stderr, Level: Debug}, Terminal, nil, w, nil, nil, nil)
	s.plain = true
	return s
}

// Line writes msg at level; source (e.g. "console") is left out when
// empty.
func (s *Sink) Line(level Level, msg, source string) {
	s.line(level, msg, source, nil)
}

// line writes msg at level with its source and other fields: labels of a
// Loki line, or key=value pairs after the message in the Text and
// Terminal layouts, sorted by key with the source, or keys of the JSON
// object, numbers and booleans as such, as logrus writes k6's fields.
func (s *Sink) line(level Level, msg, source string, fields map[string]slog.Value) {
	if s == nil || level < s.min {
		return
	}
	if s.loki != nil {
		if s.loki.drop() {
			return
		}
		if s.redact != nil {
			msg, source = s.redact(msg), s.redact(source)
			for k, v := range fields {
				fields[k] = slog.StringValue(s.redact(v.String()))
			}
		}
		s.loki.add(s.now(), level, msg, source, fields)
		return
	}
	if s.w == nil {
		return
	}
	var b []byte
	now := s.now()
	switch s.format {
	case JSON:
		// Keys sorted as k6 writes them; time in whole seconds, RFC 3339.
		if len(fields) == 0 {
			v := struct {
				Level  string `json:"level"`
				Msg    string `json:"msg"`
				Source string `json:"source,omitempty"`
				Time   string `json:"time"`
			}{level.String(), msg, source, now.Format(time.RFC3339)}
			b, _ = json.Marshal(v)
			break
		}
		// Other fields are keys beside them, as in k6 (a map's keys are
		// written sorted).
		v := make(map[string]any, len(fields)+4)
		for k, f := range fields {
			switch f.Kind() {
			case slog.KindInt64, slog.KindUint64, slog.KindFloat64, slog.KindBool:
				v[k] = f.Any()
			default:
				v[k] = f.String()
			}
		}
		v["level"], v["msg"], v["time"] = level.String(), msg, now.Format(time.RFC3339)
		if source != "" {
			v["source"] = source
		}
		b, _ = json.Marshal(v)
	case Raw:
		b = []byte(msg)
	case Text:
		b = make([]byte, 0, 64+len(msg)+len(source))
		b = append(b, `time="`...)
		b = append(b, s.stamp(now)...)
		b = append(b, `" level=`...)
		b = append(b, level.String()...)
		if msg != "" {
			b = append(b, " msg="...)
			b = appendValue(b, msg)
		}
		for _, k := range fieldKeys(source, fields) {
			b = append(b, ' ')
			b = append(b, k...)
			b = append(b, '=')
			b = appendValue(b, fieldValue(k, source, fields))
		}
	default:
		b = s.terminalLine(level, now, msg, source, fields)
	}
	b = append(b, '\n')
	s.mu.Lock()
	_, _ = s.w.Write(b)
	s.mu.Unlock()
}

// terminalLine is a line of the Terminal layout, without its newline.
func (s *Sink) terminalLine(level Level, now time.Time, msg, source string, fields map[string]slog.Value) []byte {
	secs := int(now.Sub(s.start) / time.Second)
	if s.plain {
		line := fmt.Sprintf("%s[%04d] %s", level.text(), secs, msg)
		for _, k := range fieldKeys(source, fields) {
			line += " " + k + "=" + string(appendValue(nil, fieldValue(k, source, fields)))
		}
		return []byte(line)
	}
	color := level.color()
	// One newline at the end of a message is dropped, as logrus does.
	b := fmt.Appendf(nil, "\x1b[%dm%s\x1b[0m[%04d] %-44s ", color, level.text(), secs, strings.TrimSuffix(msg, "\n"))
	for _, k := range fieldKeys(source, fields) {
		b = fmt.Appendf(b, " \x1b[%dm%s\x1b[0m=", color, k)
		b = appendValue(b, fieldValue(k, source, fields))
	}
	return b
}

// color is the ANSI colour of the level's word on a terminal.
func (l Level) color() int {
	switch l {
	case Debug:
		return 37
	case Warn:
		return 33
	case Error:
		return 31
	default:
		return 36
	}
}

// stamp is now in RFC 3339 and whole seconds, formatted once a second:
// a script that logs in a loop would otherwise format it on every line.
func (s *Sink) stamp(now time.Time) string {
	sec := now.Unix()
	if st := s.lastStamp.Load(); st != nil && st.sec == sec {
		return st.text
	}
	st := &stamp{sec, now.Format(time.RFC3339)}
	s.lastStamp.Store(st)
	return st.text
}

// stamp is a second and its time= text.
type stamp struct {
	sec  int64
	text string
}

// sourceKey is what fieldKeys returns for a line with a source and no
// other field, the common case, without allocating.
var sourceKey = []string{"source"}

// fieldKeys are the keys of a line's fields, its source among them when
// there is one, sorted.
func fieldKeys(source string, fields map[string]slog.Value) []string {
	if len(fields) == 0 {
		if source == "" {
			return nil
		}
		return sourceKey
	}
	keys := make([]string, 0, len(fields)+1)
	if source != "" {
		keys = append(keys, "source")
	}
	for k := range fields {
		if k != "source" || source == "" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// fieldValue is the value of the field key.
func fieldValue(key, source string, fields map[string]slog.Value) string {
	if key == "source" && source != "" {
		return source
	}
	return fields[key].String()
}

// appendValue appends a value of the Text layout: bare when it is only
// letters, digits and -._/@^+ (or empty), else quoted as Go quotes it.
func appendValue(b []byte, v string) []byte {
	for i := 0; i < len(v); i++ {
		if !bare[v[i]] {
			return strconv.AppendQuote(b, v)
		}
	}
	return append(b, v...)
}

// bare are the bytes a value of the Text layout may hold unquoted.
var bare = func() (t [256]bool) {
	for _, c := range "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._/@^+" {
		t[c] = true
	}
	return t
}()

// Logf writes a formatted line at level with no source.
func (s *Sink) Logf(level Level, format string, args ...any) {
	s.Line(level, fmt.Sprintf(format, args...), "")
}

// Close closes the log file, if there is one, and pushes the lines Loki
// has not had yet, giving up after two push periods or 10 s at most.
func (s *Sink) Close() error {
	if s != nil && s.loki != nil {
		s.loki.close()
	}
	if s == nil || s.closer == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closer.Close()
}

// Slog returns a structured logger that writes to the sink: each record is
// one line at the record's level (below min dropped) with its attributes
// as fields (key=value after the message in the text layouts, keys beside
// msg in JSON, left out of the raw layout), as k6 writes a logrus entry's
// fields; an attribute named
// source becomes the line's source. It is the levelled log modules reach
// through modules.Run.Log.
func (s *Sink) Slog(min slog.Level) *slog.Logger {
	return slog.New(&slogHandler{s: s, min: min})
}

// slogHandler is the slog.Handler behind Sink.Slog.
type slogHandler struct {
	s     *Sink
	min   slog.Level
	attrs []slog.Attr
	group string // the prefix of the keys of attributes added from now on
}

func (h *slogHandler) Enabled(_ context.Context, l slog.Level) bool {
	return h.s != nil && (h.s.w != nil || h.s.loki != nil) && l >= h.min
}

func (h *slogHandler) Handle(_ context.Context, r slog.Record) error {
	level := Error
	switch {
	case r.Level < slog.LevelInfo:
		level = Debug
	case r.Level < slog.LevelWarn:
		level = Info
	case r.Level < slog.LevelError:
		level = Warn
	}
	source, fields := "", map[string]slog.Value{}
	add := func(prefix string, a slog.Attr) {
		key := prefix + a.Key
		switch {
		case key == "source":
			source = a.Value.String()
		case h.s.loki != nil || h.s.format != Raw:
			// Loki's labels, the text layouts' fields and JSON's keys,
			// as k6's fields.
			fields[key] = a.Value.Resolve()
		}
	}
	for _, a := range h.attrs {
		add("", a)
	}
	r.Attrs(func(a slog.Attr) bool {
		add(h.group, a)
		return true
	})
	h.s.line(level, r.Message, source, fields)
	return nil
}

func (h *slogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = slices.Clip(c.attrs)
	for _, a := range attrs {
		a.Key = h.group + a.Key
		c.attrs = append(c.attrs, a)
	}
	return &c
}

func (h *slogHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.group += name + "."
	return &c
}
