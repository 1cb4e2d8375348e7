package engine

import (
	"fmt"
	"maps"
	"math"
	"strings"
	"sync"

	"github.com/metronome-load/metronome/health"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/summary"
)

// healthLog is what the run's health intervals add up to, for the
// summary and the result file.
type healthLog struct {
	mu    sync.Mutex
	tally health.Tally
}

// snapshot returns the tally so far, nil when no interval was measured.
func (l *healthLog) snapshot() *health.Tally {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tally.Intervals == 0 {
		return nil
	}
	t := l.tally
	t.ByReason = maps.Clone(t.ByReason)
	return &t
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
		if acc := sc.can.Account; acc != nil {
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
	if r.cfg.healthOff {
		return
	}
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
	limited := 0.0
	if iv.Limited() != 0 {
		limited = 1
	}
	put(b.GeneratorLimited, limited)
	r.health.mu.Lock()
	r.health.tally.Add(iv)
	r.health.mu.Unlock()
}

// healthReport is the summary's account of the generator's health from
// a tally (one run's, or the instances' of a merge) and the run's
// generator_* trends, nil when nothing was measured, and the warning for
// the intervals in which the generator may have inflated latency ("" when
// there were none).
func healthReport(eng *metrics.Engine, t *health.Tally) (*summary.HealthReport, string) {
	if t == nil || t.Intervals == 0 {
		return nil, ""
	}
	rep := &summary.HealthReport{
		Interval: health.Period, Intervals: t.Intervals, Limited: t.Limited, Procs: t.Procs,
		CPUMedian: math.NaN(), CPUMax: t.MaxCPU,
		SchedP99Median: medianOf(eng, metrics.GeneratorSchedLatencyName), SchedP99Max: metrics.Milliseconds(t.MaxSched),
		GCPauseMax: metrics.Milliseconds(t.MaxGC),
		Arrivals:   t.Arrivals, LateWakeup: t.LateWakeup, LateForVU: t.LateForVU,
	}
	if !math.IsNaN(t.MaxCPU) {
		rep.CPUMedian = medianOf(eng, metrics.GeneratorCPUName)
	}
	for _, r := range health.Reasons {
		if n := t.ByReason[r]; n > 0 {
			rep.Reasons = append(rep.Reasons, summary.HealthReason{Reason: r.String(), Intervals: n})
		}
	}
	if t.Limited == 0 {
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
