package engine

import (
	"context"
	"sort"
	"sync/atomic"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/executor"
)

// scenarioRun is one scenario of the run: its config, and its executor once
// the scenario started.
type scenarioRun struct {
	cfg  executor.Config
	exec executor.Executor
	// can is what the config and executor can do beyond the contracts,
	// asked once when the executor is made; read it only once started
	// is true.
	can     executor.Abilities
	started atomic.Bool
	done    atomic.Bool
}

func (r *scenarioRun) progress() executor.Progress {
	if r.started.Load() {
		p := r.exec.Progress()
		p.Done = p.Done || r.done.Load()
		return p
	}
	return executor.Progress{Total: r.cfg.MaxDuration(), MaxVUs: r.cfg.MaxVUs(), Done: r.done.Load()}
}

// run waits for the scenario's startTime, then runs its executor.
func (r *scenarioRun) run(ctx context.Context, c clock.Clock, start time.Time, deps executor.Deps) error {
	defer r.done.Store(true)
	if wait := r.cfg.Base().StartTime - c.Now().Sub(start); wait > 0 {
		if !clock.Sleep(c, wait, ctx.Done()) {
			return nil
		}
	}
	r.exec = r.cfg.New(deps)
	r.can = executor.Ask(r.cfg, r.exec)
	r.started.Store(true)
	return r.exec.Run(ctx)
}

// plannedVUs is the most VUs the scenarios need at the same moment, counting
// each scenario's planned VUs over its window [startTime, startTime +
// maxDuration): the number to initialise before the test starts, and so
// vus_max from the first sample on, as in k6.
func plannedVUs(cfgs []executor.Config) int {
	return peakOverlap(cfgs, plannedOf)
}

// peakOverlap is the largest sum of vus(c) over the scenarios whose windows
// [startTime, startTime + maxDuration) overlap at one moment; a window that
// ends where another starts does not overlap it.
func peakOverlap(cfgs []executor.Config, vus func(executor.Config) int) int {
	type edge struct {
		at    time.Duration
		delta int
	}
	var edges []edge
	for _, c := range cfgs {
		s, n := c.Base().StartTime, vus(c)
		edges = append(edges, edge{s, n}, edge{s + c.MaxDuration(), -n})
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].at != edges[j].at {
			return edges[i].at < edges[j].at
		}
		return edges[i].delta < edges[j].delta
	})
	cur, peak := 0, 0
	for _, e := range edges {
		cur += e.delta
		peak = max(peak, cur)
	}
	return peak
}

// maxDuration is when the last scenario hard-stops.
func maxDuration(cfgs []executor.Config) time.Duration {
	var d time.Duration
	for _, c := range cfgs {
		d = max(d, c.Base().StartTime+c.MaxDuration())
	}
	return d
}

// plannedOf is how many VUs k6 initialises for one scenario before the
// test: every VU it can hold (a ramping-vus scenario's highest stage
// target, not just startVUs), except for an open-model scenario, which
// starts with preAllocatedVUs and adds the rest up to maxVUs mid-test.
func plannedOf(c executor.Config) int {
	if c.Model() == executor.ModelOpen {
		return c.InitialVUs()
	}
	return c.MaxVUs()
}

// Requirements are what the scenarios need, as k6's inspect
// --execution-requirements reports them: the most VUs held at once (each
// scenario's maxVUs over its startTime to hard-stop window) and the time to
// the last hard stop.
func Requirements(cfgs []executor.Config) (maxVUs int, total time.Duration) {
	return peakOverlap(cfgs, executor.Config.MaxVUs), maxDuration(cfgs)
}
