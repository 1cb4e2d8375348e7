package counter_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/examples/extension/counter"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
	"github.com/metronome-load/metronome/metrics"
)

// pacing is one pacing-vus scenario wired to fake VUs. Build it inside a
// synctest bubble: the fakes sleep on the standard clock, which is virtual
// there, so every time below is exact.
type pacing struct {
	pool *executortest.Pool
	deps executor.Deps
	m    *metrics.Builtin
	cfg  executor.Config
	ex   executor.Executor
	t0   time.Time

	mu   sync.Mutex
	logs []string
}

func newPacing(t *testing.T, options string, work executortest.Work, setup func(*executortest.Pool)) *pacing {
	t.Helper()
	typ, ok := executor.Lookup(counter.PacingVUsName)
	if !ok {
		t.Fatalf("executor %q is not registered", counter.PacingVUsName)
	}
	cfg, err := typ.Parse("test", []byte(options))
	if err != nil {
		t.Fatal(err)
	}
	p := &pacing{pool: executortest.NewPool(clock.Real, work), cfg: cfg}
	if setup != nil {
		setup(p.pool)
	}
	p.deps, p.m = p.pool.Deps(metrics.NewRegistry())
	p.deps.Logf = func(format string, args ...any) {
		p.mu.Lock()
		p.logs = append(p.logs, fmt.Sprintf(format, args...))
		p.mu.Unlock()
	}
	p.ex = cfg.New(p.deps)
	return p
}

// run runs the scenario to its end and returns Run's error and when, after
// the start, Run returned.
func (p *pacing) run(ctx context.Context) (error, time.Duration) {
	p.t0 = time.Now()
	err := p.ex.Run(ctx)
	return err, time.Since(p.t0)
}

func (p *pacing) at(t time.Time) time.Duration { return t.Sub(p.t0) }

// values are the values of metric m whose tags contain key=value (any tags
// when key is empty), in recording order.
func (p *pacing) values(m *metrics.Metric, key, value string) []float64 {
	var sel *metrics.TagSet
	if key != "" {
		sel = metrics.EmptyTags.With(key, value)
	}
	return p.pool.Rec.Of(m, sel)
}

// completedValues are the values of m without an outcome tag.
func (p *pacing) completedValues(m *metrics.Metric) []float64 {
	var vs []float64
	for _, s := range p.pool.Rec.Samples() {
		if _, tagged := s.Tags.Get("outcome"); s.Metric == m && !tagged {
			vs = append(vs, s.Value)
		}
	}
	return vs
}

func ms(ds ...time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = metrics.Milliseconds(d)
	}
	return out
}

func sorted(vs []float64) []float64 {
	vs = slices.Clone(vs)
	slices.Sort(vs)
	return vs
}

const msec = time.Millisecond

// With iterations shorter than the interval, every slot runs on time: VU v
// of n starts at v·interval/n + k·interval.
func TestPacingVUsOnTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			vus      = 2
			interval = 100 * msec
			dur      = time.Second
			work     = 30 * msec
		)
		p := newPacing(t, `{"executor":"pacing-vus","vus":2,"interval":"100ms","duration":"1s"}`, executortest.Constant(work), nil)
		err, returned := p.run(context.Background())
		if err != nil {
			t.Fatal(err)
		}

		var want []time.Duration // every slot, both VUs
		for v := range vus {
			for at := time.Duration(v) * interval / vus; at < dur; at += interval {
				want = append(want, at)
			}
		}
		slices.Sort(want)
		calls := p.pool.Calls()
		var got []time.Duration
		perVU := map[uint64][]time.Duration{}
		for _, c := range calls {
			got = append(got, p.at(c.Iteration.Intended))
			perVU[c.VU] = append(perVU[c.VU], p.at(c.Start))
			if !c.Start.Equal(c.Iteration.Intended) || c.End.Sub(c.Start) != work || c.Outcome != executor.Completed {
				t.Errorf("iteration %d: intended %v, ran %v to %v (%v)", c.Iteration.Index,
					p.at(c.Iteration.Intended), p.at(c.Start), p.at(c.End), c.Outcome)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("intended starts %v, want %v", got, want)
		}
		if len(perVU) != vus {
			t.Errorf("%d VUs ran iterations, want %d", len(perVU), vus)
		}
		for vu, starts := range perVU {
			for k := 1; k < len(starts); k++ {
				if d := starts[k] - starts[k-1]; d != interval {
					t.Errorf("VU %d: iterations %d and %d started %v apart, want %v", vu, k-1, k, d, interval)
				}
			}
		}
		// The last slot is VU 1's at 950ms; Run returns when it ends.
		if last := want[len(want)-1] + work; returned != last {
			t.Errorf("Run returned at %v, want %v", returned, last)
		}

		n := len(want)
		if got := p.pool.Rec.Sum(p.m.Iterations, nil); got != float64(n) {
			t.Errorf("iterations = %v, want %d", got, n)
		}
		for _, v := range p.values(p.m.ScheduleLag, "", "") {
			if v != 0 {
				t.Fatalf("schedule_lag %v, want 0 for every iteration", v)
			}
		}
		if cl := p.values(p.m.CorrectedLatency, "", ""); len(cl) != n || slices.Max(cl) != ms(work)[0] || slices.Min(cl) != ms(work)[0] {
			t.Errorf("corrected_latency %v, want %d samples of %v", cl, n, ms(work)[0])
		}
		if d := p.values(p.m.DroppedIterations, "", ""); len(d) != 0 {
			t.Errorf("dropped_iterations %v, want none", d)
		}
		if _, maxOut := p.pool.Out(); maxOut != vus || p.pool.Made() != vus {
			t.Errorf("%d VUs made, %d out at once; want %d", p.pool.Made(), maxOut, vus)
		}
		pr := p.ex.Progress()
		if !pr.Done || pr.Completed != int64(n) || pr.Dropped != 0 || pr.ActiveVUs != 0 || pr.Elapsed != returned || pr.MaxVUs != vus {
			t.Errorf("final progress %+v", pr)
		}
		if len(p.logs) != 0 {
			t.Errorf("warnings %q, want none", p.logs)
		}
	})
}

func TestPacingVUsProgressWhileRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPacing(t, `{"executor":"pacing-vus","vus":2,"interval":"100ms","duration":"1s","gracefulStop":"2s"}`,
			executortest.Constant(30*msec), nil)
		errc := make(chan error, 1)
		go func() { errc <- p.ex.Run(context.Background()) }()
		time.Sleep(475 * msec)
		synctest.Wait()
		// Finished by 475ms: VU 0's slots 0…400 (the one at 400 ended at
		// 430ms) and VU 1's 50…350 (the one at 450 is running).
		pr := p.ex.Progress()
		if pr.Elapsed != 475*msec || pr.Total != 3*time.Second || pr.ActiveVUs != 2 || pr.Completed != 9 || pr.Done {
			t.Errorf("progress at 475ms %+v", pr)
		}
		if n := p.deps.State.VUsActive.Load(); n != 2 {
			t.Errorf("State.VUsActive = %d, want 2", n)
		}
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		if n := p.deps.State.VUsActive.Load(); n != 0 {
			t.Errorf("State.VUsActive after the run = %d, want 0", n)
		}
	})
}

// An iteration that overruns its interval delays the next one, which
// starts as soon as the VU is free, for the latest slot due; the slots
// skipped are dropped and charged from their slot to that moment.
func TestPacingVUsOverrun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPacing(t, `{"executor":"pacing-vus","interval":"100ms","duration":"1s"}`, executortest.Constant(250*msec), nil)
		err, returned := p.run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// Slots every 100ms from 0 to 900. The iteration at 0 ends at
		// 250: slot 100 is dropped, 200 runs 50ms late. It ends at 500,
		// exactly at slot 500, which runs on time; 300 and 400 are
		// dropped. That one ends at 750: 600 dropped, 700 runs 50ms late
		// and ends at 1000, the end, so 800 and 900 are dropped there.
		type run struct{ intended, start time.Duration }
		want := []run{{0, 0}, {200 * msec, 250 * msec}, {500 * msec, 500 * msec}, {700 * msec, 750 * msec}}
		var got []run
		for _, c := range p.pool.Calls() {
			got = append(got, run{p.at(c.Iteration.Intended), p.at(c.Start)})
		}
		if !slices.Equal(got, want) {
			t.Errorf("iterations (intended, start) %v, want %v", got, want)
		}
		if returned != time.Second {
			t.Errorf("Run returned at %v, want 1s", returned)
		}
		if lag := p.values(p.m.ScheduleLag, "", ""); !slices.Equal(lag, ms(0, 50*msec, 0, 50*msec)) {
			t.Errorf("schedule_lag %v", lag)
		}
		if cl := p.completedValues(p.m.CorrectedLatency); !slices.Equal(cl, ms(250*msec, 300*msec, 250*msec, 300*msec)) {
			t.Errorf("corrected_latency of completed iterations %v", cl)
		}
		// Dropped: 100 at 250, 300 and 400 at 500, 600 at 750, 800 and 900 at 1000.
		wantDropped := sorted(ms(150*msec, 200*msec, 100*msec, 150*msec, 200*msec, 100*msec))
		if d := sorted(p.values(p.m.CorrectedLatency, "outcome", "dropped")); !slices.Equal(d, wantDropped) {
			t.Errorf("corrected_latency of dropped iterations %v, want %v", d, wantDropped)
		}
		if n := p.pool.Rec.Sum(p.m.DroppedIterations, nil); n != 6 {
			t.Errorf("dropped_iterations = %v, want 6", n)
		}
		pr := p.ex.Progress()
		if pr.Completed != 4 || pr.Dropped != 6 || pr.Interrupted != 0 {
			t.Errorf("final progress %+v", pr)
		}
		if len(p.logs) != 1 || !strings.Contains(p.logs[0], "scenarios.test: 6 iterations were dropped") ||
			!strings.Contains(p.logs[0], "the interval is 100ms") {
			t.Errorf("warnings %q, want one about 6 dropped iterations", p.logs)
		}
	})
}

// A VU that takes a while to initialise drops the slots that passed.
func TestPacingVUsSlowVU(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPacing(t, `{"executor":"pacing-vus","interval":"100ms","duration":"1s"}`, executortest.Constant(10*msec),
			func(pool *executortest.Pool) { pool.InitDelay = 250 * msec })
		if err, _ := p.run(context.Background()); err != nil {
			t.Fatal(err)
		}
		// Ready at 250ms: 0 and 100 are dropped, 200 runs at 250, and
		// 300…900 on time.
		calls := p.pool.Calls()
		if len(calls) != 8 || p.at(calls[0].Start) != 250*msec || p.at(calls[0].Iteration.Intended) != 200*msec {
			t.Fatalf("%d iterations, the first %+v", len(calls), calls[0])
		}
		for k, c := range calls[1:] {
			if want := time.Duration(k+3) * 100 * msec; p.at(c.Start) != want || !c.Start.Equal(c.Iteration.Intended) {
				t.Errorf("iteration %d started at %v, intended %v; want both %v", k+1, p.at(c.Start), p.at(c.Iteration.Intended), want)
			}
		}
		if d := sorted(p.values(p.m.CorrectedLatency, "outcome", "dropped")); !slices.Equal(d, ms(150*msec, 250*msec)) {
			t.Errorf("corrected_latency of dropped iterations %v, want [150 250]", d)
		}
	})
}

// After the duration, a running iteration has gracefulStop to finish; then
// it is interrupted, and the slots it kept from running are dropped.
func TestPacingVUsGracefulStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPacing(t, `{"executor":"pacing-vus","interval":"1s","duration":"2s","gracefulStop":"500ms"}`,
			executortest.Constant(3*time.Second), nil)
		err, returned := p.run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if returned != 2500*msec {
			t.Errorf("Run returned at %v, want 2.5s (duration + gracefulStop)", returned)
		}
		calls := p.pool.Calls()
		if len(calls) != 1 || calls[0].Outcome != executor.Interrupted || p.at(calls[0].End) != 2500*msec {
			t.Fatalf("iterations %+v, want one interrupted at 2.5s", calls)
		}
		if v := p.values(p.m.CorrectedLatency, "outcome", "interrupted"); !slices.Equal(v, ms(2500*msec)) {
			t.Errorf("corrected_latency of the interrupted iteration %v, want [2500]", v)
		}
		// The slot at 1s never ran; it is charged up to the hard stop.
		if v := p.values(p.m.CorrectedLatency, "outcome", "dropped"); !slices.Equal(v, ms(1500*msec)) {
			t.Errorf("corrected_latency of the dropped iteration %v, want [1500]", v)
		}
		if n := len(p.values(p.m.Iterations, "", "")); n != 0 {
			t.Errorf("%d iterations samples, want none", n)
		}
		pr := p.ex.Progress()
		if pr.Interrupted != 1 || pr.Dropped != 1 || pr.Completed != 0 || pr.Elapsed != 2500*msec || !pr.Done {
			t.Errorf("final progress %+v", pr)
		}
	})
}

// An abort interrupts running iterations at once; slots that were not yet
// due are not counted as dropped.
func TestPacingVUsAbort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPacing(t, `{"executor":"pacing-vus","vus":2,"interval":"100ms","duration":"10s"}`, executortest.Constant(30*msec), nil)
		ctx, cancel := context.WithTimeout(context.Background(), 325*msec)
		defer cancel()
		err, returned := p.run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if returned != 325*msec {
			t.Errorf("Run returned at %v, want at the abort, 325ms", returned)
		}
		// Slots before 325ms: 0, 100, 200, 300 and 50, 150, 250; the one
		// at 300 was running.
		pr := p.ex.Progress()
		if pr.Completed != 6 || pr.Interrupted != 1 || pr.Dropped != 0 || !pr.Done {
			t.Errorf("progress after the abort %+v", pr)
		}
		if v := p.values(p.m.CorrectedLatency, "outcome", "interrupted"); !slices.Equal(v, ms(25*msec)) {
			t.Errorf("corrected_latency of the interrupted iteration %v, want [25]", v)
		}
	})
}

func TestPacingVUsPoolError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("init context threw")
		p := newPacing(t, `{"executor":"pacing-vus","vus":3,"interval":"100ms","duration":"1s"}`, executortest.Constant(msec),
			func(pool *executortest.Pool) { pool.InitDelay = 5 * msec; pool.InitErr = boom })
		err, returned := p.run(context.Background())
		if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "scenarios.test: getting a VU: ") {
			t.Errorf("Run error %v, want the pool's error with the scenario path", err)
		}
		if returned != 5*msec || len(p.pool.Calls()) != 0 {
			t.Errorf("Run returned at %v after %d iterations", returned, len(p.pool.Calls()))
		}
	})
}

func TestPacingVUsOptions(t *testing.T) {
	typ, ok := executor.Lookup(counter.PacingVUsName)
	if !ok {
		t.Fatal("pacing-vus is not registered")
	}
	cfg, err := typ.Parse("api", []byte(`{"executor":"pacing-vus","vus":3,"interval":"250ms","duration":"1m",
		"startTime":"10s","exec":"browse","tags":{"kind":"paced"}}`))
	if err != nil {
		t.Fatal(err)
	}
	c, ok := cfg.(*counter.PacingVUsConfig)
	if !ok {
		t.Fatalf("Parse returned %T", cfg)
	}
	b := c.Base()
	if c.VUs != 3 || c.Interval != 250*msec || c.Duration != time.Minute || b.Name != "api" || b.StartTime != 10*time.Second ||
		b.Exec != "browse" || b.GracefulStop != executor.DefaultGracefulStop || b.Tags["kind"] != "paced" {
		t.Errorf("parsed %+v, scenario %+v", c, b)
	}
	if c.MaxVUs() != 3 || c.InitialVUs() != 3 || c.MaxDuration() != time.Minute+executor.DefaultGracefulStop {
		t.Errorf("MaxVUs %d, InitialVUs %d, MaxDuration %v", c.MaxVUs(), c.InitialVUs(), c.MaxDuration())
	}
	if d, want := c.Description(), "3 VUs starting an iteration every 250ms each, for 1m0s (exec: browse, startTime: 10s, gracefulStop: 30s)"; d != want {
		t.Errorf("description %q, want %q", d, want)
	}

	one, err := typ.Parse("s", []byte(`{"executor":"pacing-vus","interval":"1s","duration":"5s","gracefulStop":"0s"}`))
	if err != nil {
		t.Fatal(err)
	}
	if one.MaxVUs() != 1 || one.Description() != "1 VU starting an iteration every 1s each, for 5s (gracefulStop: 0s)" {
		t.Errorf("defaults: %d VUs, %q", one.MaxVUs(), one.Description())
	}

	for _, tc := range []struct{ options, want string }{
		{`"duration":"5s"`, `scenarios.s.interval: required`},
		{`"interval":"1s"`, `scenarios.s.duration: required`},
		{`"interval":"0s","duration":"5s"`, `scenarios.s.interval: must be greater than 0, got 0s`},
		{`"interval":"-1s","duration":"5s"`, `scenarios.s.interval: must be greater than 0, got -1s`},
		{`"interval":"1s","duration":0`, `scenarios.s.duration: must be greater than 0`},
		{`"interval":"1s","duration":"5s","vus":0`, `scenarios.s.vus: must be between 1 and 1000000, got 0`},
		{`"interval":"1s","duration":"5s","vus":1.5`, `scenarios.s.vus: expected a whole number`},
		{`"interval":"1s","duration":"5s","vus":"2"`, `scenarios.s.vus: expected a whole number`},
		{`"interval":"1x","duration":"5s"`, `scenarios.s.interval: `},
		{`"interval":"1s","duration":"5s","rate":10`, `scenarios.s.rate: unknown option`},
		{`"interval":"1s","duration":"5s","gracefulStop":"-1s"`, `scenarios.s.gracefulStop: must not be negative`},
		{`"interval":"1s","duration":"2562047h47m"`, `scenarios.s.duration: is too long`},
	} {
		_, err := typ.Parse("s", []byte(`{"executor":"pacing-vus",`+tc.options+`}`))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("options {%s}: error %v, want it to start with %q", tc.options, err, tc.want)
		}
	}
}
