package executor_test

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
)

// wakeCountingClock is clock.Real that counts how often the arrival
// executor's watching goroutine wakes on its timer: the watcher is the one
// caller that creates its timer with an hour's duration, the VUs' sleepers
// create theirs with the wait they need. Its timer's fires pass through a
// goroutine that counts them as the watcher receives them.
type wakeCountingClock struct {
	clock.Clock
	wakes atomic.Int64
}

func (c *wakeCountingClock) NewTimer(d time.Duration) clock.Timer {
	t := c.Clock.NewTimer(d)
	if d != time.Hour {
		return t
	}
	w := &wakeCountingTimer{Timer: t, c: make(chan time.Time), stop: make(chan struct{})}
	go func() {
		for {
			select {
			case v := <-t.C():
				select {
				case w.c <- v:
					c.wakes.Add(1)
				case <-w.stop:
					return
				}
			case <-w.stop:
				return
			}
		}
	}()
	return w
}

// wakeCountedRun is one run of runCountingWakes.
type wakeCountedRun struct {
	h       *arrivalHarness
	cfg     executor.Config
	account executor.Account
	took    time.Duration
	wakes   int64 // the watcher's wake-ups on its timer
}

// runCountingWakes runs the scenario js on a harness of vus VUs whose
// iterations take work(index), counting the watcher's wake-ups.
func runCountingWakes(t *testing.T, work func(int64) time.Duration, vus int, js string) wakeCountedRun {
	t.Helper()
	h := newArrivalHarness(func(it executor.Iteration, _ time.Time) time.Duration { return work(it.Index) }, vus)
	clk := &wakeCountingClock{Clock: clock.Real}
	h.deps.Clock = clk
	cfg := arrivalParse(t, js)
	a, took := h.run(t, t.Context(), cfg)
	return wakeCountedRun{h: h, cfg: cfg, account: a, took: took, wakes: clk.wakes.Load()}
}

type wakeCountingTimer struct {
	clock.Timer
	c       chan time.Time
	stop    chan struct{}
	stopped sync.Once
}

func (t *wakeCountingTimer) C() <-chan time.Time { return t.c }

func (t *wakeCountingTimer) Stop() bool {
	t.stopped.Do(func() { close(t.stop) })
	return t.Timer.Stop()
}

// At 10,000 arrivals/s with one VU the next unclaimed arrival is always
// 100 µs away, and during a 50 ms stall a new one comes due every 100 µs:
// the watcher used to wake for each of them (10,000 times in the 1 s
// schedule). It now looks at most once per millisecond, so it wakes on its
// timer at most 1,000 times in the schedule. The arrivals do
// not notice: each starts exactly when FIFO service by one VU says
// (intended time, or the end of the previous iteration), and the peak
// backlog is exact although the watcher never looked at 50 ms, when the
// VU took arrival 1 with arrivals 1 … 500 (due 0.1 … 50 ms) waiting.
func TestArrivalWatcherTick(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		work := func(i int) time.Duration {
			if i == 0 {
				return 50 * time.Millisecond
			}
			return 10 * time.Microsecond
		}
		w := runCountingWakes(t, func(i int64) time.Duration { return work(int(i)) }, 1,
			`{"executor":"intended-arrival-rate","rate":10000,"duration":"1s","preAllocatedVUs":1}`)
		h, a, took, cfg := w.h, w.account, w.took, w.cfg
		if a.Intended != 10000 || a.Completed != 10000 || a.PeakBacklog != 500 {
			t.Errorf("account %+v, want 10000 completed, peak backlog 500", a)
		}
		if took != time.Second {
			t.Errorf("Run took %v, want the schedule's 1s", took)
		}
		if n := w.wakes; n > 1000+1 {
			t.Errorf("the watcher woke on its timer %d times in 1s, want at most one per %v", n, time.Millisecond)
		}
		starts, _ := lindley(h.t0, executortest.Offsets(scheduleOf(cfg)), work)
		calls := callsByIndex(h.pool)
		for i, want := range starts {
			if got := calls[int64(i)].Start; !got.Equal(want) {
				t.Fatalf("arrival %d started at %v, want %v", i, got.Sub(h.t0), want.Sub(h.t0))
			}
		}
	})
}

// lateTimerClock is clock.Real whose timers fire late by a fixed amount,
// like Go's timers in a process that went idle.
type lateTimerClock struct {
	clock.Clock
	late time.Duration
}

func (c lateTimerClock) NewTimer(d time.Duration) clock.Timer {
	return lateTimer{c.Clock.NewTimer(d + c.late), c.late}
}

type lateTimer struct {
	clock.Timer
	late time.Duration
}

func (t lateTimer) Reset(d time.Duration) bool { return t.Timer.Reset(d + t.late) }

// Late arrivals are split by cause. One VU, 10 arrivals/s, timers that
// fire 2 ms late; arrival 0 (due at once, no timer) takes 250 ms, the
// others 1 ms. Arrivals 1 and 2 (due 100 and 200 ms) come due while the
// VU is busy: they wait for it and start at 250 and 251 ms. Arrivals 3 … 9
// are claimed before they are due and start 2 ms late, when the timer
// fires: late, but not for want of a VU. Each start is still measured from
// its exact intended time.
func TestArrivalLateSplit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newArrivalHarness(func(it executor.Iteration, _ time.Time) time.Duration {
			if it.Index == 0 {
				return 250 * time.Millisecond
			}
			return time.Millisecond
		}, 1)
		h.deps.Clock = lateTimerClock{clock.Real, 2 * time.Millisecond}
		cfg := arrivalParse(t, `{"executor":"intended-arrival-rate","rate":10,"duration":"1s","preAllocatedVUs":1}`)
		a, _ := h.run(t, t.Context(), cfg)
		if a.OnTime != 1 || a.Late != 9 || a.LateForVU != 2 {
			t.Errorf("account %+v, want 1 on time, 9 late of which 2 waited for the VU", a)
		}
		calls := callsByIndex(h.pool)
		want := map[int64]time.Duration{1: 250 * time.Millisecond, 2: 251 * time.Millisecond}
		for i := int64(3); i < 10; i++ {
			want[i] = time.Duration(i)*100*time.Millisecond + 2*time.Millisecond
		}
		for i, w := range want {
			if got := calls[i].Start.Sub(h.t0); got != w {
				t.Errorf("arrival %d started at %v, want %v", i, got, w)
			}
		}
		lag := h.pool.Rec.Sum(h.m.ScheduleLag, nil)
		if wantLag := 150.0 + 51 + 7*2; lag != wantLag {
			t.Errorf("schedule_lag sums to %v ms, want %v", lag, wantLag)
		}
	})
}

// While the VUs keep up, the watcher sleeps. 100 arrivals/s for 10 s on
// five VUs, each iteration 1 ms, except arrivals 500 … 504 (due 5.00 …
// 5.04 s), which take 200 ms and so hold every VU: arrivals 505 … (due
// from 5.05 s) come due unclaimed and wait. The watcher used to wake once
// per arrival to find the next one claimed (1,000 times); claims now move
// its look on, so it wakes only around the stall, where it still sees the
// backlog (the warning). No arrival is lost or run twice, each starts in
// order, at its intended time when a VU was free, and schedule_lag is
// measured from each arrival's own intended time.
func TestArrivalWatcherSleepsWhileVUsKeepUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		work := func(i int64) time.Duration {
			if i >= 500 && i < 505 {
				return 200 * time.Millisecond
			}
			return time.Millisecond
		}
		w := runCountingWakes(t, work, 5, `{"executor":"intended-arrival-rate","rate":100,"duration":"10s","preAllocatedVUs":5}`)
		h, a := w.h, w.account
		if a.Intended != 1000 || a.Completed != 1000 || a.Dropped != 0 {
			t.Errorf("account %+v, want 1000 intended and completed", a)
		}
		if n := w.wakes; n > 30 {
			t.Errorf("the watcher woke on its timer %d times, want only around the stall (at most 30)", n)
		}
		if w := h.warnings(); len(w) != 1 || !strings.Contains(w[0], "all 5 VUs (maxVUs) are busy") {
			t.Errorf("warnings %q, want the one that all 5 VUs are busy", w)
		}
		calls := h.pool.Calls()
		byIndex := callsByIndex(h.pool)
		if len(calls) != 1000 || len(byIndex) != 1000 {
			t.Fatalf("%d calls of %d arrivals, want each of the 1000 once", len(calls), len(byIndex))
		}
		var lag time.Duration
		for i := range int64(1000) {
			c := byIndex[i]
			intended := h.t0.Add(time.Duration(i) * 10 * time.Millisecond)
			if !c.Iteration.Intended.Equal(intended) {
				t.Fatalf("arrival %d intended at %v, want %v", i, c.Iteration.Intended.Sub(h.t0), intended.Sub(h.t0))
			}
			if i > 0 && c.Start.Before(byIndex[i-1].Start) {
				t.Fatalf("arrival %d started at %v, before arrival %d", i, c.Start.Sub(h.t0), i-1)
			}
			if (i < 505 || i >= 530) && !c.Start.Equal(intended) {
				t.Errorf("arrival %d started at %v, want its intended %v", i, c.Start.Sub(h.t0), intended.Sub(h.t0))
			}
			if i >= 505 && i < 520 && !c.Start.After(intended) {
				t.Errorf("arrival %d started at %v, want after its intended %v (every VU was busy)", i, c.Start.Sub(h.t0), intended.Sub(h.t0))
			}
			lag += c.Start.Sub(intended)
		}
		if got, want := h.pool.Rec.Sum(h.m.ScheduleLag, nil), float64(lag)/float64(time.Millisecond); got != want {
			t.Errorf("schedule_lag sums to %v ms, want %v (each start minus its intended time)", got, want)
		}
	})
}
