package health

import (
	"slices"
	"sync"

	"github.com/metronome-load/metronome/clock"
)

// Source fills a Reading with the process's counters; Runtime is the real
// one, tests give their own.
type Source interface {
	Read(r *Reading)
}

// Monitor reads the generator's health: at every Tick of the run's
// periodic loop, and whenever asked (Reading), for the executors that
// judge a span of their own. Ticking on a loop that wakes anyway adds no
// wake-up of its own, which on an idle virtual machine costs more than the
// reading (see docs/metrics.md). It is safe for concurrent use.
type Monitor struct {
	clock    clock.Clock
	source   Source
	arrivals func() (arrivals, lateWakeup, lateForVU int64)

	mu        sync.Mutex
	prev, cur Reading
	ticked    bool
}

// NewMonitor returns a monitor that tells time by c and reads src.
// arrivals, when not nil, returns the cumulative counts of open-model
// arrivals, those that started late though a VU was free, and those late
// because every VU was busy.
func NewMonitor(c clock.Clock, src Source, arrivals func() (int64, int64, int64)) *Monitor {
	return &Monitor{clock: c, source: src, arrivals: arrivals}
}

// read fills r with the counters now. m.mu is held.
func (m *Monitor) read(r *Reading) {
	m.source.Read(r)
	r.At = m.clock.Now()
	if m.arrivals != nil {
		r.Arrivals, r.LateWakeup, r.LateForVU = m.arrivals()
	}
}

// Reading returns a reading of the counters now, with slices of its own.
func (m *Monitor) Reading() Reading {
	m.mu.Lock()
	defer m.mu.Unlock()
	var r Reading
	m.read(&r)
	r.Sched = slices.Clone(r.Sched)
	return r
}

// Tick reads the counters and returns the health of the interval since
// the previous Tick. The first Tick only reads, and reports false, as does
// a Tick at the same instant as the previous one.
func (m *Monitor) Tick() (Interval, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read(&m.cur)
	first := !m.ticked
	m.ticked = true
	if first || !m.cur.At.After(m.prev.At) {
		m.prev, m.cur = m.cur, m.prev
		return Interval{}, false
	}
	iv := Between(&m.prev, &m.cur)
	m.prev, m.cur = m.cur, m.prev
	return iv, true
}
