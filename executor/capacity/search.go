package capacity

import "math"

// search is the sequence of step rates, a function of the verdicts so far
// and nothing else, so that every instance of a distributed test that
// reached the same verdicts runs the same steps. It climbs from start,
// multiplying the rate by growth, until a step fails or the rate reaches
// limit; then it bisects between the highest rate that passed and the
// lowest that failed until they are within precision of the former.
type search struct {
	start, limit int64
	growth       float64
	precision    float64
	// passed is the highest rate that passed, 0 for none; failed the
	// lowest that failed, 0 for none.
	passed, failed int64
}

// next returns the rate of the next step, false when the search is over:
// the rate reached limit and passed, the start rate failed, or the
// bracket between passed and failed is narrow enough.
func (s *search) next() (int64, bool) {
	switch {
	case s.failed == 0 && s.passed == 0:
		return s.start, true
	case s.failed == 0:
		if s.passed >= s.limit {
			return 0, false
		}
		return s.climb(s.passed), true
	case s.passed == 0:
		return 0, false
	}
	if s.narrow() {
		return 0, false
	}
	return s.passed + (s.failed-s.passed)/2, true
}

// climb is the rate after r on the way up: r·growth, at least r+1, at
// most limit.
func (s *search) climb(r int64) int64 {
	next := int64(math.Ceil(float64(r) * s.growth))
	return min(max(next, r+1), s.limit)
}

// narrow reports whether passed and failed are close enough to stop: at
// most precision·passed apart, or adjacent.
func (s *search) narrow() bool {
	gap := s.failed - s.passed
	return gap <= 1 || float64(gap) <= s.precision*float64(s.passed)
}

// record takes the verdict of a step at rate.
func (s *search) record(rate int64, passed bool) {
	if passed {
		s.passed = max(s.passed, rate)
		return
	}
	if s.failed == 0 || rate < s.failed {
		s.failed = rate
	}
}

// maxSteps is the most steps the search can take, whatever the verdicts:
// the climb to limit when every step passes, or the climb to a failure
// and the longest bisection after it.
func (s search) maxSteps() int {
	climbed, most := 1, 1
	for prev, r := s.start, s.start; r < s.limit; {
		prev, r = r, s.climb(r)
		climbed++
		// Every step before r passed and r failed.
		most = max(most, climbed+s.bisections(prev, r))
	}
	return most
}

// bisections is the most steps the bisection between a rate that passed
// and one that failed can take: a step that passes narrows the bracket
// less (the midpoint rounds down) but widens the precision allowed, so
// both outcomes are followed. precision ≥ minPrecision keeps it to a few
// thousand calls.
func (s search) bisections(passed, failed int64) int {
	f := s
	f.passed, f.failed = passed, failed
	mid, ok := f.next()
	if !ok {
		return 0
	}
	return 1 + max(s.bisections(mid, failed), s.bisections(passed, mid))
}
