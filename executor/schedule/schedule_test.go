package schedule_test

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/metronome-load/metronome/executor/executortest"
	"github.com/metronome-load/metronome/executor/schedule"
)

func mustSchedule(t testing.TB, spec schedule.Spec) *schedule.Schedule {
	t.Helper()
	s, err := schedule.New(spec)
	if err != nil {
		t.Fatalf("New(%+v): %v", spec, err)
	}
	return s
}

// k6 §1.6 and §11: a constant rate starts at 0 and repeats every period.
func TestScheduleConstantK6(t *testing.T) {
	for _, k6 := range []bool{true, false} {
		s := mustSchedule(t, schedule.Spec{TimeUnit: time.Second, Rate: 10, Duration: time.Second, K6Arithmetic: k6})
		got := executortest.Offsets(s)
		if len(got) != 10 || s.Count() != 10 {
			t.Fatalf("k6=%v: %d offsets, Count %d; want 10 (0…900 ms; the one at 1s is outside)", k6, len(got), s.Count())
		}
		for i, off := range got {
			if want := time.Duration(i) * 100 * time.Millisecond; off != want {
				t.Errorf("k6=%v: offset %d = %v, want %v", k6, i, off, want)
			}
		}
	}
	// rate 50/s: period 20 ms (k6's segment test uses the unscaled period).
	s := mustSchedule(t, schedule.Spec{TimeUnit: time.Second, Rate: 50, Duration: time.Second, K6Arithmetic: true})
	if off, _ := s.Offset(3); off != 60*time.Millisecond {
		t.Errorf("rate 50/s: offset 3 = %v, want 60ms", off)
	}
}

// k6 truncates the period to whole nanoseconds: 3/s gives 333333333 ns, so
// 4 arrivals fit in 1s (the last 1 ns before the end); the exact schedule
// holds 3.
func TestScheduleConstantTruncation(t *testing.T) {
	k6 := mustSchedule(t, schedule.Spec{TimeUnit: time.Second, Rate: 3, Duration: time.Second, K6Arithmetic: true})
	if got := executortest.Offsets(k6); len(got) != 4 || got[3] != 999_999_999 {
		t.Errorf("k6 3/s for 1s: %v, want 4 offsets, the last at 999999999ns", got)
	}
	exact := mustSchedule(t, schedule.Spec{TimeUnit: time.Second, Rate: 3, Duration: time.Second})
	want := []time.Duration{0, 333_333_333, 666_666_666}
	got := executortest.Offsets(exact)
	if len(got) != len(want) || exact.Count() != 3 {
		t.Fatalf("exact 3/s for 1s: %v (Count %d), want %v", got, exact.Count(), want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("exact offset %d = %v, want %v", i, got[i], want[i])
		}
	}
}

// k6 §1.7: the vectors of k6's own ramping-arrival-rate test, in
// milliseconds; k6 checks them to 0.1%, these to 1 ms.
func TestScheduleRampK6Vector(t *testing.T) {
	stages := []schedule.RateStage{{Duration: 5 * time.Second, Target: 1}, {Duration: time.Second, Target: 1}, {Duration: 5 * time.Second, Target: 0}}
	for _, tc := range []struct {
		unit time.Duration
		want []time.Duration
	}{
		{time.Second, []time.Duration{3162, 4472, 5500, 6527, 7837, 11000}},
		// Three times as fast.
		{time.Second / 3, []time.Duration{1825, 2581, 3162, 3651, 4082, 4472, 4830, 5166, 5499, 5833, 6169, 6527, 6917, 7348, 7837, 8418, 9174, 10999}},
	} {
		for _, k6 := range []bool{true, false} {
			s := mustSchedule(t, schedule.Spec{TimeUnit: tc.unit, StartRate: 0, Stages: stages, K6Arithmetic: k6})
			got := executortest.Offsets(s)
			if len(got) != len(tc.want) || s.Count() != int64(len(tc.want)) {
				t.Fatalf("unit %v, k6=%v: offsets %v (Count %d), want %d of them", tc.unit, k6, got, s.Count(), len(tc.want))
			}
			for i, off := range got {
				if d := off - tc.want[i]*time.Millisecond; d <= -time.Millisecond || d >= time.Millisecond {
					t.Errorf("unit %v, k6=%v: offset %d = %v, want %vms", tc.unit, k6, i, off, tc.want[i])
				}
			}
			if s.Duration() != 11*time.Second {
				t.Errorf("Duration = %v, want 11s", s.Duration())
			}
		}
	}
}

// k6 §11: the first ramp arrival comes when the area reaches 1.
func TestScheduleRampVectors(t *testing.T) {
	// startRate 10, {1s, 10}: 100, 200, … ms, the 10th exactly at 1s.
	s := mustSchedule(t, schedule.Spec{TimeUnit: time.Second, StartRate: 10, Stages: []schedule.RateStage{{Duration: time.Second, Target: 10}}})
	got := executortest.Offsets(s)
	if len(got) != 10 {
		t.Fatalf("startRate 10 for 1s: %d offsets %v, want 10", len(got), got)
	}
	for i, off := range got {
		if want := time.Duration(i+1) * 100 * time.Millisecond; off != want {
			t.Errorf("offset %d = %v, want %v", i, off, want)
		}
	}
	// startRate 0, {10s, 10}: the i-th (1-based) at sqrt(2i) s, 50 of them.
	for _, k6 := range []bool{true, false} {
		s = mustSchedule(t, schedule.Spec{TimeUnit: time.Second, Stages: []schedule.RateStage{{Duration: 10 * time.Second, Target: 10}}, K6Arithmetic: k6})
		got = executortest.Offsets(s)
		if len(got) != 50 {
			t.Fatalf("k6=%v: 0→10/s over 10s: %d offsets, want 50", k6, len(got))
		}
		for i, off := range got {
			want := math.Sqrt(2*float64(i+1)) * 1e9
			if math.Abs(float64(off)-want) > 1 {
				t.Errorf("k6=%v: offset %d = %v, want %.0fns", k6, i, off, want)
			}
		}
	}
}

// The same schedule read at random (Schedule.Offset) and in order (Cursor)
// gives the same offsets, for every kind of schedule, also when a cursor
// goes back.
func TestScheduleRandomAccess(t *testing.T) {
	specs := []schedule.Spec{
		{TimeUnit: time.Second, Rate: 7, Duration: 3 * time.Second},
		{TimeUnit: time.Second, Rate: 7, Duration: 3 * time.Second, K6Arithmetic: true},
		{TimeUnit: time.Second, StartRate: 3, Stages: []schedule.RateStage{{Duration: time.Second, Target: 9}, {Duration: 0, Target: 2}, {Duration: 2 * time.Second, Target: 2}, {Duration: time.Second, Target: 0}}},
		{TimeUnit: time.Second, Rate: 7, Duration: 3 * time.Second, Arrivals: schedule.ArrivalsPoisson, Seed: 5},
		{TimeUnit: time.Second, StartRate: 3, Stages: []schedule.RateStage{{Duration: 2 * time.Second, Target: 20}}, Arrivals: schedule.ArrivalsPoisson, Seed: 5},
	}
	for _, spec := range specs {
		s := mustSchedule(t, spec)
		seq := executortest.Offsets(s)
		if int64(len(seq)) != s.Count() || len(seq) == 0 {
			t.Fatalf("%+v: %d offsets in order, Count %d", spec, len(seq), s.Count())
		}
		for k := 1; k < len(seq); k++ {
			if seq[k] < seq[k-1] || seq[k] > s.Duration() {
				t.Fatalf("%+v: offsets not ascending within the duration at %d: %v", spec, k, seq)
			}
		}
		c := s.Cursor()
		for _, i := range []int{len(seq) - 1, 0, len(seq) / 2, 1, len(seq) - 1} {
			if off, ok := s.Offset(int64(i)); !ok || off != seq[i] {
				t.Errorf("%+v: Schedule.Offset(%d) = %v %v, want %v", spec, i, off, ok, seq[i])
			}
			if off, ok := c.Offset(int64(i)); !ok || off != seq[i] {
				t.Errorf("%+v: Cursor.Offset(%d) = %v %v, want %v", spec, i, off, ok, seq[i])
			}
		}
		for _, i := range []int64{-1, int64(len(seq)), int64(len(seq)) + 10} {
			if _, ok := s.Offset(i); ok {
				t.Errorf("%+v: Offset(%d) is inside a schedule of %d", spec, i, len(seq))
			}
		}
	}
}

// 24 hours at 1000/s: nothing drifts, every offset is exactly i ms — the
// first and last ten minutes walked in order, and a sample in between.
func TestSchedule24hNoDrift(t *testing.T) {
	const n = 24 * 3600 * 1000
	const tenMinutes = 600_000
	for _, k6 := range []bool{false, true} {
		s := mustSchedule(t, schedule.Spec{TimeUnit: time.Second, Rate: 1000, Duration: 24 * time.Hour, K6Arithmetic: k6})
		if s.Count() != n {
			t.Fatalf("k6=%v: Count = %d, want %d", k6, s.Count(), n)
		}
		c := s.Cursor()
		check := func(i int64) {
			if off, ok := c.Offset(i); !ok || off != time.Duration(i)*time.Millisecond {
				t.Fatalf("k6=%v: offset %d = %v %v, want %v", k6, i, off, ok, time.Duration(i)*time.Millisecond)
			}
		}
		for i := int64(0); i < tenMinutes; i++ {
			check(i)
		}
		for i := int64(tenMinutes); i < n-tenMinutes; i += 9973 {
			check(i)
		}
		for i := int64(n - tenMinutes); i < n; i++ {
			check(i)
		}
		if off, _ := s.Offset(n - 1); off != 24*time.Hour-time.Millisecond {
			t.Errorf("k6=%v: last offset %v, want 23h59m59.999s", k6, off)
		}
		if _, ok := c.Offset(n); ok {
			t.Errorf("k6=%v: an arrival at 24h is inside the schedule", k6)
		}
	}

	// 3/s for 24h: the exact schedule holds 259200 arrivals, the last at
	// ⌊259199·10⁹/3⌋ ns; k6's truncated period gains 0.33 ns per arrival,
	// enough for one more.
	const m = 24 * 3600 * 3
	exact := mustSchedule(t, schedule.Spec{TimeUnit: time.Second, Rate: 3, Duration: 24 * time.Hour})
	if off, ok := exact.Offset(m - 1); exact.Count() != m || !ok || off != time.Duration((m-1)*1_000_000_000/3) {
		t.Errorf("exact 3/s for 24h: Count %d, last %v; want %d, %v", exact.Count(), off, m, time.Duration((m-1)*1_000_000_000/3))
	}
	k6 := mustSchedule(t, schedule.Spec{TimeUnit: time.Second, Rate: 3, Duration: 24 * time.Hour, K6Arithmetic: true})
	if off, _ := k6.Offset(m); k6.Count() != m+1 || off != m*333_333_333 {
		t.Errorf("k6 3/s for 24h: Count %d, last %v; want %d, %v", k6.Count(), off, m+1, time.Duration(m*333_333_333))
	}

	// A 24h ramp stays within a microsecond of the exact offsets
	// (float64 arithmetic, but no accumulation): 0→1000/s over 24h has its
	// i-th (1-based) arrival at sqrt(2·i·T/r) with T = 24h, r = 1000/s.
	ramp := mustSchedule(t, schedule.Spec{TimeUnit: time.Second, Stages: []schedule.RateStage{{Duration: 24 * time.Hour, Target: 1000}}})
	const area = 24 * 3600 * 1000 / 2
	if ramp.Count() != area {
		t.Fatalf("ramp Count = %d, want %d", ramp.Count(), area)
	}
	for _, i := range []int64{0, 1, 999, 123_456, area / 2, area - 2, area - 1} {
		off, _ := ramp.Offset(i)
		want := math.Sqrt(2 * float64(i+1) * float64(24*time.Hour) / 1000 * 1e9)
		if math.Abs(float64(off)-want) > 1000 {
			t.Errorf("ramp offset %d = %v, want %.0fns ±1µs", i, off, want)
		}
	}
}

// A Poisson schedule is a function of its seed, and its rate is the rate
// asked for: at 1000/s for 100s the count is Poisson(10⁵) (σ ≈ 316) and the
// gaps are exponential (variance = mean², whose estimate from 10⁵ gaps has
// a relative standard error of √(8/10⁵) ≈ 0.9%). Bounds are 5σ.
func TestSchedulePoisson(t *testing.T) {
	spec := schedule.Spec{TimeUnit: time.Second, Rate: 1000, Duration: 100 * time.Second, Arrivals: schedule.ArrivalsPoisson, Seed: 42}
	a := executortest.Offsets(mustSchedule(t, spec))
	b := executortest.Offsets(mustSchedule(t, spec))
	if len(a) != len(b) {
		t.Fatalf("same seed, %d and %d arrivals", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed differs at %d: %v and %v", i, a[i], b[i])
		}
	}
	spec.Seed = 43
	c := executortest.Offsets(mustSchedule(t, spec))
	same := 0
	for i := range min(len(a), len(c)) {
		if a[i] == c[i] {
			same++
		}
	}
	if same > len(a)/100 {
		t.Errorf("seeds 42 and 43 share %d of %d offsets", same, len(a))
	}

	const n, sigma = 100_000, 316.0
	if math.Abs(float64(len(a))-n) > 5*sigma {
		t.Errorf("%d arrivals in 100s at 1000/s, want %d ± %.0f", len(a), n, 5*sigma)
	}
	var sum, sq float64
	prev := time.Duration(0)
	for _, off := range a {
		g := float64(off - prev)
		sum += g
		sq += g * g
		prev = off
	}
	mean := sum / float64(len(a))
	cv2 := (sq/float64(len(a)) - mean*mean) / (mean * mean)
	if math.Abs(cv2-1) > 5*math.Sqrt(8.0/n) {
		t.Errorf("squared coefficient of variation of the gaps %.4f, want 1 ± %.3f", cv2, 5*math.Sqrt(8.0/n))
	}

	// A Poisson ramp 0→1000/s over 100s holds Poisson(50000) arrivals
	// (σ ≈ 224), Λ(50s) = 12500 of them (σ ≈ 112) in the first half.
	ramp := executortest.Offsets(mustSchedule(t, schedule.Spec{TimeUnit: time.Second, Stages: []schedule.RateStage{{Duration: 100 * time.Second, Target: 1000}}, Arrivals: schedule.ArrivalsPoisson, Seed: 7}))
	half := 0
	for _, off := range ramp {
		if off < 50*time.Second {
			half++
		}
	}
	if math.Abs(float64(len(ramp))-50_000) > 5*224 || math.Abs(float64(half)-12_500) > 5*112 {
		t.Errorf("Poisson ramp: %d arrivals (want 50000 ± 1120), %d in the first half (want 12500 ± 560)", len(ramp), half)
	}
}

func TestScheduleSpecErrors(t *testing.T) {
	bad := []schedule.Spec{
		{Rate: 1, Duration: time.Second},
		{TimeUnit: time.Second, Rate: 0, Duration: time.Second},
		{TimeUnit: time.Second, Rate: 2_000_000_000, Duration: time.Second},
		{TimeUnit: time.Second, Rate: 1, Duration: 0},
		{TimeUnit: time.Second, Rate: 1_000_000_000, Duration: 1 << 62},
		{TimeUnit: time.Second, StartRate: -1, Stages: []schedule.RateStage{{Duration: time.Second, Target: 1}}},
		{TimeUnit: time.Second, Stages: []schedule.RateStage{{Duration: -time.Second, Target: 1}}},
		{TimeUnit: time.Second, Stages: []schedule.RateStage{{Duration: time.Second, Target: -1}}},
		{TimeUnit: time.Second, Stages: []schedule.RateStage{{Duration: 0, Target: 1}}},
		{TimeUnit: time.Second, Rate: 1, Duration: time.Second, Arrivals: 9},
	}
	for _, spec := range bad {
		if _, err := schedule.New(spec); err == nil {
			t.Errorf("New(%+v) accepted", spec)
		}
	}
}

func BenchmarkScheduleCursor(b *testing.B) {
	for _, bc := range []struct {
		name string
		spec schedule.Spec
	}{
		{"constant", schedule.Spec{TimeUnit: time.Second, Rate: 1_000_000, Duration: 24 * time.Hour}},
		{"ramp", schedule.Spec{TimeUnit: time.Second, StartRate: 1, Stages: []schedule.RateStage{{Duration: 12 * time.Hour, Target: 1_000_000}, {Duration: 12 * time.Hour, Target: 10}}}},
		{"poisson", schedule.Spec{TimeUnit: time.Second, Rate: 1_000_000, Duration: 24 * time.Hour, Arrivals: schedule.ArrivalsPoisson}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := mustSchedule(b, bc.spec).Cursor()
			var i int64
			for b.Loop() {
				if _, ok := c.Offset(i); !ok {
					b.Fatal("ran off the schedule")
				}
				i++
			}
		})
	}
}

// A Schedule is safe for concurrent use: the summary may count a Poisson
// schedule while a dispatcher walks it.
func TestScheduleConcurrentUse(t *testing.T) {
	s := mustSchedule(t, schedule.Spec{TimeUnit: time.Second, Rate: 500, Duration: 10 * time.Second, Arrivals: schedule.ArrivalsPoisson, Seed: 1})
	want := executortest.Offsets(s)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			if g == 0 {
				if n := s.Count(); n != int64(len(want)) {
					t.Errorf("Count = %d, want %d", n, len(want))
				}
				return
			}
			c := s.Cursor()
			for i := g; i < len(want); i += 7 {
				a, _ := c.Offset(int64(i))
				b, _ := s.Offset(int64(i))
				if a != want[i] || b != want[i] {
					t.Errorf("offset %d: cursor %v, schedule %v, want %v", i, a, b, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
}
