// Package output is k6's API for output extensions (see
// go.k6.io/k6/v2/output): the same types, so an output of either path
// registers into metronome alike.
package output

import (
	"time"

	v2 "go.k6.io/k6/v2/output"
)

// What an output is, what it is given, and what else it may want.
type (
	Params                = v2.Params
	Output                = v2.Output
	WithThresholds        = v2.WithThresholds
	WithTestRunStop       = v2.WithTestRunStop
	WithStopWithTestError = v2.WithStopWithTestError
	WithBuiltinMetrics    = v2.WithBuiltinMetrics
	Constructor           = v2.Constructor
)

// The helpers most outputs write with.
type (
	SampleBuffer    = v2.SampleBuffer
	PeriodicFlusher = v2.PeriodicFlusher
)

// RegisterExtension makes c the output name, selectable with -o name.
func RegisterExtension(name string, c Constructor) { v2.RegisterExtension(name, c) }

// NewPeriodicFlusher starts calling flushCallback every period.
func NewPeriodicFlusher(period time.Duration, flushCallback func()) (*PeriodicFlusher, error) {
	return v2.NewPeriodicFlusher(period, flushCallback)
}
