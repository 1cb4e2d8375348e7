//go:build race

package audit

// raceEnabled is set when the tests run under the race detector, which
// slows reading an output tenfold; the audit is one goroutine, so the
// tests that read large outputs to bound memory run without it.
const raceEnabled = true
