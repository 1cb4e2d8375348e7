package output

import (
	"fmt"
	"sync"
	"time"

	"go.k6.io/k6/v2/metrics"
)

// SampleBuffer holds samples until an output's writer takes them; it is
// safe for concurrent use.
type SampleBuffer struct {
	sync.Mutex
	buffer []metrics.SampleContainer
	// most is the longest the buffer has been, to size the next one.
	most int
}

// AddMetricSamples appends samples to the buffer.
func (sb *SampleBuffer) AddMetricSamples(samples []metrics.SampleContainer) {
	if len(samples) == 0 {
		return
	}
	sb.Lock()
	sb.buffer = append(sb.buffer, samples...)
	sb.Unlock()
}

// GetBufferedSamples takes what the buffer holds, nil when it holds
// nothing, and leaves it empty.
func (sb *SampleBuffer) GetBufferedSamples() []metrics.SampleContainer {
	sb.Lock()
	defer sb.Unlock()
	taken := sb.buffer
	if len(taken) == 0 {
		return nil
	}
	sb.most = max(sb.most, len(taken))
	// The next buffer starts between this one's length and the longest
	// seen, so that a steady run seldom grows it.
	sb.buffer = make([]metrics.SampleContainer, 0, (len(taken)+sb.most)/2)
	return taken
}

// PeriodicFlusher calls a function at a fixed period on a goroutine of
// its own, and once more when stopped.
type PeriodicFlusher struct {
	period  time.Duration
	flush   func()
	stop    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

// NewPeriodicFlusher starts calling flushCallback every period; period
// must be positive.
func NewPeriodicFlusher(period time.Duration, flushCallback func()) (*PeriodicFlusher, error) {
	if period <= 0 {
		return nil, fmt.Errorf("metric flush period should be positive but was %s", period)
	}
	pf := &PeriodicFlusher{
		period:  period,
		flush:   flushCallback,
		stop:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	go pf.run()
	return pf, nil
}

func (pf *PeriodicFlusher) run() {
	defer close(pf.stopped)
	t := time.NewTicker(pf.period)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			pf.flush()
		case <-pf.stop:
			pf.flush()
			return
		}
	}
}

// Stop returns after the flusher has called its function a last time and
// ended. It may be called more than once and from several goroutines, but
// not from the function itself.
func (pf *PeriodicFlusher) Stop() {
	pf.once.Do(func() { close(pf.stop) })
	<-pf.stopped
}
