package capacity_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/capacity"
	"github.com/metronome-load/metronome/executor/executortest"
	"github.com/metronome-load/metronome/executor/segment"
	"github.com/metronome-load/metronome/health"
	"github.com/metronome-load/metronome/metrics"
)

// search runs a capacity-search scenario against srv in a synctest
// bubble and returns its result, its pool and what it recorded. health,
// when set, gives the generator's health per span.
type run struct {
	result capacity.Result
	pool   *executortest.Pool
	b      *metrics.Builtin
	err    error
	logs   []string
}

func parse(t *testing.T, js string) executor.Config {
	t.Helper()
	cfg, err := capacity.Parse("test", json.RawMessage(js))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func search(t *testing.T, cfg executor.Config, srv *executortest.Server, h func(from, to time.Time) health.Interval) run {
	t.Helper()
	var out run
	synctest.Test(t, func(t *testing.T) {
		out = searchIn(cfg, srv, h)
	})
	return out
}

// searchIn runs the search inside the caller's bubble.
func searchIn(cfg executor.Config, srv *executortest.Server, h func(from, to time.Time) health.Interval) run {
	pool := executortest.NewPool(clock.Real, srv.Work)
	deps, b := pool.Deps(metrics.NewRegistry())
	pool.Raw = b.HTTPReqDuration
	deps.Meter = &executortest.Meter{Rec: pool.Rec, Metrics: b, Health: h}
	var mu sync.Mutex
	var logs []string
	deps.Logf = func(format string, args ...any) {
		mu.Lock()
		logs = append(logs, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	pool.Preallocate(cfg.InitialVUs())
	x := cfg.New(deps)
	err := x.Run(context.Background())
	return run{result: x.(*capacity.Executor).Search(), pool: pool, b: b, err: err, logs: logs}
}

func rates(r capacity.Result) []int64 {
	var out []int64
	for _, s := range r.Steps {
		out = append(out, s.Rate)
	}
	return out
}

const searchOptions = `{"executor":"capacity-search","startRate":100,"maxRate":3000,"stepDuration":"4s",
	"objective":"p(99)<50","preAllocatedVUs":10,"maxVUs":400`

// A server of 4 workers at 10 ms serves 400/s: the search climbs past it,
// bisects back and names 400/s the server's capacity, on the gauge too.
func TestFindsServerCapacity(t *testing.T) {
	cfg := parse(t, searchOptions+`}`)
	r := search(t, cfg, executortest.NewServer(4, 10*time.Millisecond), nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	res := r.result
	// 400/s keeps every worker busy without a queue; 412/s queues 48
	// arrivals over the step, 120 ms at the end: p99 fails.
	if want := []int64{100, 200, 400, 800, 600, 500, 450, 425, 412}; !slices.Equal(rates(res), want) {
		t.Fatalf("steps %v, want %v", rates(res), want)
	}
	if res.Limit != capacity.Server || res.Capacity != 400 || res.FailedAt != 412 {
		t.Fatalf("result %+v, want the server's limit: 400/s, failed at 412/s", res)
	}
	for _, st := range res.Steps {
		pass := st.Rate <= 400
		if (st.Limit == capacity.NoLimit) != pass {
			t.Errorf("step %d/s: limit %v (%s), want passed=%v", st.Rate, st.Limit, st.Why, pass)
		}
		// Each step ran its 4 s of arrivals: rate·4 of them.
		if st.Account.Intended != 4*st.Rate {
			t.Errorf("step %d/s: %d arrivals intended, want %d", st.Rate, st.Account.Intended, 4*st.Rate)
		}
		if pass && (st.CorrectedP99 != 10 || st.RawP99 != 10) {
			t.Errorf("step %d/s: corrected p99 %v, raw p99 %v, want 10 ms each", st.Rate, st.CorrectedP99, st.RawP99)
		}
	}
	// The overloaded steps run out of VUs; one line says so.
	if len(r.logs) != 1 || !strings.Contains(r.logs[0], "all 400 VUs (maxVUs) are busy") {
		t.Errorf("warnings %q, want the one about maxVUs once", r.logs)
	}
	if got := r.pool.Rec.Of(r.b.CapacitySearchRate, nil); !slices.Equal(got, []float64{400}) {
		t.Errorf("capacity_search_rate samples %v, want [400]", got)
	}
	if s := res.Summary(); !strings.HasPrefix(s, "capacity 400.00/s: the server's limit, the objective failed at 412.00/s (corrected_latency p(99)=") {
		t.Errorf("summary %q", s)
	}
	// Every iteration has its own index, numbered across the steps.
	seen := map[int64]bool{}
	for _, c := range r.pool.Calls() {
		if seen[c.Iteration.Index] {
			t.Fatalf("iteration index %d ran twice", c.Iteration.Index)
		}
		seen[c.Iteration.Index] = true
	}
}

// stepRate is the arrival rate of the span [from, to), from the intended
// starts of the iterations the pool ran in it.
func stepRate(pool *executortest.Pool, from, to time.Time) float64 {
	n := 0
	for _, c := range pool.Calls() {
		if !c.Iteration.Intended.Before(from) && c.Iteration.Intended.Before(to) {
			n++
		}
	}
	return float64(n) / 4
}

// When the generator is CPU-bound at the failing steps, the search
// refuses to call the failure the server's, says so, and records no
// rate, though the server would have failed there too.
func TestRefusesWhenGeneratorIsTheLimit(t *testing.T) {
	cfg := parse(t, searchOptions+`}`)
	var pool *executortest.Pool
	var res capacity.Result
	var recorded []float64
	synctest.Test(t, func(t *testing.T) {
		srv := executortest.NewServer(4, 10*time.Millisecond)
		pool = executortest.NewPool(clock.Real, srv.Work)
		deps, b := pool.Deps(metrics.NewRegistry())
		pool.Raw = b.HTTPReqDuration
		deps.Meter = &executortest.Meter{Rec: pool.Rec, Metrics: b, Health: func(from, to time.Time) health.Interval {
			iv := health.Interval{From: from, To: to, CPU: 0.2}
			if stepRate(pool, from, to) > 400 {
				iv.CPU = 0.97 // the generator is CPU-bound above 400/s
			}
			return iv
		}}
		pool.Preallocate(cfg.InitialVUs())
		x := cfg.New(deps)
		if err := x.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		res = x.(*capacity.Executor).Search()
		recorded = pool.Rec.Of(b.CapacitySearchRate, nil)
	})
	if res.Limit != capacity.Generator || res.Capacity != 400 || res.FailedAt != 412 {
		t.Fatalf("result %+v, want the generator's limit at 412/s, the objective held up to 400/s", res)
	}
	if !strings.Contains(res.Why, "CPU-bound") {
		t.Errorf("why %q does not say the generator was CPU-bound", res.Why)
	}
	if s := res.Summary(); !strings.HasPrefix(s, "no capacity: the generator was the limit at 412.00/s") ||
		!strings.HasSuffix(s, "the objective held up to 400.00/s, so the server serves at least that") {
		t.Errorf("summary %q", s)
	}
	if len(recorded) != 0 {
		t.Errorf("capacity_search_rate recorded %v, want nothing", recorded)
	}
}

// A server far faster than the VU budget: the requests meet the objective
// while arrivals wait for one of 2 VUs, so the limit is the generator's
// (maxVUs), not the server's.
func TestVUBudgetIsTheGeneratorsLimit(t *testing.T) {
	cfg := parse(t, `{"executor":"capacity-search","startRate":100,"maxRate":3000,"stepDuration":"4s",
		"objective":"p(99)<50","preAllocatedVUs":2,"maxVUs":2}`)
	r := search(t, cfg, executortest.NewServer(100, 10*time.Millisecond), nil)
	res := r.result
	// 2 VUs at 10 ms serve 200/s.
	if res.Limit != capacity.Generator || res.Capacity != 200 {
		t.Fatalf("result %+v, want the generator's limit above 200/s", res)
	}
	if !strings.Contains(res.Why, "waited for a free VU") || !strings.Contains(res.Why, "raise maxVUs (2)") {
		t.Errorf("why %q does not name the VU budget", res.Why)
	}
}

// A server that keeps up at every rate: the search ends at maxRate and
// says the capacity is at least that.
func TestReachesMaxRate(t *testing.T) {
	cfg := parse(t, `{"executor":"capacity-search","startRate":100,"maxRate":500,"stepDuration":"2s",
		"objective":"p(99)<50","preAllocatedVUs":10,"maxVUs":100}`)
	r := search(t, cfg, executortest.NewServer(100, 10*time.Millisecond), nil)
	if want := []int64{100, 200, 400, 500}; !slices.Equal(rates(r.result), want) {
		t.Fatalf("steps %v, want %v", rates(r.result), want)
	}
	if r.result.Limit != capacity.NoLimit || r.result.Capacity != 500 {
		t.Fatalf("result %+v", r.result)
	}
	if s := r.result.Summary(); s != "capacity at least 500.00/s: the objective held at every step up to maxRate" {
		t.Errorf("summary %q", s)
	}
}

// Steps start on a grid of stepDuration + gracefulStop from the start,
// and an overloaded step's backlog is dropped at its hard stop, charged.
func TestStepGrid(t *testing.T) {
	cfg := parse(t, `{"executor":"capacity-search","startRate":100,"maxRate":800,"stepDuration":"2s","gracefulStop":"500ms",
		"objective":"p(99)<50","preAllocatedVUs":10,"maxVUs":400}`)
	if got := cfg.MaxDuration(); got != 9*2500*time.Millisecond {
		// Climb 100, 200, 400, 800; the longest bisection, between 400
		// and 800 when every step fails, takes 5 more: 600, 500, 450,
		// 425, 412.
		t.Errorf("MaxDuration %v, want 22.5s", got)
	}
	var r run
	var start time.Time
	synctest.Test(t, func(t *testing.T) {
		start = time.Now()
		r = searchIn(cfg, executortest.NewServer(4, 10*time.Millisecond), nil)
	})
	for k, st := range r.result.Steps {
		if want := start.Add(time.Duration(k) * 2500 * time.Millisecond); !st.Start.Equal(want) {
			t.Errorf("step %d starts at %v, want %v", k, st.Start.Sub(start), want.Sub(start))
		}
	}
	// The 800/s step: 1600 arrivals, 400/s served for 2.5 s at most.
	st := r.result.Steps[3]
	if st.Rate != 800 || st.Account.Dropped == 0 || st.Account.Intended != 1600 {
		t.Errorf("800/s step account %+v, want 1600 intended and some dropped", st.Account)
	}
}

// Two instances with execution segments run the same steps, each its
// stripe of each step's arrivals, which together are the whole step; both
// judge their own share alike.
func TestSegments(t *testing.T) {
	cfg := parse(t, searchOptions+`}`)
	half := big.NewRat(1, 2)
	var results [2]capacity.Result
	var indices [2][]int64
	synctest.Test(t, func(t *testing.T) {
		srv := executortest.NewServer(4, 10*time.Millisecond)
		var wg sync.WaitGroup
		for i, seg := range []segment.Segment{{From: big.NewRat(0, 1), To: half}, {From: half, To: big.NewRat(1, 1)}} {
			tuple, err := segment.NewTuple(seg, []*big.Rat{big.NewRat(0, 1), half, big.NewRat(1, 1)})
			if err != nil {
				t.Fatal(err)
			}
			c, err := executor.Segmented(cfg, tuple)
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				r := searchIn(c, srv, nil)
				results[i] = r.result
				for _, call := range r.pool.Calls() {
					indices[i] = append(indices[i], call.Iteration.Index)
				}
			})
		}
		wg.Wait()
	})
	if !slices.Equal(rates(results[0]), rates(results[1])) {
		t.Fatalf("instances ran %v and %v", rates(results[0]), rates(results[1]))
	}
	if results[0].Capacity != 400 || results[1].Capacity != 400 {
		t.Errorf("capacities %v and %v, want 400", results[0].Capacity, results[1].Capacity)
	}
	// Each step's arrivals split between the instances, half each.
	var total int64
	for k, st := range results[0].Steps {
		a, b := st.Account.Intended, results[1].Steps[k].Account.Intended
		if a+b != 4*st.Rate || a-b > 1 || b-a > 1 {
			t.Errorf("step %d/s: the instances intended %d and %d arrivals, want %d between them, evenly", st.Rate, a, b, 4*st.Rate)
		}
		total += 4 * st.Rate
	}
	// No arrival ran on both, and every one has an index of the whole
	// search (those dropped at an overloaded step's end did not run).
	all := slices.Concat(indices[0], indices[1])
	slices.Sort(all)
	if len(slices.Compact(slices.Clone(all))) != len(all) || all[0] != 0 || all[len(all)-1] >= total {
		t.Errorf("the instances ran %d iterations, not each of them once within 0..%d", len(all), total-1)
	}
}

func TestParseErrors(t *testing.T) {
	for js, want := range map[string]string{
		`{"executor":"capacity-search","maxRate":10,"objective":"p(99)<50","preAllocatedVUs":1}`:                                       "scenarios.test.startRate: required",
		`{"executor":"capacity-search","startRate":10,"maxRate":5,"objective":"p(99)<50","preAllocatedVUs":1}`:                         "scenarios.test.maxRate: must not be less than startRate (10)",
		`{"executor":"capacity-search","startRate":10,"maxRate":50,"preAllocatedVUs":1}`:                                               "scenarios.test.objective: required",
		`{"executor":"capacity-search","startRate":10,"maxRate":50,"objective":"rate<0.1","preAllocatedVUs":1}`:                        `scenarios.test.objective: "rate" is not valid for corrected_latency`,
		`{"executor":"capacity-search","startRate":10,"maxRate":50,"objective":"p(99)<<5","preAllocatedVUs":1}`:                        "scenarios.test.objective: ",
		`{"executor":"capacity-search","startRate":10,"maxRate":50,"objective":"p(99)>5","preAllocatedVUs":1}`:                         `scenarios.test.objective: "p(99)>5" must bound latency from above`,
		`{"executor":"capacity-search","startRate":10,"maxRate":50,"objective":"p(99)<50","preAllocatedVUs":1,"growth":1}`:             "scenarios.test.growth: must be between 1.05 and 10",
		`{"executor":"capacity-search","startRate":10,"maxRate":50,"objective":"p(99)<50","preAllocatedVUs":1,"stepDuration":"10ms"}`:  "scenarios.test.stepDuration: must be at least 1s",
		`{"executor":"capacity-search","startRate":10,"maxRate":50,"objective":"p(99)<50"}`:                                            "scenarios.test.preAllocatedVUs: required",
		`{"executor":"capacity-search","startRate":10,"maxRate":50,"objective":"p(99)<50","preAllocatedVUs":1,"maxErrorRate":2}`:       "scenarios.test.maxErrorRate: must be between 0 and 1",
		`{"executor":"capacity-search","startRate":10,"maxRate":50,"objective":"p(99)<50","preAllocatedVUs":1,"rate":5}`:               "scenarios.test.rate: unknown option",
		`{"executor":"capacity-search","startRate":10,"maxRate":50,"objective":"p(99)<50","preAllocatedVUs":1,"maxVUs":1000000000000}`: "scenarios.test.maxVUs: must not exceed 100000000",
		`{"executor":"capacity-search","startRate":10,"maxRate":50,"objective":"p(99)<50","preAllocatedVUs":0}`:                        "scenarios.test.maxVUs: must be greater than 0",
		`{"executor":"capacity-search","startRate":10,"maxRate":50,"objective":"p(99)<50","preAllocatedVUs":1,"timeUnit":"-1s"}`:       "scenarios.test.timeUnit: must be greater than 0",
		// A script's NaN is null in the options: refused, not defaulted.
		`{"executor":"capacity-search","startRate":10,"maxRate":50,"objective":"p(99)<50","preAllocatedVUs":1,"stepDuration":null}`: "scenarios.test.stepDuration: is null, which a script's NaN",
		`{"executor":"capacity-search","startRate":10,"maxRate":50,"objective":"p(99)<50","preAllocatedVUs":1,"maxErrorRate":null}`: "scenarios.test.maxErrorRate: is null",
		`{"executor":"capacity-search","startRate":10,"maxRate":50,"objective":"p(99)<50","preAllocatedVUs":1,"growth":null}`:       "scenarios.test.growth: is null",
		`{"executor":"capacity-search","startRate":null,"maxRate":50,"objective":"p(99)<50","preAllocatedVUs":1}`:                   "scenarios.test.startRate: is null",
		// An objective below any latency can never be met.
		`{"executor":"capacity-search","startRate":10,"maxRate":50,"objective":"p(99)<-5","preAllocatedVUs":1}`: `scenarios.test.objective: "p(99)<-5" is below any latency`,
		`{"executor":"capacity-search","startRate":10,"maxRate":50,"objective":"avg<0","preAllocatedVUs":1}`:    `scenarios.test.objective: "avg<0" is below any latency`,
	} {
		_, err := capacity.Parse("test", json.RawMessage(js))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", js, err, want)
		}
	}
}

// Without a meter there is nothing to judge steps by: the search says so
// instead of guessing.
func TestNeedsMeter(t *testing.T) {
	cfg := parse(t, searchOptions+`}`)
	synctest.Test(t, func(t *testing.T) {
		pool := executortest.NewPool(clock.Real, executortest.Constant(time.Millisecond))
		deps, _ := pool.Deps(metrics.NewRegistry())
		err := cfg.New(deps).Run(context.Background())
		if err == nil || !strings.Contains(err.Error(), "needs the engine's meter") {
			t.Errorf("Run = %v", err)
		}
	})
}
