package output

import "sync"

// Queue is the bounded FIFO between an output's aggregator and the
// goroutines that send to a server. It never blocks the aggregator: when
// the queued items weigh more than the limit, the oldest that are not
// final are dropped and counted, so a server that stalls costs the
// output a bounded amount of memory and a counted loss, never the test's
// schedule. Any number of senders may Pop at once.
type Queue[T any] struct {
	mu     sync.Mutex
	cond   *sync.Cond
	items  []queued[T]
	weight int
	limit  int
	closed bool

	droppedItems, droppedValues int
}

type queued[T any] struct {
	v T
	// weight counts against the limit; values is what a drop loses
	// (samples, points), for the report.
	weight, values int
	final          bool
}

// NewQueue returns a queue that holds items up to a total weight of limit.
func NewQueue[T any](limit int) *Queue[T] {
	q := &Queue[T]{limit: limit}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// Push appends v, which weighs weight and holds values values. A final
// item (what Stop flushes) is never dropped; to make room for v, the
// oldest items that are not final are.
func (q *Queue[T]) Push(v T, weight, values int, final bool) {
	q.mu.Lock()
	for i := 0; q.weight+weight > q.limit && i < len(q.items); {
		if q.items[i].final {
			i++
			continue
		}
		old := q.items[i]
		q.droppedItems++
		q.droppedValues += old.values
		q.weight -= old.weight
		q.items = append(q.items[:i], q.items[i+1:]...)
	}
	q.items = append(q.items, queued[T]{v: v, weight: weight, values: values, final: final})
	q.weight += weight
	q.mu.Unlock()
	q.cond.Signal()
}

// Close tells the senders that nothing more comes: Pop returns false once
// the queue is empty.
func (q *Queue[T]) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

// Pop returns the oldest item and the number of values it holds, waiting
// for one; ok is false once the queue is closed and empty.
func (q *Queue[T]) Pop() (v T, values int, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && !q.closed {
		q.cond.Wait()
	}
	if len(q.items) == 0 {
		return v, 0, false
	}
	it := q.items[0]
	q.items[0] = queued[T]{}
	q.items = q.items[1:]
	q.weight -= it.weight
	return it.v, it.values, true
}

// Dropped returns how many items Push dropped to make room, and the
// values they held.
func (q *Queue[T]) Dropped() (items, values int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.droppedItems, q.droppedValues
}
