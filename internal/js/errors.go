package js

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/grafana/sobek"
	"github.com/grafana/sobek/parser"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/js/compile"
)

// scriptError turns an error the user's script caused into the one-line
// exit-code-107 error the CLI prints. Errors that already carry an exit
// code keep it.
func (s *Script) scriptError(err error) error {
	var ec *exitcode.Error
	if errors.As(err, &ec) {
		return err
	}
	var ab *errAborted
	if errors.As(err, &ab) {
		return abortError(ab)
	}
	if ie, ok := errors.AsType[*sobek.InterruptedError](err); ok {
		if ab, ok := ie.Value().(*errAborted); ok {
			return abortError(ab)
		}
	}
	switch e := err.(type) {
	case *sobek.Exception:
		return &Exception{err: exitcode.Wrap(exitcode.ScriptException, errors.New(s.describe(err))),
			msg: s.stackText(e), attrs: exceptionAttrs()}
	case *thrownError:
		// k6 gives a rejected promise of setup, teardown or the init
		// context no exit code of its own: it exits 255.
		return &Exception{err: exitcode.Wrap(exitcode.Generic, errors.New(s.describe(err))), msg: s.rejectionText(e.val)}
	}
	return exitcode.Wrap(exitcode.ScriptException, errors.New(s.describe(err)))
}

// initError is scriptError for an error of the init context. k6
// evaluates the init context as ES modules, whose exceptions keep only
// the stack an Error object took when it was made: a thrown string or
// plain object is logged with no frame, where a module run as a function
// would name the throw's.
func (s *Script) initError(err error) error {
	ex, ok := err.(*sobek.Exception)
	if !ok {
		return s.scriptError(err)
	}
	if o, isObj := ex.Value().(*sobek.Object); isObj && o.ClassName() == "Error" {
		return s.scriptError(err)
	}
	return &Exception{err: exitcode.Wrap(exitcode.ScriptException, errors.New(s.describe(err))),
		msg: valueString(ex.Value()) + "\n", attrs: exceptionAttrs()}
}

// loadError is scriptError for a script that does not compile or names a
// module that cannot be loaded: logged in k6's words around metronome's
// own "file:line:col: message", with exit code 107; a retired module's
// import as the exception k6 throws for it.
func (s *Script) loadError(given, abs string, err error) error {
	e := s.scriptError(err)
	if re, ok := errors.AsType[*compile.RetiredError](err); ok {
		return &Exception{err: e, msg: "GoError: " + re.Msg + "\n", attrs: exceptionAttrs()}
	}
	return &Exception{err: e, msg: fmt.Sprintf("could not initialize '%s': could not load JS test '%s': %s",
		given, compile.FileURL(abs), e.Error())}
}

// abortError is exec.test.abort() outside an iteration, logged as k6 logs
// it, "test aborted" and the reason with no field, with exit code 108.
func abortError(ab *errAborted) error {
	return loggedError(exitcode.Wrap(exitcode.ScriptAborted, ab))
}

// loggedError is err logged at the error level as its message alone, as k6
// logs an error of the test with no exception behind it.
func loggedError(err error) error { return &Exception{err: err, msg: err.Error()} }

// Exception is an error of the script that k6 logs: an exception or a
// rejected promise outside an iteration (the init context, setup,
// teardown, handleSummary), a script that does not load, or
// exec.test.abort() in setup or teardown. Its Error is metronome's one
// line ("file:line:col: message"), and Log writes it as k6 v2.2.0 logs
// it, so that the run's last line is k6's.
type Exception struct {
	err   error
	msg   string
	attrs []any
}

func (e *Exception) Error() string { return e.err.Error() }

func (e *Exception) Unwrap() error { return e.err }

// Log writes the exception to log at the error level as k6 does: the
// stack as the message, with hint and source for a thrown exception.
func (e *Exception) Log(log *slog.Logger) { log.Error(e.msg, e.attrs...) }

// exceptionAttrs are the fields k6 logs an exception with, in an
// iteration or out of one, its stack (stackText) being the message:
// hint="script exception", source=stacktrace, then more.
func exceptionAttrs(more ...any) []any {
	return append(append(make([]any, 0, 4+len(more)), "hint", "script exception", "source", "stacktrace"), more...)
}

// describe renders an error as "file:line:col: message" when its place in
// the user's source is known.
func (s *Script) describe(err error) string {
	switch e := err.(type) {
	case *compile.PosError:
		return fmt.Sprintf("%s:%d:%d: %s", s.display(e.Name), e.Line, e.Col, e.Msg)
	case parser.ErrorList:
		if len(e) > 0 {
			return s.describe(e[0])
		}
	case *parser.Error:
		p := e.Position
		return fmt.Sprintf("%s: SyntaxError: %s", s.place(p.Filename, p.Line, p.Column), e.Message)
	case *sobek.CompilerSyntaxError:
		if e.File != nil {
			p := e.File.Position(e.Offset)
			return fmt.Sprintf("%s: SyntaxError: %s", s.place(p.Filename, p.Line, p.Column), e.Message)
		}
		return "SyntaxError: " + e.Message
	case *sobek.Exception:
		return s.describeException(e)
	case *sobek.InterruptedError:
		if v, ok := e.Value().(error); ok {
			return v.Error()
		}
		return "interrupted"
	case *thrownError:
		return s.describeValue(e.val, e.prefix)
	}
	return err.Error()
}

// describeException places an exception where its Error object was made
// (for a rethrown error, where it was first thrown), else at the innermost
// frame of user code, skipping Go functions such as a module's check.
func (s *Script) describeException(ex *sobek.Exception) string {
	msg := valueString(ex.Value())
	if pos := s.stackPosition(ex.Value()); pos != "" {
		return pos + ": " + msg
	}
	for _, f := range ex.Stack() {
		if f.SrcName() == "<native>" {
			continue
		}
		p := f.Position()
		if p.Filename == "" {
			continue
		}
		return s.place(p.Filename, p.Line, p.Column) + ": " + msg
	}
	return msg
}

// stackText renders an exception as k6 logs an iteration's error: the
// thrown value, then one "\tat FUNCTION (URL:LINE:COL(PC))" line per
// frame, innermost first, at the positions of the script as written. It
// moves a frame's column from its position, which costs nothing where the
// column stays, rather than parsing the text as asWritten must (20,000
// failing iterations logged to a file, medians of five runs alternating
// with the build before: 0.22 against 0.15 s of CPU with the parse, 0.20
// against 0.18 s without).
func (s *Script) stackText(ex *sobek.Exception) string {
	var b, frame bytes.Buffer
	b.WriteString(valueString(ex.Value()))
	b.WriteByte('\n')
	for _, f := range ex.Stack() {
		b.WriteString("\tat ")
		b.WriteString(s.frameText(f, &frame))
		b.WriteByte('\n')
	}
	return b.String()
}

// frameText renders one frame as sobek does, "name (file:line:col(pc))",
// at the column of the script as written; buf is scratch space.
func (s *Script) frameText(f sobek.StackFrame, buf *bytes.Buffer) string {
	buf.Reset()
	f.Write(buf)
	text := buf.String()
	if p := f.Position(); s.loader != nil && p.Filename != "" {
		if col := s.loader.Column(p.Filename, p.Line, p.Column); col != p.Column {
			text = strings.Replace(text, fmt.Sprintf("%s:%d:%d(", p.Filename, p.Line, p.Column),
				fmt.Sprintf("%s:%d:%d(", p.Filename, p.Line, col), 1)
		}
	}
	return text
}

// callerText is " at " and the innermost frame of the script's code on
// rt's stack, as sobek ends an interruption's message, which k6 logs for
// exec.test.abort() in an iteration; "" when no such frame runs. sobek
// notices an interrupt at the instruction after the call that asked for
// it, so its program counter, the number in brackets, is one more than
// the call's.
func (s *Script) callerText(rt *sobek.Runtime) string {
	for _, f := range rt.CaptureCallStack(0, nil) {
		if f.SrcName() != "<native>" && f.Position().Filename != "" {
			var buf bytes.Buffer
			text := s.frameText(f, &buf)
			if m := framePC().FindStringSubmatchIndex(text); m != nil {
				pc, _ := strconv.Atoi(text[m[2]:m[3]])
				text = text[:m[2]] + strconv.Itoa(pc+1) + text[m[3]:]
			}
			return " at " + text
		}
	}
	return ""
}

// framePC matches the program counter at the end of a frame's text.
var framePC = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\((\d+)\)\)?$`) })

// rejectionText renders a promise's rejection as k6 logs it: "Uncaught
// (in promise) " and the reason's stack when it is an Error with one, at
// the positions of the script as written, else the reason as text.
func (s *Script) rejectionText(v sobek.Value) string {
	if o, ok := v.(*sobek.Object); ok {
		if st := o.Get("stack"); st != nil && !sobek.IsUndefined(st) {
			return "Uncaught (in promise) " + s.asWritten(st.String())
		}
	}
	return "Uncaught (in promise) " + valueString(v)
}

// asWritten moves the columns of the frames of an Error's stack property
// from the code sobek ran to the script as written (modules are
// rewritten, TypeScript stripped).
func (s *Script) asWritten(stack string) string {
	if s.loader == nil {
		return stack
	}
	return stackFrameRE().ReplaceAllStringFunc(stack, func(frame string) string {
		m := stackFrameRE().FindStringSubmatch(frame)
		line, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		return strings.TrimSuffix(frame, m[3]) + strconv.Itoa(s.loader.Column(m[1], line, col))
	})
}

// describeValue renders a thrown value that reached Go without its
// exception, such as a rejected promise's reason.
func (s *Script) describeValue(v sobek.Value, prefix string) string {
	if v == nil {
		return prefix + "undefined"
	}
	msg := prefix + valueString(v)
	if pos := s.stackPosition(v); pos != "" {
		return pos + ": " + msg
	}
	return msg
}

// stackFrameRE matches a frame of an Error's stack that names a script,
// compiled when a first error needs it.
var stackFrameRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`at (?:[^\n]*?\()?((?:file|https?)://[^\s()]+?):(\d+):(\d+)`)
})

// stackPosition reads the place an Error object was made from its stack
// property, "" when there is none.
func (s *Script) stackPosition(v sobek.Value) string {
	o, ok := v.(*sobek.Object)
	if !ok {
		return ""
	}
	st := o.Get("stack")
	if st == nil || sobek.IsUndefined(st) {
		return ""
	}
	m := stackFrameRE().FindStringSubmatch(st.String())
	if m == nil {
		return ""
	}
	line, _ := strconv.Atoi(m[2])
	col, _ := strconv.Atoi(m[3])
	return s.place(m[1], line, col)
}

// place renders a position in a module as "path:line:col".
func (s *Script) place(name string, line, col int) string {
	if s.loader != nil {
		col = s.loader.Column(name, line, col)
	}
	return fmt.Sprintf("%s:%d:%d", s.display(name), line, col)
}

// valueString converts a thrown value to text without letting a throwing
// toString escape.
func valueString(v sobek.Value) (out string) {
	if v == nil {
		return "undefined"
	}
	defer func() {
		if recover() != nil {
			out = "[object]"
		}
	}()
	if ex, ok := v.Export().(*sobek.Exception); ok {
		return valueString(ex.Value())
	}
	return v.String()
}

// display turns a module URL into the path users know: relative to the
// working directory when below it, else absolute; remote URLs stay URLs.
func (s *Script) display(name string) string {
	if !strings.HasPrefix(name, "file://") {
		return name
	}
	u, err := url.Parse(name)
	if err != nil {
		return name
	}
	p := filepath.FromSlash(u.Path)
	if s.cwd != "" {
		if rel, err := filepath.Rel(s.cwd, p); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return p
}

// thrownError carries a JavaScript value that was thrown or a promise
// rejected with; prefix says how it went unhandled.
type thrownError struct {
	val    sobek.Value
	prefix string
}

func (e *thrownError) Error() string { return e.prefix + valueString(e.val) }
