package proptest

import (
	"regexp"
	"strings"
	"testing"
)

// The replay pattern selects the failing subtest and nothing else, even
// when its name holds regexp syntax or prefixes another test's name.
func TestRunPattern(t *testing.T) {
	name := "TestClosedProperty/37/shared-iterations(1.5s)"
	pat := runPattern(name)
	for _, tc := range []struct {
		name string
		want bool
	}{
		{name, true},
		{"TestClosedProperty/37/shared-iterations(1.5s)x", false},
		{"TestClosedPropertyX/37/shared-iterations(1.5s)", false},
		{"TestClosedProperty/137/shared-iterations(1.5s)", false},
	} {
		// go test matches each slash-separated element separately.
		parts, pats := strings.Split(tc.name, "/"), strings.Split(pat, "/")
		got := len(parts) == len(pats)
		for i := 0; got && i < len(parts); i++ {
			got = regexp.MustCompile(pats[i]).MatchString(parts[i])
		}
		if got != tc.want {
			t.Errorf("-run %q on %q: match %v, want %v", pat, tc.name, got, tc.want)
		}
	}
}

// Seed is 0 unless asked for another, and reads METRONOME_SEED.
func TestSeedFromEnv(t *testing.T) {
	t.Setenv(EnvVar, "")
	if s := Seed(t); s != 0 {
		t.Errorf("default seed %d, want 0", s)
	}
	t.Setenv(EnvVar, "18446744073709551615")
	if s := Seed(t); s != 1<<64-1 {
		t.Errorf("seed %d, want 2^64-1", s)
	}
}
