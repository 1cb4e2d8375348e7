package output

import (
	"sync"
	"time"

	"github.com/metronome-load/metronome/metrics"
)

// Loop is the lifecycle shared by the outputs that aggregate samples on a
// goroutine of their own and act on a period (push a remote write, write
// closed intervals, redraw a page): the engine's batches go through an
// Inbox, so AddSamples never blocks the test; the goroutine ingests them,
// ticks every period, and at Stop drains what is queued and runs the final
// step once; Stop then runs the output's own finish (flush and close a
// file, wait for a sender, report losses) once, and every later Stop
// returns the same error.
//
// The ticker is a time.Ticker made on the goroutine, so under
// testing/synctest the period runs on the bubble's virtual clock.
type Loop struct {
	period time.Duration
	steps  LoopSteps

	in       *Inbox
	stop     chan struct{}
	done     chan struct{}
	started  bool
	stopOnce sync.Once
	stopErr  error
}

// LoopSteps are what an output's goroutine does.
type LoopSteps struct {
	// Ingest folds one batch into the output's state.
	Ingest func([]metrics.Sample)
	// Tick runs every period; nil for none.
	Tick func()
	// Final runs after Stop drained the inbox; nil for none.
	Final func()
}

// NewLoop returns a loop whose inbox holds up to buffer batches and whose
// Tick runs every period, which must be positive.
func NewLoop(buffer int, period time.Duration, steps LoopSteps) *Loop {
	if period <= 0 {
		panic("output.NewLoop: the period must be positive")
	}
	return &Loop{period: period, steps: steps, in: NewInbox(buffer),
		stop: make(chan struct{}), done: make(chan struct{})}
}

// Start starts the goroutine. Call it once, from the output's Start, after
// everything the steps use is ready.
func (l *Loop) Start() {
	l.started = true
	go l.run()
}

// AddSamples hands batch to the goroutine without waiting; when the inbox
// is full the batch is counted as dropped.
func (l *Loop) AddSamples(batch []metrics.Sample) { l.in.Offer(batch) }

// Dropped is the number of samples AddSamples could not queue.
func (l *Loop) Dropped() int64 { return l.in.Dropped() }

// Stop ends the goroutine and waits for its final step, at most timeout
// (0: without a limit), then calls finish once with stuck set when the
// wait gave up (the goroutine is then left running, blocked on a
// destination that takes nothing). finish's error is Stop's, for this and
// every later call. A loop that was never started returns nil without
// calling finish.
func (l *Loop) Stop(timeout time.Duration, finish func(stuck bool) error) error {
	if !l.started {
		return nil
	}
	l.stopOnce.Do(func() {
		close(l.stop)
		stuck := false
		if timeout > 0 {
			timer := time.NewTimer(timeout)
			select {
			case <-l.done:
			case <-timer.C:
				stuck = true
			}
			timer.Stop()
		} else {
			<-l.done
		}
		if finish != nil {
			l.stopErr = finish(stuck)
		}
	})
	return l.stopErr
}

func (l *Loop) run() {
	defer close(l.done)
	ticker := time.NewTicker(l.period)
	defer ticker.Stop()
	for {
		select {
		case b := <-l.in.C:
			l.steps.Ingest(b)
		case <-ticker.C:
			if l.steps.Tick != nil {
				l.steps.Tick()
			}
		case <-l.stop:
			l.in.Drain(l.steps.Ingest)
			if l.steps.Final != nil {
				l.steps.Final()
			}
			return
		}
	}
}
