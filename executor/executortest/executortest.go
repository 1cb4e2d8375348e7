// Package executortest provides fake VUs, a fake pool and a recording
// recorder for testing executors without JavaScript. Run executors under
// testing/synctest so that the fakes' sleeps are exact virtual time.
package executortest

import (
	"context"
	"sync"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/schedule"
	"github.com/metronome-load/metronome/metrics"
)

// Offsets returns every offset of t, read in order through one of its
// walkers: the intended starts a test checks an arrival executor against.
func Offsets(t schedule.Timetable) []time.Duration {
	var out []time.Duration
	w := t.Walk()
	for i := int64(0); ; i++ {
		off, ok := w.Offset(i)
		if !ok {
			return out
		}
		out = append(out, off)
	}
}

// Recorder keeps every sample, safe for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	samples []metrics.Sample
}

// Record keeps s.
func (r *Recorder) Record(s metrics.Sample) {
	r.mu.Lock()
	r.samples = append(r.samples, s)
	r.mu.Unlock()
}

// Samples returns a copy of the samples recorded so far.
func (r *Recorder) Samples() []metrics.Sample {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]metrics.Sample(nil), r.samples...)
}

// Of returns the values recorded for metric m whose tags contain sel (nil:
// any tags).
func (r *Recorder) Of(m *metrics.Metric, sel *metrics.TagSet) []float64 {
	var vs []float64
	for _, s := range r.Samples() {
		if s.Metric == m && (sel == nil || s.Tags.Contains(sel)) {
			vs = append(vs, s.Value)
		}
	}
	return vs
}

// Sum returns the sum of Of(m, sel).
func (r *Recorder) Sum(m *metrics.Metric, sel *metrics.TagSet) float64 {
	var t float64
	for _, v := range r.Of(m, sel) {
		t += v
	}
	return t
}

// Work decides how long a part of a fake iteration takes: it gets the
// iteration and the moment the part starts, and returns the duration.
type Work func(it executor.Iteration, at time.Time) time.Duration

// Constant returns Work that always takes d.
func Constant(d time.Duration) Work {
	return func(executor.Iteration, time.Time) time.Duration { return d }
}

// Call is one iteration a fake VU ran.
type Call struct {
	VU         uint64
	Iteration  executor.Iteration
	Start, End time.Time
	Outcome    executor.Outcome
}

// VU is a fake VU. Its iteration is one request, which takes Work's
// duration on the clock and records its corrected_latency through the
// iteration's Latency as a module would, and the think time of Pool.Think
// after it (before it with Pool.ThinkFirst), which is not latency.
type VU struct {
	id    uint64
	pool  *Pool
	clock clock.Clock
}

// ID returns the VU number.
func (v *VU) ID() uint64 { return v.id }

// Recorder returns the pool's shared recorder.
func (v *VU) Recorder() metrics.Recorder { return v.pool.Rec }

// Run sleeps through the iteration's think time and request, or until ctx
// is done; a request cut off records its interrupted corrected_latency. A
// wait that ends at the very instant ctx is done completed, as a real
// VU's iteration whose code returned completed whatever its context: in a
// synctest bubble the wait's timer and ctx's deadline then fire together,
// and which one the wait saw first would otherwise decide the outcome at
// random.
func (v *VU) Run(ctx context.Context, it executor.Iteration) executor.Result {
	p := v.pool
	start := v.clock.Now()
	lat := it.Latency(start)
	var trend *executor.LatencyRecorder
	if p.Trend != nil {
		trend = executor.NewLatencyRecorder(p.Rec, &lat, p.Latency, []*metrics.Metric{p.Trend})
	}
	wait := func(d time.Duration) bool {
		from := v.clock.Now()
		return clock.Sleep(v.clock, d, ctx.Done()) || v.clock.Now().Sub(from) >= d
	}
	think := func() bool {
		if p.Think == nil {
			return true
		}
		return wait(p.Think(it, v.clock.Now()))
	}
	request := func() bool {
		sent := v.clock.Now()
		var d time.Duration
		if p.VUWork != nil {
			d = p.VUWork(v.id, it, sent)
		} else {
			d = p.Work(it, sent)
		}
		if !wait(d) {
			if p.Latency != nil && trend == nil {
				lat.Interrupted(p.Rec, p.Latency, p.Tags, sent, v.clock.Now())
			}
			return false
		}
		switch {
		case trend != nil:
			trend.Record(metrics.Sample{Metric: p.Trend, Tags: p.Tags, Time: v.clock.Now(), Value: metrics.Milliseconds(d)})
		case p.Latency != nil:
			lat.Record(p.Rec, p.Latency, p.Tags, v.clock.Now(), d)
		}
		if p.Raw != nil {
			p.Rec.Record(metrics.Sample{Metric: p.Raw, Tags: p.Tags, Time: v.clock.Now(), Value: metrics.Milliseconds(d)})
		}
		return true
	}
	var ok bool
	switch {
	case ctx.Err() != nil: // a real VU does not start an iteration then
	case p.ThinkFirst:
		ok = think() && request()
	default:
		ok = request() && think()
	}
	out := executor.Completed
	if !ok {
		out = executor.Interrupted
	}
	end := v.clock.Now()
	v.pool.mu.Lock()
	v.pool.calls = append(v.pool.calls, Call{VU: v.id, Iteration: it, Start: start, End: end, Outcome: out})
	v.pool.mu.Unlock()
	return executor.Result{Outcome: out, Start: start, End: end, Tags: v.pool.Tags}
}

// Pool is a fake executor.Pool of fake VUs. Initialising a VU takes
// InitDelay of clock time.
type Pool struct {
	Clock clock.Clock
	// Work is how long an iteration's request takes.
	Work Work
	// Think, when set, is the think time after the request; with
	// ThinkFirst, before it.
	Think      Work
	ThinkFirst bool
	// VUWork, when set, replaces Work and also gets the VU's number, for
	// VUs that work at different paces.
	VUWork    func(vu uint64, it executor.Iteration, start time.Time) time.Duration
	InitDelay time.Duration
	// InitErr, when set, makes initialising a new VU fail with it after
	// InitDelay; idle VUs are still handed out.
	InitErr error
	Rec     *Recorder
	// Tags are the tags of the fakes' iteration samples and requests.
	Tags *metrics.TagSet
	// Latency is the metric the requests record corrected_latency into;
	// Deps sets it, and while it is nil they record none.
	Latency *metrics.Metric
	// Raw, when set, is the metric each answered request records its own
	// duration into, as http_req_duration.
	Raw *metrics.Metric
	// Trend, when set, is a latency trend (options.latencyTrends): an
	// answered request records its duration as a sample of it through an
	// executor.LatencyRecorder, as a script's Trend.add does, instead of
	// recording corrected_latency itself; a request cut off records none.
	Trend *metrics.Metric

	mu     sync.Mutex
	idle   []*VU
	made   uint64
	out    int
	maxOut int
	calls  []Call
}

// NewPool returns a pool whose VUs take work per iteration.
func NewPool(c clock.Clock, work Work) *Pool {
	return &Pool{Clock: c, Work: work, Rec: &Recorder{}, Tags: metrics.EmptyTags.With("scenario", "test")}
}

// Preallocate initialises n VUs at once, without delay.
func (p *Pool) Preallocate(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range n {
		p.made++
		p.idle = append(p.idle, &VU{id: p.made, pool: p, clock: p.Clock})
	}
}

// Get returns an idle VU, or initialises one after InitDelay.
func (p *Pool) Get(ctx context.Context) (executor.VU, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		v := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.take()
		p.mu.Unlock()
		return v, nil
	}
	p.mu.Unlock()
	if !clock.Sleep(p.Clock, p.InitDelay, ctx.Done()) {
		return nil, ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.InitErr != nil {
		return nil, p.InitErr
	}
	p.made++
	p.take()
	return &VU{id: p.made, pool: p, clock: p.Clock}, nil
}

func (p *Pool) take() {
	p.out++
	p.maxOut = max(p.maxOut, p.out)
}

// Put returns a VU.
func (p *Pool) Put(v executor.VU) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.out--
	p.idle = append(p.idle, v.(*VU))
}

// Calls returns every iteration run so far, in completion order.
func (p *Pool) Calls() []Call {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Call(nil), p.calls...)
}

// Made is how many VUs were initialised.
func (p *Pool) Made() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.made
}

// Out is how many VUs are taken now; MaxOut the most taken at once.
func (p *Pool) Out() (out, maxOut int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out, p.maxOut
}

// Deps returns executor dependencies wired to the fakes.
func (p *Pool) Deps(reg *metrics.Registry) (executor.Deps, *metrics.Builtin) {
	b := metrics.RegisterBuiltin(reg)
	p.Latency = b.CorrectedLatency
	return executor.Deps{
		Pool:          p,
		Clock:         p.Clock,
		Metrics:       b,
		Tags:          metrics.EmptyTags.With("scenario", "test"),
		IterationTags: p.Tags,
		Recorder:      p.Rec,
		State:         &executor.State{},
		Logf:          func(string, ...any) {},
	}, b
}
