package executor_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
	"github.com/metronome-load/metronome/executor/schedule"
	"github.com/metronome-load/metronome/executor/segment"
	"github.com/metronome-load/metronome/internal/testkit/segtest"
	"github.com/metronome-load/metronome/metrics"
)

// Every built-in executor declares its model; the summary reads nothing
// else to tell open from closed.
func TestBuiltinModels(t *testing.T) {
	for js, want := range map[string]executor.Model{
		`{"executor":"constant-vus","vus":1,"duration":"1s"}`:                                                    executor.ModelClosed,
		`{"executor":"ramping-vus","stages":[{"duration":"1s","target":1}]}`:                                     executor.ModelClosed,
		`{"executor":"shared-iterations"}`:                                                                       executor.ModelClosed,
		`{"executor":"per-vu-iterations"}`:                                                                       executor.ModelClosed,
		`{"executor":"constant-arrival-rate","rate":1,"duration":"1s","preAllocatedVUs":1}`:                      executor.ModelOpen,
		`{"executor":"ramping-arrival-rate","stages":[{"duration":"1s","target":1}],"preAllocatedVUs":1}`:        executor.ModelOpen,
		`{"executor":"intended-arrival-rate","rate":1,"duration":"1s","preAllocatedVUs":1}`:                      executor.ModelOpen,
		`{"executor":"intended-arrival-rate","rate":1,"duration":"1s","preAllocatedVUs":1,"arrivals":"poisson"}`: executor.ModelOpen,
	} {
		cfg := arrivalParse(t, js)
		if got := cfg.Model(); got != want {
			t.Errorf("%s: model %v, want %v", js, got, want)
		}
		p, isArrival := cfg.(interface{ Policy() executor.Policy })
		if isArrival != (want == executor.ModelOpen) {
			t.Errorf("%s: has a policy: %v", js, isArrival)
		} else if isArrival {
			wantPolicy := executor.Drop
			if strings.Contains(js, "intended-arrival-rate") {
				wantPolicy = executor.Queue
			}
			if p.Policy() != wantPolicy {
				t.Errorf("%s: policy %v, want %v", js, p.Policy(), wantPolicy)
			}
		}
	}
	if executor.ModelOpen.String() != "open" || executor.ModelClosed.String() != "closed" ||
		executor.Queue.String() != "queue" || executor.Drop.String() != "drop" {
		t.Error("Model or Policy String is wrong")
	}
}

// ttOffsets lists the first n offsets of a timetable.
func ttOffsets(t testing.TB, tt schedule.Timetable, n int64) []time.Duration {
	t.Helper()
	w := tt.Walk()
	var out []time.Duration
	for i := range n {
		off, ok := w.Offset(i)
		if !ok {
			break
		}
		if again, ok := tt.Offset(i); !ok || again != off {
			t.Fatalf("Offset(%d) = %v, the walker said %v", i, again, off)
		}
		out = append(out, off)
	}
	return out
}

// The built-in processes are the executors' schedules: exact arithmetic
// for Constant, k6's truncated period for K6Constant.
func TestArrivalProcesses(t *testing.T) {
	exact, err := schedule.Constant{Rate: 7, TimeUnit: time.Second, Duration: time.Second}.Schedule()
	if err != nil {
		t.Fatal(err)
	}
	k6, err := schedule.K6Constant{Rate: 7, TimeUnit: time.Second, Duration: time.Second}.Schedule()
	if err != nil {
		t.Fatal(err)
	}
	// k6's truncated period fits an eighth arrival into the second, at
	// 7·142857142ns = 999.999994ms; the exact arithmetic does not.
	var wantExact, wantK6 []time.Duration
	for i := range int64(8) {
		if i < 7 {
			wantExact = append(wantExact, time.Duration(i*int64(time.Second)/7)) // ⌊i·1s/7⌋
		}
		wantK6 = append(wantK6, time.Duration(i)*142857142) // i·⌊1s/7⌋
	}
	if got := ttOffsets(t, exact, 10); !slices.Equal(got, wantExact) {
		t.Errorf("Constant offsets %v, want %v", got, wantExact)
	}
	if got := ttOffsets(t, k6, 10); !slices.Equal(got, wantK6) {
		t.Errorf("K6Constant offsets %v, want %v", got, wantK6)
	}
	if exact.Count() != 7 || exact.Duration() != time.Second {
		t.Errorf("Constant count %d, duration %v", exact.Count(), exact.Duration())
	}

	// A ramp from 0 to 10/s over 1s has area 5: arrival i (0-based) is due
	// when t²·5 = i+1, at √((i+1)/5) seconds.
	ramp, err := schedule.Ramping{TimeUnit: time.Second, Stages: []schedule.RateStage{{Duration: time.Second, Target: 10}}}.Schedule()
	if err != nil {
		t.Fatal(err)
	}
	got := ttOffsets(t, ramp, 10)
	if len(got) != 5 {
		t.Fatalf("ramp offsets %v, want 5", got)
	}
	for i, off := range got {
		want := time.Duration(float64(time.Second) * sqrt(float64(i+1)/5))
		if d := off - want; d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("ramp arrival %d at %v, want %v", i, off, want)
		}
	}
	if _, err := (schedule.Ramping{TimeUnit: time.Second}).Schedule(); err == nil {
		t.Error("a ramp without stages was accepted")
	}

	// Poisson: the same seed gives the same timetable, another seed
	// another; every offset lies in the duration.
	p1, _ := schedule.Poisson{Rate: 100, TimeUnit: time.Second, Duration: time.Second, Seed: 1}.Schedule()
	p2, _ := schedule.Poisson{Rate: 100, TimeUnit: time.Second, Duration: time.Second, Seed: 1}.Schedule()
	p3, _ := schedule.Poisson{Rate: 100, TimeUnit: time.Second, Duration: time.Second, Seed: 2}.Schedule()
	a, b, c := ttOffsets(t, p1, 1000), ttOffsets(t, p2, 1000), ttOffsets(t, p3, 1000)
	if !slices.Equal(a, b) || slices.Equal(a, c) || len(a) < 50 || len(a) > 150 || a[len(a)-1] >= time.Second {
		t.Errorf("Poisson timetables: %d and %d offsets (same seed, equal: %v), %d with another seed (equal: %v)",
			len(a), len(b), slices.Equal(a, b), len(c), slices.Equal(a, c))
	}
}

func sqrt(x float64) float64 {
	z := x
	for range 60 {
		z = (z + x/z) / 2
	}
	return z
}

// steps is a Timetable written the way an extension would: n arrivals at
// each of the given offsets.
type steps struct {
	at []time.Duration
	n  int
}

func (s steps) Offset(i int64) (time.Duration, bool) {
	if i < 0 || i >= int64(len(s.at)*s.n) {
		return 0, false
	}
	return s.at[i/int64(s.n)], true
}
func (s steps) Walk() schedule.Walker   { return s }
func (s steps) Duration() time.Duration { return s.at[len(s.at)-1] }
func (s steps) Count() int64            { return int64(len(s.at) * s.n) }

// kitConfig is an extension's open-model config on the kit.
type kitConfig struct{ executor.ArrivalConfig }

func (c *kitConfig) Description() string { return c.Describe("steps") }

// Segmented splits the config as the built-in arrival executors do.
func (c *kitConfig) Segmented(t *segment.Tuple) (executor.Config, error) {
	cp := *c
	cp.ArrivalConfig = c.ArrivalConfig.Segment(t)
	return &cp, nil
}

// unsplitConfig is an extension's config that cannot be split over
// instances.
type unsplitConfig struct{ *kitConfig }

func (unsplitConfig) Segmented(*segment.Tuple) (executor.Config, error) {
	return nil, executor.ErrNoSegments
}

func newKitConfig(t *testing.T, tt schedule.Timetable, pre, maxVUs int, p executor.Policy, grace time.Duration) *kitConfig {
	t.Helper()
	ac, err := executor.NewArrivalConfig(&executor.Scenario{Name: "kit", Executor: "steps", GracefulStop: grace, Exec: "default"}, tt, pre, maxVUs, p)
	if err != nil {
		t.Fatal(err)
	}
	return &kitConfig{ac}
}

// The kit's arrival loop with a new timetable: bursts of three arrivals
// every 100ms on two VUs of 30ms iterations. Queue: the third of each
// burst waits for a VU; Drop: it is dropped, charged up to when a VU was
// free, except the last burst's, due at the regular end: nothing starts
// after it, so it is charged up to then, 0ms.
func TestKitArrivalLoopPolicies(t *testing.T) {
	tt := steps{at: []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond}, n: 3}
	for _, tc := range []struct {
		policy                executor.Policy
		completed, dropped    int64
		lags, corrected, drop []time.Duration
	}{
		{executor.Queue, 9, 0,
			[]time.Duration{0, 0, 30, 0, 0, 30, 0, 0, 30}, []time.Duration{30, 30, 60, 30, 30, 60, 30, 30, 60}, nil},
		{executor.Drop, 6, 3,
			[]time.Duration{0, 0, 0, 0, 0, 0}, []time.Duration{30, 30, 30, 30, 30, 30}, []time.Duration{30, 30, 0}},
	} {
		t.Run(tc.policy.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := newKitConfig(t, tt, 2, 2, tc.policy, time.Second)
				if cfg.Model() != executor.ModelOpen || cfg.MaxDuration() != 1200*time.Millisecond || cfg.Schedule() != nil {
					t.Errorf("model %v, max duration %v, schedule %v", cfg.Model(), cfg.MaxDuration(), cfg.Schedule())
				}
				if d := cfg.Description(); d != "steps (maxVUs: 2, gracefulStop: 1s)" {
					t.Errorf("description %q", d)
				}
				h := newArrivalHarness(executortest.Constant(30*time.Millisecond), 2)
				ex := cfg.New(h.deps)
				if err := ex.Run(context.Background()); err != nil {
					t.Fatal(err)
				}
				msOf := func(ds []time.Duration) []float64 {
					out := make([]float64, len(ds))
					for i, d := range ds {
						out[i] = metrics.Milliseconds(d * time.Millisecond)
					}
					slices.Sort(out)
					return out
				}
				sortedOf := func(m *metrics.Metric, sel *metrics.TagSet) []float64 {
					v := slices.Clone(h.pool.Rec.Of(m, sel))
					slices.Sort(v)
					return v
				}
				if got := sortedOf(h.m.ScheduleLag, nil); !slices.Equal(got, msOf(tc.lags)) {
					t.Errorf("schedule_lag %v, want %v", got, msOf(tc.lags))
				}
				var completed []float64
				for _, s := range h.pool.Rec.Samples() {
					if _, tagged := s.Tags.Get("outcome"); s.Metric == h.m.CorrectedLatency && !tagged {
						completed = append(completed, s.Value)
					}
				}
				slices.Sort(completed)
				if !slices.Equal(completed, msOf(tc.corrected)) {
					t.Errorf("corrected_latency %v, want %v", completed, msOf(tc.corrected))
				}
				if got := sortedOf(h.m.CorrectedLatency, metrics.EmptyTags.With("outcome", "dropped")); !slices.Equal(got, msOf(tc.drop)) {
					t.Errorf("corrected_latency of dropped arrivals %v, want %v", got, msOf(tc.drop))
				}
				a := ex.(executor.Accounter).Account()
				if a.Intended != 9 || a.Completed != tc.completed || a.Dropped != tc.dropped || a.Interrupted != 0 {
					t.Errorf("account %+v", a)
				}
			})
		})
	}
}

// At the hard stop the kit interrupts what runs and drops what waits,
// charging both up to that moment.
func TestKitArrivalLoopHardStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := newKitConfig(t, steps{at: []time.Duration{0, 50 * time.Millisecond}, n: 1}, 1, 1, executor.Queue, 100*time.Millisecond)
		h := newArrivalHarness(executortest.Constant(time.Second), 1)
		start := time.Now()
		ex := cfg.New(h.deps)
		if err := ex.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el != 150*time.Millisecond {
			t.Errorf("Run returned at %v, want 150ms", el)
		}
		if got := h.pool.Rec.Of(h.m.CorrectedLatency, metrics.EmptyTags.With("outcome", "interrupted")); !slices.Equal(got, []float64{150}) {
			t.Errorf("interrupted %v, want [150]", got)
		}
		if got := h.pool.Rec.Of(h.m.CorrectedLatency, metrics.EmptyTags.With("outcome", "dropped")); !slices.Equal(got, []float64{100}) {
			t.Errorf("dropped %v, want [100]", got)
		}
	})
}

func TestNewArrivalConfigErrors(t *testing.T) {
	sc := &executor.Scenario{Name: "s", GracefulStop: time.Second}
	tt := steps{at: []time.Duration{0}, n: 1}
	for _, tc := range []struct {
		sc       *executor.Scenario
		tt       schedule.Timetable
		pre, max int
		p        executor.Policy
		want     string
	}{
		{nil, tt, 1, 1, executor.Queue, "needs a scenario and a timetable"},
		{sc, nil, 1, 1, executor.Queue, "needs a scenario and a timetable"},
		{sc, tt, 2, 1, executor.Queue, "scenarios.s: need 0 ≤ preAllocatedVUs ≤ maxVUs, got 2 and 1"},
		{sc, tt, -1, 1, executor.Drop, "scenarios.s: need 0 ≤ preAllocatedVUs ≤ maxVUs"},
		{sc, tt, 1, 1, executor.Policy(7), "scenarios.s: unknown policy 7"},
	} {
		if _, err := executor.NewArrivalConfig(tc.sc, tc.tt, tc.pre, tc.max, tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}

// The kit's closed loop: workers with VUs, iterations until the regular
// end, intended iterations and their drops, the pool's error.
func TestKitClosedLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pool := executortest.NewPool(clock.Real, executortest.Constant(40*time.Millisecond))
		deps, _ := pool.Deps(metrics.NewRegistry())
		sc := &executor.Scenario{Name: "c", GracefulStop: time.Second, Exec: "default"}
		l := executor.NewClosedLoop(deps, sc, 100*time.Millisecond, 2, executor.ExpectedInterval{}, nil)
		start := time.Now()
		if err := l.Run(context.Background(), 2, nil); err != nil {
			t.Fatal(err)
		}
		// Each VU starts at 0, 40 and 80ms: six iterations, ending at 120ms.
		if n := len(pool.Calls()); n != 6 || time.Since(start) != 120*time.Millisecond {
			t.Errorf("%d iterations, Run returned at %v; want 6 at 120ms", n, time.Since(start))
		}
		if p := l.Progress(); !p.Done || p.Completed != 6 || p.ActiveVUs != 0 || p.Total != 1100*time.Millisecond {
			t.Errorf("progress %+v", p)
		}

		// A pacing body: slots every 30ms from the start; a 40ms iteration
		// makes the VU miss one in three, charged from the slot.
		pool2 := executortest.NewPool(clock.Real, executortest.Constant(40*time.Millisecond))
		deps2, m2 := pool2.Deps(metrics.NewRegistry())
		l2 := executor.NewClosedLoop(deps2, sc, 100*time.Millisecond, 1, executor.ExpectedInterval{}, nil)
		err := l2.Run(context.Background(), 1, func(ctx context.Context, _ int, vu executor.VU) {
			begin := l2.RegularEnd().Add(-100 * time.Millisecond)
			for slot := begin; slot.Before(l2.RegularEnd()); slot = slot.Add(30 * time.Millisecond) {
				now := time.Now()
				if now.Sub(slot) >= 30*time.Millisecond || !l2.CanStart() {
					l2.DropIntended(slot, now)
					continue
				}
				time.Sleep(slot.Sub(now))
				l2.IterateAt(ctx, vu, l2.NextIndex(), slot)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		// Slots 0, 30, 60, 90: 0 runs to 40, 30 runs 10ms late to 80, 60
		// is 20ms behind (runs to 120), 90 is 30ms behind: dropped.
		if got := pool2.Rec.Of(m2.ScheduleLag, nil); !slices.Equal(got, []float64{0, 10, 20}) {
			t.Errorf("schedule_lag %v, want [0 10 20]", got)
		}
		if got := pool2.Rec.Of(m2.CorrectedLatency, metrics.EmptyTags.With("outcome", "dropped")); !slices.Equal(got, []float64{30}) {
			t.Errorf("dropped %v, want [30]", got)
		}
		if p := l2.Progress(); p.Dropped != 1 || p.Completed != 3 {
			t.Errorf("progress %+v", p)
		}

		// The pool's error ends the loop and comes back from Run.
		boom := errors.New("init failed")
		pool3 := executortest.NewPool(clock.Real, executortest.Constant(time.Millisecond))
		pool3.InitErr = boom
		deps3, _ := pool3.Deps(metrics.NewRegistry())
		l3 := executor.NewClosedLoop(deps3, sc, time.Second, 1, executor.ExpectedInterval{}, nil)
		if err := l3.Run(context.Background(), 1, nil); !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "scenarios.c: getting a VU") {
			t.Errorf("Run error %v", err)
		}
	})
}

// An extension's config is split through its own Segmented, exactly as a
// built-in's; one that returns ErrNoSegments is refused with the option
// path.
func TestSegmentedByTheConfig(t *testing.T) {
	tuple := segtest.Tuple(t, "1/2:1", "")
	cfg := newKitConfig(t, steps{at: []time.Duration{0}, n: 4}, 4, 4, executor.Queue, 0)
	half, err := executor.Segmented(cfg, tuple)
	if err != nil {
		t.Fatal(err)
	}
	if half.MaxVUs() != 2 || half.InitialVUs() != 2 || cfg.MaxVUs() != 4 {
		t.Errorf("segment: %d-%d VUs (the original %d)", half.InitialVUs(), half.MaxVUs(), cfg.MaxVUs())
	}
	if whole, err := executor.Segmented(cfg, nil); whole != executor.Config(cfg) || err != nil {
		t.Errorf("no segment: %v, %v; want the config itself", whole, err)
	}
	_, err = executor.Segmented(unsplitConfig{cfg}, tuple)
	if want := "scenarios.kit.executor: steps does not support execution segments"; err == nil || err.Error() != want || !errors.Is(err, executor.ErrNoSegments) {
		t.Errorf("a config that cannot be split: %v; want %q", err, want)
	}
}
