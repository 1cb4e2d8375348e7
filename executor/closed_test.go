package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
	"github.com/metronome-load/metronome/metrics"
)

// harness wires an executor to fake VUs. Build it inside a synctest
// bubble: t0 is the virtual moment the scenario starts.
type harness struct {
	t0   time.Time
	pool *executortest.Pool
	deps executor.Deps
	m    *metrics.Builtin
	// fill is the back-fill account the last run's executor gave when
	// asked after its Run returned.
	fill executor.BackFillAccount
}

func newHarness(work executortest.Work) *harness {
	p := executortest.NewPool(clock.Real, work)
	deps, m := p.Deps(metrics.NewRegistry())
	return &harness{t0: time.Now(), pool: p, deps: deps, m: m}
}

// run runs cfg to its end with ctx and checks that every VU went back.
// It returns the executor and how long the run took in virtual time.
func (h *harness) run(t *testing.T, ctx context.Context, cfg executor.Config) (executor.Executor, time.Duration) {
	t.Helper()
	ex := cfg.New(h.deps)
	if err := ex.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	took := time.Since(h.t0)
	if b := executor.Ask(cfg, ex).BackFill; b != nil {
		h.fill = b.BackFillAccount()
	}
	if out, _ := h.pool.Out(); out != 0 {
		t.Errorf("%d VUs still out of the pool after Run", out)
	}
	if n := h.deps.State.VUsActive.Load(); n != 0 {
		t.Errorf("State.VUsActive = %d after Run, want 0", n)
	}
	p := ex.Progress()
	if !p.Done || p.ActiveVUs != 0 || p.Elapsed != took {
		t.Errorf("final progress %+v, want done, 0 active VUs, elapsed %v", p, took)
	}
	return ex, took
}

func (h *harness) at(tm time.Time) time.Duration { return tm.Sub(h.t0) }

// count returns the number of samples of m.
func (h *harness) count(m *metrics.Metric) int { return len(h.pool.Rec.Of(m, nil)) }

func mustParse(t testing.TB, js string) executor.Config {
	t.Helper()
	cfg, err := parse(js)
	if err != nil {
		t.Fatalf("parse %s: %v", js, err)
	}
	return cfg
}

func parse(js string) (executor.Config, error) {
	var head struct {
		Executor string `json:"executor"`
	}
	if err := json.Unmarshal([]byte(js), &head); err != nil {
		return nil, err
	}
	typ, ok := executor.Lookup(head.Executor)
	if !ok {
		panic("executor not registered: " + head.Executor)
	}
	return typ.Parse("test", json.RawMessage(js))
}

// checkCalls checks that the iterations ran had unique global indices
// 0…n−1, with LocalIndex equal to Index and the scenario of cfg.
func checkCalls(t *testing.T, calls []executortest.Call, cfg executor.Config) {
	t.Helper()
	seen := make([]bool, len(calls))
	for _, c := range calls {
		it := c.Iteration
		if it.Index < 0 || it.Index >= int64(len(calls)) || seen[it.Index] {
			t.Fatalf("iteration index %d repeated or out of 0…%d", it.Index, len(calls)-1)
		}
		seen[it.Index] = true
		if it.LocalIndex != it.Index || it.Scenario != cfg.Base() || !it.Intended.IsZero() {
			t.Fatalf("iteration %+v: want LocalIndex = Index, the config's scenario, no intended time", it)
		}
	}
}

func TestRegisteredAndDescribed(t *testing.T) {
	cases := []struct {
		js        string
		desc      string
		maxVUs    int
		initial   int
		maxDurati time.Duration
	}{
		{`{"executor":"constant-vus","vus":10,"duration":"30s"}`,
			"10 looping VUs for 30s (gracefulStop: 30s)", 10, 10, 60 * time.Second},
		{`{"executor":"shared-iterations","vus":10,"iterations":100}`,
			"100 iterations shared among 10 VUs (maxDuration: 10m0s, gracefulStop: 30s)", 10, 10, 10*time.Minute + 30*time.Second},
		{`{"executor":"per-vu-iterations","vus":4,"iterations":5,"maxDuration":"1m","gracefulStop":0}`,
			"5 iterations for each of 4 VUs (maxDuration: 1m0s)", 4, 4, time.Minute},
		{`{"executor":"ramping-vus","stages":[{"duration":"10s","target":10},{"duration":"10s","target":0}]}`,
			"Up to 10 looping VUs for 20s over 2 stages (gracefulRampDown: 30s, gracefulStop: 30s)", 10, 1, 50 * time.Second},
		{`{"executor":"ramping-vus","startVUs":0,"stages":[{"duration":"1m","target":3}],"gracefulRampDown":"5s","exec":"api","startTime":"10s","expectedInterval":"12.5ms","gracefulStop":"2s"}`,
			"Up to 3 looping VUs for 1m0s over 1 stages (gracefulRampDown: 5s, exec: api, startTime: 10s, expectedInterval: 12.5ms, gracefulStop: 2s)", 3, 0, 62 * time.Second},
		{`{"executor":"shared-iterations"}`,
			"1 iterations shared among 1 VUs (maxDuration: 10m0s, gracefulStop: 30s)", 1, 1, 10*time.Minute + 30*time.Second},
	}
	for _, c := range cases {
		cfg := mustParse(t, c.js)
		if got := cfg.Description(); got != c.desc {
			t.Errorf("%s: description\n got %q\nwant %q", c.js, got, c.desc)
		}
		if cfg.MaxVUs() != c.maxVUs || cfg.InitialVUs() != c.initial || cfg.MaxDuration() != c.maxDurati {
			t.Errorf("%s: MaxVUs %d InitialVUs %d MaxDuration %v, want %d %d %v", c.js,
				cfg.MaxVUs(), cfg.InitialVUs(), cfg.MaxDuration(), c.maxVUs, c.initial, c.maxDurati)
		}
		if cfg.Base().Name != "test" {
			t.Errorf("%s: scenario name %q", c.js, cfg.Base().Name)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	cases := []struct {
		js, want string
	}{
		{`{"executor":"constant-vus","vus":2}`, "scenarios.test.duration: required"},
		{`{"executor":"constant-vus","vus":-1,"duration":"10s"}`, "scenarios.test.vus: must be greater than 0"},
		{`{"executor":"constant-vus","vus":0,"duration":"10s"}`, "scenarios.test.vus: must be greater than 0"},
		{`{"executor":"constant-vus","duration":"500ms"}`, "scenarios.test.duration: must be at least 1s"},
		{`{"executor":"constant-vus","duration":"ten seconds"}`, "scenarios.test.duration: invalid duration"},
		{`{"executor":"constant-vus","duration":"10s","vus":"ten"}`, "scenarios.test.vus: expected"},
		{`{"executor":"constant-vus","duration":"10s","vus":1.5}`, "scenarios.test.vus: expected"},
		{`{"executor":"constant-vus","duration":"10s","iterations":3}`, "scenarios.test.iterations: unknown option"},
		{`{"executor":"constant-vus","duration":"10s","expectedInterval":"-1s"}`, "scenarios.test.expectedInterval: must not be negative"},
		{`{"executor":"constant-vus","duration":"10s","expectedInterval":"soon"}`, `scenarios.test.expectedInterval: must be "auto", "off" or a duration such as "10ms", got "soon"`},
		{`{"executor":"constant-vus","duration":"10s","expectedInterval":true}`, `scenarios.test.expectedInterval: must be "auto", "off" or a duration such as "10ms", got true`},
		{`{"executor":"constant-vus","duration":"10s","gracefulStop":"-1s"}`, "scenarios.test.gracefulStop: must not be negative"},
		{`{"executor":"constant-vus","duration":"10s","gracefulStop":"x"}`, "scenarios.test.gracefulStop: invalid duration"},
		{`{"executor":"shared-iterations","vus":10,"iterations":5}`, "scenarios.test.iterations: must be at least the number of VUs (10)"},
		{`{"executor":"shared-iterations","vus":-3}`, "scenarios.test.vus: must be greater than 0"},
		{`{"executor":"shared-iterations","maxDuration":"0s"}`, "scenarios.test.maxDuration: must be at least 1s"},
		{`{"executor":"shared-iterations","duration":"10s"}`, "scenarios.test.duration: unknown option"},
		{`{"executor":"per-vu-iterations","iterations":0}`, "scenarios.test.iterations: must be greater than 0"},
		{`{"executor":"per-vu-iterations","maxDuration":true}`, "scenarios.test.maxDuration:"},
		{`{"executor":"per-vu-iterations","vus":4611686018427387904,"iterations":3}`, "scenarios.test.iterations: "},
		{`{"executor":"ramping-vus"}`, "scenarios.test.stages: required"},
		{`{"executor":"ramping-vus","stages":[]}`, "scenarios.test.stages: required"},
		{`{"executor":"ramping-vus","startVUs":-1,"stages":[{"duration":"1s","target":1}]}`, "scenarios.test.startVUs: must be between 0 and"},
		{`{"executor":"ramping-vus","startVUs":0,"stages":[{"duration":"1s","target":0}]}`, "scenarios.test.stages: startVUs or one stage's target must be greater than 0"},
		{`{"executor":"ramping-vus","stages":[{"duration":"1s","target":1},{"target":2}]}`, "scenarios.test.stages[1].duration: required"},
		{`{"executor":"ramping-vus","stages":[{"duration":"1s"}]}`, "scenarios.test.stages[0].target: required"},
		{`{"executor":"ramping-vus","stages":[{"duration":"1s","target":-2}]}`, "scenarios.test.stages[0].target: must be between 0 and"},
		{`{"executor":"ramping-vus","stages":[{"duration":"1s","target":100000001}]}`, "scenarios.test.stages[0].target: must be between 0 and"},
		{`{"executor":"ramping-vus","stages":[{"duration":"-1s","target":2}]}`, "scenarios.test.stages[0].duration: must not be negative"},
		{`{"executor":"ramping-vus","stages":[{"duration":"1x","target":2}]}`, "scenarios.test.stages[0].duration: invalid duration"},
		{`{"executor":"ramping-vus","stages":[{"duration":"1s","target":"x"}]}`, `scenarios.test.stages[0].target: expected a whole number, got "x"`},
		{`{"executor":"ramping-vus","stages":[{"duration":"1s","target":2,"rate":3}]}`, "scenarios.test.stages[0].rate: unknown option"},
		{`{"executor":"ramping-vus","stages":["1s:2"]}`, `scenarios.test.stages[0]: expected an object, got "1s:2"`},
		{`{"executor":"ramping-vus","stages":"1s:2"}`, `scenarios.test.stages: expected an array of {duration, target}, got "1s:2"`},
		{`{"executor":"ramping-vus","stages":[{"duration":"1s","target":2}],"gracefulRampDown":"-3s"}`, "scenarios.test.gracefulRampDown: must not be negative"},
		{`{"executor":"ramping-vus","stages":[{"duration":"1s","target":2}],"vus":3}`, "scenarios.test.vus: unknown option"},
		{`{"executor":"ramping-vus","stages":[{"duration":"9223372036s","target":2},{"duration":"9223372036s","target":2}]}`, "scenarios.test.stages: the stages' total duration is too long"},
	}
	for _, c := range cases {
		cfg, err := parse(c.js)
		if err == nil {
			t.Errorf("%s: parsed as %q, want an error", c.js, cfg.Description())
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got error %q\nwant it to contain %q", c.js, err, c.want)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %q is not one line", c.js, err)
		}
	}
}

func TestDefaults(t *testing.T) {
	si := mustParse(t, `{"executor":"shared-iterations"}`).(*executor.SharedIterationsConfig)
	if si.VUs != 1 || si.Iterations != 1 || si.Limit != 10*time.Minute || si.ExpectedInterval != (executor.ExpectedInterval{}) {
		t.Errorf("shared-iterations defaults %+v", si)
	}
	pv := mustParse(t, `{"executor":"per-vu-iterations","maxDuration":2000}`).(*executor.PerVUIterationsConfig)
	if pv.VUs != 1 || pv.Iterations != 1 || pv.Limit != 2*time.Second {
		t.Errorf("per-vu-iterations defaults %+v (maxDuration 2000 is milliseconds)", pv)
	}
	cv := mustParse(t, `{"executor":"constant-vus","duration":"1m","expectedInterval":"10ms"}`).(*executor.ConstantVUsConfig)
	if cv.VUs != 1 || cv.Duration != time.Minute || cv.ExpectedInterval != (executor.ExpectedInterval{Mode: executor.IntervalFixed, Fixed: 10 * time.Millisecond}) ||
		cv.Scenario.GracefulStop != executor.DefaultGracefulStop || cv.Scenario.Exec != "default" {
		t.Errorf("constant-vus defaults %+v %+v", cv, cv.Scenario)
	}
	rv := mustParse(t, `{"executor":"ramping-vus","stages":[{"duration":"5s","target":3},{"duration":0,"target":7}]}`).(*executor.RampingVUsConfig)
	want := []executor.VUStage{{5 * time.Second, 3}, {0, 7}}
	if rv.StartVUs != 1 || rv.GracefulRampDown != 30*time.Second || len(rv.Stages) != 2 || rv.Stages[0] != want[0] || rv.Stages[1] != want[1] {
		t.Errorf("ramping-vus defaults %+v", rv)
	}
}

func TestExpectedIntervalBackFill(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const d, interval = 500 * time.Millisecond, 12500 * time.Microsecond
		h := newHarness(executortest.Constant(d))
		cfg := mustParse(t, `{"executor":"shared-iterations","expectedInterval":"12.5ms"}`)
		h.run(t, context.Background(), cfg)
		measured := h.pool.Rec.Of(h.m.CorrectedLatency, nil)
		filled := h.pool.Rec.Of(h.m.CorrectedLatency, metrics.EmptyTags.With("backfilled", "true"))
		if len(measured) != 40 || len(filled) != 39 {
			t.Fatalf("got %d corrected_latency samples, %d back-filled; want 40 and 39", len(measured), len(filled))
		}
		if measured[0] != 500 {
			t.Errorf("first corrected_latency %v, want the measured 500", measured[0])
		}
		for k, v := range filled {
			if want := metrics.Milliseconds(d - time.Duration(k+1)*interval); v != want {
				t.Errorf("back-filled sample %d = %v, want %v", k, v, want)
			}
		}
		if filled[38] != 12.5 {
			t.Errorf("last back-filled sample %v, want 12.5", filled[38])
		}
	})
}

func TestNoCorrectedLatencyWithoutExpectedInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(executortest.Constant(700 * time.Millisecond))
		h.run(t, context.Background(), mustParse(t, `{"executor":"constant-vus","vus":2,"duration":"2s"}`))
		if n := h.count(h.m.CorrectedLatency); n != 0 {
			t.Errorf("%d corrected_latency samples without expectedInterval", n)
		}
		// Each VU starts at 0, 0.7s and 1.4s.
		if n := h.count(h.m.Iterations); n != 6 {
			t.Errorf("%d iterations, want 6", n)
		}
	})
}

// TestAbort cancels the run context mid-iteration: every executor must
// interrupt the running iterations at once and give its VUs back.
func TestAbort(t *testing.T) {
	cases := []struct {
		js          string
		completed   int   // iterations ended before the abort at 5s
		interrupted int64 // iterations running at 5s
		dropped     float64
	}{
		{`{"executor":"constant-vus","vus":3,"duration":"1m"}`, 3, 3, 0},
		{`{"executor":"shared-iterations","vus":3,"iterations":20}`, 3, 3, 14},
		{`{"executor":"per-vu-iterations","vus":3,"iterations":4}`, 3, 3, 3 * 2},
		{`{"executor":"ramping-vus","startVUs":3,"stages":[{"duration":"1m","target":3}]}`, 3, 3, 0},
	}
	for _, c := range cases {
		t.Run(strings.Split(c.js, `"`)[3], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(executortest.Constant(4 * time.Second))
				ctx, cancel := context.WithCancel(context.Background())
				go func() {
					time.Sleep(5 * time.Second)
					cancel()
				}()
				ex, took := h.run(t, ctx, mustParse(t, c.js))
				if took != 5*time.Second {
					t.Errorf("Run returned after %v, want 5s", took)
				}
				p := ex.Progress()
				if h.count(h.m.Iterations) != c.completed || p.Completed != int64(c.completed) || p.Interrupted != c.interrupted {
					t.Errorf("%d iterations samples, progress %+v; want %d completed, %d interrupted",
						h.count(h.m.Iterations), p, c.completed, c.interrupted)
				}
				if got := h.deps.State.IterationsInterrupted.Load(); got != c.interrupted {
					t.Errorf("State.IterationsInterrupted = %d, want %d", got, c.interrupted)
				}
				for _, call := range h.pool.Calls() {
					if call.Outcome == executor.Interrupted && h.at(call.End) != 5*time.Second {
						t.Errorf("iteration interrupted at %v, want 5s", h.at(call.End))
					}
				}
				if got := h.pool.Rec.Sum(h.m.DroppedIterations, nil); got != c.dropped {
					t.Errorf("dropped_iterations %v, want %v", got, c.dropped)
				}
			})
		})
	}
}

// TestGracefulStop checks the window after the regular end: iterations
// running then may finish until gracefulStop, then they are interrupted
// and emit no iteration samples.
func TestGracefulStop(t *testing.T) {
	cases := []struct {
		name         string
		js           string
		work         time.Duration
		end          time.Duration // when Run returns
		completed    int
		interrupted  int64
		interruptAt  time.Duration
		droppedTotal float64
	}{
		{"constant-vus finishes in the window", `{"executor":"constant-vus","duration":"1s","gracefulStop":"2s"}`,
			1500 * time.Millisecond, 1500 * time.Millisecond, 1, 0, 0, 0},
		{"constant-vus interrupted", `{"executor":"constant-vus","duration":"1s","gracefulStop":"2s"}`,
			5 * time.Second, 3 * time.Second, 0, 1, 3 * time.Second, 0},
		{"constant-vus gracefulStop 0", `{"executor":"constant-vus","vus":2,"duration":"1s","gracefulStop":0}`,
			5 * time.Second, time.Second, 0, 2, time.Second, 0},
		{"shared-iterations interrupted", `{"executor":"shared-iterations","vus":2,"iterations":10,"maxDuration":"3s","gracefulStop":"500ms"}`,
			2 * time.Second, 3500 * time.Millisecond, 2, 2, 3500 * time.Millisecond, 6},
		{"shared-iterations finishes in the window", `{"executor":"shared-iterations","vus":2,"iterations":10,"maxDuration":"3s","gracefulStop":"1500ms"}`,
			2 * time.Second, 4 * time.Second, 4, 0, 0, 6},
		{"per-vu-iterations interrupted", `{"executor":"per-vu-iterations","vus":2,"iterations":5,"maxDuration":"3s","gracefulStop":"500ms"}`,
			2 * time.Second, 3500 * time.Millisecond, 2, 2, 3500 * time.Millisecond, 2 * 3},
		{"ramping-vus interrupted", `{"executor":"ramping-vus","startVUs":2,"stages":[{"duration":"3s","target":2}],"gracefulStop":"500ms"}`,
			2 * time.Second, 3500 * time.Millisecond, 2, 2, 3500 * time.Millisecond, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(executortest.Constant(c.work))
				ex, took := h.run(t, context.Background(), mustParse(t, c.js))
				if took != c.end {
					t.Errorf("Run returned after %v, want %v", took, c.end)
				}
				p := ex.Progress()
				if h.count(h.m.Iterations) != c.completed || h.count(h.m.IterationDuration) != c.completed || p.Interrupted != c.interrupted {
					t.Errorf("%d iterations samples, progress %+v; want %d completed, %d interrupted",
						h.count(h.m.Iterations), p, c.completed, c.interrupted)
				}
				for _, call := range h.pool.Calls() {
					if call.Outcome == executor.Interrupted && h.at(call.End) != c.interruptAt {
						t.Errorf("iteration interrupted at %v, want %v", h.at(call.End), c.interruptAt)
					}
				}
				if got := h.pool.Rec.Sum(h.m.DroppedIterations, nil); got != c.droppedTotal {
					t.Errorf("dropped_iterations %v, want %v", got, c.droppedTotal)
				}
			})
		})
	}
}

// TestProgressFromOtherGoroutines polls Progress while a run goes on; the
// race detector checks it is safe, and the values must be sane.
func TestProgressFromOtherGoroutines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(executortest.Constant(300 * time.Millisecond))
		ex := mustParse(t, `{"executor":"constant-vus","vus":4,"duration":"3s"}`).New(h.deps)
		var wg sync.WaitGroup
		done := make(chan struct{})
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				case <-time.After(100 * time.Millisecond):
				}
				p := ex.Progress()
				if p.ActiveVUs > 4 || p.MaxVUs != 4 || p.Total != 33*time.Second || p.Elapsed < 0 {
					t.Errorf("progress %+v", p)
				}
			}
		})
		if err := ex.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		close(done)
		wg.Wait()
		if p := ex.Progress(); p.Completed != 4*10 {
			t.Errorf("completed %d, want 40", p.Completed)
		}
	})
}

// TestVUInitFailure: a VU that cannot be initialised fails the scenario
// with an error naming it; the other VUs are interrupted and given back.
func TestVUInitFailure(t *testing.T) {
	for _, js := range []string{
		`{"executor":"constant-vus","vus":2,"duration":"1m"}`,
		`{"executor":"shared-iterations","vus":2,"iterations":4}`,
		`{"executor":"per-vu-iterations","vus":2,"iterations":4}`,
		`{"executor":"ramping-vus","startVUs":2,"stages":[{"duration":"1m","target":2}]}`,
	} {
		t.Run(strings.Split(js, `"`)[3], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(executortest.Constant(10 * time.Second))
				h.pool.Preallocate(1)
				h.pool.InitDelay = 2 * time.Second
				h.pool.InitErr = errors.New("init context threw")
				ex := mustParse(t, js).New(h.deps)
				err := ex.Run(context.Background())
				if err == nil || !errors.Is(err, h.pool.InitErr) || !strings.HasPrefix(err.Error(), "scenarios.test: ") {
					t.Fatalf("Run error %v, want the init error with the scenario path", err)
				}
				if took := time.Since(h.t0); took != 2*time.Second {
					t.Errorf("Run returned after %v, want 2s", took)
				}
				calls := h.pool.Calls()
				if len(calls) != 1 || calls[0].Outcome != executor.Interrupted || h.at(calls[0].End) != 2*time.Second {
					t.Errorf("iterations %+v, want one interrupted at 2s", calls)
				}
				if out, _ := h.pool.Out(); out != 0 || h.deps.State.VUsActive.Load() != 0 || ex.Progress().ActiveVUs != 0 {
					t.Errorf("%d VUs still out", out)
				}
			})
		})
	}
}

// A stage target written as a numeric string or an integral float is read
// as the stages option reads it (one stage parser); real k6 v2.2.0 runs
// such a ramping-vus scenario with vus_max 2.
func TestRampingVUsStageTargetAsText(t *testing.T) {
	for _, target := range []string{`"2"`, `2.0`} {
		c := mustParse(t, `{"executor":"ramping-vus","startVUs":0,"stages":[{"duration":"1s","target":`+target+`}]}`).(*executor.RampingVUsConfig)
		if len(c.Stages) != 1 || c.Stages[0].Target != 2 || c.Stages[0].Duration != time.Second || c.MaxVUs() != 2 {
			t.Errorf("target %s: stages %+v, MaxVUs %d", target, c.Stages, c.MaxVUs())
		}
	}
}
