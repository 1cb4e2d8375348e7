package js

import (
	"context"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/metrics"
)

// recordGate is the VU seen as the recorder modules record through
// (State.Recorder): it passes samples to the VU's buffer while the current
// call runs and drops them once the call's context ended, as k6 drops a
// sample pushed on a done context (PushIfNotDone). An iteration cut off by
// the hard stop, an abort or a signal thus adds nothing that its script or
// its modules record after the cut: a check after a ws.connect that
// returned because the VU was stopping, a group's duration, a custom
// metric. What ended before the cut and is recorded after it goes through
// Ungated (jsmod.Measured): a request answered before the hard stop, and
// metronome's charge of one cut off by it.
//
// It is the vu itself under another type, so that the gate costs the VU
// no memory; its methods only read the VU.
type recordGate vu

// gate returns the VU's recorder for modules.
func (v *vu) gate() *recordGate { return (*recordGate)(v) }

// Record passes s on unless the current call was interrupted.
func (g *recordGate) Record(s metrics.Sample) {
	if ctx := g.ctx; ctx != nil && ctx.Err() != nil {
		return
	}
	g.rec.Record(s)
}

// Ungated is the VU's buffer.
func (g *recordGate) Ungated() metrics.Recorder { return g.rec }

// Park lends the VU's buffer out, when it can be (metrics.Parker).
func (g *recordGate) Park() {
	if p, ok := g.rec.(metrics.Parker); ok {
		p.Park()
	}
}

// Unpark takes the VU's buffer back.
func (g *recordGate) Unpark() {
	if p, ok := g.rec.(metrics.Parker); ok {
		p.Unpark()
	}
}

// SetMetadata stamps metadata on the VU's samples from now on, when its
// buffer can (metrics.MetadataSetter).
func (g *recordGate) SetMetadata(m map[string]string) {
	if ms, ok := g.rec.(metrics.MetadataSetter); ok {
		ms.SetMetadata(m)
	}
}

// gatedTrends is the recorder of a VU whose test names latency trends: the
// trends' recorder over the gate, and over the VU's buffer for what
// jsmod.Measured keeps past an interruption.
type gatedTrends struct {
	*executor.LatencyRecorder
	ungated *executor.LatencyRecorder
}

// Ungated is the trends' recorder over the VU's buffer.
func (g gatedTrends) Ungated() metrics.Recorder { return g.ungated }

// Inlet returns the VU's inlet for samples recorded off its goroutine
// (modules.InletVU), made on first use for the run: the run's inlet,
// under the same gate and latency trends as the VU's recorder.
func (v *vu) Inlet() *modules.VUInlet {
	c := v.conf
	if p, ok := c.inlets.Load(v); ok {
		return p.(*modules.VUInlet)
	}
	var corrected *metrics.Metric
	var trends []*metrics.Metric
	if c.builtin != nil && c.latencyTrends != nil {
		corrected, trends = c.builtin.CorrectedLatency, c.latencyTrends()
	}
	var in *metrics.Inlet
	if c.run != nil {
		in = c.run.Samples
	}
	p := modules.NewVUInlet(in, corrected, trends)
	if v.running {
		p.Open(v.Context(), v.state.Latency)
	}
	c.inlets.Store(v, p)
	c.inletsUsed.Store(true)
	return p
}

// openInlet opens the VU's inlet, if it has one, for the call that runs
// in ctx (setup, an iteration, teardown).
func (v *vu) openInlet(ctx context.Context) {
	if !v.conf.inletsUsed.Load() {
		return
	}
	if p, ok := v.conf.inlets.Load(v); ok {
		p.(*modules.VUInlet).Open(ctx, v.state.Latency)
	}
}

// closeInlet closes the VU's inlet, if it has one, at the end of a call,
// and adds the bytes its modules' own connections moved to the call's.
func (v *vu) closeInlet() {
	if !v.conf.inletsUsed.Load() {
		return
	}
	if p, ok := v.conf.inlets.Load(v); ok {
		sent, received := p.(*modules.VUInlet).Close(v.state.Latency)
		v.state.DataSent += sent
		v.state.DataReceived += received
	}
}
