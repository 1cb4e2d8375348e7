package output

import (
	"testing"

	"github.com/metronome-load/metronome/metrics"
)

func TestInbox(t *testing.T) {
	in := NewInbox(2)
	batch := func(n int) []metrics.Sample { return make([]metrics.Sample, n) }
	in.Offer(batch(3))
	in.Offer(nil)
	in.Offer(batch(4))
	in.Offer(batch(5)) // full: dropped
	if got := in.Dropped(); got != 5 {
		t.Fatalf("Dropped() = %d, want the 5 samples of the batch that did not fit", got)
	}
	var sizes []int
	in.Drain(func(b []metrics.Sample) { sizes = append(sizes, len(b)) })
	if len(sizes) != 2 || sizes[0] != 3 || sizes[1] != 4 {
		t.Fatalf("drained batches of %v, want [3 4] in order", sizes)
	}
	in.Drain(func([]metrics.Sample) { t.Fatal("Drain of an empty inbox called f") })
}
