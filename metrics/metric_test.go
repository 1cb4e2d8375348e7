package metrics

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/internal/testkit/proptest"
)

// k6Name is k6's rule for a custom metric's name, as k6 states it.
var k6Name = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{1,128}$`)

func TestValidNameIsK6sRule(t *testing.T) {
	cases := []string{"", "a", "_", "ab", "_1", "1a", "a-b", "a b", "é1", "a\n", "A_z9",
		"a" + strings.Repeat("b", 128), "a" + strings.Repeat("b", 129), "a" + strings.Repeat("b", 127) + "!"}
	rng := rand.New(rand.NewPCG(proptest.Seed(t), 31))
	const alphabet = "aZ_09-.é \x00"
	for range 20000 {
		n := rng.IntN(6)
		if rng.IntN(10) == 0 {
			n = 126 + rng.IntN(6)
		}
		var b strings.Builder
		for range n {
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		cases = append(cases, b.String())
	}
	for _, name := range cases {
		if got, want := ValidName(name), k6Name.MatchString(name); got != want {
			t.Fatalf("ValidName(%q) = %v, k6's rule says %v", name, got, want)
		}
	}
}

// A value type read back from its String is itself; other text is Default.
func TestParseValueType(t *testing.T) {
	for _, v := range []ValueType{Default, Time, Data} {
		if got := ParseValueType(v.String()); got != v {
			t.Errorf("ParseValueType(%q) = %v, want %v", v.String(), got, v)
		}
	}
	if got := ParseValueType("bytes"); got != Default {
		t.Errorf(`ParseValueType("bytes") = %v, want default`, got)
	}
}
