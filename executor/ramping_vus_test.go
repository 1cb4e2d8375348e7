package executor_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
)

const workedExample = `{"executor":"ramping-vus","startVUs":0,"stages":[{"duration":"10s","target":10},{"duration":"10s","target":0}]}`

// sample runs f after each offset of virtual time from t0, once the bubble
// has settled.
func sampleAt(t0 time.Time, offsets []time.Duration, f func(at time.Duration)) {
	for _, o := range offsets {
		time.Sleep(t0.Add(o).Sub(time.Now()))
		synctest.Wait()
		f(o)
	}
}

// TestRampingVUsWorkedExample checks k6-behaviour.md §1.5's example to the
// nanosecond with iterations longer than the test: VU n starts at n·1s;
// the count drops 10→9 at 11s … 1→0 at 20s, last in first out, and each
// removed VU is interrupted gracefulRampDown (30s) after its drop, the
// last one at the hard end, 20s + gracefulStop = 50s.
func TestRampingVUsWorkedExample(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(executortest.Constant(100 * time.Second))
		cfg := mustParse(t, workedExample)
		ex := cfg.New(h.deps)
		errc := make(chan error, 1)
		go func() { errc <- ex.Run(context.Background()) }()

		held := func(at time.Duration) int {
			switch {
			case at < 10*time.Second:
				return int(at / time.Second) // VU n started at n s
			default:
				// VU n is given back at its hard stop, (51−n) s.
				n := 0
				for v := 1; v <= 10; v++ {
					if at < time.Duration(51-v)*time.Second {
						n++
					}
				}
				return n
			}
		}
		sampleAt(h.t0, []time.Duration{500 * time.Millisecond, 5500 * time.Millisecond, 15500 * time.Millisecond,
			40500 * time.Millisecond, 45500 * time.Millisecond, 49500 * time.Millisecond}, func(at time.Duration) {
			if p := ex.Progress(); p.ActiveVUs != held(at) || p.Elapsed != at || p.MaxVUs != 10 || p.Total != 50*time.Second {
				t.Errorf("progress at %v: %+v, want %d active VUs", at, p, held(at))
			}
		})
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		if took := time.Since(h.t0); took != 50*time.Second {
			t.Errorf("Run took %v, want 50s", took)
		}

		calls := h.pool.Calls()
		checkCalls(t, calls, cfg)
		if len(calls) != 10 {
			t.Fatalf("%d iterations, want 10", len(calls))
		}
		var starts []time.Duration
		for _, c := range calls {
			s := h.at(c.Start)
			n := int(s / time.Second)
			if s != time.Duration(n)*time.Second || n < 1 || n > 10 {
				t.Errorf("an iteration started at %v, not at a whole second in 1…10s", s)
				continue
			}
			starts = append(starts, s)
			if want := time.Duration(51-n) * time.Second; h.at(c.End) != want || c.Outcome != executor.Interrupted {
				t.Errorf("VU started at %v ended at %v (%v), want interrupted at %v", s, h.at(c.End), c.Outcome, want)
			}
		}
		slices.Sort(starts)
		if starts = slices.Compact(starts); len(starts) != 10 {
			t.Errorf("start times %v, want one VU at each second 1…10s", starts)
		}
		p := ex.Progress()
		if p.Interrupted != 10 || p.Completed != 0 || h.count(h.m.Iterations) != 0 || h.pool.Made() != 10 {
			t.Errorf("progress %+v, %d iterations samples, %d VUs made", p, h.count(h.m.Iterations), h.pool.Made())
		}
		if out, _ := h.pool.Out(); out != 0 {
			t.Errorf("%d VUs still out", out)
		}
	})
}

// TestRampingVUsGracefulRampDown runs the worked example with short
// iterations: a removed VU starts no new iteration after its drop time but
// finishes the one it is running.
func TestRampingVUsGracefulRampDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const work = 1234567 * time.Microsecond // never lands on a whole second
		h := newHarness(executortest.Constant(work))
		_, took := h.run(t, context.Background(), mustParse(t, workedExample))

		// VU n starts at n s and is removed at (21−n) s.
		want := map[time.Duration][]time.Duration{}
		var total int
		var last time.Duration
		for n := 1; n <= 10; n++ {
			first, removed := time.Duration(n)*time.Second, time.Duration(21-n)*time.Second
			for s := first; s < removed; s += work {
				want[first] = append(want[first], s)
				total++
				last = max(last, s+work)
			}
		}
		byVU := map[uint64][]time.Duration{}
		for _, c := range h.pool.Calls() {
			if c.Outcome != executor.Completed {
				t.Errorf("iteration %+v was not completed", c)
			}
			byVU[c.VU] = append(byVU[c.VU], h.at(c.Start))
		}
		for vu, got := range byVU {
			if w := want[got[0]]; !slices.Equal(got, w) {
				t.Errorf("VU %d started iterations at %v, want %v", vu, got, w)
			}
		}
		if len(byVU) != 10 || h.count(h.m.Iterations) != total {
			t.Errorf("%d VUs ran %d iterations, want 10 and %d", len(byVU), h.count(h.m.Iterations), total)
		}
		if took != last {
			t.Errorf("Run took %v, want %v (the end of the last iteration)", took, last)
		}
	})
}

// TestRampingVUsReuseWithinRampDown ramps 2→1→2: the VU removed at 3s is
// still in its iteration when the count rises at 4s, so it is reused and
// its pending hard stop (3s + 30s) is void; it is interrupted only
// 30s after its next removal at 5s.
func TestRampingVUsReuseWithinRampDown(t *testing.T) {
	const js = `{"executor":"ramping-vus","startVUs":0,"stages":[
		{"duration":"2s","target":2},{"duration":"1s","target":1},{"duration":"1s","target":2},{"duration":"2s","target":0}]%s}`
	type span struct{ start, end time.Duration }
	cases := []struct {
		name  string
		extra string
		want  []span
		took  time.Duration
	}{
		// Steps: VU1 at 1s, VU2 at 2s; 2→1 at 3s; VU2 again at 4s;
		// 2→1 at 5s; 1→0 at 6s, the regular end (hard end 36s), a
		// ramp-down with its gracefulRampDown too, as in k6.
		{"gracefulRampDown 30s", ``, []span{{1 * time.Second, 36 * time.Second}, {2 * time.Second, 35 * time.Second}}, 36 * time.Second},
		{"gracefulRampDown 0", `,"gracefulRampDown":0`, []span{
			{1 * time.Second, 6 * time.Second}, {2 * time.Second, 3 * time.Second}, {4 * time.Second, 5 * time.Second}}, 6 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(executortest.Constant(100 * time.Second))
				_, took := h.run(t, context.Background(), mustParse(t, sprintf(js, c.extra)))
				var got []span
				for _, call := range h.pool.Calls() {
					if call.Outcome != executor.Interrupted {
						t.Errorf("iteration %+v not interrupted", call)
					}
					got = append(got, span{h.at(call.Start), h.at(call.End)})
				}
				slices.SortFunc(got, func(a, b span) int { return int(a.start - b.start) })
				if !slices.Equal(got, c.want) {
					t.Errorf("iterations ran %v, want %v", got, c.want)
				}
				if h.pool.Made() != 2 || took != c.took {
					t.Errorf("%d VUs made, took %v; want 2 VUs and %v", h.pool.Made(), took, c.took)
				}
			})
		})
	}
}

// TestRampingVUsLIFO ramps up to three VUs and down one by one with
// iterations that outlast the test: the VU started last is interrupted
// first, and the first one, dropped at the very end (6s), gracefulRampDown
// later (7s), as k6 v2.2.0 ends this script after 7.0s.
func TestRampingVUsLIFO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(executortest.Constant(time.Hour))
		// Start 1 at 0s; 2nd at 1s, 3rd at 2s; drops at 4s, 5s, 6s (end).
		cfg := mustParse(t, `{"executor":"ramping-vus","startVUs":1,"gracefulRampDown":"1s","gracefulStop":"10s",
			"stages":[{"duration":"2s","target":3},{"duration":"1s","target":3},{"duration":"3s","target":0}]}`)
		h.run(t, context.Background(), cfg)
		ends := map[time.Duration]time.Duration{}
		for _, c := range h.pool.Calls() {
			ends[h.at(c.Start)] = h.at(c.End)
		}
		want := map[time.Duration]time.Duration{0: 7 * time.Second, time.Second: 6 * time.Second, 2 * time.Second: 5 * time.Second}
		if len(ends) != len(want) {
			t.Fatalf("iterations %v, want %v", ends, want)
		}
		for s, e := range want {
			if ends[s] != e {
				t.Errorf("VU started at %v ended at %v, want %v", s, ends[s], e)
			}
		}
	})
}

// TestRampingVUsGracefulStopCapsRampDown: a ramp-down grace longer than
// the time left is cut off at the hard end, stages + gracefulStop.
func TestRampingVUsGracefulStopCapsRampDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(executortest.Constant(time.Hour))
		// VU1 at 0.5s, VU2 at 1s; 2→1 at 1.5s (grace until 61.5s); hard end 7s.
		cfg := mustParse(t, `{"executor":"ramping-vus","startVUs":0,"gracefulRampDown":"1m","gracefulStop":"5s",
			"stages":[{"duration":"1s","target":2},{"duration":"1s","target":0}]}`)
		_, took := h.run(t, context.Background(), cfg)
		if took != 7*time.Second {
			t.Errorf("Run took %v, want 7s", took)
		}
		calls := h.pool.Calls()
		if len(calls) != 2 {
			t.Fatalf("%d iterations, want 2", len(calls))
		}
		for _, c := range calls {
			if h.at(c.End) != 7*time.Second || c.Outcome != executor.Interrupted {
				t.Errorf("iteration started at %v ended at %v (%v), want interrupted at 7s", h.at(c.Start), h.at(c.End), c.Outcome)
			}
		}
	})
}

// TestRampingVUsLastDropGetsRampDown: a VU the last stage removes at its
// very end (1→0 at 2s) is interrupted gracefulRampDown after that, as k6
// does (2.2s), not let run up to gracefulStop (30s); one the stages leave
// running at their end gets gracefulStop, as in k6.
func TestRampingVUsLastDropGetsRampDown(t *testing.T) {
	for _, c := range []struct {
		stages    string
		took      time.Duration
		completed int
	}{
		{`[{"duration":"1s","target":1},{"duration":"1s","target":0}]`, 2200 * time.Millisecond, 1},
		{`[{"duration":"2s","target":1}]`, 2800 * time.Millisecond, 2},
	} {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(executortest.Constant(1400 * time.Millisecond))
			cfg := mustParse(t, `{"executor":"ramping-vus","startVUs":1,"gracefulRampDown":"200ms","stages":`+c.stages+`}`)
			_, took := h.run(t, context.Background(), cfg)
			done := 0
			for _, call := range h.pool.Calls() {
				if call.Outcome == executor.Completed {
					done++
				}
			}
			if took != c.took || done != c.completed || len(h.pool.Calls()) != 2 {
				t.Errorf("%s: Run took %v with %d of %d iterations completed, want %v with %d of 2", c.stages, took, done, len(h.pool.Calls()), c.took, c.completed)
			}
		})
	}
}

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }
