// Package ctxwatch wakes many watchers when a context ends through one
// context.AfterFunc per context, where each VU used to register its own:
// an AfterFunc costs about 190 bytes of heap for as long as it is in
// place (its context, its entry in the parent's children and two
// closures), and every idle VU kept two of them on the same context
// (docs/performance.md, "What an idle VU holds"). A watcher costs a
// Handle (16 bytes, inside its owner) and an entry of 24 bytes here.
package ctxwatch

import (
	"context"
	"sync"
)

// A Waker is what a watch wakes when its context ends. Wake runs on a
// goroutine of the watch's, once per registration, and must not block.
type Waker interface{ Wake() }

// Handle is one watcher's registration. Its zero value is not registered.
// A Handle belongs to one goroutine at a time: Watch and Stop must not run
// concurrently on the same Handle.
type Handle struct {
	w *watch // the watch registered with, nil when none; only its owner writes it
	i int    // the index of the entry in w.entries, -1 once w has fired; under w.mu
}

// entry is a registered watcher.
type entry struct {
	h    *Handle
	wake Waker
}

// watch is the one AfterFunc on a context, shared by its watchers; for a
// context that can never end, a watcher's own record of it, without stop.
type watch struct {
	ctx  context.Context
	stop func() bool

	mu      sync.Mutex
	entries []entry
}

// registry holds the watch of each context that has one.
var registry struct {
	mu      sync.Mutex
	watches map[context.Context]*watch
}

// Watch registers h so that the end of ctx calls wake.Wake once, on
// another goroutine, unless Stop comes first. A Handle still registered is
// stopped first. When ctx has ended already, Wake is called soon.
func (h *Handle) Watch(ctx context.Context, wake Waker) {
	h.Stop()
	if ctx.Done() == nil {
		// It can never end: h only remembers it, and nothing holds h, so
		// that a watcher dropped without Stop is not kept.
		h.w = &watch{ctx: ctx}
		return
	}
	registry.mu.Lock()
	w := registry.watches[ctx]
	if w == nil {
		if registry.watches == nil {
			registry.watches = make(map[context.Context]*watch)
		}
		w = &watch{ctx: ctx}
		registry.watches[ctx] = w
		w.stop = context.AfterFunc(ctx, w.fire)
	}
	// Under registry.mu: a watch that fires deletes itself from the map
	// under it too, so w has not fired, or fires after this entry is in.
	w.mu.Lock()
	h.w, h.i = w, len(w.entries)
	w.entries = append(w.entries, entry{h, wake})
	w.mu.Unlock()
	registry.mu.Unlock()
}

// Stop unregisters h. It reports whether it did so before the context's
// end took h's entry to wake it; false also when h was not registered.
// After a false, Wake may still be running or about to run.
func (h *Handle) Stop() bool {
	w := h.w
	if w == nil {
		return false
	}
	h.w = nil
	if w.stop == nil {
		return true // a context that can never end
	}
	registry.mu.Lock()
	w.mu.Lock()
	if h.i < 0 {
		w.mu.Unlock()
		registry.mu.Unlock()
		return false
	}
	last := len(w.entries) - 1
	if h.i != last {
		moved := w.entries[last]
		w.entries[h.i] = moved
		moved.h.i = h.i
	}
	w.entries[last] = entry{}
	w.entries = w.entries[:last]
	empty := last == 0
	w.mu.Unlock()
	if empty && w.stop() {
		// No watcher is left and the context has not ended: the next
		// Watch on it makes a new watch.
		delete(registry.watches, w.ctx)
	}
	registry.mu.Unlock()
	return true
}

// Context is the context h watches, nil when h is not registered.
func (h *Handle) Context() context.Context {
	if h.w == nil {
		return nil
	}
	return h.w.ctx
}

// fire wakes every watcher registered with w; the AfterFunc calls it when
// the context ends.
func (w *watch) fire() {
	registry.mu.Lock()
	if registry.watches[w.ctx] == w {
		delete(registry.watches, w.ctx)
	}
	w.mu.Lock()
	entries := w.entries
	w.entries = nil
	for _, e := range entries {
		e.h.i = -1
	}
	w.mu.Unlock()
	registry.mu.Unlock()
	for _, e := range entries {
		e.wake.Wake()
	}
}
