package prometheus

import (
	"errors"
	"strings"
	"sync"

	"github.com/prometheus/prometheus/prompb"
)

// errNativeDisabled replaces the server's answer when it refuses native
// histograms, with the fix in it.
var errNativeDisabled = errors.New("the server refuses native histograms: start Prometheus with --enable-feature=native-histograms (and --web.enable-remote-write-receiver), or unset K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM")

// isNativeDisabled recognises Prometheus's "native histograms are disabled"
// answer.
func isNativeDisabled(err error) bool {
	return strings.Contains(err.Error(), "native histograms are disabled")
}

// request is one push.
type request struct {
	msg *prompb.WriteRequest
	// values is the number of samples and histograms in msg.
	values int
	hist   bool
	// final marks the pushes made at stop, which are never dropped from
	// the queue and get their own time budget.
	final bool
}

// sendQueue is a bounded FIFO of pushes between the aggregator and the
// sender. When it is full, the oldest push that is not final is dropped.
type sendQueue struct {
	mu     sync.Mutex
	items  []request
	limit  int
	closed bool
	notify chan struct{}

	// overflowPushes and overflowValues count what was dropped; read
	// them only after the sender has finished.
	overflowPushes, overflowValues int
}

func newSendQueue(limit int) *sendQueue {
	return &sendQueue{limit: limit, notify: make(chan struct{}, 1)}
}

func (q *sendQueue) push(r request) {
	q.mu.Lock()
	if len(q.items) >= q.limit {
		for i, old := range q.items {
			if !old.final {
				q.overflowPushes++
				q.overflowValues += old.values
				q.items = append(q.items[:i], q.items[i+1:]...)
				break
			}
		}
	}
	q.items = append(q.items, r)
	q.mu.Unlock()
	q.wake()
}

func (q *sendQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.wake()
}

func (q *sendQueue) wake() {
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

// pop returns the oldest push, waiting for one; false once the queue is
// closed and empty.
func (q *sendQueue) pop() (request, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			r := q.items[0]
			q.items[0] = request{}
			q.items = q.items[1:]
			q.mu.Unlock()
			return r, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return request{}, false
		}
		<-q.notify
	}
}
