package executortest_test

import (
	"context"
	"testing"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
)

// atStop is a manual clock on which every wait reaches its end and the
// stop together: NewTimer advances the clock by the wait and calls stop,
// so the timer and the context are ready at once when the wait begins.
type atStop struct {
	*clock.Manual
	stop context.CancelFunc
}

func (c atStop) NewTimer(d time.Duration) clock.Timer {
	t := c.Manual.NewTimer(d)
	c.Advance(d)
	c.stop()
	return t
}

// A fake VU whose work ends at the very instant its context is done
// reports the iteration completed, as a real VU does whose code returned,
// whichever of the two its wait sees first. Before, it picked at random,
// and TestClosedProperty/37/shared-iterations failed about one run in 300
// on an iteration that ended exactly at the hard stop. 64 waits, each a
// coin toss for the old fake, make the old behaviour fail all but once in
// 2^64 runs.
func TestWorkEndingAtStopCompletes(t *testing.T) {
	for range 64 {
		ctx, cancel := context.WithCancel(t.Context())
		p := executortest.NewPool(atStop{clock.NewManual(time.Unix(0, 0)), cancel}, executortest.Constant(time.Second))
		p.Preallocate(1)
		vu, err := p.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		res := vu.Run(ctx, executor.Iteration{})
		if res.Outcome != executor.Completed || res.End.Sub(res.Start) != time.Second {
			t.Fatalf("work of 1s that ended as the context was done: %v after %v, want completed after 1s",
				res.Outcome, res.End.Sub(res.Start))
		}
		// Work cut short by the stop is interrupted, and a VU does not
		// start an iteration whose context is already done.
		if res := vu.Run(ctx, executor.Iteration{}); res.Outcome != executor.Interrupted {
			t.Fatalf("an iteration started after the stop: %v, want interrupted", res.Outcome)
		}
	}
}
