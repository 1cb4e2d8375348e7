package engine

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// TestCapGarbageLowersGOGCForLargeHeaps checks that a heap well above
// garbageBudget gets a lower collector target, within [minGCPercent,
// 100), and that a GOGC the user changed is left alone.
func TestCapGarbageLowersGOGCForLargeHeaps(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)

	live := make([][]byte, 3*garbageBudget>>20)
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	runtime.GC()
	capGarbage(0)
	got := debug.SetGCPercent(100)
	runtime.KeepAlive(live)
	// At three budgets of live heap the target is about a third of 100.
	if got < minGCPercent || got > 40 {
		t.Fatalf("GOGC %d after capGarbage with %d MB live, want about 33 (at least %d)", got, len(live), minGCPercent)
	}

	debug.SetGCPercent(150)
	capGarbage(0)
	if got := debug.SetGCPercent(100); got != 150 {
		t.Fatalf("a GOGC of 150 set by the user became %d", got)
	}
}

// TestCapGarbageCountsTheVUsStacks checks that the stacks of the VUs'
// goroutines, which start after capGarbage runs, count towards the heap
// the garbage budget is a share of: with no heap to speak of, enough VUs
// that their stacks are three budgets lower GOGC to about 33.
func TestCapGarbageCountsTheVUsStacks(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	capGarbage(3 * garbageBudget / vuStack)
	if got := debug.SetGCPercent(100); got < minGCPercent || got > 34 {
		t.Fatalf("GOGC %d after capGarbage with three budgets of VU stacks, want about 33", got)
	}
}
