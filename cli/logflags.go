package cli

import (
	"io"
	"time"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/logsink"
	"github.com/metronome-load/metronome/secrets"
)

// logSink builds the sink of --log-output and --log-format, falling back
// to K6_LOG_OUTPUT and K6_LOG_FORMAT as k6 does. A bad value ends the run
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
	s, err := logsink.New(out, f, g.stdout, g.stderr, time.Now, func(w io.Writer) io.Writer { return store.Writer(w) }, store.Redact)
	if err != nil {
		return nil, exitcode.Wrap(exitcode.Generic, err)
	}
	return s, nil
}
