// Package modulestest gives an extension's Go tests a runtime with a VU
// (see go.k6.io/k6/v2/js/modulestest).
package modulestest

import v2 "go.k6.io/k6/v2/js/modulestest"

type (
	// VU is a VU whose parts a test sets.
	VU = v2.VU
	// Runtime is a VU in its init context, with an event loop.
	Runtime = v2.Runtime
	// EventLoop runs the callbacks other goroutines queue.
	EventLoop = v2.EventLoop
)

// NewRuntime returns a runtime for a test.
var NewRuntime = v2.NewRuntime
