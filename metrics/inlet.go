package metrics

import "sync"

// Inlet takes samples into a test run from any goroutine. A VU's Recorder
// belongs to the VU's goroutine; what a module measures elsewhere (a
// subscription's messages, a reader of its own, a callback of a client
// library) goes through the run's Inlet instead. Each Send is one batch
// for the engine, so the Recorder stays the cheaper way on the VU's
// goroutine.
type Inlet struct {
	send func([]Sample)
	done chan struct{}
	once sync.Once

	mu      sync.Mutex
	closed  bool
	atClose []func()
}

// NewInlet returns an inlet that hands each batch to send, which must be
// safe for concurrent use and must drop what comes after the run ended.
func NewInlet(send func([]Sample)) *Inlet {
	return &Inlet{send: send, done: make(chan struct{})}
}

// Send hands batch to the run; the batch belongs to the run afterwards.
// It may block while the engine is behind, and drops the batch once the
// run ended. A nil inlet drops everything.
func (in *Inlet) Send(batch []Sample) {
	if in == nil || len(batch) == 0 {
		return
	}
	in.send(batch)
}

// Close marks the run's end: Done is closed, then the functions given to
// AtClose run, newest first, and Close returns when they have. The run
// calls it once it no longer takes samples.
func (in *Inlet) Close() {
	in.once.Do(func() {
		close(in.done)
		in.mu.Lock()
		fs := in.atClose
		in.closed, in.atClose = true, nil
		in.mu.Unlock()
		for i := len(fs) - 1; i >= 0; i-- {
			fs[i]()
		}
	})
}

// AtClose registers f to run when the run ends, before Close returns: a
// module stops there what it started (a browser, a subscription), so
// nothing of it outlives metronome's exit. It reports whether it did: on
// an inlet already closed it returns false and the caller stops what it
// started itself.
func (in *Inlet) AtClose(f func()) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return false
	}
	in.atClose = append(in.atClose, f)
	return true
}

// Done is closed when the run no longer takes samples, so that whoever
// forwards samples into the inlet from a goroutine of its own can stop.
func (in *Inlet) Done() <-chan struct{} { return in.done }
