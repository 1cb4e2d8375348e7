package executor

import (
	"context"
	"time"
)

// watch follows the schedule until the scenario ends: at the hard stop, on
// abort, or once every arrival has been claimed and run and the regular
// duration is over.
func (r *arrivalRun) watch(ctx context.Context) {
	e, clk := r.e, r.deps.Clock
	r.mu.Lock()
	r.timer, r.armed = clk.NewTimer(time.Hour), -1
	r.mu.Unlock()
	defer r.timer.Stop()
	fired := false
	for {
		if ctx.Err() != nil {
			return
		}
		now := clk.Now()
		el := now.Sub(r.start)
		if el >= r.hardStop {
			return
		}
		r.mu.Lock()
		if fired {
			r.armed, fired = -1, false
		}
		r.advance(el)
		if !e.cfg.queue && el >= r.regular && !r.closed && r.fresh == 0 {
			// k6 starts nothing after the regular duration: the arrivals
			// that found every VU busy are charged up to its end. A VU
			// that has just joined is idle and about to claim: arrivals
			// due at the very end (a timetable's last offset) are still
			// its to take, so the end waits for its first claim.
			r.closed = true
			r.dropUnclaimed(r.due.index, r.start.Add(r.regular))
		}
		// An unclaimed arrival that is due found every VU busy (a VU that
		// just joined is about to claim it).
		waiting := !r.closed && !r.next.end && r.next.off <= el && r.fresh == 0
		if waiting && !e.cfg.queue {
			r.countMissed(el, now)
		}
		backlog := r.setBacklog()
		r.limit = r.hardStop
		if el < r.regular {
			r.limit = r.regular
		}
		wake := r.limit
		r.forNext = false
		switch {
		case r.closed:
		case waiting && !r.due.end:
			wake = watchAfter(r.due.off, el) // watch the backlog grow
		case !waiting && !r.next.end:
			wake = watchAfter(r.next.off, el) // is it claimed by then?
			r.forNext = wake < r.limit
		}
		wake = min(wake, r.limit)
		if wake != r.armed {
			r.timer.Reset(wake - el)
			r.armed = wake
		}
		done := r.next.end || r.closed
		r.mu.Unlock()

		if done {
			r.stopInits()
			if r.live.Load() == 0 && el >= r.regular {
				return
			}
		} else if waiting {
			r.grow(backlog)
		}
		select {
		case <-r.timer.C():
			fired = true
		case <-r.exited:
		case in := <-r.initCh:
			r.initing--
			r.joined(in)
		case <-ctx.Done():
		}
	}
}

// watchTick is the shortest interval between two looks of the watching
// goroutine at arrivals coming due. Arrivals closer together than that
// (above 1,000/s while every VU is busy, or with few VUs) are seen in
// groups: without it the watcher woke once per arrival, at 20,000/s as
// often as the VUs themselves, for CPU the VUs needed exactly when they
// were behind. It delays only the Backlog gauge and the start of VU
// initialisations, never an arrival: the VUs claim arrivals themselves,
// and each claim measures the backlog, so PeakBacklog stays exact.
const watchTick = time.Millisecond

// watchAfter is when the watcher looks again for an arrival due at off,
// the time being el: at off, but not before a watchTick has passed.
func watchAfter(off, el time.Duration) time.Duration {
	return max(off, el+watchTick)
}

// advance makes every arrival with an offset up to el due. r.mu is held.
func (r *arrivalRun) advance(el time.Duration) {
	for !r.due.end && r.due.off <= el {
		r.due.step()
	}
}

// setBacklog publishes the number of due, unclaimed arrivals of
// intended-arrival-rate (k6's executors drop those) and returns it. r.mu is
// held.
func (r *arrivalRun) setBacklog() int64 {
	if !r.e.cfg.queue {
		return 0
	}
	st := r.e.cfg.stripe
	b := max(st.Scale(r.due.index)-st.Scale(r.next.index), 0)
	r.e.Backlog.Store(b)
	if b > r.e.peakBacklog.Load() {
		r.e.peakBacklog.Store(b)
	}
	return b
}

// claim gives a worker that has been free since freeSince the oldest
// unclaimed arrival. For k6's executors the arrivals that came due before
// freeSince, while every VU was busy, are dropped first and charged up to
// freeSince, the moment this VU became free. An arrival that came due
// after freeSince is not dropped, however late the worker's goroutine got
// to claim it (it starts late, and its lag says so): k6 drops an arrival
// only when no VU is idle at its time. It returns false when there is
// nothing left to claim.
func (r *arrivalRun) claim(freeSince time.Time, first bool) (int64, time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if first {
		r.fresh--
	}
	el := freeSince.Sub(r.start)
	r.advance(el)
	if !r.e.cfg.queue && !r.closed {
		r.dropMissed(el, freeSince)
		for !r.next.end && r.next.index < r.tally.index {
			r.dropNext(freeSince) // counted at its time, a tie with this VU's freeing
		}
	}
	if r.closed || r.next.end {
		return 0, 0, false
	}
	i, off := r.next.index, r.next.off
	r.setBacklog() // the claimed arrival was waiting too
	r.next.step()
	r.held.Add(1)
	r.setBacklog()
	r.moveLook()
	return i, off, true
}

// moveLook moves the watcher's look at whether next is claimed in time to
// the new next, once a claim took the arrival it was to look at: without
// it the watcher woke once per arrival (once per watchTick above 1,000/s)
// to find the arrival claimed, a thread wake-up each time when the
// process was idle, for nothing while the VUs keep up. A look is only
// ever moved later, so the watcher still looks at most once a watchTick.
// r.mu is held.
func (r *arrivalRun) moveLook() {
	if !r.forNext || r.armed < 0 {
		return
	}
	wake := r.limit
	if !r.next.end {
		wake = min(max(r.armed, r.next.off), r.limit)
	}
	if wake == r.armed {
		return
	}
	r.forNext = wake < r.limit
	r.timer.Reset(r.start.Add(wake).Sub(r.deps.Clock.Now()))
	r.armed = wake
}

// dropMissed drops the unclaimed arrivals due before el, charged up to
// giveUp. r.mu is held.
func (r *arrivalRun) dropMissed(el time.Duration, giveUp time.Time) {
	for !r.next.end && r.next.off < el {
		r.dropNext(giveUp)
	}
}

// dropUnclaimed drops the unclaimed arrivals with an index below end,
// charged up to giveUp. r.mu is held.
func (r *arrivalRun) dropUnclaimed(end int64, giveUp time.Time) {
	for !r.next.end && r.next.index < end {
		r.dropNext(giveUp)
	}
}

// dropNext drops arrival next, counted in dropped_iterations now unless
// countMissed already counted it. r.mu is held.
func (r *arrivalRun) dropNext(giveUp time.Time) {
	r.e.Dropped.Add(1)
	if r.next.index < r.tally.index || r.tally.end {
		r.deps.ChargeDrop(r.start.Add(r.next.off), giveUp)
	} else {
		r.deps.Drop(r.start.Add(r.next.off), giveUp)
	}
	r.next.step()
}

// countMissed counts in dropped_iterations, at now, the unclaimed arrivals
// due by el while every VU holds an arrival, as k6 counts a drop when the
// arrival finds no VU idle: a VU that frees itself later claims nothing
// due before its free time (see claim), nor one counted here when it
// frees itself at el, so these are dropped for sure, and a stalled
// scenario's drops show in time (and can abort it through a threshold)
// rather than all at once when a VU frees itself. Their corrected_latency
// is charged when they are dropped (dropNext). A worker gives up its hold
// before it reads the clock, so a hold seen here after el was read ends
// at or after el. r.mu is held.
func (r *arrivalRun) countMissed(el time.Duration, now time.Time) {
	if r.held.Load() < int64(len(r.workers)) {
		return
	}
	for !r.tally.end && r.tally.index < r.next.index {
		r.tally.step()
	}
	for !r.tally.end && r.tally.off <= el {
		r.deps.CountDrop(now)
		r.tally.step()
	}
}

// giveBack returns an arrival a worker claimed but did not start before
// the end.
func (r *arrivalRun) giveBack(i int64, off time.Duration) {
	r.mu.Lock()
	r.returned = append(r.returned, arrivalClaim{i, off})
	r.mu.Unlock()
}
