package metrics

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/metronome-load/metronome/internal/hdrhist"
	"github.com/metronome-load/metronome/internal/testkit/proptest"
)

// denseTrend is the TrendSink as it was before its histograms started
// sparse: a dense histogram per sign from the first value. It is the
// reference the sparse-then-dense sink must answer exactly as.
type denseTrend struct {
	count    int64
	sum      float64
	min, max float64
	pos, neg *hdrhistogram.Histogram
}

func newDenseHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, trendHighest, TrendSignificantDigits)
}

func (t *denseTrend) add(v float64) {
	if math.IsNaN(v) {
		return
	}
	t.stats(1, v, v, v)
	if v < 0 {
		if t.neg == nil {
			t.neg = newDenseHist()
		}
		_ = t.neg.RecordValue(toUnits(-v))
		return
	}
	if t.pos == nil {
		t.pos = newDenseHist()
	}
	_ = t.pos.RecordValue(toUnits(v))
}

func (t *denseTrend) stats(count int64, sum, min, max float64) {
	if t.count == 0 || min < t.min {
		t.min = min
	}
	if t.count == 0 || max > t.max {
		t.max = max
	}
	t.count += count
	t.sum += sum
}

func (t *denseTrend) clone() *denseTrend {
	c := *t
	if t.pos != nil {
		c.pos = t.pos.Clone()
	}
	if t.neg != nil {
		c.neg = t.neg.Clone()
	}
	return &c
}

func (t *denseTrend) merge(o *denseTrend) {
	if o.count == 0 {
		return
	}
	t.stats(o.count, o.sum, o.min, o.max)
	if o.pos != nil {
		if t.pos == nil {
			t.pos = newDenseHist()
		}
		t.pos.Merge(o.pos)
	}
	if o.neg != nil {
		if t.neg == nil {
			t.neg = newDenseHist()
		}
		t.neg.Merge(o.neg)
	}
}

func (t *denseTrend) mergeParts(count int64, sum, min, max float64, pos, neg *hdrhistogram.PackedHistogram) {
	if count == 0 {
		return
	}
	t.stats(count, sum, min, max)
	if pos != nil {
		if t.pos == nil {
			t.pos = newDenseHist()
		}
		pos.MergeInto(t.pos)
	}
	if neg != nil {
		if t.neg == nil {
			t.neg = newDenseHist()
		}
		neg.MergeInto(t.neg)
	}
}

func (t *denseTrend) percentile(p float64) float64 {
	switch {
	case t.count == 0:
		return 0
	case t.count == 1, p <= 0, math.IsNaN(p):
		return t.min
	case p >= 100:
		return t.max
	}
	return InterpolateRanks(p, t.count, func(r int64) float64 {
		if r <= 0 {
			return t.min
		}
		if r >= t.count-1 {
			return t.max
		}
		var v float64
		var negs int64
		if t.neg != nil {
			negs = t.neg.TotalCount()
		}
		at := func(h *hdrhistogram.Histogram, r int64) float64 {
			q := 100 * (float64(r) + 1) / float64(h.TotalCount())
			return TrendBucketMiddle(h.ValueAtPercentile(q)) * TrendResolution
		}
		if r < negs {
			v = -at(t.neg, negs-1-r)
		} else {
			v = at(t.pos, r-negs)
		}
		return math.Min(math.Max(v, t.min), t.max)
	})
}

// checkedPercentiles are the p a differential check reads: the summary's,
// the extremes and their neighbours, and fractions that fall between ranks.
var checkedPercentiles = []float64{-1, 0, 1e-9, 0.1, 1, 5, 10, 25, 33.3, 50, 66.6, 75, 90, 95, 99,
	99.5, 99.9, 99.99, 99.999, 100 - 1e-9, 100, 101, math.NaN(), math.Inf(1), math.Inf(-1)}

// sameFloat is bit equality, NaN equal to NaN.
func sameFloat(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

// sameAsDense fails t unless got answers every statistic exactly as ref,
// at checkedPercentiles and at extra.
func sameAsDense(t *testing.T, what string, got *TrendSink, ref *denseTrend, extra ...float64) {
	t.Helper()
	sameStats(t, what, got, ref, append(checkedPercentiles, extra...))
}

// sameStats fails t unless got answers count, sum, min, max, avg and the
// percentiles ps exactly as ref.
func sameStats(t *testing.T, what string, got *TrendSink, ref *denseTrend, ps []float64) {
	t.Helper()
	if got.Count() != ref.count || !sameFloat(got.Sum(), ref.sum) || !sameFloat(got.Min(), ref.min) || !sameFloat(got.Max(), ref.max) {
		t.Fatalf("%s: count %d sum %v min %v max %v, dense %d %v %v %v", what,
			got.Count(), got.Sum(), got.Min(), got.Max(), ref.count, ref.sum, ref.min, ref.max)
	}
	var refAvg float64
	if ref.count > 0 {
		refAvg = ref.sum / float64(ref.count)
	}
	if !sameFloat(got.Avg(), refAvg) {
		t.Fatalf("%s: avg %v, dense %v", what, got.Avg(), refAvg)
	}
	for _, p := range ps {
		if g, w := got.Percentile(p), ref.percentile(p); !sameFloat(g, w) {
			t.Fatalf("%s: p(%v) = %v, dense %v (count %d)", what, p, g, w, ref.count)
		}
	}
}

// trendValue decodes one value of a differential case from 9 bytes: a
// kind and 8 bytes of payload, so that a fuzzer reaches every class of
// float a script can add.
func trendValue(kind byte, bits uint64) float64 {
	switch kind % 10 {
	case 0:
		return math.Float64frombits(bits) // anything, NaN, ±Inf, subnormals
	case 1:
		return float64(bits%4096) / 1000 // the exact unit-wide buckets
	case 2:
		return float64(bits%100_000) / 7 // ms-like
	case 3:
		return -float64(bits%1_000_000) / 13
	case 4:
		return math.NaN()
	case 5:
		return []float64{1e300, -1e300, math.Inf(1), math.Inf(-1), 1e9, -1e9, 1e15, math.MaxFloat64}[bits%8]
	case 6:
		return float64(bits%3) / 1e4 // rounds to unit 0 or stays below 1
	case 7:
		return math.Exp(float64(bits%4000)/100 - 10) // 1e-4 to 1e13
	case 8:
		return float64(bits % 16) // few distinct values, high counts
	default:
		return -math.Exp(float64(bits%3000)/100 - 5)
	}
}

// runTrendOps plays ops on a TrendSink and on the dense reference and
// checks them equal after each step. ops are 10-byte records: an
// operation, a value kind and a payload. Three sinks of each kind are
// kept; after each operation the sinks' exact statistics and a few
// percentiles are compared, and every percentile of checkedPercentiles at
// the end (a dense reference's percentile scans all its counts, so
// comparing all of them at every step would make the test slow under
// the race detector). Operations add values (one, or a run of hdrhist.Dense/2 so that
// sinks cross the dense threshold), merge one sink into another, clone,
// rebuild through MergeParts from packed histograms, and reset.
func runTrendOps(t *testing.T, ops []byte) {
	var got [3]*TrendSink
	var ref [3]*denseTrend
	for i := range got {
		got[i], ref[i] = NewTrendSink(), &denseTrend{}
	}
	for len(ops) >= 10 {
		op, kind, bits := ops[0], ops[1], binary.LittleEndian.Uint64(ops[2:10])
		ops = ops[10:]
		a, b := int(op>>4)%3, int(op>>6)%3
		switch op % 8 {
		case 0, 1, 2:
			v := trendValue(kind, bits)
			got[a].AddValue(v)
			ref[a].add(v)
		case 3:
			r := rand.New(rand.NewPCG(bits, 0))
			for range hdrhist.Dense / 2 {
				v := trendValue(kind, r.Uint64())
				got[a].AddValue(v)
				ref[a].add(v)
			}
		case 4:
			got[a].Merge(got[b])
			ref[a].merge(ref[b])
		case 5:
			got[a], ref[a] = got[b].Clone(), ref[b].clone()
		case 6:
			pos, neg := NewPackedTrendHistogram(), NewPackedTrendHistogram()
			if d := got[b].MergeHistogramsInto(pos, neg); d != 0 {
				t.Fatalf("%d values did not fit a packed histogram of the same geometry", d)
			}
			got[a].MergeParts(got[b].Count(), got[b].Sum(), got[b].Min(), got[b].Max(), pos, neg)
			ref[a].mergeParts(ref[b].count, ref[b].sum, ref[b].min, ref[b].max, pos, neg)
		case 7:
			resetSink(got[a])
			ref[a] = &denseTrend{}
		}
		for i := range got {
			sameStats(t, "sink "+string(rune('0'+i)), got[i], ref[i], []float64{50, 99, float64(bits%10000) / 100})
		}
	}
	for i := range got {
		sameAsDense(t, "at the end, sink "+string(rune('0'+i)), got[i], ref[i])
	}
}

// The sparse-then-dense TrendSink answers every statistic, at every p, to
// the bit as the dense sink it replaced, whatever it is fed and however
// its sinks are merged, cloned, rebuilt and reset.
func TestTrendSinkMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, proptest.Seed(t)))
	for c := range 150 {
		ops := make([]byte, 10*(1+rng.IntN(40)))
		for i := range ops {
			ops[i] = byte(rng.Uint32())
		}
		t.Run("", func(t *testing.T) {
			_ = c
			runTrendOps(t, ops)
		})
	}
}

func FuzzTrendSinkMatchesDense(f *testing.F) {
	f.Add([]byte("\x00\x01abcdefgh\x03\x07abcdefgh\x14\x00abcdefgh\x16\x05zzzzzzzz"))
	f.Add([]byte("\x03\x08abcdefgh\x03\x08bbcdefgh\x13\x09cbcdefgh\x55\x00dddddddd\x46\x00eeeeeeee\x17\x00ffffffff"))
	f.Fuzz(runTrendOps)
}

// Busy and quiet sinks, a value per unit-wide bucket and many per bucket,
// all signs: the sink matches the dense one before, at and after each
// histogram turns dense, at every p of a fine grid.
func TestTrendSinkMatchesDenseAcrossTheThreshold(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, proptest.Seed(t)))
	grid := make([]float64, 0, 1001)
	for i := range 1001 {
		grid = append(grid, float64(i)/10)
	}
	for _, sign := range []float64{1, -1, 0} {
		got, ref := NewTrendSink(), &denseTrend{}
		for n := range 3*hdrhist.Dense + 5 {
			v := math.Exp(rng.NormFloat64()*3 + 2)
			if sign != 0 {
				v *= sign
			} else if n%3 == 0 {
				v = -v
			}
			got.AddValue(v)
			ref.add(v)
			if n < 4 || n%1021 == 0 || (n >= hdrhist.Dense-1 && n <= hdrhist.Dense) {
				sameAsDense(t, "after "+string(rune('0'+n%10)), got, ref, grid...)
			}
		}
		sameAsDense(t, "at the end", got, ref, grid...)
	}
}
