package lib

import (
	"github.com/sirupsen/logrus"

	"go.k6.io/k6/v2/metrics"
)

// TestPreInitState is what the init context knows before any VU runs.
type TestPreInitState struct {
	// Registry makes the test's metrics.
	Registry *metrics.Registry
	// BuiltinMetrics are k6's built-in metrics in Registry.
	BuiltinMetrics *metrics.BuiltinMetrics
	// LookupEnv reads metronome's own process environment (not __ENV).
	LookupEnv func(key string) (val string, ok bool)
	// Logger writes to the run's log.
	Logger logrus.FieldLogger
}
