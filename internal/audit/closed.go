package audit

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/metrics"
)

// endSlack is how much earlier than its recorded end a VU counts as idle
// when VUs are reconstructed: k6's times are the wall clock's and its
// durations the monotonic clock's, so a start computed from them can come
// a little before the end of the VU's previous iteration (measured: up to
// 0.3 ms in a run on this project's VM).
const endSlack = time.Millisecond

// retireAfter is how long a VU may idle between two iterations before the
// reconstruction of VUs without vu metadata takes it for gone (ramped
// down, or moved to another scenario); the run's minIterationDuration
// lengthens it.
const retireAfter = time.Second

// rebuildClosed back-fills a closed-model scenario as metronome does
// (docs/DESIGN.md §2.3): each request of duration d on a VU whose cadence
// is I records d and, when d ≥ 2I, d−I, d−2I, … ≥ I, tagged
// backfilled=true (executor.BackFill). I is the scenario's
// expectedInterval when it is a duration; with 'auto' each VU's estimate
// (executor.Cadence) before each of its iterations, from the intervals
// between the starts of its earlier ones. A scenario whose
// expectedInterval is off (the default of the iterations executors)
// records no corrected_latency, as in metronome.
//
// Which iterations are one VU's comes from k6's vu metadata; without it,
// from the closed loop itself: a VU starts its next iteration as soon as
// one ends, so each start is given to the VU that has idled longest
// (reconstructVUs). That is an estimate, and the account says so.
func (a *auditRun) rebuildClosed(sc *scenario) {
	acc := sc.audit
	fill := &acc.BackFill
	if cm := executor.Ask(sc.cfg, nil).Closed; cm != nil {
		fill.Interval = cm.BackFillInterval()
	}
	if !fill.Interval.Enabled() {
		return
	}
	var vus [][]int
	vus, acc.VUsFromMetadata = vusOf(sc.iterations, max(retireAfter, a.o.MinIterationDuration))
	acc.VUs = len(vus)
	for _, its := range vus {
		var cad executor.Cadence
		last := int64(-1)
		for _, i := range its {
			it := &sc.iterations[i]
			if fill.Interval.Mode == executor.IntervalFixed {
				it.interval = fill.Interval.Fixed
				continue
			}
			if last >= 0 {
				cad.Observe(time.Duration(it.start - last))
			}
			last = it.start
			est, ok := cad.Estimate()
			if !ok {
				fill.Unestimated++
			}
			it.interval = est
		}
		if est, ok := cad.Estimate(); ok && fill.Interval.Mode == executor.IntervalAuto {
			fill.Estimates = append(fill.Estimates, est)
		}
	}
	slices.Sort(fill.Estimates)
	sc.linker = newLinker(sc.iterations)
	sc.backFilled = true
}

// chargeClosed back-fills a request of a closed scenario at its
// iteration's interval.
func (a *auditRun) chargeClosed(sc *scenario, q request, rec metrics.Recorder) {
	var interval time.Duration
	if i, ok := sc.linker.find(q); ok {
		interval = sc.iterations[i].interval
	}
	n := executor.BackFilled(q.own, interval)
	if a.backFilled+n > maxBackFill {
		// Past the cap: the request's own time alone.
		interval, n = 0, 0
		sc.notFilled++
	}
	a.backFilled += n
	executor.BackFill(rec, a.b.CorrectedLatency, q.tags, time.Unix(0, q.end), q.own, interval)
	fill := &sc.audit.BackFill
	fill.Requests++
	fill.Backfilled += n
}

// maxBackFill bounds the samples an audit back-fills, and so its time
// (about 100 ns a sample): a real closed loop back-fills a few per
// request that met a stall, but a damaged own time (up to 146 years) at
// the 100 µs floor of the cadence estimate would make some 10^13. The
// requests past it record their own time alone, and the account says how
// many.
var maxBackFill int64 = 100_000_000

// vusOf splits a closed-model scenario's iterations (sorted by start) by
// VU: by k6's vu metadata when every iteration has it (true), else by
// reconstructVUs.
func vusOf(its []iteration, retire time.Duration) ([][]int, bool) {
	byVU := map[int64][]int{}
	for i, it := range its {
		if it.vu < 0 {
			return reconstructVUs(its, retire), false
		}
		byVU[it.vu] = append(byVU[it.vu], i)
	}
	out := make([][]int, 0, len(byVU))
	for _, vu := range slices.Sorted(maps.Keys(byVU)) {
		out = append(out, byVU[vu])
	}
	return out, true
}

// reconstructVUs rebuilds the VUs of a closed loop from its iterations'
// starts and ends alone: walking through time, an iteration's end makes
// its VU idle, and each start goes to the VU idle the longest — the one
// whose own next start is due first when every VU restarts the same short
// moment after its iteration ends, as k6's do. A start with no idle VU,
// or only VUs idle for longer than retire (gone), begins a new VU.
func reconstructVUs(its []iteration, retire time.Duration) [][]int {
	type event struct {
		at  int64
		i   int
		end bool
	}
	events := make([]event, 0, 2*len(its))
	for i, it := range its {
		events = append(events, event{at: it.start, i: i}, event{at: it.end - int64(endSlack), i: i, end: true})
	}
	slices.SortStableFunc(events, func(x, y event) int {
		if c := cmp.Compare(x.at, y.at); c != 0 {
			return c
		}
		// An end before a start at the same moment: the VU is free.
		switch {
		case x.end && !y.end:
			return -1
		case y.end && !x.end:
			return 1
		}
		return 0
	})
	type idle struct {
		vu    int
		since int64
	}
	var (
		vus   [][]int
		vuOf  = make([]int, len(its))
		queue []idle // FIFO by since
	)
	for _, ev := range events {
		if ev.end {
			queue = append(queue, idle{vu: vuOf[ev.i], since: ev.at})
			continue
		}
		for len(queue) > 0 && time.Duration(ev.at-queue[0].since) > retire {
			queue = queue[1:]
		}
		vu := len(vus)
		if len(queue) > 0 {
			vu, queue = queue[0].vu, queue[1:]
		} else {
			vus = append(vus, nil)
		}
		vuOf[ev.i] = vu
		vus[vu] = append(vus[vu], ev.i)
	}
	return vus
}
