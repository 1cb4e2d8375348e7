// Package output defines how results leave metronome while a test runs.
// Each output lives in its own sub-package (json, csv, prometheus, hdrlog)
// and registers itself through the extension package.
package output

import (
	"io"
	"time"

	"github.com/metronome-load/metronome/extension"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/secrets"
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
	// Stdout is where "-" writes.
	Stdout io.Writer
	// Logf reports warnings.
	Logf func(format string, args ...any)
	// Secrets hides the secrets the script fetched: an output passes what
	// it writes for people to read (a results file, a report) through
	// Secrets.Writer or Secrets.Redact. nil hides nothing.
	Secrets *secrets.Store
	// Now gives the time (injected for tests).
	Now func() time.Time
	// Version is metronome's version, for outputs that name the sender
	// (OpenTelemetry's service.version).
	Version string
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
