package hdrhist

import (
	"bytes"
	"math/rand/v2"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

const (
	lowest  = 1
	highest = 24 * 60 * 60 * 1_000_000
	digits  = 3
)

// A Hist answers as a dense histogram of the same values would, before
// and after it turns dense, and writes the same log line.
func TestHistMatchesDense(t *testing.T) {
	p := NewPool(lowest, highest, digits)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 100, Dense - 1, Dense, 3 * Dense} {
		var h Hist
		ref := hdrhistogram.New(lowest, highest, digits)
		for range n {
			v := int64(rng.ExpFloat64()*20_000) + 1
			p.Record(&h, v)
			_ = ref.RecordValue(v)
		}
		if (h.dense != nil) != (n >= Dense) {
			t.Errorf("%d values: dense %v", n, h.dense != nil)
		}
		if h.TotalCount() != ref.TotalCount() || h.Max() != ref.Max() {
			t.Errorf("%d values: count %d max %d, want %d %d", n, h.TotalCount(), h.Max(), ref.TotalCount(), ref.Max())
		}
		for _, q := range []float64{50, 99, 99.9} {
			if got, want := h.ValueAtPercentile(q), ref.ValueAtPercentile(q); got != want {
				t.Errorf("%d values: p%g = %d, want %d", n, q, got, want)
			}
		}
		merged := hdrhistogram.New(lowest, highest, digits)
		if dropped := h.MergeInto(merged); dropped != 0 || !merged.Equals(ref) {
			t.Errorf("%d values: merged into a dense one, %d dropped, equal %v", n, dropped, merged.Equals(ref))
		}
		var got, want bytes.Buffer
		if err := h.WriteInterval(hdrhistogram.NewHistogramLogWriter(&got), "metric=x", 1000, 2000); err != nil {
			t.Fatal(err)
		}
		ref.SetTag("metric=x")
		ref.SetStartTimeMs(1000)
		ref.SetEndTimeMs(2000)
		if n > 0 {
			if err := hdrhistogram.NewHistogramLogWriter(&want).OutputIntervalHistogram(ref); err != nil {
				t.Fatal(err)
			}
		}
		if got.String() != want.String() {
			t.Errorf("%d values: log line\n%s\nwant\n%s", n, got.String(), want.String())
		}
		p.Release(&h)
		if h.TotalCount() != 0 {
			t.Errorf("%d values: released but not empty", n)
		}
	}
}

// Once the pool holds storage, recording a series' values, even through
// the switch to dense, and releasing it allocates nothing.
func TestRecordReusesStorage(t *testing.T) {
	p := NewPool(lowest, highest, digits)
	cycle := func() {
		var quiet, busy Hist
		for i := range 2 * Dense {
			p.Record(&busy, int64(i%500)*100+1)
			if i%100 == 0 {
				p.Record(&quiet, int64(i)+1)
			}
		}
		p.Release(&quiet)
		p.Release(&busy)
	}
	cycle()
	if n := testing.AllocsPerRun(20, cycle); n != 0 {
		t.Errorf("%v allocations a cycle, want 0", n)
	}
}

// Merging dense histograms (intervals read from a log) gives what
// recording their values would, turning dense once the total is busy.
func TestMerge(t *testing.T) {
	p := NewPool(lowest, highest, digits)
	var h Hist
	ref := hdrhistogram.New(lowest, highest, digits)
	for _, n := range []int{10, 500, Dense, 3} {
		src := hdrhistogram.NewPacked(lowest, highest, digits)
		for i := range n {
			_ = src.RecordValue(int64(i*37 + 1))
		}
		if dropped := p.MergePacked(&h, src); dropped != 0 {
			t.Fatalf("%d dropped", dropped)
		}
		src.MergeInto(ref)
		got := hdrhistogram.New(lowest, highest, digits)
		h.MergeInto(got)
		if !got.Equals(ref) || (h.dense != nil) != (ref.TotalCount() >= Dense) {
			t.Errorf("after %d more: count %d (dense %v), want %d", n, h.TotalCount(), h.dense != nil, ref.TotalCount())
		}
	}
}
