package cli

import (
	"errors"
	"os"
	"sync"
	"time"
)

// errStdoutGone is what writes return once standard output is given up.
var errStdoutGone = errors.New("standard output took no data for too long at the end of the run; giving it up")

// boundedStdout is standard output whose writes can be bounded once the
// test has ended: the engine calls BoundWrites, and from then on no write
// waits longer than the given patience, including one that was already
// blocked, so that a reader that takes nothing (metronome run -o json=- |
// a stuck program) cannot hold the exit for ever. Once a write has run out
// of patience, standard output is given up and later writes fail at once.
// Before BoundWrites, a write blocks as a plain write does.
type boundedStdout struct {
	f *os.File

	mu       sync.Mutex
	armed    bool
	armedAt  time.Time
	patience time.Duration
	changed  chan struct{} // closed when the bound changes
	gone     bool
}

func newBoundedStdout(f *os.File) *boundedStdout {
	return &boundedStdout{f: f, changed: make(chan struct{})}
}

// Fd is the file's descriptor, for terminal detection.
func (w *boundedStdout) Fd() uintptr { return w.f.Fd() }

// BoundWrites lets every write from now on block for at most patience
// (counted from now for a write already blocked); 0 or less gives
// standard output up at once.
func (w *boundedStdout) BoundWrites(patience time.Duration) {
	w.mu.Lock()
	w.armed, w.armedAt, w.patience = true, time.Now(), patience
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
}

type writeResult struct {
	n   int
	err error
}

func (w *boundedStdout) Write(p []byte) (int, error) {
	w.mu.Lock()
	gone := w.gone
	w.mu.Unlock()
	if gone {
		return 0, errStdoutGone
	}
	// The write runs on its own goroutine so that a bound set while it is
	// blocked can end the wait; it may outlive this call, so it gets its
	// own copy of p.
	start := time.Now()
	done := make(chan writeResult, 1)
	buf := append([]byte(nil), p...)
	go func() {
		n, err := w.f.Write(buf)
		done <- writeResult{n, err}
	}()
	for {
		w.mu.Lock()
		armed, changed := w.armed, w.changed
		deadline := w.armedAt
		if start.After(deadline) {
			deadline = start
		}
		deadline = deadline.Add(w.patience)
		w.mu.Unlock()
		var expired <-chan time.Time
		var timer *time.Timer
		if armed {
			timer = time.NewTimer(time.Until(deadline))
			expired = timer.C
		}
		var r writeResult
		ended, timedOut := false, false
		select {
		case r = <-done:
			ended = true
		case <-changed:
		case <-expired:
			timedOut = true
		}
		if timer != nil {
			timer.Stop()
		}
		if ended {
			return r.n, r.err
		}
		if timedOut {
			w.mu.Lock()
			w.gone = true
			w.mu.Unlock()
			return 0, errStdoutGone
		}
	}
}
