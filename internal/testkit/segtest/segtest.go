// Package segtest makes execution segments for tests: tuples from the
// flags' text, and random sequences for the property tests of segment and
// of the executors.
package segtest

import (
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/executor/segment"
)

// Tuple places the segment seg ("1/3:2/3") in the sequence seq
// ("0,1/3,2/3,1", or "" for seg alone) and fails the test when either
// does not parse or seg is not one of seq's segments.
func Tuple(t testing.TB, seg, seq string) *segment.Tuple {
	t.Helper()
	s, err := segment.Parse(seg)
	if err != nil {
		t.Fatalf("segment %q: %v", seg, err)
	}
	var pts []*big.Rat
	if seq != "" {
		if pts, err = segment.ParseSequence(seq); err != nil {
			t.Fatalf("sequence %q: %v", seq, err)
		}
	}
	tu, err := segment.NewTuple(s, pts)
	if err != nil {
		t.Fatalf("tuple %q in %q: %v", seg, seq, err)
	}
	return tu
}

// RandomSequence returns 1 to 7 segments covering 0 to 1 with small
// denominators, and the sequence string.
func RandomSequence(rng *rand.Rand) (segs []string, seq string) {
	k := 1 + rng.IntN(7)
	pts := map[string]*big.Rat{}
	for len(pts) < k-1 {
		d := int64(2 + rng.IntN(11))
		r := big.NewRat(1+rng.Int64N(d-1), d)
		pts[r.RatString()] = r
	}
	sorted := []*big.Rat{big.NewRat(0, 1)}
	for _, r := range pts {
		sorted = append(sorted, r)
	}
	sorted = append(sorted, big.NewRat(1, 1))
	slices.SortFunc(sorted, func(a, b *big.Rat) int { return a.Cmp(b) })
	var strs []string
	for i, r := range sorted {
		strs = append(strs, r.RatString())
		if i > 0 {
			segs = append(segs, sorted[i-1].RatString()+":"+r.RatString())
		}
	}
	return segs, strings.Join(strs, ",")
}
