package ctxwatch

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// counter is a Waker that counts its wakes and closes woke on the first.
type counter struct {
	n    atomic.Int32
	woke chan struct{}
}

func newCounter() *counter { return &counter{woke: make(chan struct{})} }

func (c *counter) Wake() {
	if c.n.Add(1) == 1 {
		close(c.woke)
	}
}

// woken waits up to a minute for c's first wake: the wake runs on a
// goroutine of the watch's, which a loaded machine may start late.
func woken(c *counter) bool {
	select {
	case <-c.woke:
		return true
	case <-time.After(time.Minute):
		return false
	}
}

// watches is how many contexts the registry watches now.
func watches() int {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return len(registry.watches)
}

// watched reports whether the registry holds a watch of ctx.
func watched(ctx context.Context) bool {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return registry.watches[ctx] != nil
}

// settled waits up to a minute for every watch to have fired or stopped:
// a Watch of a context that has ended already leaves a watch until its
// AfterFunc, on a goroutine a loaded machine may start late, removes it.
func settled() bool {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if watches() == 0 {
			return true
		}
	}
	return false
}

// TestOneContextWakesEveryWatcher registers many watchers on one context,
// stops every third before it is cancelled and checks that the others
// are each woken once and the stopped ones never, through one watch.
func TestOneContextWakesEveryWatcher(t *testing.T) {
	const n = 3000
	ctx, cancel := context.WithCancel(context.Background())
	hs := make([]Handle, n)
	cs := make([]*counter, n)
	for i := range hs {
		cs[i] = newCounter()
		hs[i].Watch(ctx, cs[i])
	}
	if got := watches(); got != 1 {
		t.Fatalf("%d watchers of one context made %d watches, want 1", n, got)
	}
	for i := 0; i < n; i += 3 {
		if !hs[i].Stop() {
			t.Fatalf("Stop of watcher %d before the end: false, want true", i)
		}
	}
	cancel()
	for i := range hs {
		if i%3 == 0 {
			continue
		}
		if !woken(cs[i]) {
			t.Fatalf("watcher %d was not woken when its context ended", i)
		}
	}
	for i := range hs {
		want := int32(1)
		if i%3 == 0 {
			want = 0
		}
		if got := cs[i].n.Load(); got != want {
			t.Errorf("watcher %d woken %d times, want %d", i, got, want)
		}
		if i%3 != 0 && hs[i].Stop() {
			t.Errorf("Stop of watcher %d after its wake: true, want false", i)
		}
	}
	if got := watches(); got != 0 {
		t.Errorf("%d watches left once the context ended, want 0", got)
	}
}

// TestStoppedWatchersLeaveNoWatch checks that the last Stop removes the
// context's watch, so that the registry does not keep contexts that are
// no longer watched, and that a later Watch of it works.
func TestStoppedWatchersLeaveNoWatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var a, b Handle
	a.Watch(ctx, newCounter())
	b.Watch(ctx, newCounter())
	a.Stop()
	if got := watches(); got != 1 {
		t.Fatalf("%d watches with one watcher left, want 1", got)
	}
	b.Stop()
	if got := watches(); got != 0 {
		t.Fatalf("%d watches with no watcher left, want 0", got)
	}
	c := newCounter()
	a.Watch(ctx, c)
	cancel()
	if !woken(c) {
		t.Fatal("a watcher registered again was not woken")
	}
}

// TestWatchMovesAndEndedContexts checks that watching another context
// stops the first registration, that a context which has already ended
// wakes at once, and Context.
func TestWatchMovesAndEndedContexts(t *testing.T) {
	first, cancelFirst := context.WithCancel(context.Background())
	second, cancelSecond := context.WithCancel(context.Background())
	defer cancelSecond()
	var h Handle
	c := newCounter()
	h.Watch(first, c)
	h.Watch(second, c)
	if h.Context() != second {
		t.Fatal("Context is not the context watched last")
	}
	cancelFirst()
	time.Sleep(10 * time.Millisecond)
	if c.n.Load() != 0 {
		t.Fatal("the end of a context no longer watched woke the watcher")
	}
	h.Stop()
	if h.Context() != nil {
		t.Fatal("Context after Stop is not nil")
	}
	ended := newCounter()
	h.Watch(first, ended)
	if !woken(ended) {
		t.Fatal("watching a context that had ended did not wake")
	}
}

// TestConcurrentWatchersAndCancel runs watchers that register and stop
// over and over on their own goroutines while the context ends: each is
// woken at most once per registration, every one still registered at the
// end is woken, and the race detector sees the locking.
func TestConcurrentWatchersAndCancel(t *testing.T) {
	const n, rounds = 64, 200
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	cs := make([]*counter, n)
	hs := make([]Handle, n)
	for i := range n {
		cs[i] = newCounter()
		wg.Go(func() {
			for range rounds {
				hs[i].Watch(ctx, cs[i])
				if !hs[i].Stop() {
					// Woken meanwhile: it stays woken from now on.
					hs[i].Watch(ctx, cs[i])
					return
				}
			}
			hs[i].Watch(ctx, cs[i])
		})
	}
	time.Sleep(time.Millisecond)
	cancel()
	wg.Wait()
	for i, c := range cs {
		if !woken(c) {
			t.Fatalf("watcher %d, registered when its context ended, was not woken", i)
		}
		if got := c.n.Load(); got > 2 {
			t.Errorf("watcher %d woken %d times, want at most 2 (once per registration it made after the end)", i, got)
		}
	}
	if !settled() {
		t.Errorf("%d watches left a minute after their context ended, want 0", watches())
	}
}

// TestNeverEndingContextHoldsNoWatcher checks that a context that can
// never end is remembered by the Handle alone: the registry keeps no
// watch of it, which would keep every watcher ever dropped without Stop.
func TestNeverEndingContextHoldsNoWatcher(t *testing.T) {
	ctx := context.Background()
	var h Handle
	h.Watch(ctx, newCounter())
	if watched(ctx) {
		t.Fatal("the registry watches a context that never ends")
	}
	if h.Context() != ctx {
		t.Fatal("Context is not the context watched")
	}
	if !h.Stop() {
		t.Fatal("Stop of a watcher of a context that never ends: false, want true")
	}
	if h.Context() != nil {
		t.Fatal("Context after Stop is not nil")
	}
}
