package replay_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/examples/extension/replay"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
	"github.com/metronome-load/metronome/executor/segment"
	"github.com/metronome-load/metronome/metrics"
)

const msec = time.Millisecond

func TestReadFormat(t *testing.T) {
	in := "# recorded 2026-11-30\n\n12ms\n0.5ms\n  0.25  \n1m\n0\n250us\n3\n"
	got, err := replay.Read("log.txt", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := replay.Offsets{0, 250 * time.Microsecond, 500 * time.Microsecond, 12 * msec, 250 * msec, 3 * time.Second, time.Minute}
	if !slices.Equal(got, want) {
		t.Errorf("offsets %v, want %v", got, want)
	}
	if got.Count() != 7 || got.Duration() != time.Minute {
		t.Errorf("count %d, duration %v", got.Count(), got.Duration())
	}
	if off, ok := got.Offset(3); !ok || off != 12*msec {
		t.Errorf("Offset(3) = %v, %v", off, ok)
	}
	if _, ok := got.Walk().Offset(7); ok {
		t.Error("Offset(7) is past the end but reported ok")
	}

	for _, tc := range []struct{ in, want string }{
		{"1ms\n2ms\n12xs\n", `log.txt:3: "12xs" is not an offset: write a duration such as 12ms or 0.5s, or seconds such as 0.012`},
		{"1ms\n-2ms\n", `log.txt:2: "-2ms" is not an offset: it must not be negative`},
		{"# only\n-0.5\n", `log.txt:2: "-0.5" is not an offset: seconds must be a number from 0 to`},
		{"NaN\n", `log.txt:1: "NaN" is not an offset`},
		{"1e300\n", `log.txt:1: "1e300" is not an offset`},
		{"# nothing\n\n", `log.txt: has no offsets`},
	} {
		_, err := replay.Read("log.txt", strings.NewReader(tc.in))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Read(%q): error %v, want it to start with %q", tc.in, err, tc.want)
		}
	}
}

// writeOffsets writes a replay file and returns its path.
func writeOffsets(t *testing.T, offsets ...time.Duration) string {
	t.Helper()
	var b strings.Builder
	for _, o := range offsets {
		b.WriteString(o.String() + "\n")
	}
	path := filepath.Join(t.TempDir(), "arrivals.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func parse(t *testing.T, options string) *replay.Config {
	t.Helper()
	typ, ok := executor.Lookup(replay.Name)
	if !ok {
		t.Fatalf("executor %q is not registered", replay.Name)
	}
	cfg, err := typ.Parse("test", []byte(`{"executor":"replay-arrivals",`+options+`}`))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.(*replay.Config)
}

// harness runs a replay scenario on fake VUs; build it inside a synctest
// bubble, where the fakes' time is virtual and every time below exact.
type harness struct {
	pool *executortest.Pool
	deps executor.Deps
	m    *metrics.Builtin
	ex   executor.Executor
	t0   time.Time
}

func newHarness(cfg executor.Config, work executortest.Work, preallocate int) *harness {
	h := &harness{pool: executortest.NewPool(clock.Real, work)}
	h.pool.Preallocate(preallocate)
	h.deps, h.m = h.pool.Deps(metrics.NewRegistry())
	h.ex = cfg.New(h.deps)
	return h
}

func (h *harness) run(t *testing.T) time.Duration {
	t.Helper()
	h.t0 = time.Now()
	if err := h.ex.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return time.Since(h.t0)
}

type start struct{ intended, start time.Duration }

func (h *harness) starts() []start {
	var s []start
	for _, c := range h.pool.Calls() {
		s = append(s, start{c.Iteration.Intended.Sub(h.t0), c.Start.Sub(h.t0)})
	}
	slices.SortFunc(s, func(a, b start) int { return int(a.intended - b.intended) })
	return s
}

func (h *harness) values(m *metrics.Metric, key, value string) []float64 {
	var sel *metrics.TagSet
	if key != "" {
		sel = metrics.EmptyTags.With(key, value)
	}
	vs := slices.Clone(h.pool.Rec.Of(m, sel))
	slices.Sort(vs)
	return vs
}

func ms(ds ...time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = metrics.Milliseconds(d)
	}
	slices.Sort(out)
	return out
}

// With the queue policy (the default) and one VU, arrivals that come due
// while it is busy wait and start in order; their wait counts from the
// recorded times.
func TestReplayQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := writeOffsets(t, 100*msec, 0, 10*msec, 20*msec)
		cfg := parse(t, `"file":`+quote(path))
		if cfg.Model() != executor.ModelOpen || cfg.Policy() != executor.Queue || cfg.MaxVUs() != 1 || cfg.InitialVUs() != 1 {
			t.Fatalf("model %v, policy %v, VUs %d-%d", cfg.Model(), cfg.Policy(), cfg.InitialVUs(), cfg.MaxVUs())
		}
		h := newHarness(cfg, executortest.Constant(30*msec), 1)
		returned := h.run(t)
		want := []start{{0, 0}, {10 * msec, 30 * msec}, {20 * msec, 60 * msec}, {100 * msec, 100 * msec}}
		if got := h.starts(); !slices.Equal(got, want) {
			t.Errorf("(intended, start) %v, want %v", got, want)
		}
		if returned != 130*msec {
			t.Errorf("Run returned at %v, want 130ms", returned)
		}
		if got := h.values(h.m.ScheduleLag, "", ""); !slices.Equal(got, ms(0, 20*msec, 40*msec, 0)) {
			t.Errorf("schedule_lag %v", got)
		}
		if got := h.values(h.m.CorrectedLatency, "", ""); !slices.Equal(got, ms(30*msec, 50*msec, 70*msec, 30*msec)) {
			t.Errorf("corrected_latency %v", got)
		}
		a := h.ex.(executor.Accounter).Account()
		if a.Intended != 4 || a.Completed != 4 || a.Dropped != 0 || a.OnTime != 2 || a.Late != 2 || a.PeakBacklog != 2 {
			t.Errorf("account %+v", a)
		}
	})
}

// With the drop policy, arrivals that find every VU busy are dropped and
// charged from their recorded time to the moment the VU became free.
func TestReplayDrop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := writeOffsets(t, 0, 10*msec, 20*msec, 100*msec)
		cfg := parse(t, `"file":`+quote(path)+`,"policy":"drop"`)
		h := newHarness(cfg, executortest.Constant(30*msec), 1)
		h.run(t)
		want := []start{{0, 0}, {100 * msec, 100 * msec}}
		if got := h.starts(); !slices.Equal(got, want) {
			t.Errorf("(intended, start) %v, want %v", got, want)
		}
		if got := h.values(h.m.CorrectedLatency, "outcome", "dropped"); !slices.Equal(got, ms(20*msec, 10*msec)) {
			t.Errorf("corrected_latency of dropped arrivals %v, want [10 20]", got)
		}
		if n := h.pool.Rec.Sum(h.m.DroppedIterations, nil); n != 2 {
			t.Errorf("dropped_iterations = %v, want 2", n)
		}
		a := h.ex.(executor.Accounter).Account()
		if a.Intended != 4 || a.Completed != 2 || a.Dropped != 2 || a.PeakBacklog != 0 {
			t.Errorf("account %+v", a)
		}
	})
}

// With the drop policy, arrivals due at the regular end (here every
// offset is 0, so the regular duration is 0) still go to the VUs that are
// idle then, and only those that find every VU busy are dropped. Before,
// the scenario closed before its idle VUs could claim anything: 3
// intended, 0 on time, 3 dropped. Those dropped at the end are charged up
// to it, as k6 gives up on them then.
func TestReplayDropAtTheEnd(t *testing.T) {
	for _, c := range []struct {
		offsets []time.Duration
		vus     int
		starts  []start
		dropped []float64
	}{
		{[]time.Duration{0, 0, 0}, 1, []start{{0, 0}}, ms(0, 0)},
		{[]time.Duration{0, 0, 0}, 3, []start{{0, 0}, {0, 0}, {0, 0}}, nil},
		{[]time.Duration{0, 5 * msec}, 1, []start{{0, 0}}, ms(0)},
		{[]time.Duration{0, 5 * msec}, 2, []start{{0, 0}, {5 * msec, 5 * msec}}, nil},
	} {
		synctest.Test(t, func(t *testing.T) {
			path := writeOffsets(t, c.offsets...)
			cfg := parse(t, fmt.Sprintf(`"file":%s,"policy":"drop","preAllocatedVUs":%d`, quote(path), c.vus))
			h := newHarness(cfg, executortest.Constant(30*msec), c.vus)
			h.run(t)
			if got := h.starts(); !slices.Equal(got, c.starts) {
				t.Errorf("%v on %d VUs: (intended, start) %v, want %v", c.offsets, c.vus, got, c.starts)
			}
			if got := h.values(h.m.CorrectedLatency, "outcome", "dropped"); !slices.Equal(got, c.dropped) {
				t.Errorf("%v on %d VUs: corrected_latency of dropped arrivals %v, want %v", c.offsets, c.vus, got, c.dropped)
			}
			a := h.ex.(executor.Accounter).Account()
			if a.Intended != int64(len(c.offsets)) || a.Completed != int64(len(c.starts)) || a.Dropped != int64(len(c.dropped)) {
				t.Errorf("%v on %d VUs: account %+v", c.offsets, c.vus, a)
			}
		})
	}
}

// At the hard stop the running iteration is interrupted and the backlog
// dropped, both charged up to then from their recorded times.
func TestReplayHardStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := writeOffsets(t, 0, 50*msec, 100*msec)
		cfg := parse(t, `"file":`+quote(path)+`,"gracefulStop":"200ms"`)
		h := newHarness(cfg, executortest.Constant(time.Second), 1)
		if returned := h.run(t); returned != 300*msec {
			t.Errorf("Run returned at %v, want 300ms (the last offset plus gracefulStop)", returned)
		}
		if got := h.values(h.m.CorrectedLatency, "outcome", "interrupted"); !slices.Equal(got, ms(300*msec)) {
			t.Errorf("corrected_latency of the interrupted iteration %v, want [300]", got)
		}
		if got := h.values(h.m.CorrectedLatency, "outcome", "dropped"); !slices.Equal(got, ms(250*msec, 200*msec)) {
			t.Errorf("corrected_latency of the backlog %v, want [200 250]", got)
		}
		a := h.ex.(executor.Accounter).Account()
		if a.Intended != 3 || a.Interrupted != 1 || a.Dropped != 2 || a.Completed != 0 {
			t.Errorf("account %+v", a)
		}
	})
}

// More VUs are initialised, up to maxVUs, while arrivals wait.
func TestReplayGrowsVUs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := writeOffsets(t, 0, 0, 0, 0)
		cfg := parse(t, `"file":`+quote(path)+`,"preAllocatedVUs":1,"maxVUs":3`)
		h := newHarness(cfg, executortest.Constant(100*msec), 1)
		h.pool.InitDelay = 10 * msec
		h.run(t)
		if _, maxOut := h.pool.Out(); maxOut != 3 {
			t.Errorf("%d VUs at once, want maxVUs 3", maxOut)
		}
		a := h.ex.(executor.Accounter).Account()
		if a.Completed != 4 || a.Dropped != 0 {
			t.Errorf("account %+v", a)
		}
	})
}

func TestReplayOptions(t *testing.T) {
	path := writeOffsets(t, 0, 1500*msec)
	c := parse(t, `"file":`+quote(path)+`,"preAllocatedVUs":2,"maxVUs":5,"exec":"browse"`)
	if d, want := c.Description(), "replaying 2 arrivals from "+path+" over 1.5s, queue (maxVUs: 2-5, exec: browse, gracefulStop: 30s)"; d != want {
		t.Errorf("description %q, want %q", d, want)
	}
	if c.MaxDuration() != 1500*msec+executor.DefaultGracefulStop {
		t.Errorf("MaxDuration %v", c.MaxDuration())
	}
	seg, err := segment.Parse("0:1/2")
	if err != nil {
		t.Fatal(err)
	}
	tuple, err := segment.NewTuple(seg, nil)
	if err != nil {
		t.Fatal(err)
	}
	half, err := executor.Segmented(c, tuple)
	if err != nil || half.MaxVUs() != 3 || c.MaxVUs() != 5 {
		t.Errorf("segmented: %v, maxVUs %d (the original %d)", err, half.MaxVUs(), c.MaxVUs())
	}

	bad := filepath.Join(t.TempDir(), "bad.txt")
	if err := os.WriteFile(bad, []byte("0\n5ms\nsoon\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	typ, _ := executor.Lookup(replay.Name)
	for _, tc := range []struct{ options, want string }{
		{`"preAllocatedVUs":1`, `scenarios.s.file: required`},
		{`"file":` + quote(bad), `scenarios.s.file: ` + bad + `:3: "soon" is not an offset`},
		{`"file":"/nonexistent/arrivals.txt"`, `scenarios.s.file: cannot open /nonexistent/arrivals.txt: no such file or directory`},
		{`"file":` + quote(path) + `,"policy":"wait"`, `scenarios.s.policy: must be "queue" or "drop", got "wait"`},
		{`"file":` + quote(path) + `,"preAllocatedVUs":3,"maxVUs":2`, `scenarios.s.maxVUs: must be between 3`},
		{`"file":` + quote(path) + `,"preAllocatedVUs":0,"maxVUs":0`, `scenarios.s.maxVUs: must be between 1`},
		{`"file":` + quote(path) + `,"rate":10`, `scenarios.s.rate: unknown option`},
	} {
		_, err := typ.Parse("s", []byte(`{"executor":"replay-arrivals",`+tc.options+`}`))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("options {%s}: error %v, want it to start with %q", tc.options, err, tc.want)
		}
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }
