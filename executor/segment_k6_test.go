package executor_test

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
	"github.com/metronome-load/metronome/internal/testkit/segtest"
)

// What k6 v2.2.0 ran, per instance, for one script split in thirds
// (--execution-segment-sequence=0,1/3,2/3,1), iterations sleeping 300 ms:
// exec.scenario.iterationInTest of every iteration, and exec.vu.idInTest
// of the VUs of instance 1 (k6 numbered them 1, 4, 7, … 37). Recorded on
// loopback with /work/peers/k6 (see docs/distributed.md).
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
			cfg, err := executor.Segmented(whole, segtest.Tuple(t, s, "0,1/3,2/3,1"))
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
	tu := segtest.Tuple(t, "0:1/3", "0,1/3,2/3,1")
	var ids []int64
	for k := range int64(13) {
		ids = append(ids, tu.Global(k)+1)
	}
	if want := []int64{1, 4, 7, 10, 13, 16, 19, 22, 25, 28, 31, 34, 37}; !slices.Equal(ids, want) {
		t.Errorf("idInTest of instance 1's VUs %v, k6 %v", ids, want)
	}
}

// The banner lines k6 v2.2.0 printed for arrival-rate scenarios run in
// segments (recorded on loopback with /work/peers/k6): a
// constant-arrival-rate instance shows the rate of its stripe of maxVUs
// (30/s over 7 VUs split 3 + 2 + 2 is 12.86/s on the first instance, 0.00
// where the stripe is empty), a ramping-arrival-rate instance the peak
// scaled by its segment's length.
func TestSegmentDescriptionsMatchK6(t *testing.T) {
	thirds, halves := "0,1/3,2/3,1", "0,1/2,1"
	for _, c := range []struct {
		js, seg, seq, want string
	}{
		{`{"executor":"constant-arrival-rate","rate":30,"duration":"1s","preAllocatedVUs":5,"maxVUs":7}`, "0:1/3", thirds,
			"12.86 iterations/s for 1s (maxVUs: 2-3, gracefulStop: 30s)"},
		{`{"executor":"constant-arrival-rate","rate":30,"duration":"1s","preAllocatedVUs":5,"maxVUs":7}`, "2/3:1", thirds,
			"8.57 iterations/s for 1s (maxVUs: 1-2, gracefulStop: 30s)"},
		{`{"executor":"constant-arrival-rate","rate":30,"duration":"1s","preAllocatedVUs":5,"maxVUs":7}`, "0:1/2", halves,
			"17.14 iterations/s for 1s (maxVUs: 3-4, gracefulStop: 30s)"},
		{`{"executor":"constant-arrival-rate","rate":30,"duration":"1s","preAllocatedVUs":1}`, "0:1/3", thirds,
			"30.00 iterations/s for 1s (maxVUs: 1, gracefulStop: 30s)"},
		{`{"executor":"constant-arrival-rate","rate":30,"duration":"1s","preAllocatedVUs":1}`, "1/3:2/3", thirds,
			"0.00 iterations/s for 1s (maxVUs: 0, gracefulStop: 30s)"},
		{`{"executor":"constant-arrival-rate","rate":30,"duration":"1s","preAllocatedVUs":6}`, "0:1/4", "0,1/4,2/4,3/4,1",
			"10.00 iterations/s for 1s (maxVUs: 2, gracefulStop: 30s)"},
		{`{"executor":"constant-arrival-rate","rate":30,"duration":"1s","preAllocatedVUs":6}`, "0:0.1", "0,0.1,1",
			"5.00 iterations/s for 1s (maxVUs: 1, gracefulStop: 30s)"},
		{`{"executor":"ramping-arrival-rate","startRate":10,"stages":[{"duration":"1s","target":30}],"preAllocatedVUs":2,"maxVUs":5}`, "2/3:1", thirds,
			"Up to 10.00 iterations/s for 1s over 1 stages (maxVUs: 0-1, gracefulStop: 30s)"},
		{`{"executor":"ramping-arrival-rate","startRate":10,"stages":[{"duration":"1s","target":30}],"preAllocatedVUs":2,"maxVUs":5}`, "0:1/2", halves,
			"Up to 15.00 iterations/s for 1s over 1 stages (maxVUs: 1-3, gracefulStop: 30s)"},
		{`{"executor":"ramping-arrival-rate","startRate":10,"timeUnit":"1m","stages":[{"duration":"1s","target":50}],"preAllocatedVUs":1,"maxVUs":1}`, "1/4:2/4", "0,1/4,2/4,3/4,1",
			"Up to 0.21 iterations/s for 1s over 1 stages (maxVUs: 0, gracefulStop: 30s)"},
		// intended-arrival-rate (metronome's) shows the stripe it runs.
		{`{"executor":"intended-arrival-rate","rate":30,"duration":"1s","preAllocatedVUs":5,"maxVUs":7}`, "0:1/3", thirds,
			"12.86 iterations/s for 1s (maxVUs: 2-3, gracefulStop: 30s)"},
	} {
		cfg, err := executor.Segmented(arrivalParse(t, c.js), segtest.Tuple(t, c.seg, c.seq))
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Description(); got != c.want {
			t.Errorf("%s in %s of %s:\n  %q\n  k6 %q", c.js, c.seg, c.seq, got, c.want)
		}
	}
}
