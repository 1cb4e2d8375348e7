package engine

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/health"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/summary"
)

// healthTally is what the run's health intervals add up to, for the
// summary: how many there were, in how many the generator may have
// inflated latency and why, and the extremes.
type healthTally struct {
	mu                              sync.Mutex
	intervals, limited              int
	byReason                        map[health.Reason]int
	cpuKnown                        bool
	maxCPU                          float64
	maxSched, maxGC                 time.Duration
	arrivals, lateWakeup, lateForVU int64
	procs                           int
}

// newMonitor returns the run's health monitor: this process's counters,
// and the arrival counts of the open-model scenarios that have started.
func (r *testRun) newMonitor() *health.Monitor {
	return health.NewMonitor(r.clock, &health.Runtime{}, r.arrivalCounts)
}

// arrivalCounts sums the accounts of the open-model scenarios so far:
// arrivals started, those late although a VU was free, those late for
// want of one.
func (r *testRun) arrivalCounts() (started, lateWakeup, lateForVU int64) {
	for _, sc := range r.scenarios {
		if !sc.started.Load() {
			continue
		}
		if acc, ok := sc.exec.(executor.Accounter); ok {
			a := acc.Account()
			started += a.OnTime + a.Late
			lateWakeup += a.Late - a.LateForVU
			lateForVU += a.LateForVU
		}
	}
	return started, lateWakeup, lateForVU
}

// tickHealth records the generator's health since the previous tick, if
// any time passed.
func (r *testRun) tickHealth(rec metrics.Recorder) {
	if iv, ok := r.monitor.Tick(); ok {
		r.recordHealth(rec, iv)
	}
}

// recordHealth records one interval's generator_* samples at its end and
// adds it to the tally.
func (r *testRun) recordHealth(rec metrics.Recorder, iv health.Interval) {
	b, tags, at := r.builtin, r.runTags, iv.To
	put := func(m *metrics.Metric, v float64) {
		rec.Record(metrics.Sample{Metric: m, Tags: tags, Time: at, Value: v})
	}
	if !math.IsNaN(iv.CPU) {
		put(b.GeneratorCPU, iv.CPU)
	}
	put(b.GeneratorSchedLatency, metrics.Milliseconds(iv.SchedP99))
	put(b.GeneratorGCPause, metrics.Milliseconds(iv.GCPause))
	if iv.Arrivals > 0 {
		put(b.GeneratorLateWakeup, iv.LateWakeupRate())
		put(b.GeneratorLateForVU, iv.LateForVURate())
	}
	why := iv.Limited()
	limited := 0.0
	if why != 0 {
		limited = 1
	}
	put(b.GeneratorLimited, limited)

	t := &r.health
	t.mu.Lock()
	defer t.mu.Unlock()
	t.intervals++
	if why != 0 {
		t.limited++
		if t.byReason == nil {
			t.byReason = map[health.Reason]int{}
		}
		for bit := health.Reason(1); bit != 0; bit <<= 1 {
			if why&bit != 0 {
				t.byReason[bit]++
			}
		}
	}
	if !math.IsNaN(iv.CPU) {
		t.cpuKnown = true
		t.maxCPU = max(t.maxCPU, iv.CPU)
	}
	t.procs = iv.Procs
	t.maxSched = max(t.maxSched, iv.SchedP99)
	t.maxGC = max(t.maxGC, iv.GCPause)
	t.arrivals += iv.Arrivals
	t.lateWakeup += iv.LateWakeup
	t.lateForVU += iv.LateForVU
}

// healthReport is the summary's account of the generator's health, nil
// when no interval was measured, and the warning for the intervals in
// which the generator may have inflated latency ("" when there were none).
func (r *testRun) healthReport() (*summary.HealthReport, string) {
	t := &r.health
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.intervals == 0 {
		return nil, ""
	}
	rep := &summary.HealthReport{
		Interval: health.Period, Intervals: t.intervals, Limited: t.limited, Procs: t.procs,
		CPUMedian: math.NaN(), CPUMax: math.NaN(),
		SchedP99Median: medianOf(r.engine, metrics.GeneratorSchedLatencyName), SchedP99Max: metrics.Milliseconds(t.maxSched),
		GCPauseMax: metrics.Milliseconds(t.maxGC),
		Arrivals:   t.arrivals, LateWakeup: t.lateWakeup, LateForVU: t.lateForVU,
	}
	if t.cpuKnown {
		rep.CPUMedian, rep.CPUMax = medianOf(r.engine, metrics.GeneratorCPUName), t.maxCPU
	}
	for bit := health.Reason(1); bit != 0; bit <<= 1 {
		if n := t.byReason[bit]; n > 0 {
			rep.Reasons = append(rep.Reasons, summary.HealthReason{Reason: bit.String(), Intervals: n})
		}
	}
	if t.limited == 0 {
		return rep, ""
	}
	return rep, healthWarning(rep)
}

// healthWarning words the end-of-test warning: "in 12 of 60 intervals the
// generator was CPU-bound; latency there is an upper bound ...", with each
// reason's count when there are several.
func healthWarning(rep *summary.HealthReport) string {
	var why []string
	for _, rs := range rep.Reasons {
		if len(rep.Reasons) == 1 {
			why = append(why, rs.Reason)
			continue
		}
		why = append(why, fmt.Sprintf("%s (%d)", rs.Reason, rs.Intervals))
	}
	return fmt.Sprintf("in %d of %d intervals the generator was %s; latency there is an upper bound, "+
		"as the generator may have added to it (generator_limited marks them; see docs/metrics.md)",
		rep.Limited, rep.Intervals, strings.Join(why, " or "))
}

// medianOf is the median of a trend the engine holds, 0 when it has none.
func medianOf(e *metrics.Engine, name string) float64 {
	if t, ok := e.Sink(name).(*metrics.TrendSink); ok && t != nil {
		return t.Med()
	}
	return 0
}
