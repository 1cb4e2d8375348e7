package health

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/metronome-load/metronome/clock"
)

// Source fills a Reading with the process's counters; Runtime is the real
// one, tests give their own.
type Source interface {
	Read(r *Reading)
}

// Monitor reads the generator's health: on its own every interval (Run),
// and whenever asked (Read), for the executors that judge a span of their
// own. It is safe for concurrent use.
type Monitor struct {
	clock    clock.Clock
	source   Source
	arrivals func() (arrivals, lateWakeup, lateForVU int64)

	mu sync.Mutex
}

// NewMonitor returns a monitor that tells time by c and reads src.
// arrivals, when not nil, returns the cumulative counts of open-model
// arrivals, those that started late though a VU was free, and those late
// because every VU was busy.
func NewMonitor(c clock.Clock, src Source, arrivals func() (int64, int64, int64)) *Monitor {
	return &Monitor{clock: c, source: src, arrivals: arrivals}
}

// Read fills r with the counters now. r's slices are reused.
func (m *Monitor) Read(r *Reading) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read(r)
}

func (m *Monitor) read(r *Reading) {
	m.source.Read(r)
	r.At = m.clock.Now()
	if m.arrivals != nil {
		r.Arrivals, r.LateWakeup, r.LateForVU = m.arrivals()
	}
}

// Reading returns a reading of the counters now, with slices of its own.
func (m *Monitor) Reading() Reading {
	var r Reading
	m.Read(&r)
	r.Sched = slices.Clone(r.Sched)
	return r
}

// Run reads the counters every interval, aligned on the first reading,
// and hands report the health of each interval, until ctx ends; then it
// reports the partial interval since the last reading, if any time passed.
func (m *Monitor) Run(ctx context.Context, every time.Duration, report func(Interval)) {
	var prev, cur Reading
	m.Read(&prev)
	start := prev.At
	t := m.clock.NewTimer(every)
	defer t.Stop()
	for k := 1; ; k++ {
		done := false
		select {
		case <-t.C():
		case <-ctx.Done():
			done = true
		}
		m.Read(&cur)
		if done && !cur.At.After(prev.At) {
			return
		}
		report(Between(&prev, &cur))
		if done {
			return
		}
		prev, cur = cur, prev
		// The next deadline is fixed by the first reading, so a late
		// tick does not shift the ones after it.
		next := start.Add(time.Duration(k+1) * every)
		t.Reset(max(next.Sub(m.clock.Now()), 0))
	}
}
