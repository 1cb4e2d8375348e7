//go:build race

package compare

// raceEnabled is set when the tests run under the race detector, which
// slows the bootstrap tenfold.
const raceEnabled = true
