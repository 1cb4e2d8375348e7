package executor_test

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
)

// What k6 v2.2.0 ran, per instance, for one script split in thirds
// (--execution-segment-sequence=0,1/3,2/3,1), iterations sleeping 300 ms:
// exec.scenario.iterationInTest of every iteration, and exec.vu.idInTest
// of the VUs of instance 1 (k6 numbered them 1, 4, 7, … 37). Recorded on
// loopback with /work/peers/k6 (see README "Running on many machines").
// k6's constant-arrival-rate instances also ran a global index 10 at
// 1.0 s (instance 1) that a single k6 instance does not run; metronome's
// instances run exactly the single instance's indices 0-9.
var k6Thirds = []struct {
	js   string
	work time.Duration
	its  [3][]int64
}{
	{`{"executor":"constant-vus","vus":5,"duration":"1s"}`, 300 * time.Millisecond,
		[3][]int64{{0, 3, 6, 9, 12, 15, 18, 21}, {1, 4, 7, 10, 13, 16, 19, 22}, {2, 5, 8, 11}}},
	{`{"executor":"per-vu-iterations","vus":4,"iterations":2}`, 300 * time.Millisecond,
		[3][]int64{{0, 3, 6, 9}, {1, 4}, {2, 5}}},
	{`{"executor":"shared-iterations","vus":4,"iterations":10}`, 300 * time.Millisecond,
		[3][]int64{{0, 2, 4, 6, 8}, {1, 5, 9}, {3, 7}}},
	{`{"executor":"constant-arrival-rate","rate":10,"timeUnit":"1s","duration":"1s","preAllocatedVUs":5}`, 300 * time.Millisecond,
		[3][]int64{{0, 3, 5, 8}, {1, 4, 6, 9}, {2, 7}}},
	{`{"executor":"ramping-arrival-rate","startRate":0,"timeUnit":"1s","stages":[{"duration":"1s","target":10}],"preAllocatedVUs":4}`, 300 * time.Millisecond,
		[3][]int64{{0, 2, 4}, {1}, {3}}},
	{`{"executor":"ramping-vus","startVUs":0,"stages":[{"duration":"1s","target":7}],"gracefulRampDown":"0s"}`, 950 * time.Millisecond,
		[3][]int64{{0, 3}, {1, 4}, {2, 5}}},
}

func TestSegmentsMatchK6Thirds(t *testing.T) {
	segs := []string{"0:1/3", "1/3:2/3", "2/3:1"}
	for _, c := range k6Thirds {
		whole := arrivalParse(t, c.js)
		for i, s := range segs {
			cfg, err := executor.Segmented(whole, mustTuple(t, s, "0,1/3,2/3,1"))
			if err != nil {
				t.Fatal(err)
			}
			var r segmentRun
			synctest.Test(t, func(t *testing.T) {
				r = runInstance(t, cfg, executortest.Constant(c.work), cfg.InitialVUs())
			})
			if got := sorted(r.index); !slices.Equal(got, c.its[i]) {
				t.Errorf("%s, instance %d (%s): iterationInTest %v, k6 %v", c.js, i+1, s, got, c.its[i])
			}
		}
	}
	tu := mustTuple(t, "0:1/3", "0,1/3,2/3,1")
	var ids []int64
	for k := range int64(13) {
		ids = append(ids, tu.Global(k)+1)
	}
	if want := []int64{1, 4, 7, 10, 13, 16, 19, 22, 25, 28, 31, 34, 37}; !slices.Equal(ids, want) {
		t.Errorf("idInTest of instance 1's VUs %v, k6 %v", ids, want)
	}
}
