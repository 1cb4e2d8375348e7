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

// TestSmallFlushKeepsBuffer checks that a small flush hands over a batch
// that later recording does not overwrite: a quiet VU's tiny slice goes
// over whole, a grown slice's samples go over in a right-sized copy.
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
	if cap(got[0]) != tinyBatch || b.buf != nil {
		t.Errorf("small batch has capacity %d and the buffer kept %d, want the tiny slice (%d) handed over", cap(got[0]), cap(b.buf), tinyBatch)
	}
	allocs := testing.AllocsPerRun(100, func() {
		b.Record(Sample{Metric: m, Time: now})
		b.Flush()
	})
	if allocs > 1 {
		t.Errorf("a one-sample flush made %.0f allocations, want 1 (the unreleased tiny batch)", allocs)
	}

	got = nil
	const medium = 20 // past tinyBatch, under smallBatch
	for i := range medium {
		b.Record(Sample{Metric: m, Time: now, Value: float64(i)})
	}
	grown := cap(b.buf)
	b.Flush()
	b.Record(Sample{Metric: m, Time: now, Value: -1})
	if len(got) != 1 || cap(got[0]) != medium || got[0][medium-1].Value != medium-1 || got[0][0].Value != 0 {
		t.Fatalf("a grown buffer's flush handed over %v (cap %d), want a right-sized copy", got, cap(got[0]))
	}
	if cap(b.buf) != grown {
		t.Errorf("a grown buffer's capacity went from %d to %d after a small flush, want it kept", grown, cap(b.buf))
	}
}
