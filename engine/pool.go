package engine

import (
	"context"
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
