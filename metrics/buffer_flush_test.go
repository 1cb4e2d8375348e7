package metrics

import (
	"testing"
	"time"
)

func TestFlushIfOlder(t *testing.T) {
	var got [][]Sample
	b := NewBuffer(func(batch []Sample) { got = append(got, batch) })
	t0 := time.Unix(1000, 0)
	m := &Metric{Name: "x"}
	b.Record(Sample{Metric: m, Time: t0, Value: 1})
	b.FlushIfOlder(t0.Add(BufferMaxAge - time.Nanosecond))
	if len(got) != 0 {
		t.Fatalf("flushed a sample younger than BufferMaxAge")
	}
	b.FlushIfOlder(t0.Add(BufferMaxAge))
	if len(got) != 1 || len(got[0]) != 1 || got[0][0].Value != 1 {
		t.Fatalf("FlushIfOlder at BufferMaxAge handed over %v", got)
	}
	b.FlushIfOlder(t0.Add(time.Hour))
	if len(got) != 1 {
		t.Fatalf("an empty buffer flushed")
	}
}

// TestSmallFlushKeepsBuffer checks that a small flush hands over a copy
// that later recording does not overwrite.
func TestSmallFlushKeepsBuffer(t *testing.T) {
	var got [][]Sample
	b := NewBuffer(func(batch []Sample) { got = append(got, batch) })
	m := &Metric{Name: "x"}
	now := time.Unix(1000, 0)
	for i := range 3 {
		b.Record(Sample{Metric: m, Time: now, Value: float64(i)})
	}
	b.Flush()
	for i := range 3 {
		b.Record(Sample{Metric: m, Time: now, Value: float64(10 + i)})
	}
	b.Flush()
	if len(got) != 2 || got[0][0].Value != 0 || got[0][2].Value != 2 || got[1][0].Value != 10 {
		t.Fatalf("batches were overwritten: %v", got)
	}
	if cap(got[0]) != 3 {
		t.Errorf("small batch has capacity %d, want a right-sized copy of 3", cap(got[0]))
	}
	allocs := testing.AllocsPerRun(100, func() {
		b.Record(Sample{Metric: m, Time: now})
		b.Flush()
	})
	if allocs > 1 {
		t.Errorf("a one-sample flush made %.0f allocations, want 1 (the copy)", allocs)
	}
}
