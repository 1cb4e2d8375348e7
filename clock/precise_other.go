//go:build !linux

package clock

import "time"

// sleepPrecisely has no kernel timer to use here: Go's timers serve.
func sleepPrecisely(time.Duration) bool { return false }
