package metrics

import (
	"testing"
	"time"
)

type batchLog struct{ batches [][]Sample }

func (l *batchLog) flush(b []Sample) { l.batches = append(l.batches, b) }

func TestBufferFlushesWhenFull(t *testing.T) {
	m := &Metric{Name: "x"}
	var log batchLog
	b := NewBuffer(log.flush)
	t0 := time.Unix(100, 0)
	for i := range BufferSize - 1 {
		b.Record(Sample{Metric: m, Time: t0, Value: float64(i)})
	}
	if len(log.batches) != 0 || b.Len() != BufferSize-1 {
		t.Fatalf("flushed %d batches holding %d before being full", len(log.batches), b.Len())
	}
	b.Record(Sample{Metric: m, Time: t0, Value: BufferSize - 1})
	if len(log.batches) != 1 || len(log.batches[0]) != BufferSize || b.Len() != 0 {
		t.Fatalf("after %d samples: %d batches, buffer holds %d", BufferSize, len(log.batches), b.Len())
	}
	for i, s := range log.batches[0] {
		if s.Value != float64(i) {
			t.Fatalf("sample %d has value %v", i, s.Value)
		}
	}
}

func TestBufferFlushesOnAge(t *testing.T) {
	var log batchLog
	b := NewBuffer(log.flush)
	t0 := time.Unix(100, 0)
	for _, d := range []time.Duration{0, 50 * time.Millisecond, 99 * time.Millisecond, 20 * time.Millisecond} {
		b.Record(Sample{Time: t0.Add(d), Value: float64(d)})
	}
	if len(log.batches) != 0 {
		t.Fatalf("flushed before %v of sample time", BufferMaxAge)
	}
	b.Record(Sample{Time: t0.Add(BufferMaxAge), Value: 1})
	if len(log.batches) != 1 || len(log.batches[0]) != 5 {
		t.Fatalf("want one batch of 5 at %v, got %d batches", BufferMaxAge, len(log.batches))
	}
	// The age counts from the first sample of the new batch.
	b.Record(Sample{Time: t0.Add(150 * time.Millisecond)})
	b.Record(Sample{Time: t0.Add(249 * time.Millisecond)})
	if len(log.batches) != 1 || b.Len() != 2 {
		t.Fatalf("second batch flushed early: %d batches, %d buffered", len(log.batches), b.Len())
	}
	b.Record(Sample{Time: t0.Add(250 * time.Millisecond)})
	if len(log.batches) != 2 || len(log.batches[1]) != 3 {
		t.Fatalf("second batch: %d batches", len(log.batches))
	}
}

func TestBufferFlush(t *testing.T) {
	var log batchLog
	b := NewBuffer(log.flush)
	b.Flush()
	if len(log.batches) != 0 {
		t.Fatalf("Flush of an empty buffer handed over a batch")
	}
	now := time.Unix(1, 0)
	b.Record(Sample{Time: now, Value: 1})
	b.Record(Sample{Time: now, Value: 2})
	b.Flush()
	if len(log.batches) != 1 || len(log.batches[0]) != 2 || b.Len() != 0 {
		t.Fatalf("Flush: %d batches, %d buffered", len(log.batches), b.Len())
	}
	b.Flush()
	if len(log.batches) != 1 {
		t.Fatalf("second Flush handed over a batch again")
	}
}

// TestBufferDoesNotReuseHandedOverBatches checks that a batch the receiver
// did not release keeps its contents while the buffer goes on.
func TestBufferDoesNotReuseHandedOverBatches(t *testing.T) {
	var log batchLog
	b := NewBuffer(log.flush)
	now := time.Unix(1, 0)
	for i := range 3 * BufferSize {
		b.Record(Sample{Time: now, Value: float64(i)})
	}
	if len(log.batches) != 3 {
		t.Fatalf("%d batches", len(log.batches))
	}
	for k, batch := range log.batches {
		for i, s := range batch {
			if want := float64(k*BufferSize + i); s.Value != want {
				t.Fatalf("batch %d sample %d = %v, want %v", k, i, s.Value, want)
			}
		}
	}
}

func TestBufferRecordIsAllocationFreeWithRelease(t *testing.T) {
	m := &Metric{Name: "x"}
	tags := EmptyTags.With("a", "b")
	b := NewBuffer(ReleaseBatch)
	now := time.Unix(1, 0)
	allocs := testing.AllocsPerRun(1, func() {
		for range 20 * BufferSize {
			b.Record(Sample{Metric: m, Tags: tags, Time: now, Value: 1})
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations for %d samples", allocs, 20*BufferSize)
	}
}

// A VU that records a few hundred samples per BufferMaxAge flushes by age,
// never full; once warm, its cycles must reuse released batches rather than
// regrow a small slice after every flush.
func TestBufferAgeFlushesAreAllocationFreeWithRelease(t *testing.T) {
	m := &Metric{Name: "x"}
	tags := EmptyTags.With("a", "b")
	b := NewBuffer(ReleaseBatch)
	at := time.Unix(1, 0)
	cycle := func() {
		for range 300 { // under BufferSize, over smallBatch
			b.Record(Sample{Metric: m, Tags: tags, Time: at, Value: 1})
		}
		at = at.Add(BufferMaxAge)
		b.Record(Sample{Metric: m, Tags: tags, Time: at, Value: 1}) // flushes by age
	}
	cycle()
	if allocs := testing.AllocsPerRun(20, cycle); allocs != 0 {
		t.Errorf("%v allocations per age-flushed cycle of 301 samples", allocs)
	}
}

func TestReleaseBatchClearsAndIgnoresForeignSlices(t *testing.T) {
	ReleaseBatch(make([]Sample, 3)) // not a buffer's batch: ignored
	md := map[string]string{"vu": "1"}
	var got []Sample
	b := NewBuffer(func(s []Sample) { got = s })
	for range BufferSize {
		b.Record(Sample{Metadata: md})
	}
	ReleaseBatch(got)
	if got[0].Metadata != nil {
		t.Errorf("released batch still references its samples' metadata")
	}
}

func BenchmarkBufferRecord(b *testing.B) {
	m := &Metric{Name: "x"}
	tags := EmptyTags.With("a", "b")
	buf := NewBuffer(ReleaseBatch)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		buf.Record(Sample{Metric: m, Tags: tags, Time: now, Value: 1})
	}
}

// A flushed batch is the flush function's until it is released: batches
// still held must keep their samples while the buffer records and flushes
// on (a reuse before release would overwrite what the ingest loop reads).
// Once released, a tiny batch is reused and recording a quiet VU's few
// samples allocates nothing.
func TestBufferNeverReusesAHeldBatch(t *testing.T) {
	m := &Metric{Name: "x"}
	var held [][]Sample
	b := NewBuffer(func(batch []Sample) { held = append(held, batch) })
	at := time.Unix(1, 0)
	for round := range 3 * cap(freeTinyBatches) / 2 {
		for k := range 3 {
			b.Record(Sample{Metric: m, Time: at, Value: float64(round*10 + k)})
		}
		b.Flush()
		if round%7 == 0 && len(held) > 1 {
			// Release an older batch, as the ingest loop does once done.
			ReleaseBatch(held[0])
			held = held[1:]
		}
		for i, batch := range held {
			want := float64((round-len(held)+1+i)*10 + 2)
			if len(batch) != 3 || batch[2].Value != want {
				t.Fatalf("round %d: held batch %d = %v, want 3 samples ending in %v", round, i, batch, want)
			}
		}
	}

	b = NewBuffer(ReleaseBatch)
	quiet := func() {
		for range 3 {
			b.Record(Sample{Metric: m, Time: at, Value: 1})
		}
		b.Flush()
	}
	quiet()
	if allocs := testing.AllocsPerRun(100, quiet); allocs != 0 {
		t.Errorf("%v allocations per flush of a quiet VU's 3 samples", allocs)
	}
	if b.buf != nil {
		t.Errorf("a flushed quiet buffer still holds a slice of capacity %d", cap(b.buf))
	}
}

// SetMetadata stamps the samples recorded from then on that carry no
// metadata of their own (exec.vu.metrics.metadata), sharing the map, and
// an empty map means none.
func TestBufferMetadata(t *testing.T) {
	m := &Metric{Name: "x"}
	var log batchLog
	b := NewBuffer(log.flush)
	now := time.Unix(1, 0)
	own := map[string]string{"own": "1"}
	meta := map[string]string{"trace_id": "abc"}
	b.Record(Sample{Metric: m, Time: now})
	b.SetMetadata(meta)
	b.Record(Sample{Metric: m, Time: now})
	b.Record(Sample{Metric: m, Time: now, Metadata: own})
	b.SetMetadata(map[string]string{})
	b.Record(Sample{Metric: m, Time: now})
	b.Flush()
	got := log.batches[0]
	if got[0].Metadata != nil || got[1].Metadata["trace_id"] != "abc" || got[2].Metadata["own"] != "1" || got[3].Metadata != nil {
		t.Fatalf("metadata %v %v %v %v", got[0].Metadata, got[1].Metadata, got[2].Metadata, got[3].Metadata)
	}
	// Stamping allocates nothing: the samples share the map.
	r := NewBuffer(ReleaseBatch)
	r.SetMetadata(meta)
	if allocs := testing.AllocsPerRun(1, func() {
		for range 20 * BufferSize {
			r.Record(Sample{Metric: m, Time: now, Value: 1})
		}
	}); allocs != 0 {
		t.Errorf("%v allocations for %d samples under metadata", allocs, 20*BufferSize)
	}
}

// Samples of one moment (a request's share its end) skip the age check
// but not the size limit, and the first sample past the age limit still
// flushes everything before it.
func TestBufferSameMomentSamples(t *testing.T) {
	m := &Metric{Name: "x"}
	var flushed []int
	b := NewBuffer(func(batch []Sample) { flushed = append(flushed, len(batch)); ReleaseBatch(batch) })
	t0 := time.Now()
	for range 3 {
		b.Record(Sample{Metric: m, Time: t0})
	}
	late := t0.Add(BufferMaxAge - time.Nanosecond)
	for range 2 {
		b.Record(Sample{Metric: m, Time: late})
	}
	if len(flushed) != 0 {
		t.Fatalf("flushed %v before any sample was BufferMaxAge old", flushed)
	}
	b.Record(Sample{Metric: m, Time: t0.Add(BufferMaxAge)})
	if len(flushed) != 1 || flushed[0] != 6 {
		t.Fatalf("flushes %v, want one of 6 samples once a sample is BufferMaxAge after the first", flushed)
	}
	t1 := t0.Add(time.Second)
	for range BufferSize + 1 {
		b.Record(Sample{Metric: m, Time: t1})
	}
	if len(flushed) != 2 || flushed[1] != BufferSize || b.Len() != 1 {
		t.Fatalf("flushes %v with %d left, want a full batch of %d and 1 left", flushed, b.Len(), BufferSize)
	}
}
