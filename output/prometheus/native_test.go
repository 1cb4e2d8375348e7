package prometheus

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/metronome-load/metronome/internal/testkit/proptest"
)

// TestNativeIndex checks the bucket of each value, at every schema,
// against the schema's definition: bucket k covers
// (2^((k-1)·2^-s), 2^(k·2^-s)].
func TestNativeIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2^proptest.Seed(t)))
	for s := int32(minNativeSchema); s <= maxNativeSchema; s++ {
		width := math.Exp2(-float64(s))
		check := func(v float64) {
			k := nativeIndex(v, s)
			lo := math.Exp2(float64(k-1) * width)
			hi := math.Exp2(float64(k) * width)
			// Allow one ulp at the boundaries, where Exp2 itself rounds.
			if !(v > lo*(1-1e-15) && v <= hi*(1+1e-15)) {
				t.Fatalf("schema %d: value %g in bucket %d = (%g, %g]", s, v, k, lo, hi)
			}
		}
		for range 20_000 {
			check(math.Exp(rng.NormFloat64() * 10))
		}
		// Powers of two are upper bounds of their bucket.
		for e := -20; e <= 20; e++ {
			v := math.Ldexp(1, e)
			if s >= 0 || e%(1<<-s) == 0 {
				want := int32(e) << max(s, 0) >> max(-s, 0)
				if k := nativeIndex(v, s); k != want {
					t.Errorf("schema %d: 2^%d in bucket %d, want %d", s, e, k, want)
				}
			}
			check(math.Nextafter(v, 0))
			check(math.Nextafter(v, math.Inf(1)))
		}
	}
}

// TestEncodeBuckets decodes spans and deltas back into bucket counts.
func TestEncodeBuckets(t *testing.T) {
	in := map[int32]uint64{-3: 2, -2: 5, 0: 1, 1: 1, 7: 9, 20: 4}
	spans, deltas := encodeBuckets(in)
	got := map[int32]uint64{}
	var idx int32
	var count int64
	d := 0
	for i, s := range spans {
		if i == 0 {
			idx = s.Offset
		} else {
			idx += s.Offset
		}
		for range s.Length {
			count += deltas[d]
			d++
			got[idx] = uint64(count)
			idx++
		}
	}
	if len(got) != len(in) || d != len(deltas) {
		t.Fatalf("decoded %v from %v %v, want %v", got, spans, deltas, in)
	}
	for k, v := range in {
		if got[k] != v {
			t.Errorf("bucket %d: %d, want %d", k, got[k], v)
		}
	}
	if len(spans) != 4 {
		t.Errorf("%d spans, want 4 (one per run of adjacent buckets)", len(spans))
	}
	if s, d := encodeBuckets(nil); s != nil || d != nil {
		t.Error("empty buckets encoded as something")
	}
}

func TestNativeHistogramObserve(t *testing.T) {
	h := newNativeHistogram(defaultNativeSchema)
	for _, v := range []float64{0, 0.001, 0.001, 1, -2, math.NaN()} {
		h.observe(v)
	}
	if h.count != 5 || h.zero != 1 || math.Abs(h.sum-(-0.998)) > 1e-12 {
		t.Errorf("count %d zero %d sum %g", h.count, h.zero, h.sum)
	}
	if h.pos[nativeIndex(0.001, defaultNativeSchema)] != 2 || h.pos[0] != 1 || h.neg[8] != 1 {
		t.Errorf("buckets pos %v neg %v", h.pos, h.neg)
	}
	p := h.proto(123)
	if p.GetCountInt() != 5 || p.GetZeroCountInt() != 1 || p.Schema != 3 || p.Timestamp != 123 {
		t.Errorf("proto %+v", p)
	}
}
