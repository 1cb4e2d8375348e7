// Package output is the contract of the outputs (-o): what an output is
// (Output, and EndReceiver and the other interfaces an output may add),
// what its constructor gets (Params), and the kit they share. Inbox is the
// bounded, non-blocking hand-over of sample batches; Loop is the lifecycle
// of an output that flushes periodically on its own goroutine; Queue is
// the bounded queue of an output that sends to a server; Redact keeps
// secrets out of an output's messages. The built-in outputs (json, csv,
// influxdb, prometheus, opentelemetry, hdrlog, result, web-dashboard) and
// extensions' outputs are written on this kit and register themselves
// through package extension.
package output

import (
	"encoding/json"
	"io"
	"log/slog"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/extension"
	"github.com/metronome-load/metronome/health"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/secrets"
	"github.com/metronome-load/metronome/summary"
)

// Output receives every sample of a run, in batches, in the order the
// engine ingested them.
type Output interface {
	// Description is shown in the banner, e.g. "json (results.json)".
	Description() string
	// Start is called once before the first batch.
	Start() error
	// AddSamples hands over a batch. It must not block for long: outputs
	// that do I/O buffer and write on their own goroutine. The output may
	// keep the slice.
	AddSamples(batch []metrics.Sample)
	// Stop flushes what is buffered and releases resources. It is called
	// once, after the last batch, also when the test was aborted.
	Stop() error
}

// Params is what a constructor gets.
type Params struct {
	// Arg is the part of -o after the first '=' ("file.json" for
	// json=file.json), empty when there is none.
	Arg string
	// Env is the process environment plus -e values, for K6_* settings.
	Env map[string]string
	// Registry holds the run's metric definitions.
	Registry *metrics.Registry
	// Thresholds maps a metric name to its threshold sources, for the
	// json output's Metric lines.
	Thresholds map[string][]string
	// SystemTags are the enabled system tags (csv columns).
	SystemTags []string
	// Stdout is where "-" writes, Stderr where the run's own lines go.
	Stdout, Stderr io.Writer
	// Logf reports warnings.
	Logf func(format string, args ...any)
	// Log is the run's log (--log-output, --log-format), for outputs
	// that log at several levels.
	Log *slog.Logger
	// JSONConfig is the output's object under the config file's
	// "collectors" key, where k6 keeps output settings; nil when there
	// is none.
	JSONConfig json.RawMessage
	// StopTest aborts the test with err, for an output that cannot go on
	// (k6's WithTestRunStop): the run ends as after any abort, with err's
	// exit code, 255 when it has none, and says which output stopped it. It may be called from any
	// goroutine, more than once; the first error counts.
	StopTest func(err error)
	// Secrets hides the secrets the script fetched: an output passes what
	// it writes for people to read (a results file, a report) through
	// Secrets.Writer or Secrets.Redact. nil hides nothing.
	Secrets *secrets.Store
	// Now gives the time (injected for tests).
	Now func() time.Time
	// Version is metronome's version, for outputs that name the sender
	// (OpenTelemetry's service.version).
	Version string
	// Options are the run's consolidated options as JSON (what `metronome
	// inspect` prints), and Script the path of the script or archive it
	// runs, for outputs that record the test itself (the result file).
	Options json.RawMessage
	Script  string
}

// RunEnd is what a run knows once its last sample was recorded, beyond
// the samples: how long it ran, what setup() returned and the accounts of
// its scenarios.
type RunEnd struct {
	// Elapsed is the test's duration, from the end of --paused to the end
	// of teardown().
	Elapsed   time.Duration
	SetupData json.RawMessage
	// Scenarios are the scenarios that started, in the order of the run.
	Scenarios []ScenarioEnd
	// Health is what the generator's health intervals added up to, nil
	// when none was measured.
	Health *health.Tally
	// Err is the error that ended the run early (an abort, a signal, a
	// script error, a timeout), nil when it ran to its end; failed
	// thresholds alone are no such error.
	Err error
}

// ScenarioEnd is the end-of-test account of one scenario that started.
type ScenarioEnd struct {
	Name string
	// Open is the account of an open-model scenario, nil for a closed one.
	Open *executor.Account
	// BackFill is the back-fill account of a closed-model scenario that
	// back-fills corrected_latency, nil otherwise.
	BackFill *executor.BackFillAccount
}

// The optional capabilities below are interfaces an Output may also
// implement; the engine asks each output for them with a type assertion,
// for built-ins and extensions alike. At the end of a run it calls
// ReceiveSummary, then ReceiveEnd, then Stop.

// SummaryReceiver is implemented by outputs that show the end-of-test
// summary themselves (the web dashboard's HTML report). The engine calls
// ReceiveSummary once, after the last sample was handed over and before
// Stop, with the summary the end of the run prints. The output must not
// change it.
type SummaryReceiver interface {
	ReceiveSummary(*summary.Input)
}

// EndReceiver is implemented by outputs that record the end of the run
// (the result file). The engine calls ReceiveEnd once, after the last
// sample was handed over and before Stop.
type EndReceiver interface {
	ReceiveEnd(RunEnd)
}

// Constructor builds an output.
type Constructor func(Params) (Output, error)

// Register makes an output available to -o under name.
func Register(name string, c Constructor) { extension.Register(extension.Output, name, c) }

// Lookup returns the constructor registered as name.
func Lookup(name string) (Constructor, bool) {
	e, ok := extension.Get(extension.Output, name)
	if !ok {
		return nil, false
	}
	c, ok := e.Value.(Constructor)
	return c, ok
}
