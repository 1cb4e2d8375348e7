package modules

import (
	"context"
	"net"
	"sync"
	"sync/atomic"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/metrics"
)

// InletVU is implemented by VUs that offer modules a VUInlet: a way in
// for samples that belong to the VU but are recorded off its goroutine,
// as k6's extension API lets extensions push them (lib.State.Samples).
type InletVU interface {
	// Inlet returns the VU's inlet, the same one every time in a run.
	// Call it on the VU's goroutine, outside the init context.
	Inlet() *VUInlet
}

// VUInlet takes one VU's samples from any goroutine into the run's
// metrics.Inlet by the rules its Recorder follows on the VU's goroutine:
//
//   - the gate: while the VU runs setup, an iteration or teardown, Send
//     passes samples on; once that call's context ended (an interruption)
//     or the call returned, it drops them, as k6 drops a sample pushed on
//     an iteration's done context;
//   - latency trends: a sample of one of options.latencyTrends also
//     records its corrected_latency through the current call's
//     executor.Latency (the iteration's lag in an open model, back-filled
//     in a closed one that back-fills, nothing in setup and teardown),
//     exactly as executor.LatencyRecorder does on the VU's goroutine.
//
// It also counts the bytes of the connections a module opens itself
// (Count): the VU adds them to the call's data_sent and data_received
// when the call ends, as k6's dialer's bytes are. The VU calls Open and
// Close around each call; modules call Send and Count.
type VUInlet struct {
	run       *metrics.Inlet
	corrected *metrics.Metric
	trends    []*metrics.Metric

	sent, received atomic.Int64

	mu sync.Mutex
	// call is the current call's context, nil between calls.
	call    context.Context
	latency executor.Latency
	rec     *executor.LatencyRecorder
	batch   batch
}

// NewVUInlet returns a VU's inlet into run; corrected and trends are the
// run's corrected_latency and latency trends (none: samples pass as they
// are).
func NewVUInlet(run *metrics.Inlet, corrected *metrics.Metric, trends []*metrics.Metric) *VUInlet {
	p := &VUInlet{run: run, corrected: corrected, trends: trends}
	if corrected != nil && len(trends) > 0 {
		p.rec = executor.NewLatencyRecorder(&p.batch, &p.latency, corrected, trends)
	}
	return p
}

// Open starts a call (setup, an iteration, teardown) whose context is ctx
// and whose requests record corrected_latency through latency. On the
// VU's goroutine.
func (p *VUInlet) Open(ctx context.Context, latency executor.Latency) {
	p.mu.Lock()
	p.call = ctx
	p.latency = latency.Detached()
	p.mu.Unlock()
}

// Close ends the call Open started: later samples are dropped, the
// back-fill tallies of what was sent join latency's account (the one
// given to Open), and the bytes counted since the last Close are
// returned. On the VU's goroutine.
func (p *VUInlet) Close(latency executor.Latency) (sent, received int64) {
	p.mu.Lock()
	p.call = nil
	latency.Join(p.latency)
	p.latency = executor.Latency{}
	p.mu.Unlock()
	return p.sent.Swap(0), p.received.Swap(0)
}

// Send hands batch to the run unless ctx (the pusher's; nil for none) or
// the VU's current call ended, or the VU runs no call, and reports
// whether it did. The batch belongs to the run afterwards. It may block
// while the engine is behind; safe from any goroutine.
func (p *VUInlet) Send(ctx context.Context, batch []metrics.Sample) bool {
	if ctx != nil && ctx.Err() != nil {
		return false
	}
	p.mu.Lock()
	if p.call == nil || p.call.Err() != nil {
		p.mu.Unlock()
		return false
	}
	if p.rec != nil {
		p.batch = make([]metrics.Sample, 0, len(batch)+1)
		for _, s := range batch {
			p.rec.Record(s)
		}
		batch, p.batch = p.batch, nil
	}
	p.mu.Unlock()
	p.run.Send(batch)
	return true
}

// Count returns c counting the bytes it reads and writes into the VU's
// data_received and data_sent.
func (p *VUInlet) Count(c net.Conn) net.Conn { return &countedConn{Conn: c, p: p} }

// batch is a Recorder that appends.
type batch []metrics.Sample

func (b *batch) Record(s metrics.Sample) { *b = append(*b, s) }

// countedConn counts a connection's bytes into its VU's inlet.
type countedConn struct {
	net.Conn
	p *VUInlet
}

func (c *countedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.p.received.Add(int64(n))
	return n, err
}

func (c *countedConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.p.sent.Add(int64(n))
	return n, err
}
