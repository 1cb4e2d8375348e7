package executor

import (
	"sync/atomic"
	"time"
)

// Tracker keeps the counters an executor reports through Progress. The
// executor updates them while Progress reads them from other goroutines,
// so every field is atomic. Executors embed it; third-party ones can too.
type Tracker struct {
	// Active counts the VUs the scenario holds (closed model) or that run
	// an iteration (open model).
	Active      atomic.Int64
	Completed   atomic.Int64
	Interrupted atomic.Int64
	Dropped     atomic.Int64
	// Backlog counts due arrivals waiting for a VU.
	Backlog atomic.Int64

	start   atomic.Pointer[time.Time]
	elapsed atomic.Int64
	done    atomic.Bool
}

// Begin records when the scenario started.
func (t *Tracker) Begin(at time.Time) { t.start.Store(&at) }

// Began returns when the scenario started, zero before Begin.
func (t *Tracker) Began() time.Time {
	if s := t.start.Load(); s != nil {
		return *s
	}
	return time.Time{}
}

// End freezes the scenario's elapsed time and marks it done.
func (t *Tracker) End(elapsed time.Duration) {
	t.elapsed.Store(int64(elapsed))
	t.done.Store(true)
}

// Progress is the snapshot at now of a scenario that lasts at most total
// and may hold maxVUs.
func (t *Tracker) Progress(now time.Time, total time.Duration, maxVUs int) Progress {
	p := Progress{
		Total:       total,
		ActiveVUs:   int(t.Active.Load()),
		MaxVUs:      maxVUs,
		Completed:   t.Completed.Load(),
		Interrupted: t.Interrupted.Load(),
		Dropped:     t.Dropped.Load(),
		Backlog:     t.Backlog.Load(),
		Done:        t.done.Load(),
	}
	switch s := t.start.Load(); {
	case p.Done:
		p.Elapsed = time.Duration(t.elapsed.Load())
	case s != nil:
		p.Elapsed = min(now.Sub(*s), total)
	}
	return p
}
