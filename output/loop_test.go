package output

import (
	"errors"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/metrics"
)

// The loop ingests batches, ticks on the period of the bubble's virtual
// clock, and at Stop drains the inbox before its final step, then runs
// finish once; a later Stop returns the same error.
func TestLoopLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu      sync.Mutex
			events  []string
			samples int
		)
		note := func(e string) { mu.Lock(); events = append(events, e); mu.Unlock() }
		l := NewLoop(4, time.Second, LoopSteps{
			Ingest: func(b []metrics.Sample) { mu.Lock(); samples += len(b); mu.Unlock() },
			Tick:   func() { note("tick") },
			Final:  func() { mu.Lock(); events = append(events, "final", strconv.Itoa(samples)); mu.Unlock() },
		})
		if err := l.Stop(0, func(bool) error { return errors.New("finish before Start") }); err != nil {
			t.Fatalf("Stop before Start = %v, want nil", err)
		}
		l.Start()
		l.AddSamples(make([]metrics.Sample, 3))
		time.Sleep(2500 * time.Millisecond)
		l.AddSamples(make([]metrics.Sample, 2))
		calls := 0
		want := errors.New("closed")
		if err := l.Stop(0, func(bool) error { calls++; note("finish"); return want }); err != want {
			t.Fatalf("Stop = %v, want %v", err, want)
		}
		if err := l.Stop(0, func(bool) error { calls++; return nil }); err != want || calls != 1 {
			t.Fatalf("second Stop = %v after %d finish calls, want the first error and 1 call", err, calls)
		}
		got := []string{"tick", "tick", "final", "5", "finish"}
		if len(events) != len(got) {
			t.Fatalf("events %v, want %v", events, got)
		}
		for i := range got {
			if events[i] != got[i] {
				t.Fatalf("events %v, want %v", events, got)
			}
		}
	})
}

// A final step that never ends leaves Stop after its timeout, with finish
// told so; samples offered beyond the buffer are counted as dropped.
func TestLoopStuckStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		l := NewLoop(1, time.Second, LoopSteps{
			Ingest: func([]metrics.Sample) {},
			Final:  func() { <-release },
		})
		l.Start()
		start := time.Now()
		var gotStuck bool
		_ = l.Stop(5*time.Second, func(s bool) error { gotStuck = s; return nil })
		if !gotStuck || time.Since(start) != 5*time.Second {
			t.Errorf("stuck=%v after %v, want true after 5s", gotStuck, time.Since(start))
		}
		close(release)
		synctest.Wait()
	})
	l := NewLoop(1, time.Second, LoopSteps{Ingest: func([]metrics.Sample) {}})
	l.AddSamples(make([]metrics.Sample, 2))
	l.AddSamples(make([]metrics.Sample, 3))
	if l.Dropped() != 3 {
		t.Errorf("dropped %d, want the 3 samples of the batch that did not fit", l.Dropped())
	}
}
