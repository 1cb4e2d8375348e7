package engine

import (
	"context"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"sync"
	"sync/atomic"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/metrics"
)

// pool is the run's VU pool, shared by every scenario. VUs are made by the
// script (which runs the init context) and never destroyed before the end.
type pool struct {
	script Script
	newRec func() metrics.VURecorder
	state  *executor.State

	mu   sync.Mutex
	idle []executor.VU
	all  []executor.VU
	// recs are the recorders handed to the VUs of all, in the same order:
	// the engine flushes them through their declared interface.
	recs []metrics.VURecorder

	nextID atomic.Uint64
}

func newPool(s Script, state *executor.State, newRec func() metrics.VURecorder) *pool {
	return &pool{script: s, state: state, newRec: newRec}
}

// Preallocate initialises n VUs, two at a time per core, before the test
// starts, so that no scenario waits for an initialisation at its start.
// Once ctx ends no further VU is started and ctx's error is returned.
func (p *pool) Preallocate(ctx context.Context, n int, workers int) error {
	if n <= 0 {
		return nil
	}
	workers = max(1, min(workers, n))
	var (
		wg       sync.WaitGroup
		firstErr error
		errOnce  sync.Once
		left     atomic.Int64
	)
	left.Store(int64(n))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if err := ctx.Err(); err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				vu, err := p.make(ctx)
				if err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				p.Put(vu)
			}
		}()
	}
	wg.Wait()
	capGarbage(p.Initialized())
	if err := ctx.Err(); err != nil {
		// An initialisation cut short by ctx fails with an error of its
		// own; the reason is that ctx ended.
		return err
	}
	return firstErr
}

func (p *pool) make(ctx context.Context) (executor.VU, error) {
	id := p.nextID.Add(1)
	rec := p.newRec()
	vu, err := p.script.NewVU(ctx, id, rec)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.all = append(p.all, vu)
	p.recs = append(p.recs, rec)
	p.mu.Unlock()
	p.state.VUsInitialized.Add(1)
	return vu, nil
}

// Get returns an idle VU, initialising a new one when none is idle.
func (p *pool) Get(ctx context.Context) (executor.VU, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		vu := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return vu, nil
	}
	p.mu.Unlock()
	return p.make(ctx)
}

// Put returns a VU to the pool.
func (p *pool) Put(vu executor.VU) {
	p.mu.Lock()
	p.idle = append(p.idle, vu)
	p.mu.Unlock()
}

// Initialized is the number of VUs made so far.
func (p *pool) Initialized() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.all)
}

// EachRecorder calls f with the recorder of every VU made so far. recs
// only grows and its elements never change, so the prefix seen under the
// lock can be read after it without a copy (the 50 ms flush loop calls
// EachRecorder).
func (p *pool) EachRecorder(f func(metrics.VURecorder)) {
	p.mu.Lock()
	recs := p.recs[:len(p.recs):len(p.recs)]
	p.mu.Unlock()
	for _, rec := range recs {
		f(rec)
	}
}

// garbageBudget is how much garbage the heap may hold, above what is
// live, once the VUs are made. Go's default (GOGC=100) lets it grow by as
// much as is live, stacks included: with 10,000 idle VUs some 130 MB
// more, which the garbage of their iterations (mostly flushed sample
// batches) filled by about 80 MB within a 20 s test.
const garbageBudget = 32 << 20

// minGCPercent bounds how often the collector may run for a large heap:
// at 25 each collection follows at least a fifth of the live heap in new
// allocations.
const minGCPercent = 25

// vuStack is the goroutine stack an idle VU holds once the run starts it
// (TestIdleVUStacksStaySmall: 4 KB for most).
const vuStack = 4 << 10

// capGarbage lowers the collector's target (GOGC) so that the garbage
// allowed above the live heap stays within garbageBudget, but not below
// minGCPercent. It does nothing while the heap is small enough for the
// default, or when GOGC was set to anything but the default of 100. It
// runs before the vus VUs' goroutines exist, and the collector counts
// their stacks in its target once they do, so it counts them too: left
// out, they raised the garbage allowed at 10,000 idle VUs from 32 to
// about 42 MB (GOGC 40 for 79 MB of objects and 40 MB of stacks).
func capGarbage(vus int) {
	// The heap's objects now, rather than the live heap as of the last
	// collection, which can be half of them at the end of making VUs;
	// making VUs leaves little garbage.
	s := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}
	rtmetrics.Read(s)
	scanned := uint64(vus) * vuStack
	for _, x := range s {
		if x.Value.Kind() == rtmetrics.KindUint64 {
			scanned += x.Value.Uint64()
		}
	}
	if scanned <= garbageBudget {
		return
	}
	percent := max(minGCPercent, int(100*garbageBudget/scanned))
	if prev := debug.SetGCPercent(percent); prev != 100 {
		debug.SetGCPercent(prev)
	}
}
