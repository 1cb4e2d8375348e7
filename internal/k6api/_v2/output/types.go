// Package output is k6's API for output extensions over metronome's
// outputs: an output registered with RegisterExtension is a metronome
// output of the same name, selected with -o NAME[=ARG] or K6_OUT, that
// receives every sample of the run (metronome's own corrected_latency and
// schedule_lag included) and is started and stopped with the run's other
// outputs.
package output

import (
	"encoding/json"
	"io"
	"net/url"

	"github.com/sirupsen/logrus"

	"go.k6.io/k6/v2/ext"
	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/metrics"
)

// Params is what an output's constructor gets.
type Params struct {
	// OutputType is the output's name, the part of -o before '='.
	OutputType string
	// ConfigArgument is the part of -o after the first '=', empty when
	// there is none.
	ConfigArgument string
	// JSONConfig is the output's object under the config file's
	// "collectors" key, nil when there is none.
	JSONConfig json.RawMessage

	// Logger writes to the run's log.
	Logger logrus.FieldLogger
	// Environment is the process environment with the -e values over it.
	Environment map[string]string
	StdOut      io.Writer
	StdErr      io.Writer
	// ScriptPath is the script or archive the run runs, as a file URL.
	ScriptPath *url.URL
	// ScriptOptions are the run's consolidated options.
	ScriptOptions lib.Options
}

// Output takes the samples of a run to somewhere else: a file, a
// database, a service.
type Output interface {
	// Description names the output in the run's banner.
	Description() string
	// Start runs once, before the first samples; a long setup belongs
	// here, and an error stops the run before it begins.
	Start() error
	// AddMetricSamples hands over samples. Calls never overlap; it must
	// not block, so outputs buffer (SampleBuffer) and write on a
	// goroutine of their own (PeriodicFlusher).
	AddMetricSamples(samples []metrics.SampleContainer)
	// Stop writes what is left and ends the output; it runs once, after
	// the last samples, also when the run was aborted.
	Stop() error
}

// WithThresholds is an output that wants the test's thresholds, given
// before Start.
type WithThresholds interface {
	Output
	SetThresholds(map[string]metrics.Thresholds)
}

// WithTestRunStop is an output that may end the test run itself: the
// function it is given, before Start, aborts the run with its error.
type WithTestRunStop interface {
	Output
	SetTestRunStopCallback(func(error))
}

// WithStopWithTestError is an output that wants to know how the run
// ended: StopWithTestError is called in place of Stop, with the error the
// run ended with, nil when it ended normally.
type WithStopWithTestError interface {
	Output
	StopWithTestError(testRunErr error) error
}

// WithBuiltinMetrics is an output that wants k6's built-in metrics,
// given before Start.
type WithBuiltinMetrics interface {
	Output
	SetBuiltinMetrics(builtinMetrics *metrics.BuiltinMetrics)
}

// Constructor makes an output for one run.
type Constructor func(Params) (Output, error)

// RegisterExtension makes c the output name, selectable with -o name. A
// name registered twice panics, as a build mistake.
func RegisterExtension(name string, c Constructor) {
	ext.Register(name, ext.OutputExtension, c)
	plugIn(name, c)
}
