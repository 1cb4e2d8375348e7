package executor_test

import (
	"testing"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
	"github.com/metronome-load/metronome/metrics"
)

// Ask finds on each built-in exactly the abilities it has, on its config
// and on its executor, and nothing on a nil config or executor.
func TestAskBuiltins(t *testing.T) {
	deps, _ := executortest.NewPool(clock.Real, nil).Deps(metrics.NewRegistry())
	type want struct{ closed, backFills, schedule, queues, staged, account, backFill bool }
	for _, c := range []struct {
		js   string
		want want
	}{
		{`{"executor":"constant-vus","vus":1,"duration":"1s"}`, want{closed: true, backFills: true, backFill: true}},
		{`{"executor":"ramping-vus","stages":[{"duration":"1s","target":2}]}`, want{closed: true, backFills: true, staged: true, backFill: true}},
		{`{"executor":"shared-iterations"}`, want{closed: true, backFill: true}},
		{`{"executor":"per-vu-iterations","expectedInterval":"10ms"}`, want{closed: true, backFills: true, backFill: true}},
		{`{"executor":"constant-arrival-rate","rate":10,"duration":"1s","preAllocatedVUs":1}`, want{schedule: true, account: true}},
		{`{"executor":"ramping-arrival-rate","stages":[{"duration":"1s","target":10}],"preAllocatedVUs":1}`, want{schedule: true, account: true}},
		{`{"executor":"intended-arrival-rate","rate":10,"duration":"1s","preAllocatedVUs":1}`, want{schedule: true, queues: true, account: true}},
	} {
		cfg := mustParse(t, c.js)
		if cm := executor.Ask(cfg, nil).Closed; cm != nil {
			cm.DefaultExpectedInterval(executor.ExpectedInterval{})
		}
		a := executor.Ask(cfg, cfg.New(deps))
		got := want{
			closed: a.Closed != nil, backFills: a.BackFills(), schedule: a.RateSchedule() != nil, queues: a.Queues(),
			staged: a.VUStages != nil, account: a.Account != nil, backFill: a.BackFill != nil,
		}
		if got != c.want || a.Search != nil || a.Capacity != nil {
			t.Errorf("%s: abilities %+v (search %v, capacity %v), want %+v", c.js, got, a.Search != nil, a.Capacity != nil, c.want)
		}
	}
	if a := executor.Ask(nil, nil); a != (executor.Abilities{}) {
		t.Errorf("Ask(nil, nil) = %+v, want no abilities", a)
	}
}
