package metrics

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A parked buffer is flushed by FlushParked once its oldest sample is
// BufferMaxAge old; a buffer whose owner runs, or whose samples are
// fresh, is not.
func TestFlushParked(t *testing.T) {
	var log batchLog
	b := NewBuffer(log.flush)
	m := &Metric{Name: "x"}
	t0 := time.Unix(1000, 0)
	b.Record(Sample{Metric: m, Time: t0, Value: 1})
	if b.FlushParked(t0.Add(time.Hour)) || len(log.batches) != 0 {
		t.Fatalf("flushed a buffer whose owner was not parked")
	}
	b.Park()
	if b.FlushParked(t0.Add(BufferMaxAge-time.Nanosecond)) || len(log.batches) != 0 {
		t.Fatalf("flushed a sample younger than BufferMaxAge")
	}
	if !b.FlushParked(t0.Add(BufferMaxAge)) || len(log.batches) != 1 || log.batches[0][0].Value != 1 {
		t.Fatalf("a parked buffer with an old sample was not flushed: %v", log.batches)
	}
	b.Unpark()
	b.Record(Sample{Metric: m, Time: t0.Add(time.Second), Value: 2})
	b.Flush()
	if len(log.batches) != 2 || log.batches[1][0].Value != 2 || len(log.batches[1]) != 1 {
		t.Fatalf("after Unpark the owner's next sample went astray: %v", log.batches)
	}
	// Unpark without Park, and Park of an empty buffer, leave the owner
	// in charge.
	b.Unpark()
	b.Park()
	if b.FlushParked(t0.Add(time.Hour)) {
		t.Fatalf("an empty parked buffer reported a flush")
	}
	b.Unpark()
}

// Parking costs no allocation: it is one atomic word.
func TestParkIsAllocationFree(t *testing.T) {
	b := NewBuffer(func([]Sample) {})
	m := &Metric{Name: "x"}
	now := time.Unix(1000, 0)
	b.Record(Sample{Metric: m, Time: now})
	if allocs := testing.AllocsPerRun(100, func() {
		b.Park()
		b.FlushParked(now)
		b.Unpark()
	}); allocs != 0 {
		t.Errorf("Park, FlushParked, Unpark made %.1f allocations, want 0", allocs)
	}
}

// An owner that records and parks while another goroutine keeps calling
// FlushParked loses and duplicates nothing; run with -race, this also
// checks that the handover orders every access to the buffer.
func TestFlushParkedConcurrently(t *testing.T) {
	var mu sync.Mutex
	got := map[float64]int{}
	b := NewBuffer(func(batch []Sample) {
		mu.Lock()
		for _, s := range batch {
			got[s.Value]++
		}
		mu.Unlock()
	})
	m := &Metric{Name: "x"}
	var stop atomic.Bool
	var flushes atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			if b.FlushParked(time.Unix(1<<40, 0)) {
				flushes.Add(1)
			}
		}
	}()
	const n = 20_000
	t0 := time.Unix(1000, 0)
	for i := range n {
		b.Record(Sample{Metric: m, Time: t0, Value: float64(i)})
		if i%7 == 0 {
			b.Park()
			// The owner is "blocked": it leaves the buffer alone, for a
			// while or until the flusher has emptied it.
			for k := 0; k < 100 && b.state.Load() != bufferOwned; k++ {
				runtime.Gosched()
			}
			b.Unpark()
		}
	}
	stop.Store(true)
	<-done
	b.Flush()
	if len(got) != n {
		t.Fatalf("%d distinct samples arrived, want %d", len(got), n)
	}
	for v, c := range got {
		if c != 1 {
			t.Fatalf("sample %v arrived %d times", v, c)
		}
	}
	if flushes.Load() == 0 {
		t.Errorf("the other goroutine never flushed the parked buffer")
	}
	t.Logf("%d flushes by the other goroutine", flushes.Load())
}

// BenchmarkBufferPark is the cost a VU pays each time it blocks: one
// Park and one Unpark, with a sample buffered.
func BenchmarkBufferPark(b *testing.B) {
	buf := NewBuffer(func([]Sample) {})
	buf.Record(Sample{Metric: &Metric{Name: "x"}, Time: time.Unix(1000, 0)})
	b.ReportAllocs()
	for b.Loop() {
		buf.Park()
		buf.Unpark()
	}
}

// Unpark returns only once a flush under way has handed its batch over,
// however long the flush function blocks (a full ingest channel), and
// waits for it on the flusher's lock.
func TestUnparkWaitsForBlockedFlush(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var handed atomic.Bool
	b := NewBuffer(func([]Sample) {
		close(entered)
		<-release
		handed.Store(true)
	})
	t0 := time.Unix(1000, 0)
	b.Record(Sample{Metric: &Metric{Name: "x"}, Time: t0})
	b.Park()
	flushed := make(chan bool)
	go func() { flushed <- b.FlushParked(t0.Add(BufferMaxAge)) }()
	<-entered
	unparked := make(chan bool)
	go func() {
		b.Unpark()
		unparked <- handed.Load()
	}()
	close(release)
	if !<-flushed {
		t.Fatalf("FlushParked did not flush an old parked sample")
	}
	if !<-unparked {
		t.Fatalf("Unpark returned while the flush was still under way")
	}
}
