package segment_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/executor/segment"
	"github.com/metronome-load/metronome/internal/testkit/proptest"
	"github.com/metronome-load/metronome/internal/testkit/segtest"
)

// firstOwned lists the global indices below n that the instance owns.
func firstOwned(tu *segment.Tuple, n int64) []int64 {
	var out []int64
	for k := int64(0); ; k++ {
		g := tu.Global(k)
		if g >= n {
			return out
		}
		out = append(out, g)
	}
}

// The worked examples of k6's striping (reference §2.2).
func TestTupleStriping(t *testing.T) {
	cases := []struct {
		seg, seq string
		n        int64
		owned    []int64
	}{
		{"0:1/3", "0,1/3,2/3,1", 6, []int64{0, 3}},
		{"1/3:2/3", "0,1/3,2/3,1", 6, []int64{1, 4}},
		{"2/3:1", "0,1/3,2/3,1", 6, []int64{2, 5}},
		{"0:1/2", "0,1/2,3/4,1", 8, []int64{0, 2, 4, 6}},
		{"1/2:3/4", "0,1/2,3/4,1", 8, []int64{1, 5}},
		{"3/4:1", "0,1/2,3/4,1", 8, []int64{3, 7}},
		{"0:3/5", "0,3/5,1", 5, []int64{0, 2, 4}},
		{"3/5:1", "0,3/5,1", 5, []int64{1, 3}},
		{"0:1/3", "", 6, []int64{1, 4}},
		{"1/3", "", 3, []int64{1}},
		{"0:1", "", 4, []int64{0, 1, 2, 3}},
		{"50%:100%", "0,0.5,1", 4, []int64{1, 3}},
	}
	for _, c := range cases {
		tu := segtest.Tuple(t, c.seg, c.seq)
		if got := firstOwned(tu, c.n); !slices.Equal(got, c.owned) {
			t.Errorf("%s in %q owns %v below %d, want %v", c.seg, c.seq, got, c.n, c.owned)
		}
	}
	// 10 VUs in thirds: 4/3/3 with the shared sequence, 3+3+3 without it
	// (each instance then pads its own sequence differently).
	var with, without []int64
	for _, seg := range []string{"0:1/3", "1/3:2/3", "2/3:1"} {
		with = append(with, segtest.Tuple(t, seg, "0,1/3,2/3,1").Scale(10))
		without = append(without, segtest.Tuple(t, seg, "").Scale(10))
	}
	if !slices.Equal(with, []int64{4, 3, 3}) || !slices.Equal(without, []int64{3, 3, 3}) {
		t.Errorf("10 VUs in thirds: %v with the sequence, %v without; want [4 3 3] and [3 3 3]", with, without)
	}
}

func TestSegmentParseErrors(t *testing.T) {
	for _, s := range []string{"1/2:1/3", "0:2", "a:b", "10.5%", "-1:1/2", "1/2:1/2"} {
		if _, err := segment.Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
	for _, s := range []string{"0", "0,1/2,1/3,1", "0,x,1"} {
		if _, err := segment.ParseSequence(s); err == nil {
			t.Errorf("ParseSequence(%q) accepted", s)
		}
	}
	seg, _ := segment.Parse("0:1/4")
	seq, _ := segment.ParseSequence("0,1/3,2/3,1")
	if _, err := segment.NewTuple(seg, seq); err == nil {
		t.Error("a segment that is not in the sequence was accepted")
	}
}

// The instances of any sequence own every global index exactly once, and
// their shares of any count (also after re-splitting by another count, as
// shared-iterations and the arrival-rate executors do) add up to it.
func TestTupleProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 7^proptest.Seed(t)))
	for trial := range 300 {
		segs, seq := segtest.RandomSequence(rng)
		v := rng.Int64N(200)
		by := 1 + rng.Int64N(60)
		var sum, resum int64
		owners := make([]int, 3*v+7)
		for _, s := range segs {
			tu := segtest.Tuple(t, s, seq)
			sum += tu.Scale(v)
			for _, g := range firstOwned(tu, int64(len(owners))) {
				owners[g]++
			}
			if rt, ok := tu.Resegment(by); ok {
				resum += rt.Scale(v)
				if tu.Scale(by) == 0 {
					t.Fatalf("trial %d: %s in %s: an instance with no share of %d kept work", trial, s, seq, by)
				}
			}
		}
		if sum != v || resum != v {
			t.Fatalf("trial %d: shares of %d in %s add up to %d (re-split by %d: %d)", trial, v, seq, sum, by, resum)
		}
		for g, n := range owners {
			if n != 1 {
				t.Fatalf("trial %d: %s: index %d owned %d times", trial, seq, g, n)
			}
		}
	}
}

// A segment of any length read from another machine's file gives an error
// of one short line.
func TestParseErrorIsShort(t *testing.T) {
	huge := "1/" + strings.Repeat("7", 200000) + ":0"
	_, err := segment.Parse(huge)
	if err == nil {
		t.Fatal("a segment whose start is above its end was accepted")
	}
	if msg := err.Error(); len(msg) > 200 || !strings.Contains(msg, "(200004 bytes)") || !strings.HasSuffix(msg, "the start must be below the end") {
		t.Errorf("%d-byte error %.300q", len(msg), msg)
	}
}
