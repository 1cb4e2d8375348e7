// Package proptest gives randomized tests a seed that replays a failure.
// A test draws its cases from Seed(t): by default 0, so that every run,
// CI's included, checks the same cases; METRONOME_SEED=N or the test
// binary's -seed=N flag draws other ones. When the test fails, it logs
// the command that runs the failing case again.
package proptest

import (
	"flag"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// EnvVar is the environment variable that sets the seed, for runs of
// several packages where a flag would be refused by packages without it.
const EnvVar = "METRONOME_SEED"

var seedFlag = flag.String("seed", "", "draw the randomized tests' cases from `N` (also $"+EnvVar+"); a failure prints the seed that replays it")

// Seed returns the seed t draws its cases from: -seed, else $METRONOME_SEED,
// else 0. A seed that is not a number fails t. When t fails, Seed logs how
// to replay it: the -run pattern of t and the seed.
func Seed(t testing.TB) uint64 {
	t.Helper()
	s, from := *seedFlag, "-seed"
	if s == "" {
		s, from = os.Getenv(EnvVar), EnvVar
	}
	var seed uint64
	if s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: the seed must be a whole number from 0 to 2^64-1", from, s)
		}
		seed = n
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replay: %s=%d go test -run '%s' (in this package)", EnvVar, seed, runPattern(t.Name()))
		}
	})
	return seed
}

// runPattern is the go test -run pattern that selects exactly the test or
// subtest named name.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}
