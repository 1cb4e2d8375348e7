package executor_test

import (
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
	"github.com/metronome-load/metronome/metrics"
)

// What one request records, by the iteration it runs in: the lag added in
// an open model, the back-fill in a back-filling closed model, nothing
// otherwise; an interrupted request is charged up to the cut and tagged.
func TestLatencyRecord(t *testing.T) {
	m := metrics.RegisterBuiltin(metrics.NewRegistry()).CorrectedLatency
	tags := metrics.EmptyTags.With("name", "login")
	t0 := time.Unix(100, 0)
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	fill := &executor.BackFiller{Interval: ms(10)}
	for _, c := range []struct {
		name string
		it   executor.Iteration
		// start is when the iteration started, after t0.
		start time.Duration
		// d is the request's duration; cut, when set, interrupts it after
		// that long instead.
		d, cut time.Duration
		want   []float64
		tagged string
	}{
		{"open, on time", executor.Iteration{Intended: t0}, 0, ms(12), 0, []float64{12}, ""},
		{"open, late", executor.Iteration{Intended: t0}, ms(30), ms(12), 0, []float64{42}, ""},
		{"open, interrupted", executor.Iteration{Intended: t0}, ms(30), ms(500), ms(100), []float64{130}, "interrupted"},
		{"closed, no back-fill", executor.Iteration{}, ms(30), ms(12), 0, nil, ""},
		{"closed, interrupted, no back-fill", executor.Iteration{}, ms(30), ms(500), ms(100), nil, ""},
		{"closed, back-filled", executor.Iteration{BackFill: fill}, ms(30), ms(35), 0, []float64{35, 25, 15}, ""},
		{"closed, back-filled, interrupted", executor.Iteration{BackFill: fill}, ms(30), ms(500), ms(20), []float64{20, 10}, "interrupted"},
	} {
		var rec executortest.Recorder
		start := t0.Add(c.start)
		lat := c.it.Latency(start)
		if lat.Enabled() != (c.want != nil) {
			t.Errorf("%s: Enabled() = %v", c.name, lat.Enabled())
		}
		sent := start.Add(ms(1))
		if c.cut > 0 {
			lat.Interrupted(&rec, m, tags, sent, sent.Add(c.cut))
		} else {
			lat.Record(&rec, m, tags, sent.Add(c.d), c.d)
		}
		got := rec.Samples()
		if len(got) != len(c.want) {
			t.Fatalf("%s: %d samples, want %v", c.name, len(got), c.want)
		}
		for k, s := range got {
			if s.Value != c.want[k] || s.Metric != m || !s.Tags.Contains(tags) {
				t.Errorf("%s: sample %d = %v %v, want %v with the request's tags", c.name, k, s.Value, s.Tags, c.want[k])
			}
			if o, _ := s.Tags.Get("outcome"); o != c.tagged {
				t.Errorf("%s: sample %d outcome=%q, want %q", c.name, k, o, c.tagged)
			}
			if b, _ := s.Tags.Get("backfilled"); (b == "true") != (k > 0) {
				t.Errorf("%s: sample %d backfilled=%q", c.name, k, b)
			}
		}
	}
	if fill.Requests != 2 || fill.Filled != 3 {
		t.Errorf("back-fill tallies %d requests, %d filled; want 2 and 3", fill.Requests, fill.Filled)
	}
}

// A Detached copy records what its Latency would, and its back-fill
// tallies reach the VU's account only when Join adds them.
func TestLatencyDetachedJoins(t *testing.T) {
	m := metrics.RegisterBuiltin(metrics.NewRegistry()).CorrectedLatency
	t0 := time.Unix(100, 0)
	fill := &executor.BackFiller{Interval: 10 * time.Millisecond}
	lat := executor.Iteration{BackFill: fill}.Latency(t0)
	d := lat.Detached()
	var rec executortest.Recorder
	d.Record(&rec, m, metrics.EmptyTags, t0, 35*time.Millisecond)
	if got := len(rec.Samples()); got != 3 {
		t.Fatalf("detached back-fill recorded %d samples, want 3 (35, 25, 15)", got)
	}
	if fill.Requests != 0 || fill.Filled != 0 {
		t.Fatalf("the detached copy tallied into the VU's account before Join: %+v", *fill)
	}
	lat.Join(d)
	if fill.Requests != 1 || fill.Filled != 2 {
		t.Errorf("after Join the account is %+v, want 1 request, 2 filled", *fill)
	}
	lat.Join(lat) // its own account adds nothing twice
	if fill.Requests != 1 {
		t.Errorf("joining a Latency with itself counted again: %+v", *fill)
	}

	open := executor.Iteration{Intended: t0}.Latency(t0.Add(30 * time.Millisecond))
	var orec executortest.Recorder
	open.Detached().Record(&orec, m, metrics.EmptyTags, t0, 12*time.Millisecond)
	if s := orec.Samples(); len(s) != 1 || s[0].Value != 42 {
		t.Errorf("detached open-model copy recorded %v, want 42 (12 + 30 lag)", s)
	}
}

// The first example of issue 22: an open model at 80/s whose iterations
// send a 10 ms request and then sleep 100 ms. With enough VUs no arrival
// is late, so corrected_latency is exactly the requests' own 10 ms: the
// sleep is think time, not latency (iteration_duration is 110 ms). With
// too few VUs (4 for the 9 that 80/s × 110 ms needs) arrivals start late,
// and that lateness, and only it, is added: every corrected value is 10 ms
// plus the iteration's schedule_lag.
func TestLatencyOpenModelLeavesOutThinkTime(t *testing.T) {
	for _, c := range []struct {
		vus  int
		late bool
	}{{16, false}, {4, true}} {
		synctest.Test(t, func(t *testing.T) {
			h := newArrivalHarness(executortest.Constant(10*time.Millisecond), c.vus)
			h.pool.Think = executortest.Constant(100 * time.Millisecond)
			cfg := arrivalParse(t, `{"executor":"intended-arrival-rate","rate":80,"duration":"1s","preAllocatedVUs":`+strconv.Itoa(c.vus)+`}`)
			a, _ := h.run(t, t.Context(), cfg)
			if a.Intended != 80 || a.Completed != 80 {
				t.Fatalf("%d VUs: account %+v, want 80 intended and completed", c.vus, a)
			}
			lat := h.pool.Rec.Of(h.m.CorrectedLatency, nil)
			lags := h.pool.Rec.Of(h.m.ScheduleLag, nil)
			durs := h.pool.Rec.Of(h.m.IterationDuration, nil)
			if len(lat) != 80 || len(lags) != 80 {
				t.Fatalf("%d VUs: %d corrected and %d lag samples, want 80 each", c.vus, len(lat), len(lags))
			}
			var late int
			want := make([]float64, len(lags))
			for k, lag := range lags {
				if durs[k] != 110 {
					t.Fatalf("iteration_duration %v ms, want 110", durs[k])
				}
				want[k] = 10 + lag
				if lag > 0 {
					late++
				}
			}
			slices.Sort(want)
			if got := slices.Sorted(slices.Values(lat)); !slices.Equal(got, want) {
				t.Errorf("%d VUs: corrected_latency %v, want 10 ms plus each lag: %v", c.vus, got, want)
			}
			if (late > 0) != c.late {
				t.Errorf("%d VUs: %d arrivals late", c.vus, late)
			}
		})
	}
}
