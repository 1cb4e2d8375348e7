package metrics

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/testkit/proptest"
)

// exactPercentile is k6's estimator on the exact values: linear
// interpolation between closest ranks at h = p/100·(n−1).
func exactPercentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	h := p / 100 * float64(len(sorted)-1)
	lo, hi := int(math.Floor(h)), int(math.Ceil(h))
	return sorted[lo] + (sorted[hi]-sorted[lo])*(h-math.Floor(h))
}

// precision is the documented error bound of a percentile whose
// neighbouring exact values are a and b.
func precision(a, b float64) float64 {
	return math.Max(math.Abs(a), math.Abs(b))/2048 + 0.00051
}

func trendOf(values ...float64) *TrendSink {
	t := NewTrendSink()
	for _, v := range values {
		t.AddValue(v)
	}
	return t
}

func seq(from, to int) []float64 {
	var v []float64
	for i := from; i <= to; i++ {
		v = append(v, float64(i))
	}
	return v
}

func TestTrendPercentileConformance(t *testing.T) {
	type pc struct{ p, want float64 }
	cases := []struct {
		name   string
		values []float64
		checks []pc
	}{
		{"1..4", seq(1, 4), []pc{{50, 2.5}, {90, 3.7}, {95, 3.85}, {99, 3.97}, {0, 1}, {100, 4}}},
		{"1..100", seq(1, 100), []pc{{50, 50.5}, {90, 90.1}, {95, 95.05}, {99, 99.01}}},
		{"10,20", []float64{10, 20}, []pc{{95, 19.5}, {50, 15}}},
		{"single", []float64{42.125}, []pc{{0, 42.125}, {50, 42.125}, {99, 42.125}, {100, 42.125}}},
		{"none", nil, []pc{{50, 0}, {99, 0}}},
		{"negative", []float64{-4, -3, -2, -1}, []pc{{50, -2.5}, {90, -1.3}, {10, -3.7}}},
		{"mixed signs", []float64{-10, -0.5, 0, 0.5, 10}, []pc{{25, -0.5}, {50, 0}, {75, 0.5}, {62.5, 0.25}}},
		{"fractional", []float64{0.001, 0.002, 0.003, 0.004}, []pc{{50, 0.0025}, {90, 0.0037}}},
		{"unsorted input", []float64{4, 1, 3, 2}, []pc{{50, 2.5}, {90, 3.7}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := trendOf(c.values...)
			for _, k := range c.checks {
				got := s.Percentile(k.p)
				if tol := math.Abs(k.want) * 0.001; math.Abs(got-k.want) > tol+1e-9 {
					t.Errorf("p(%v) = %v, want %v (±%v)", k.p, got, k.want, tol)
				}
			}
			if got, want := s.Med(), s.Percentile(50); got != want {
				t.Errorf("Med() = %v, Percentile(50) = %v", got, want)
			}
		})
	}
}

func TestTrendExactStats(t *testing.T) {
	vals := []float64{0.1, 0.2, 0.3, -7.25, 1e6}
	s := trendOf(vals...)
	var sum float64
	for _, v := range vals {
		sum += v
	}
	if s.Count() != 5 {
		t.Errorf("Count = %d", s.Count())
	}
	if s.Sum() != sum {
		t.Errorf("Sum = %v, want %v", s.Sum(), sum)
	}
	if s.Min() != -7.25 || s.Max() != 1e6 {
		t.Errorf("Min, Max = %v, %v", s.Min(), s.Max())
	}
	if want := sum / 5; s.Avg() != want {
		t.Errorf("Avg = %v, want %v", s.Avg(), want)
	}
	s.AddValue(math.NaN())
	if s.Count() != 5 {
		t.Errorf("NaN was counted")
	}
	var zero TrendSink
	if !zero.IsEmpty() || zero.Avg() != 0 || zero.Percentile(90) != 0 {
		t.Errorf("zero sink is not empty")
	}
	zero.AddValue(3)
	if zero.Percentile(50) != 3 {
		t.Errorf("zero-value sink after AddValue(3): p(50) = %v", zero.Percentile(50))
	}
}

// TestTrendPercentileWithinPrecision compares the histogram estimate with
// the exact estimator on random data over many magnitudes.
func TestTrendPercentileWithinPrecision(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2^proptest.Seed(t)))
	dists := []struct {
		name string
		gen  func() float64
	}{
		{"lognormal ms", func() float64 { return math.Exp(rng.NormFloat64()*2 + 3) }},
		{"uniform 0-5", func() float64 { return rng.Float64() * 5 }},
		{"signed", func() float64 { return rng.NormFloat64() * 1000 }},
		{"integers", func() float64 { return float64(rng.IntN(100000)) }},
	}
	ps := []float64{0.1, 1, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99}
	for _, d := range dists {
		gen := d.gen
		t.Run(d.name, func(t *testing.T) {
			for _, n := range []int{2, 3, 17, 1000, 20000} {
				s := NewTrendSink()
				vals := make([]float64, n)
				for i := range vals {
					vals[i] = gen()
					s.AddValue(vals[i])
				}
				slices.Sort(vals)
				for _, p := range ps {
					h := p / 100 * float64(n-1)
					tol := precision(vals[int(math.Floor(h))], vals[int(math.Ceil(h))])
					want := exactPercentile(vals, p)
					if got := s.Percentile(p); math.Abs(got-want) > tol {
						t.Errorf("n=%d p(%v) = %v, exact %v, error %v > %v", n, p, got, want, math.Abs(got-want), tol)
					}
				}
			}
		})
	}
}

// TestBucketWidthMatchesHistogram checks the geometry that Percentile
// assumes against the histogram's own notion of equivalent values.
func TestBucketWidthMatchesHistogram(t *testing.T) {
	h := newDenseHist()
	for _, v := range []int64{0, 1, 2047, 2048, 2049, 4095, 4096, 90000, 1 << 30, 123456789, trendHighest} {
		h.Reset()
		if err := h.RecordValue(v); err != nil {
			t.Fatalf("RecordValue(%d): %v", v, err)
		}
		hi := h.ValueAtPercentile(100)
		w := bucketWidth(hi)
		lo := hi - w + 1
		if lo > v || v > hi {
			t.Errorf("value %d outside its bucket [%d, %d]", v, lo, hi)
		}
		if !h.ValuesAreEquivalent(lo, hi) {
			t.Errorf("%d and %d should share a bucket", lo, hi)
		}
		if lo > 0 && h.ValuesAreEquivalent(lo-1, lo) {
			t.Errorf("bucket of %d starts before %d", v, lo)
		}
		if h.ValuesAreEquivalent(hi, hi+1) {
			t.Errorf("bucket of %d ends after %d", v, hi)
		}
	}
}

func TestTrendCloneAndMerge(t *testing.T) {
	a := trendOf(seq(1, 100)...)
	a.AddValue(-5)
	c := a.Clone()
	a.AddValue(1000)
	a.AddValue(-1000)
	if c.Count() != 101 || c.Max() != 100 || c.Min() != -5 {
		t.Errorf("clone changed with its original: count %d max %v min %v", c.Count(), c.Max(), c.Min())
	}
	if got := c.Percentile(99); got > 100 {
		t.Errorf("clone's p(99) = %v sees values added after cloning", got)
	}

	// Merging two halves gives the same statistics as one sink.
	whole, x, y := NewTrendSink(), NewTrendSink(), NewTrendSink()
	for i := range 2000 {
		v := float64(i%97) - 20
		whole.AddValue(v)
		if i%2 == 0 {
			x.AddValue(v)
		} else {
			y.AddValue(v)
		}
	}
	var m TrendSink
	m.Merge(x)
	m.Merge(y)
	if m.Count() != whole.Count() || m.Sum() != whole.Sum() || m.Min() != whole.Min() || m.Max() != whole.Max() {
		t.Errorf("merged stats differ: %d %v %v %v vs %d %v %v %v",
			m.Count(), m.Sum(), m.Min(), m.Max(), whole.Count(), whole.Sum(), whole.Min(), whole.Max())
	}
	for _, p := range []float64{1, 50, 90, 99} {
		if m.Percentile(p) != whole.Percentile(p) {
			t.Errorf("merged p(%v) = %v, whole %v", p, m.Percentile(p), whole.Percentile(p))
		}
	}
}

func TestCloneSink(t *testing.T) {
	now := time.Now()
	for _, typ := range []Type{Counter, Gauge, Rate, Trend} {
		s := NewSink(typ)
		s.Add(Sample{Value: 1, Time: now})
		c := CloneSink(s)
		s.Add(Sample{Value: 0, Time: now.Add(time.Second)})
		s.Add(Sample{Value: 5, Time: now.Add(2 * time.Second)})
		switch c := c.(type) {
		case *CounterSink:
			if c.Sum != 1 {
				t.Errorf("counter clone sum %v", c.Sum)
			}
		case *GaugeSink:
			if c.Value != 1 || c.Max != 1 {
				t.Errorf("gauge clone %+v", c)
			}
		case *RateSink:
			if c.Total != 1 {
				t.Errorf("rate clone total %d", c.Total)
			}
		case *TrendSink:
			if c.Count() != 1 || c.Max() != 1 {
				t.Errorf("trend clone count %d max %v", c.Count(), c.Max())
			}
		}
	}
}

func TestTrendPercentileDoesNotAllocate(t *testing.T) {
	s := trendOf(seq(1, 10000)...)
	s.AddValue(-3)
	allocs := testing.AllocsPerRun(100, func() {
		_ = s.Percentile(99.9)
		_ = s.Percentile(0.01)
		_ = s.Med()
	})
	if allocs != 0 {
		t.Errorf("Percentile allocates %v times", allocs)
	}
}

// TestTrendMemoryIsConstant checks that a trend's memory does not grow
// with its samples: two million values after the first must not add more
// than 1 MB (a slice of them would take 16 MB).
func TestTrendMemoryIsConstant(t *testing.T) {
	s := NewTrendSink()
	s.AddValue(-1) // allocate both histograms up front
	before := heapAlloc()
	x := uint64(1)
	for range 2_000_000 {
		x = x*6364136223846793005 + 1442695040888963407
		s.AddValue(float64(x>>40)/100 - 1000)
	}
	after := heapAlloc()
	runtime.KeepAlive(s)
	if grew := int64(after) - int64(before); grew > 1<<20 {
		t.Errorf("heap grew by %d bytes for 2M samples", grew)
	}
}

func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func BenchmarkTrendAdd(b *testing.B) {
	s := NewTrendSink()
	x := uint64(1)
	b.ReportAllocs()
	for b.Loop() {
		x = x*6364136223846793005 + 1442695040888963407
		s.AddValue(float64(x>>44) / 100)
	}
}

func BenchmarkTrendPercentile(b *testing.B) {
	s := NewTrendSink()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 1_000_000 {
		s.AddValue(math.Exp(rng.NormFloat64()*2 + 3))
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = s.Percentile(99)
	}
}

// BenchmarkTrendTenMillion adds ten million samples to one trend and
// reports how much the heap grew (MB/10M).
func BenchmarkTrendTenMillion(b *testing.B) {
	var grew float64
	for b.Loop() {
		before := heapAlloc()
		s := NewTrendSink()
		x := uint64(1)
		for range 10_000_000 {
			x = x*6364136223846793005 + 1442695040888963407
			s.AddValue(float64(x>>40)/100 - 1000)
		}
		after := heapAlloc()
		runtime.KeepAlive(s)
		grew = float64(int64(after)-int64(before)) / (1 << 20)
	}
	b.ReportMetric(grew, "MB/10M")
}
