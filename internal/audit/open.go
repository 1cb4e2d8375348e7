package audit

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/schedule"
	"github.com/metronome-load/metronome/metrics"
)

// rebuildOpen rebuilds an arrival-rate scenario from its schedule.
//
// k6's constant-arrival-rate and ramping-arrival-rate executors settle
// every arrival at its intended time t_i: a free VU starts it at once, or
// it is dropped at once (one dropped_iterations sample at that moment).
// So every arrival leaves exactly one event in the output, a start (an
// iteration's end minus its duration) or a drop, a little after t_i, and
// arrivals leave their events in the order of the schedule (k6 also
// settles the arrival due exactly at the end of the duration when its
// timer wins the race against the scenario's end, and on a loaded machine
// a few more: see overrun). The events,
// in time order, are matched to the arrivals in index order: the k-th
// event is arrival k.
//
// The output does not say when the scenario started (setup() and
// startTime come first), so the schedule is placed where the events put
// it: at the latest moment that leaves no event before its arrival, which
// makes the earliest-settled arrival exactly on time. A late start common
// to every arrival, or one at the very beginning, is therefore invisible;
// the others are measured against it.
//
// A started arrival's lag is its start minus t_i: its requests are
// charged their own time plus the lag, and it records schedule_lag. A
// dropped arrival is charged the time until a VU of the scenario became
// free after t_i (the first iteration end; the regular end of the
// schedule when none came before it), as metronome charges its own drops:
// a lower bound. Arrivals of the schedule with no event in the output
// (the last ones when k6's timer lost the race against the scenario's
// end, iterations interrupted at the end, which k6 does not record, or an
// output cut short) are counted and not charged.
func (a *auditRun) rebuildOpen(sc *scenario, sched *schedule.Schedule, rec metrics.Recorder) error {
	acc := sc.audit
	acc.Open = true
	sc.open = true
	sc.linker = newLinker(sc.iterations)
	type event struct {
		at   int64
		it   int // index in sc.iterations, -1 for a drop
		drop int // index in sc.drops
	}
	settled := int64(len(sc.iterations)) + acc.K6Dropped
	n := sched.Count()
	timetable := sched
	if settled > n {
		// k6 settled arrivals due after the end: the one due exactly at
		// the end when its timer wins the race against the scenario's
		// end, and, on a loaded machine, those whose timers fired before
		// the end was noticed. The schedule goes on at its final rate.
		timetable = overrun(sched)
		if timetable == nil || settled > timetable.Count() {
			return fmt.Errorf("scenarios.%s: the output holds %d started and dropped iterations of the scenario, but its schedule (%s) intends only %d: "+
				"audit with the options of the run (the same script, -e variables, --config and option flags as k6 run)",
				acc.Name, settled, acc.Description, n)
		}
		acc.PastEnd = settled - n
		n = settled
	}
	// An event per arrival, made once the schedule has room for them all.
	events := make([]event, 0, settled)
	for i, it := range sc.iterations {
		events = append(events, event{at: it.start, it: i})
	}
	for j, d := range sc.drops {
		for range d.n {
			events = append(events, event{at: d.at, it: -1, drop: j})
		}
	}
	slices.SortStableFunc(events, func(x, y event) int { return cmp.Compare(x.at, y.at) })
	acc.Intended = n
	acc.Missing = n - int64(len(events))
	if acc.Missing > 0 {
		acc.Notes = append(acc.Notes, fmt.Sprintf("%d arrivals of the schedule left no start or drop in the output: "+
			"k6 ended the scenario before settling them (its timer lost the race against the end), "+
			"their iterations were interrupted at the end (k6 records none), or the output was cut short; they are not charged", acc.Missing))
	}
	if acc.PastEnd > 0 {
		acc.Notes = append(acc.Notes, fmt.Sprintf("k6 settled %d arrivals due after the end of the duration (its end came late): they are audited as the schedule's, continued at its final rate", acc.PastEnd))
	}
	if len(events) == 0 {
		return nil
	}
	offs := make([]int64, len(events))
	cur := timetable.Cursor()
	t0 := int64(math.MaxInt64)
	for k, ev := range events {
		off, _ := cur.Offset(int64(k))
		offs[k] = int64(off)
		t0 = min(t0, ev.at-offs[k])
	}
	acc.Anchor = time.Unix(0, t0)
	ends := make([]int64, len(sc.iterations))
	for i, it := range sc.iterations {
		ends[i] = it.end
	}
	slices.Sort(ends)
	regularEnd := t0 + int64(sched.Duration())
	b := a.b
	for k, ev := range events {
		intended := t0 + offs[k]
		if ev.it >= 0 {
			it := &sc.iterations[ev.it]
			it.lag = time.Duration(ev.at - intended)
			if it.lag <= executor.OnTimeTolerance {
				acc.OnTime++
			} else {
				acc.Late++
			}
			acc.MaxLag = max(acc.MaxLag, it.lag)
			rec.Record(metrics.Sample{Metric: b.ScheduleLag, Tags: it.tags, Time: time.Unix(0, it.end), Value: metrics.Milliseconds(it.lag)})
			continue
		}
		giveUp := regularEnd
		if i, _ := slices.BinarySearch(ends, intended); i < len(ends) {
			giveUp = min(giveUp, ends[i])
		}
		giveUp = max(giveUp, intended)
		acc.Dropped++
		rec.Record(metrics.Sample{Metric: b.CorrectedLatency, Tags: sc.drops[ev.drop].tags.With("outcome", "dropped"),
			Time: time.Unix(0, giveUp), Value: metrics.Milliseconds(time.Duration(giveUp - intended))})
	}
	return nil
}

// chargeOpen charges a request of an open scenario its own time plus its
// iteration's lag.
func (a *auditRun) chargeOpen(sc *scenario, q request, rec metrics.Recorder) {
	var lag time.Duration
	if i, ok := sc.linker.find(q); ok {
		lag = sc.iterations[i].lag
	}
	rec.Record(metrics.Sample{Metric: a.b.CorrectedLatency, Tags: q.tags, Time: time.Unix(0, q.end), Value: metrics.Milliseconds(q.own + lag)})
}

// overrunWindow is how long after the end of its duration an arrival-rate
// scenario of k6 may still settle arrivals: k6 runs an arrival whose
// timer fires before it notices the end, which on a loaded machine came
// 16 ms late (9 arrivals at 1,000/s).
const overrunWindow = 100 * time.Millisecond

// overrun returns sched continued for overrunWindow at its final rate,
// with the executor's arithmetic, or nil when the rate ends at zero.
func overrun(sched *schedule.Schedule) *schedule.Schedule {
	sp := sched.Spec()
	if len(sp.Stages) == 0 {
		sp.Duration += overrunWindow
	} else {
		sp.Stages = append(slices.Clone(sp.Stages), schedule.RateStage{Duration: overrunWindow, Target: sp.Stages[len(sp.Stages)-1].Target})
	}
	s, err := schedule.New(sp)
	if err != nil {
		return nil
	}
	return s
}
