package browser

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/chromedp/cdproto/inspector"

	"github.com/metronome-load/metronome/metrics"
)

// A crash releases a command already waiting for the renderer's answer
// with k6's error, and later commands fail at once without reaching the
// (nil) target.
func TestTabCrashReleasesWaiters(t *testing.T) {
	s := newTab(nil)
	ctx, done := s.bind(context.Background())
	defer done()
	if s.crashed() || ctx.Err() != nil {
		t.Fatal("a fresh tab counts as crashed")
	}
	s.crash()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a crash did not end the waiting command's context")
	}
	if err := s.result(ctx, ctx.Err()); !errors.Is(err, errTargetCrashed) {
		t.Errorf("waiting command failed with %v, want %v", err, errTargetCrashed)
	}
	if err := s.Call(context.Background(), "Runtime.evaluate", nil, nil); !errors.Is(err, errTargetCrashed) {
		t.Errorf("command after the crash: %v, want %v", err, errTargetCrashed)
	}
	if err := s.keys(context.Background(), "a"); !errors.Is(err, errTargetCrashed) {
		t.Errorf("keys after the crash: %v, want %v", err, errTargetCrashed)
	}
	// An error of a live tab is its own.
	live := newTab(nil)
	lctx, ldone := live.bind(context.Background())
	defer ldone()
	other := errors.New("other")
	if err := live.result(lctx, other); err != other {
		t.Errorf("live tab's error became %v", err)
	}
}

// Chromium's crash event ends a page's wait for a load state at once with
// k6's error, for each kind of wait; without it the wait would last until
// its context ends (here 10 s).
func TestPageWaitEndsOnCrash(t *testing.T) {
	for _, state := range []string{"load", "domcontentloaded", "networkidle"} {
		t.Run(state, func(t *testing.T) {
			p := &page{t: newTab(nil), changed: make(chan struct{}),
				net: newNetTracker(nil, nil, func([]metrics.Sample) {})}
			if state == "networkidle" {
				// Loaded, with a request that never ends.
				p.loadGen, p.net.inflight = 1, 1
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			errc := make(chan error, 1)
			go func() { errc <- p.waitLoadState(ctx, 1, state) }()
			time.Sleep(50 * time.Millisecond) // let it wait; a crash found before waiting is the same
			p.onEvent(&inspector.EventTargetCrashed{})
			if err := <-errc; !errors.Is(err, errTargetCrashed) {
				t.Errorf("wait ended with %v, want %v", err, errTargetCrashed)
			}
		})
	}
}
