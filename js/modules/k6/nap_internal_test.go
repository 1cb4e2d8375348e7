package k6

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestNapperSleepsAndWakesOnCancel checks the three ways a sleep ends, in
// virtual time: its full duration, the end of its context, and a context
// that had already ended.
func TestNapperSleepsAndWakesOnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n napper
		ctx, cancel := context.WithCancel(t.Context())
		start := time.Now()
		if !n.sleep(ctx, time.Second) {
			t.Fatal("an uninterrupted sleep reported an interruption")
		}
		if got := time.Since(start); got != time.Second {
			t.Fatalf("slept %v, want 1s", got)
		}

		time.AfterFunc(300*time.Millisecond, cancel)
		start = time.Now()
		if n.sleep(ctx, time.Second) {
			t.Fatal("a sleep whose context ended reported no interruption")
		}
		if got := time.Since(start); got != 300*time.Millisecond {
			t.Fatalf("the cancelled sleep lasted %v, want 300ms", got)
		}

		start = time.Now()
		if n.sleep(ctx, time.Second) || time.Since(start) != 0 {
			t.Fatal("a sleep on an ended context did not return at once with false")
		}
	})
}

// TestNapperNewContextSleepsInFull checks that the watch of an ended
// context cannot cut short a sleep on the next one, even when the timer
// fired for the old context was never received.
func TestNapperNewContextSleepsInFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n napper
		old, cancel := context.WithCancel(t.Context())
		n.sleep(old, time.Millisecond)
		cancel() // fires the timer with nobody waiting on it
		synctest.Wait()

		start := time.Now()
		if !n.sleep(t.Context(), 2*time.Second) {
			t.Fatal("a sleep on a live context reported an interruption")
		}
		if got := time.Since(start); got != 2*time.Second {
			t.Fatalf("slept %v after the old context ended, want 2s", got)
		}
	})
}

// TestNapperSleepAllocatesNothing checks that the timer and the watch are
// made once per context, not once per sleep.
func TestNapperSleepAllocatesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n napper
		ctx := t.Context()
		n.sleep(ctx, time.Millisecond)
		if a := testing.AllocsPerRun(50, func() { n.sleep(ctx, time.Millisecond) }); a != 0 {
			t.Fatalf("%v allocations per sleep, want 0", a)
		}
	})
}
