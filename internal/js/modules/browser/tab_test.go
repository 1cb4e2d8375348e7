package browser

import (
	"context"
	"errors"
	"testing"
	"time"
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
