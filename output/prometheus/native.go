package prometheus

import (
	"math"
	"slices"
	"sort"

	"github.com/prometheus/prometheus/prompb"
)

// Native histograms use schema 3 by default, as k6: each power of two is
// split into 8 buckets, so a bucket's upper bound is 2^(1/8) ≈ 1.0905 times
// its lower bound (k6's bucket factor 1.1). A quantile that PromQL
// estimates from such a histogram lies in the bucket of the true quantile:
// within about 9% of it. K6_PROMETHEUS_RW_NATIVE_HISTOGRAM_SCHEMA picks
// another schema from -4 to 8; at schema s a bucket spans a factor
// 2^(2^-s), at 8 about 1.0027.
const (
	defaultNativeSchema       = 3
	minNativeSchema           = -4
	maxNativeSchema     int32 = 8
	// nativeZeroThreshold is client_golang's default: only values within
	// 2^-128 of zero (in practice, exact zeros) go to the zero bucket.
	nativeZeroThreshold = 2.938735877055719e-39
)

// nativeBounds[s][i] is the upper bound of the i-th bucket of an octave at
// schema s > 0, expressed as a fraction in [0.5, 1) as math.Frexp returns
// it.
var nativeBounds = func() [maxNativeSchema + 1][]float64 {
	var all [maxNativeSchema + 1][]float64
	for s := 1; s <= int(maxNativeSchema); s++ {
		b := make([]float64, 1<<s)
		for i := range b {
			b[i] = math.Exp2(float64(i)/float64(len(b))) / 2
		}
		all[s] = b
	}
	return all
}()

// nativeIndex returns the bucket of v > 0 at schema s: the bucket k that
// covers (2^((k-1)·2^-s), 2^(k·2^-s)]. It is client_golang's computation.
func nativeIndex(v float64, s int32) int32 {
	frac, exp := math.Frexp(v)
	if s > 0 {
		bounds := nativeBounds[s]
		// The smallest i with frac ≤ bounds[i]; frac is in [0.5, 1), and
		// len(bounds) means the first bucket of the next octave.
		i := sort.SearchFloat64s(bounds, frac)
		return int32(i) + int32(exp-1)*int32(len(bounds))
	}
	k := int32(exp)
	if frac == 0.5 {
		k--
	}
	offset := int32(1)<<-s - 1
	return (k + offset) >> -s
}

// nativeHistogram accumulates values into a sparse, cumulative native
// histogram. Its memory is bounded by the number of distinct buckets, a few
// hundred at most for any range of values.
type nativeHistogram struct {
	schema      int32
	count, zero uint64
	sum         float64
	pos, neg    map[int32]uint64
}

func newNativeHistogram(schema int32) *nativeHistogram {
	return &nativeHistogram{schema: schema, pos: map[int32]uint64{}, neg: map[int32]uint64{}}
}

// observe records v. NaN is ignored.
func (h *nativeHistogram) observe(v float64) {
	if math.IsNaN(v) {
		return
	}
	h.count++
	h.sum += v
	switch {
	case math.Abs(v) <= nativeZeroThreshold:
		h.zero++
	case v > 0:
		h.pos[nativeIndex(v, h.schema)]++
	default:
		h.neg[nativeIndex(-v, h.schema)]++
	}
}

// proto encodes the histogram as a remote-write integer histogram at ts.
func (h *nativeHistogram) proto(ts int64) prompb.Histogram {
	ps, pd := encodeBuckets(h.pos)
	ns, nd := encodeBuckets(h.neg)
	return prompb.Histogram{
		Count:          &prompb.Histogram_CountInt{CountInt: h.count},
		Sum:            h.sum,
		Schema:         h.schema,
		ZeroThreshold:  nativeZeroThreshold,
		ZeroCount:      &prompb.Histogram_ZeroCountInt{ZeroCountInt: h.zero},
		PositiveSpans:  ps,
		PositiveDeltas: pd,
		NegativeSpans:  ns,
		NegativeDeltas: nd,
		Timestamp:      ts,
	}
}

// encodeBuckets turns sparse bucket counts into spans and deltas: a span
// starts at each gap in the indices (its offset is the gap, the first one's
// the first index), and each delta is a count minus the one before it.
func encodeBuckets(b map[int32]uint64) ([]prompb.BucketSpan, []int64) {
	if len(b) == 0 {
		return nil, nil
	}
	idx := make([]int32, 0, len(b))
	for k := range b {
		idx = append(idx, k)
	}
	slices.Sort(idx)
	var spans []prompb.BucketSpan
	deltas := make([]int64, 0, len(idx))
	var prevCount int64
	for i, k := range idx {
		switch {
		case i == 0:
			spans = append(spans, prompb.BucketSpan{Offset: k, Length: 1})
		case k == idx[i-1]+1:
			spans[len(spans)-1].Length++
		default:
			spans = append(spans, prompb.BucketSpan{Offset: k - idx[i-1] - 1, Length: 1})
		}
		c := int64(b[k])
		deltas = append(deltas, c-prevCount)
		prevCount = c
	}
	return spans, deltas
}
