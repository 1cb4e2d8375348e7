// Package clock is the time source every time-dependent part of metronome
// takes, so that schedules and accounting can be tested in virtual time.
//
// Production code uses Real. Tests of executors run inside a
// testing/synctest bubble, where the standard clock is virtual and jumps to
// the next timer as soon as every goroutine is blocked, so Real doubles as an
// exact virtual clock there; Manual serves code that must be stepped by hand.
package clock

import (
	"sync"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that fires once after d.
	NewTimer(d time.Duration) Timer
}

// Timer is the part of *time.Timer that metronome uses.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
	Reset(d time.Duration) bool
}

// Real is the monotonic wall clock.
var Real Clock = realClock{}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }

// Sleep blocks for d on c, returning early with false if done closes first.
func Sleep(c Clock, d time.Duration, done <-chan struct{}) bool {
	if d <= 0 {
		select {
		case <-done:
			return false
		default:
			return true
		}
	}
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-done:
		return false
	}
}

// Precise is Real with precise waits: a Sleeper on it ends each wait on a
// kernel timer (on Linux), waking within tens of microseconds of the
// instant asked for, where a Go timer can be a millisecond late when the
// process is idle. Each such wait costs the process one more wake-up
// (tens of microseconds of CPU on a virtual machine); Sleeper.Coarse turns
// it off where that is not worth paying.
var Precise Clock = preciseClock{}

type preciseClock struct{ realClock }

// preciseSpan is the part of a wait a precise Sleeper spends on the kernel
// timer. It exceeds the lateness of Go's timers (about a millisecond), so
// that the Go timer covering the rest of a longer wait fires before the
// instant asked for.
const preciseSpan = 2 * time.Millisecond

// Sleeper waits on one reusable timer, for a goroutine that sleeps once
// per iteration and should not make a timer each time. Set Clock before
// the first Until; a Sleeper is not safe for concurrent use.
type Sleeper struct {
	Clock Clock
	// Coarse makes a Sleeper on Precise wait on Go's timers alone.
	Coarse bool
	t      Timer
}

// Until blocks until at, returning early with false if done closes first.
// It never returns true before at. On Precise the last preciseSpan of the
// wait does not watch done, so a cancellation can take that long to be
// seen.
func (s *Sleeper) Until(at time.Time, done <-chan struct{}) bool {
	_, precise := s.Clock.(preciseClock)
	precise = precise && !s.Coarse
	d := at.Sub(s.Clock.Now())
	if precise && d > preciseSpan {
		if !s.wait(d-preciseSpan, done) {
			return false
		}
		d = at.Sub(s.Clock.Now())
	}
	if d <= 0 || (precise && sleepPrecisely(d)) {
		select {
		case <-done:
			return false
		default:
			return true
		}
	}
	return s.wait(d, done)
}

// wait sleeps d > 0 on the reusable timer.
func (s *Sleeper) wait(d time.Duration, done <-chan struct{}) bool {
	if s.t == nil {
		s.t = s.Clock.NewTimer(d)
	} else {
		s.t.Reset(d)
	}
	select {
	case <-s.t.C():
		return true
	case <-done:
		s.Stop()
		return false
	}
}

// Stop releases the timer; a fire it already delivered is discarded, so
// that a later Until cannot return early.
func (s *Sleeper) Stop() {
	if s.t == nil || s.t.Stop() {
		return
	}
	select {
	case <-s.t.C():
	default:
	}
}

// Manual is a clock that moves only when Advance is called. Timers fire, in
// deadline order, as Advance passes them.
type Manual struct {
	mu     sync.Mutex
	now    time.Time
	timers []*manualTimer
}

// NewManual returns a Manual clock set to start.
func NewManual(start time.Time) *Manual { return &Manual{now: start} }

// Now returns the clock's current time.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// NewTimer returns a timer that fires when the clock is advanced past d.
func (m *Manual) NewTimer(d time.Duration) Timer {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := &manualTimer{m: m, c: make(chan time.Time, 1), at: m.now.Add(d), active: true}
	m.timers = append(m.timers, t)
	if d <= 0 {
		m.fireLocked()
	}
	return t
}

// Advance moves the clock forward by d and fires every timer due by then.
func (m *Manual) Advance(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = m.now.Add(d)
	m.fireLocked()
}

func (m *Manual) fireLocked() {
	kept := m.timers[:0]
	for _, t := range m.timers {
		if t.active && !t.at.After(m.now) {
			t.active = false
			select {
			case t.c <- t.at:
			default:
			}
			continue
		}
		if t.active {
			kept = append(kept, t)
		}
	}
	m.timers = kept
}

type manualTimer struct {
	m      *Manual
	c      chan time.Time
	at     time.Time
	active bool
}

func (t *manualTimer) C() <-chan time.Time { return t.c }

func (t *manualTimer) Stop() bool {
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	was := t.active
	t.active = false
	return was
}

func (t *manualTimer) Reset(d time.Duration) bool {
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	was := t.active
	t.at = t.m.now.Add(d)
	if !t.active {
		t.active = true
		t.m.timers = append(t.m.timers, t)
	}
	t.m.fireLocked()
	return was
}
