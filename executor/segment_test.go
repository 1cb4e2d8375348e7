package executor_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
	"github.com/metronome-load/metronome/internal/testkit/proptest"
	"github.com/metronome-load/metronome/internal/testkit/segtest"
	"github.com/metronome-load/metronome/metrics"
)

// segmentRun is what one instance did: each iteration's global index,
// intended start (zero for the closed model) and start, relative to the
// scenario start.
type segmentRun struct {
	index    []int64
	intended []time.Duration
	start    []time.Duration
	made     uint64
}

func runInstance(t *testing.T, cfg executor.Config, work executortest.Work, preallocate int) segmentRun {
	p := executortest.NewPool(clock.Real, work)
	p.Preallocate(preallocate)
	deps, _ := p.Deps(metrics.NewRegistry())
	t0 := time.Now()
	if err := cfg.New(deps).Run(context.Background()); err != nil {
		t.Errorf("Run: %v", err)
	}
	var r segmentRun
	for _, c := range p.Calls() {
		r.index = append(r.index, c.Iteration.Index)
		if !c.Iteration.Intended.IsZero() {
			r.intended = append(r.intended, c.Iteration.Intended.Sub(t0))
		}
		r.start = append(r.start, c.Start.Sub(t0))
	}
	r.made = p.Made()
	return r
}

func sorted[T int64 | time.Duration](s []T) []T {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// For random sequences of 1 to 7 segments and every executor, the
// instances together run exactly what one instance runs: the same global
// iteration indices (shared-iterations, the arrival-rate executors), the
// same intended times, and the same iteration start times (the VU slots of
// the closed-model executors start at the same moments). All instances run
// at once in one synctest bubble, as the operator starts them together.
func TestSegmentsUnionIsSingleInstance(t *testing.T) {
	scenarios := []struct {
		js     func(a, b int) string
		closed bool
		byIdx  bool // the union of global indices is the single instance's
	}{
		{func(a, b int) string { return fmt.Sprintf(`{"executor":"constant-vus","vus":%d,"duration":"2s"}`, a) }, true, false},
		{func(a, b int) string {
			return fmt.Sprintf(`{"executor":"per-vu-iterations","vus":%d,"iterations":7}`, a)
		}, true, false},
		{func(a, b int) string {
			return fmt.Sprintf(`{"executor":"shared-iterations","vus":%d,"iterations":%d}`, a, b)
		}, true, true},
		{func(a, b int) string {
			return fmt.Sprintf(`{"executor":"ramping-vus","startVUs":1,"stages":[{"duration":"1s","target":%d},{"duration":"1s","target":2},{"duration":"500ms","target":%d}],"gracefulRampDown":"0s"}`, a, b/3)
		}, true, false},
		{func(a, b int) string {
			return fmt.Sprintf(`{"executor":"constant-arrival-rate","rate":%d,"timeUnit":"1s","duration":"2s","preAllocatedVUs":%d}`, b, 2+a)
		}, false, true},
		{func(a, b int) string {
			return fmt.Sprintf(`{"executor":"ramping-arrival-rate","startRate":5,"timeUnit":"1s","stages":[{"duration":"1s","target":%d},{"duration":"1s","target":3}],"preAllocatedVUs":%d}`, b, 2+a)
		}, false, true},
		{func(a, b int) string {
			return fmt.Sprintf(`{"executor":"intended-arrival-rate","rate":%d,"timeUnit":"1s","duration":"2s","arrivals":"poisson","seed":%d,"preAllocatedVUs":%d,"maxVUs":40}`, b, a, 2+a)
		}, false, true},
	}
	seed := proptest.Seed(t)
	rng := rand.New(rand.NewPCG(12, 12^seed))
	for trial := range 42 {
		sc := scenarios[trial%len(scenarios)]
		segs, seq := segtest.RandomSequence(rng)
		js := sc.js(1+rng.IntN(12), 13+rng.IntN(30))
		t.Run(fmt.Sprintf("%d/%s", trial, seq), func(t *testing.T) {
			proptest.Seed(t)
			// Work of about 31 ms: enough VUs for every arrival, so
			// nothing is dropped and the comparison is exact. The odd
			// nanoseconds keep iteration ends off the ramp's step times,
			// where the order of two events at one virtual instant would
			// decide whether an iteration starts.
			work := executortest.Constant(31*time.Millisecond + 234_567)
			whole := arrivalParse(t, js)
			var single segmentRun
			synctest.Test(t, func(t *testing.T) {
				single = runInstance(t, whole, work, whole.InitialVUs())
			})
			var union segmentRun
			var mu sync.Mutex
			var vus int
			synctest.Test(t, func(t *testing.T) {
				var wg sync.WaitGroup
				for _, s := range segs {
					cfg, err := executor.Segmented(whole, segtest.Tuple(t, s, seq))
					if err != nil {
						t.Fatal(err)
					}
					vus += cfg.InitialVUs()
					wg.Go(func() {
						r := runInstance(t, cfg, work, cfg.InitialVUs())
						mu.Lock()
						defer mu.Unlock()
						union.index = append(union.index, r.index...)
						union.intended = append(union.intended, r.intended...)
						union.start = append(union.start, r.start...)
						union.made += r.made
					})
				}
				wg.Wait()
			})
			if vus != whole.InitialVUs() {
				t.Errorf("%s: instances start with %d VUs, one instance with %d", js, vus, whole.InitialVUs())
			}
			if len(single.index) == 0 {
				t.Fatalf("%s: the single instance ran nothing", js)
			}
			if len(union.index) != len(single.index) {
				t.Fatalf("%s: instances ran %d iterations, one instance %d", js, len(union.index), len(single.index))
			}
			if sc.byIdx && !slices.Equal(sorted(union.index), sorted(single.index)) {
				t.Errorf("%s: global indices differ:\n union %v\nsingle %v", js, sorted(union.index), sorted(single.index))
			}
			if !slices.Equal(sorted(union.intended), sorted(single.intended)) {
				t.Errorf("%s: intended times differ", js)
			}
			if !sc.byIdx || !sc.closed {
				if !slices.Equal(sorted(union.start), sorted(single.start)) {
					t.Errorf("%s: start times differ:\n union %v\nsingle %v", js, sorted(union.start), sorted(single.start))
				}
			}
		})
	}
}
