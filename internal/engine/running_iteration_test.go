package engine

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/metrics"
)

// longScript's iterations record one failing http_req_duration sample at
// their start and then block for work (as sleep() does: the VU's buffer is
// parked meanwhile), so the sample can only reach the metrics engine
// through the run's flush of parked buffers. park=false keeps the buffer
// with its owner, which is what the test contrasts with.
type longScript struct {
	fakeScript
	park bool
}

func (s *longScript) NewVU(_ context.Context, id uint64, rec metrics.Recorder) (executor.VU, error) {
	return &longVU{id: id, rec: rec, s: s}, nil
}

type longVU struct {
	id  uint64
	rec metrics.Recorder
	s   *longScript
}

func (v *longVU) ID() uint64                 { return v.id }
func (v *longVU) Recorder() metrics.Recorder { return v.rec }

func (v *longVU) Run(ctx context.Context, it executor.Iteration) executor.Result {
	start := time.Now()
	tags := metrics.EmptyTags.With("scenario", it.Scenario.Name)
	v.rec.Record(metrics.Sample{Metric: v.s.b.HTTPReqDuration, Tags: tags, Time: start, Value: 500})
	if p, ok := v.rec.(metrics.Parker); ok && v.s.park {
		p.Park()
		defer p.Unpark()
	}
	select {
	case <-time.After(v.s.work):
		return executor.Result{Outcome: executor.Completed, Start: start, End: time.Now(), Tags: tags}
	case <-ctx.Done():
		return executor.Result{Outcome: executor.Interrupted, Start: start, End: time.Now(), Tags: tags}
	}
}

// Samples reach the metrics engine while an iteration runs (#15 item 3): a
// 10 s iteration's first sample, recorded before it blocks, fails an
// abortOnFail threshold at the first evaluation (thresholdInterval, 2 s of
// virtual time) instead of when the iteration ends. The same run with the
// buffer not parked aborts only after the iteration's 10 s, which shows
// that the parked-buffer flush, and nothing else, brings the sample early.
func TestRunningIterationSamplesReachThresholds(t *testing.T) {
	const work = 10 * time.Second
	opts := `{
		"scenarios": {"main": {"executor": "constant-vus", "vus": 1, "duration": "30s", "gracefulStop": "0s"}},
		"thresholds": {"http_req_duration": [{"threshold": "max<100", "abortOnFail": true}]}
	}`
	run := func(park bool) (time.Duration, map[string]any) {
		var (
			el     time.Duration
			export map[string]any
		)
		synctest.Test(t, func(t *testing.T) {
			s := &longScript{fakeScript: fakeScript{work: work}, park: park}
			start := time.Now()
			var (
				err error
				out string
			)
			err, out, export = runFake(t, context.Background(), s, opts, nil)
			el = time.Since(start)
			if exitcode.Of(err) != exitcode.ThresholdsFailed {
				t.Fatalf("park=%v: exit code %d (%v), want 99\n%s", park, exitcode.Of(err), err, out)
			}
		})
		return el, export
	}

	el, export := run(true)
	// The sample is flushed by the 50 ms flush loop once it is
	// BufferMaxAge old, long before the evaluation at 2 s, which aborts.
	if el != thresholdInterval {
		t.Errorf("parked: aborted after %v, want at the first evaluation, %v", el, thresholdInterval)
	}
	if got := metricValue(t, export, "http_req_duration", "max"); got != 500 {
		t.Errorf("http_req_duration max = %v, want the 500 recorded", got)
	}

	el, _ = run(false)
	// Unparked, the sample waits in the buffer until the iteration ends
	// at 10 s; the next evaluation, at 10 s, aborts.
	if el < work {
		t.Errorf("not parked: aborted after %v, before the iteration ended at %v; the control is broken", el, work)
	}
}
