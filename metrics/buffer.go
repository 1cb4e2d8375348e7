package metrics

import (
	"sync"
	"sync/atomic"
	"time"
)

// A Buffer hands its samples over when it holds BufferSize of them, or when
// a sample arrives BufferMaxAge (in sample time) after the first one it
// holds.
const (
	BufferSize   = 512
	BufferMaxAge = 100 * time.Millisecond
)

// Buffer is the recorder of one VU: it collects samples in a local slice,
// without locking, and hands them to its flush function in batches. It is
// used by one goroutine at a time, its owner.
//
// An owner about to block (in sleep(), or waiting for an event) parks the
// buffer; while it is parked another goroutine may flush it with
// FlushParked, so that the samples of a running iteration reach the
// thresholds and outputs without waiting for the iteration to end.
// Recording itself takes no lock: Park and Unpark touch only the buffer's
// atomic state word, unless Unpark finds a flush under way, which it then
// waits for on the flusher's lock.
//
// A flushed batch belongs to the flush function and its callees; the
// buffer starts a new slice. Whoever is the last to read a batch may give
// it back with ReleaseBatch, which makes recording allocation-free in
// steady state.
type Buffer struct {
	flush func([]Sample)
	buf   []Sample
	// busy is set when the last flush handed over at least smallBatch
	// samples: the VU records steadily, so the next slice is a full-size
	// one from the free list rather than a small one grown by doubling.
	busy bool
	// state is who may touch buf: the owner (bufferOwned), nobody while
	// the owner is blocked (bufferParked), or a flusher (bufferFlushing).
	state atomic.Int32
	// flushing is held by FlushParked from before it takes the buffer
	// until it gives it back, so that an Unpark that finds a flush under
	// way blocks on it rather than spinning (the flush may wait on a
	// full ingest channel for a long time).
	flushing sync.Mutex
	// meta is the metadata of the samples recorded from now on (see
	// SetMetadata); nil for none.
	meta map[string]string
}

// The states of a Buffer.
const (
	bufferOwned int32 = iota
	bufferParked
	bufferFlushing
)

var _ VURecorder = (*Buffer)(nil)

// VURecorder is the recorder the engine makes for each VU: Record is called
// by the VU's goroutine; Flush hands buffered samples over, from the owner
// or once the owner is done; FlushParked hands over the samples of a VU
// blocked in the middle of an iteration, from any goroutine, so that a long
// iteration's samples reach thresholds and outputs before it ends. The
// engine's flush loop and end of run call these; nothing finds them by
// type assertion.
type VURecorder interface {
	Recorder
	// Flush hands over every buffered sample. Only the owner may call it,
	// or anyone once the owner stopped recording.
	Flush()
	// FlushParked flushes the samples of a parked recorder that are at
	// least BufferMaxAge older than now, and reports whether it did.
	FlushParked(now time.Time) bool
}

// NewBuffer returns a buffer that hands its batches to flush.
func NewBuffer(flush func([]Sample)) *Buffer {
	return &Buffer{flush: flush}
}

// Record adds s, flushing when the buffer is full or s is BufferMaxAge
// after the first buffered sample. A flush includes s. A sample without
// metadata of its own gets the buffer's.
func (b *Buffer) Record(s Sample) {
	if s.Metadata == nil {
		s.Metadata = b.meta
	}
	if len(b.buf) == cap(b.buf) {
		b.grow()
	}
	b.buf = append(b.buf, s)
	n := len(b.buf)
	// A sample of the same moment as the one before it (a request's
	// samples share its end) is no older than that one, which did not
	// flush: the age check can be skipped.
	if n < BufferSize && n > 1 && s.Time == b.buf[n-2].Time {
		return
	}
	if n >= BufferSize || s.Time.Sub(b.buf[0].Time) >= BufferMaxAge {
		b.Flush()
	}
}

// MetadataSetter is implemented by recorders that can stamp metadata on
// the samples they record: k6's exec.vu.metrics.metadata, non-indexed
// values (a trace id) that the VU's samples carry from then on.
type MetadataSetter interface {
	// SetMetadata makes m the metadata of the samples recorded from now
	// on; nil or empty for none. m is shared by those samples: the caller
	// must not change it afterwards.
	SetMetadata(m map[string]string)
}

var _ MetadataSetter = (*Buffer)(nil)

// SetMetadata implements MetadataSetter. Only the owner may call it.
func (b *Buffer) SetMetadata(m map[string]string) {
	if len(m) == 0 {
		m = nil
	}
	b.meta = m
}

// smallBatch is the size under which Flush copies the samples of a grown
// slice into a right-sized batch and keeps its own slice: flushing a VU's
// few samples at the end of every iteration must not cost a whole new
// BufferSize slice.
const smallBatch = BufferSize / 8

// Flush hands over the buffered samples, if any.
func (b *Buffer) Flush() {
	n := len(b.buf)
	if n == 0 {
		return
	}
	b.busy = n >= smallBatch
	if n < smallBatch && cap(b.buf) != tinyBatch {
		var batch []Sample
		if n <= tinyBatch {
			batch = append(newTinyBatch(), b.buf...)
		} else {
			batch = make([]Sample, n)
			copy(batch, b.buf)
		}
		clear(b.buf)
		b.buf = b.buf[:0]
		b.flush(batch)
		return
	}
	// A tiny or full-size slice goes over whole: the buffer holds nothing
	// until its owner records again, so an idle VU between iterations
	// keeps no sample memory, and the slice comes back by ReleaseBatch.
	batch := b.buf
	b.buf = nil
	b.flush(batch)
}

// FlushIfOlder flushes when the oldest buffered sample is at least
// BufferMaxAge older than now. VUs call it when an iteration ends, so that
// samples of a VU that goes quiet still reach the thresholds within about
// BufferMaxAge, without a flush per iteration.
func (b *Buffer) FlushIfOlder(now time.Time) {
	if len(b.buf) > 0 && now.Sub(b.buf[0].Time) >= BufferMaxAge {
		b.Flush()
	}
}

// Park lends the buffer out while its owner blocks: until Unpark,
// FlushParked may flush it from another goroutine. The owner must not
// record between Park and Unpark.
func (b *Buffer) Park() {
	if len(b.buf) > 0 {
		b.state.Store(bufferParked)
	}
}

// Unpark gives the buffer back to its owner, waiting for a flush that is
// under way. It does nothing if the buffer was not parked.
func (b *Buffer) Unpark() {
	for !b.state.CompareAndSwap(bufferParked, bufferOwned) {
		if b.state.Load() == bufferOwned {
			return
		}
		// A flush holds the lock while the state says so: wait for it.
		b.flushing.Lock()
		b.flushing.Unlock() //nolint:staticcheck // an empty section: waiting is the point
	}
}

// FlushParked flushes a parked buffer whose oldest sample is at least
// BufferMaxAge older than now, and reports whether it flushed. It may be
// called from any goroutine; a buffer whose owner is running is left
// alone.
func (b *Buffer) FlushParked(now time.Time) bool {
	if b.state.Load() != bufferParked {
		return false
	}
	b.flushing.Lock()
	defer b.flushing.Unlock()
	if !b.state.CompareAndSwap(bufferParked, bufferFlushing) {
		return false
	}
	n := len(b.buf)
	b.FlushIfOlder(now)
	flushed := len(b.buf) < n
	if len(b.buf) == 0 {
		// Nothing is left to flush: the owner may have it back at once.
		b.state.Store(bufferOwned)
	} else {
		b.state.Store(bufferParked)
	}
	return flushed
}

// Parker is implemented by recorders that can be lent out while their
// owner blocks (Buffer).
type Parker interface {
	Park()
	Unpark()
}

// tinyBatch is a fresh buffer's capacity, and the size of the pooled
// batches a quiet VU's few samples travel in. Buffers start tiny and grow
// towards BufferSize, so that ten thousand mostly idle VUs do not each
// hold a whole batch (28 KB) of memory.
const tinyBatch = 8

// grow makes room for more samples: a tiny pooled slice at first, then a
// released full-size batch when one is free, else a doubled slice.
func (b *Buffer) grow() {
	var next []Sample
	switch {
	case cap(b.buf) == 0 && !b.busy:
		b.buf = newTinyBatch()
		return
	case cap(b.buf) == 0 || cap(b.buf) >= smallBatch:
		next = newBatch()
	default:
		next = make([]Sample, 0, 2*cap(b.buf))
	}
	old := b.buf
	b.buf = append(next, old...)
	ReleaseBatch(old) // the owner's own slice: nobody else reads it
}

// Len returns the number of buffered samples.
func (b *Buffer) Len() int { return len(b.buf) }

// freeBatches holds released batches for buffers to reuse. A channel keeps
// taking and giving back allocation-free; its capacity bounds the memory
// kept idle (64 batches of BufferSize samples, under 2 MB).
var freeBatches = make(chan []Sample, 64)

// freeTinyBatches holds released tiny batches. Its capacity covers the
// batches of many VUs in flight at once (each VU flushes its few samples
// about once per iteration) for under 1 MB kept idle.
var freeTinyBatches = make(chan []Sample, 2048)

func newBatch() []Sample {
	select {
	case b := <-freeBatches:
		return b
	default:
		return make([]Sample, 0, BufferSize)
	}
}

func newTinyBatch() []Sample {
	select {
	case b := <-freeTinyBatches:
		return b
	default:
		return make([]Sample, 0, tinyBatch)
	}
}

// ReleaseBatch gives a batch that a Buffer flushed back for reuse. Call it
// only when nothing reads or keeps the batch any more (after the engine
// ingested it and no output kept it): a buffer may fill it again at once.
// Slices of other capacities are ignored.
func ReleaseBatch(batch []Sample) {
	free := freeBatches
	switch cap(batch) {
	case BufferSize:
	case tinyBatch:
		free = freeTinyBatches
	default:
		return
	}
	batch = batch[:cap(batch)]
	clear(batch)
	select {
	case free <- batch[:0]:
	default:
	}
}
