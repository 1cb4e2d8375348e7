package output

import (
	"sync/atomic"

	"github.com/metronome-load/metronome/metrics"
)

// Inbox hands batches from the engine to an output's own goroutine without
// ever blocking the engine: when that goroutine is so far behind that the
// inbox is full, the batch is counted as dropped instead.
type Inbox struct {
	// C delivers the batches to the output's goroutine.
	C       chan []metrics.Sample
	dropped atomic.Int64
}

// NewInbox returns an inbox that holds up to size batches.
func NewInbox(size int) *Inbox {
	return &Inbox{C: make(chan []metrics.Sample, size)}
}

// Offer queues batch, or counts its samples as dropped when the inbox is
// full. It never blocks.
func (in *Inbox) Offer(batch []metrics.Sample) {
	if len(batch) == 0 {
		return
	}
	select {
	case in.C <- batch:
	default:
		in.dropped.Add(int64(len(batch)))
	}
}

// Drain calls f for every batch queued now, without waiting for more.
func (in *Inbox) Drain(f func([]metrics.Sample)) {
	for {
		select {
		case b := <-in.C:
			f(b)
		default:
			return
		}
	}
}

// Dropped is the number of samples Offer could not queue.
func (in *Inbox) Dropped() int64 { return in.dropped.Load() }
