package executor

import (
	"sync/atomic"
	"time"
)

// State holds the instance-wide counters that k6/execution exposes as
// exec.instance. Every field is updated atomically.
type State struct {
	// Start is when the executors phase began (after setup); a
	// scenario starts at Start + its startTime.
	Start time.Time
	// RunStart is when the test run began, before setup
	// (exec.instance.currentTestRunDuration counts from it).
	RunStart time.Time

	IterationsCompleted   atomic.Int64
	IterationsInterrupted atomic.Int64
	VUsActive             atomic.Int64
	VUsInitialized        atomic.Int64
}
