package executor

import (
	"math/big"
	"testing"
	"time"
)

type rampPoint struct {
	at  time.Duration
	vus int64
}

func allSteps(start int64, stages ...VUStage) []rampPoint {
	s := &rampStepper{stages: stages, from: start}
	var out []rampPoint
	for at, n, ok := s.next(); ok; at, n, ok = s.next() {
		out = append(out, rampPoint{at, n})
	}
	return out
}

func TestRampSteps(t *testing.T) {
	var worked []rampPoint
	for n := int64(1); n <= 10; n++ {
		worked = append(worked, rampPoint{time.Duration(n) * time.Second, n})
	}
	for u := int64(10); u >= 1; u-- {
		// u → u−1 at 10s + 10s·(10−u+1)/10.
		worked = append(worked, rampPoint{time.Duration(20-u+1) * time.Second, u - 1})
	}
	cases := []struct {
		name  string
		start int64
		st    []VUStage
		want  []rampPoint
	}{
		{"worked example", 0, []VUStage{{10 * time.Second, 10}, {10 * time.Second, 0}}, worked},
		// 10ns·k/3 truncates: 3, 6, 10; and down again from 10ns.
		{"truncating division", 0, []VUStage{{10, 3}, {10, 0}}, []rampPoint{{3, 1}, {6, 2}, {10, 3}, {13, 2}, {16, 1}, {20, 0}}},
		{"jumps and flat stages", 1, []VUStage{{0, 5}, {5 * time.Second, 5}, {0, 0}}, []rampPoint{{0, 5}, {5 * time.Second, 0}}},
		{"from startVUs", 2, []VUStage{{4 * time.Second, 4}}, []rampPoint{{2 * time.Second, 3}, {4 * time.Second, 4}}},
		{"nothing to do", 3, []VUStage{{time.Second, 3}}, nil},
	}
	for _, c := range cases {
		got := allSteps(c.start, c.st...)
		if len(got) != len(c.want) {
			t.Errorf("%s: steps %v, want %v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: step %d is %v, want %v", c.name, i, got[i], c.want[i])
			}
		}
	}
}

// TestRampStepsNoOverflow ramps to the largest target over a long stage,
// where D·k overflows int64: step times must match exact big-integer
// arithmetic.
func TestRampStepsNoOverflow(t *testing.T) {
	const d = 200 * 24 * time.Hour
	exact := func(k int64) time.Duration {
		v := new(big.Int).Mul(big.NewInt(int64(d)), big.NewInt(k))
		return time.Duration(v.Quo(v, big.NewInt(maxRampTarget)).Int64())
	}
	s := &rampStepper{stages: []VUStage{{d, maxRampTarget}}}
	for k := int64(1); k <= 3; k++ {
		if at, n, ok := s.next(); !ok || n != k || at != exact(k) {
			t.Fatalf("step %d: %v %d %v, want %v", k, at, n, ok, exact(k))
		}
	}
	for _, k := range []int64{4, 12_345_678, 99_999_999, maxRampTarget} {
		if got := mulDiv(d, k, maxRampTarget); got != exact(k) {
			t.Errorf("mulDiv(%v, %d, %d) = %v, want %v", d, k, maxRampTarget, got, exact(k))
		}
	}
	if got := mulDiv(d, maxRampTarget, maxRampTarget); got != d {
		t.Errorf("the last step is at %v, want the stage end %v", got, d)
	}
}
