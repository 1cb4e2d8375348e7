package cli

import (
	"io"
	"strings"
	"time"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/logsink"
	"github.com/metronome-load/metronome/secrets"
)

// logSink builds the sink of --log-output and --log-format, falling back
// to K6_LOG_OUTPUT and K6_LOG_FORMAT as k6 does. The text format is k6's
// terminal layout, in colour, when the lines go to stderr or stdout and
// that is a terminal with colours allowed (logColors), and logfmt
// elsewhere, as in k6. A bad value ends the run
// before the script loads with 255, the code k6 v2.2.0 exits with for a
// bad --log-output. Every line hides the secrets of store.
func (g *globals) logSink(store *secrets.Store) (*logsink.Sink, error) {
	output, format := g.logOutput, g.logFormat
	if output == "" {
		output = g.env["K6_LOG_OUTPUT"]
	}
	if format == "" {
		format = g.env["K6_LOG_FORMAT"]
	}
	out, err := logsink.ParseOutput(output)
	if err != nil {
		return nil, exitcode.Wrap(exitcode.Generic, err)
	}
	f, err := logsink.ParseFormat(format)
	if err != nil {
		return nil, exitcode.Wrap(exitcode.Generic, err)
	}
	// --verbose lets debug lines through, as it lowers k6's logger
	// level, unless the output's own level= keeps them out.
	if g.verbose && !strings.Contains(output, "level=") {
		out.Level = logsink.Debug
	}
	if f == logsink.Text && g.logColors(out.Kind) {
		f = logsink.Terminal
	}
	s, err := logsink.New(out, f, g.stdout, g.stderr, time.Now, func(w io.Writer) io.Writer { return store.Writer(w) }, store.Redact)
	if err != nil {
		return nil, exitcode.Wrap(exitcode.Generic, err)
	}
	return s, nil
}

// logColors reports whether log lines to kind go to a terminal in colour:
// stderr or stdout is a terminal whose TERM is not dumb, and neither
// --no-color, K6_NO_COLOR nor NO_COLOR (even empty) turns colours off, as
// in k6.
func (g *globals) logColors(kind logsink.Kind) bool {
	_, noColor := g.env["NO_COLOR"]
	if g.noColor || noColor || g.env["K6_NO_COLOR"] != "" || g.env["TERM"] == "dumb" {
		return false
	}
	switch kind {
	case logsink.Stderr:
		return isTTY(g.stderr)
	case logsink.Stdout:
		return isTTY(g.stdout)
	}
	return false
}
