package capacity

import (
	"slices"
	"testing"
)

// run plays a search against a server whose capacity is cap: a step
// passes when its rate is at most cap.
func run(s search, capacity int64) []int64 {
	var rates []int64
	for {
		r, ok := s.next()
		if !ok {
			return rates
		}
		rates = append(rates, r)
		s.record(r, r <= capacity)
	}
}

func TestSearchSequence(t *testing.T) {
	s := search{start: 100, limit: 3000, growth: 2, precision: 0.05}
	for _, c := range []struct {
		capacity int64
		want     []int64
	}{
		// Climb 100, 200, 400, 800; 800 fails; bisect [400, 800] until
		// the bracket is within 5% of the rate that passed.
		{550, []int64{100, 200, 400, 800, 600, 500, 550, 575}},
		// Every step passes: the climb stops at the limit.
		{5000, []int64{100, 200, 400, 800, 1600, 3000}},
		// The start fails: nothing to bisect.
		{50, []int64{100}},
		// Fails at the limit: bisect below it.
		{2999, []int64{100, 200, 400, 800, 1600, 3000, 2300, 2650, 2825, 2912}},
	} {
		got := run(s, c.capacity)
		if !slices.Equal(got, c.want) {
			t.Errorf("capacity %d: rates %v, want %v", c.capacity, got, c.want)
		}
		if len(got) > s.maxSteps() {
			t.Errorf("capacity %d: %d steps, more than maxSteps %d", c.capacity, len(got), s.maxSteps())
		}
	}
}

// maxSteps bounds every search, and some capacity reaches it.
func TestSearchMaxSteps(t *testing.T) {
	for _, s := range []search{
		{start: 100, limit: 3000, growth: 2, precision: 0.05},
		{start: 1, limit: 100, growth: 1.5, precision: 0.01},
		{start: 10, limit: 10, growth: 2, precision: 0.05},
	} {
		most := s.maxSteps()
		reached := false
		for c := int64(0); c <= s.limit+1; c++ {
			n := len(run(s, c))
			if n > most {
				t.Fatalf("%+v: capacity %d takes %d steps, maxSteps %d", s, c, n, most)
			}
			reached = reached || n == most
		}
		if !reached {
			t.Errorf("%+v: no capacity takes maxSteps %d steps", s, most)
		}
	}
}
