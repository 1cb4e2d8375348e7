package executor_test

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
	"github.com/metronome-load/metronome/internal/testkit/proptest"
	"github.com/metronome-load/metronome/metrics"
)

func mustTuple(t testing.TB, seg, seq string) *executor.Tuple {
	t.Helper()
	s, err := executor.ParseSegment(seg)
	if err != nil {
		t.Fatalf("segment %q: %v", seg, err)
	}
	var pts []*big.Rat
	if seq != "" {
		if pts, err = executor.ParseSequence(seq); err != nil {
			t.Fatalf("sequence %q: %v", seq, err)
		}
	}
	tu, err := executor.NewTuple(s, pts)
	if err != nil {
		t.Fatalf("tuple %q in %q: %v", seg, seq, err)
	}
	return tu
}

// firstOwned lists the global indices below n that the instance owns.
func firstOwned(tu *executor.Tuple, n int64) []int64 {
	var out []int64
	for k := int64(0); ; k++ {
		g := tu.Global(k)
		if g >= n {
			return out
		}
		out = append(out, g)
	}
}

// The worked examples of k6's striping (reference §2.2).
func TestTupleStriping(t *testing.T) {
	cases := []struct {
		seg, seq string
		n        int64
		owned    []int64
	}{
		{"0:1/3", "0,1/3,2/3,1", 6, []int64{0, 3}},
		{"1/3:2/3", "0,1/3,2/3,1", 6, []int64{1, 4}},
		{"2/3:1", "0,1/3,2/3,1", 6, []int64{2, 5}},
		{"0:1/2", "0,1/2,3/4,1", 8, []int64{0, 2, 4, 6}},
		{"1/2:3/4", "0,1/2,3/4,1", 8, []int64{1, 5}},
		{"3/4:1", "0,1/2,3/4,1", 8, []int64{3, 7}},
		{"0:3/5", "0,3/5,1", 5, []int64{0, 2, 4}},
		{"3/5:1", "0,3/5,1", 5, []int64{1, 3}},
		{"0:1/3", "", 6, []int64{1, 4}},
		{"1/3", "", 3, []int64{1}},
		{"0:1", "", 4, []int64{0, 1, 2, 3}},
		{"50%:100%", "0,0.5,1", 4, []int64{1, 3}},
	}
	for _, c := range cases {
		tu := mustTuple(t, c.seg, c.seq)
		if got := firstOwned(tu, c.n); !slices.Equal(got, c.owned) {
			t.Errorf("%s in %q owns %v below %d, want %v", c.seg, c.seq, got, c.n, c.owned)
		}
	}
	// 10 VUs in thirds: 4/3/3 with the shared sequence, 3+3+3 without it
	// (each instance then pads its own sequence differently).
	var with, without []int64
	for _, seg := range []string{"0:1/3", "1/3:2/3", "2/3:1"} {
		with = append(with, mustTuple(t, seg, "0,1/3,2/3,1").Scale(10))
		without = append(without, mustTuple(t, seg, "").Scale(10))
	}
	if !slices.Equal(with, []int64{4, 3, 3}) || !slices.Equal(without, []int64{3, 3, 3}) {
		t.Errorf("10 VUs in thirds: %v with the sequence, %v without; want [4 3 3] and [3 3 3]", with, without)
	}
}

func TestSegmentParseErrors(t *testing.T) {
	for _, s := range []string{"1/2:1/3", "0:2", "a:b", "10.5%", "-1:1/2", "1/2:1/2"} {
		if _, err := executor.ParseSegment(s); err == nil {
			t.Errorf("ParseSegment(%q) accepted", s)
		}
	}
	for _, s := range []string{"0", "0,1/2,1/3,1", "0,x,1"} {
		if _, err := executor.ParseSequence(s); err == nil {
			t.Errorf("ParseSequence(%q) accepted", s)
		}
	}
	seg, _ := executor.ParseSegment("0:1/4")
	seq, _ := executor.ParseSequence("0,1/3,2/3,1")
	if _, err := executor.NewTuple(seg, seq); err == nil {
		t.Error("a segment that is not in the sequence was accepted")
	}
}

// randomSequence returns 1 to 7 segments covering 0 to 1 with small
// denominators, and the sequence string.
func randomSequence(rng *rand.Rand) (segs []string, seq string) {
	k := 1 + rng.IntN(7)
	pts := map[string]*big.Rat{}
	for len(pts) < k-1 {
		d := int64(2 + rng.IntN(11))
		r := big.NewRat(1+rng.Int64N(d-1), d)
		pts[r.RatString()] = r
	}
	sorted := []*big.Rat{big.NewRat(0, 1)}
	for _, r := range pts {
		sorted = append(sorted, r)
	}
	sorted = append(sorted, big.NewRat(1, 1))
	slices.SortFunc(sorted, func(a, b *big.Rat) int { return a.Cmp(b) })
	var strs []string
	for i, r := range sorted {
		strs = append(strs, r.RatString())
		if i > 0 {
			segs = append(segs, sorted[i-1].RatString()+":"+r.RatString())
		}
	}
	return segs, strings.Join(strs, ",")
}

// The instances of any sequence own every global index exactly once, and
// their shares of any count (also after re-splitting by another count, as
// shared-iterations and the arrival-rate executors do) add up to it.
func TestTupleProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 7^proptest.Seed(t)))
	for trial := range 300 {
		segs, seq := randomSequence(rng)
		v := rng.Int64N(200)
		by := 1 + rng.Int64N(60)
		var sum, resum int64
		owners := make([]int, 3*v+7)
		for _, s := range segs {
			tu := mustTuple(t, s, seq)
			sum += tu.Scale(v)
			for _, g := range firstOwned(tu, int64(len(owners))) {
				owners[g]++
			}
			if rt, ok := tu.Resegment(by); ok {
				resum += rt.Scale(v)
				if tu.Scale(by) == 0 {
					t.Fatalf("trial %d: %s in %s: an instance with no share of %d kept work", trial, s, seq, by)
				}
			}
		}
		if sum != v || resum != v {
			t.Fatalf("trial %d: shares of %d in %s add up to %d (re-split by %d: %d)", trial, v, seq, sum, by, resum)
		}
		for g, n := range owners {
			if n != 1 {
				t.Fatalf("trial %d: %s: index %d owned %d times", trial, seq, g, n)
			}
		}
	}
}

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
		segs, seq := randomSequence(rng)
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
					cfg, err := executor.Segmented(whole, mustTuple(t, s, seq))
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
