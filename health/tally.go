package health

import (
	"math"
	"time"
)

// Tally adds intervals up: how many there were, in how many the generator
// may have inflated latency and why, the extremes and the arrivals. Tallies
// of the instances of one test merge by Merge. The zero Tally is empty.
type Tally struct {
	Intervals, Limited int
	// ByReason counts, per reason, the intervals it held in (an interval
	// may have several).
	ByReason map[Reason]int
	// Procs is the most cores one instance could use (GOMAXPROCS).
	Procs int
	// MaxCPU is the highest CPU share of an interval, NaN until an
	// interval with a known share was added.
	MaxCPU                float64
	MaxSched, MaxGC       time.Duration
	Arrivals              int64
	LateWakeup, LateForVU int64
}

// Add counts one interval.
func (t *Tally) Add(iv Interval) {
	one := Tally{Intervals: 1, Procs: iv.Procs, MaxCPU: iv.CPU, MaxSched: iv.SchedP99, MaxGC: iv.GCPause,
		Arrivals: iv.Arrivals, LateWakeup: iv.LateWakeup, LateForVU: iv.LateForVU}
	if why := iv.Limited(); why != 0 {
		one.Limited = 1
		for _, r := range Reasons {
			if why&r != 0 {
				one.count(r, 1)
			}
		}
	}
	t.Merge(one)
}

// Merge adds another instance's tally to t.
func (t *Tally) Merge(o Tally) {
	if o.Intervals == 0 {
		return
	}
	if t.Intervals == 0 {
		t.MaxCPU = math.NaN()
	}
	t.Intervals += o.Intervals
	t.Limited += o.Limited
	for r, n := range o.ByReason {
		t.count(r, n)
	}
	t.Procs = max(t.Procs, o.Procs)
	if !math.IsNaN(o.MaxCPU) && (math.IsNaN(t.MaxCPU) || o.MaxCPU > t.MaxCPU) {
		t.MaxCPU = o.MaxCPU
	}
	t.MaxSched = max(t.MaxSched, o.MaxSched)
	t.MaxGC = max(t.MaxGC, o.MaxGC)
	t.Arrivals += o.Arrivals
	t.LateWakeup += o.LateWakeup
	t.LateForVU += o.LateForVU
}

func (t *Tally) count(r Reason, n int) {
	if t.ByReason == nil {
		t.ByReason = map[Reason]int{}
	}
	t.ByReason[r] += n
}
