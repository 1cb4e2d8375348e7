package metrics

import (
	"context"
	"sync"

	mm "github.com/metronome-load/metronome/metrics"
)

// This file is metronome's, not k6's API: what the layer's other packages
// need to join k6's types to metronome's run.

// MetronomeRegistry returns the Registry over metronome's registry r, the
// same one for every call with r.
func MetronomeRegistry(r *mm.Registry) *Registry { return registryOf(r) }

// MetronomeMetric returns metronome's metric behind m, nil for a metric
// that no Registry made.
func MetronomeMetric(m *Metric) *mm.Metric {
	if m == nil {
		return nil
	}
	return m.m
}

// VUInlet is what a VU's sample channel hands the samples pushed on it
// with PushIfNotDone to: metronome's modules.VUInlet, which applies the
// VU's gate and latency trends and reports whether it took them.
type VUInlet interface {
	Send(ctx context.Context, batch []mm.Sample) bool
}

// inlet forwards containers into metronome's inlet of a run, whose
// metrics are in reg.
type inlet struct {
	in  *mm.Inlet
	vu  VUInlet // nil for a channel of no VU
	reg *mm.Registry
	ch  chan SampleContainer
}

// inlets are the channels MetronomeSamples made, by channel.
var inlets sync.Map // chan<- SampleContainer → *inlet

// inletKey is what a channel is made once for: a VU's inlet in a run.
type inletKey struct {
	in  *mm.Inlet
	vu  VUInlet
	reg *mm.Registry
}

var (
	inletsMu sync.Mutex
	byInlet  = map[inletKey]chan<- SampleContainer{}
)

// samplesBuffer is how many containers a VU's channel holds before a send
// on it waits. k6's one channel of the whole run holds 1000
// (metricSamplesBufferSize); here each VU has its own, emptied by a
// goroutine at once, so a few dozen cover a burst without costing every
// VU 16 KB.
const samplesBuffer = 64

// MetronomeSamples returns the channel of lib.State.Samples for the VU
// whose inlet is vu in the run whose inlet is in and whose metrics are in
// reg, the same for every call with them. PushIfNotDone hands what it is given to vu (to the run's
// inlet when vu is nil) at once, on the pusher's goroutine; what is sent
// on the channel directly is forwarded as it is to the run's inlet by a
// goroutine, which after the run takes and drops it. A nil in (outside a
// run) drops everything.
func MetronomeSamples(in *mm.Inlet, vu VUInlet, reg *mm.Registry) chan<- SampleContainer {
	inletsMu.Lock()
	defer inletsMu.Unlock()
	key := inletKey{in, vu, reg}
	if ch, ok := byInlet[key]; ok {
		return ch
	}
	ch := make(chan SampleContainer, samplesBuffer)
	var out chan<- SampleContainer = ch
	byInlet[key] = out
	fw := &inlet{in: in, vu: vu, reg: reg, ch: ch}
	inlets.Store(out, fw)
	go fw.forward(key)
	return out
}

// forward hands what is sent on the channel to the inlet until the run
// ends, and drops it afterwards, so that an extension's goroutine that
// still sends (and an extension waiting for it to finish) never blocks.
func (fw *inlet) forward(key inletKey) {
	var done <-chan struct{}
	if fw.in != nil {
		done = fw.in.Done()
	}
	for {
		select {
		case c := <-fw.ch:
			fw.send(c)
		case <-done:
			inletsMu.Lock()
			delete(byInlet, key)
			inletsMu.Unlock()
			for range fw.ch {
			}
			return
		}
	}
}

// send converts c's samples into metronome's and hands them to the run
// as they are.
func (fw *inlet) send(c SampleContainer) {
	if fw.in == nil || c == nil {
		return
	}
	if batch := AppendMetronome(nil, c, fw.reg); len(batch) > 0 {
		fw.in.Send(batch)
	}
}

// push is PushIfNotDone's delivery: through the VU's inlet when the
// channel has one, which may refuse.
func (fw *inlet) push(ctx context.Context, c SampleContainer) bool {
	if fw.vu == nil {
		fw.send(c)
		return true
	}
	if c == nil {
		return true
	}
	return fw.vu.Send(ctx, AppendMetronome(nil, c, fw.reg))
}

// AppendMetronome appends c's samples to dst as metronome's samples of
// the run whose metrics are in run, and returns the extended slice. A
// metric of another Registry (one of NewRegistry, which xk6-dns makes for
// each VU) is the run's metric of its name, defined on its first sample,
// so that every VU's samples add up under the name; samples of a metric
// no Registry made, or whose name the run has for another type, are left
// out.
func AppendMetronome(dst []mm.Sample, c SampleContainer, run *mm.Registry) []mm.Sample {
	for _, s := range c.GetSamples() {
		m := MetronomeMetric(s.Metric)
		if m == nil {
			continue
		}
		if s.Metric.registry != run && run != nil {
			var err error
			if m, err = run.New(m.Name, m.Type, m.Contains); err != nil {
				continue
			}
		}
		dst = append(dst, mm.Sample{Metric: m, Tags: s.Tags.set(), Metadata: s.Metadata, Time: s.Time, Value: s.Value})
	}
	return dst
}

// MetronomeBatch returns metronome's samples batch as k6's, their
// metrics those of r, the Registry over the run's registry: one container
// of samples for the batch.
func MetronomeBatch(r *Registry, batch []mm.Sample) Samples {
	out := make(Samples, len(batch))
	for i, s := range batch {
		out[i] = Sample{
			TimeSeries: TimeSeries{Metric: r.wrap(s.Metric), Tags: (*TagSet)(s.Tags)},
			Time:       s.Time, Value: s.Value, Metadata: s.Metadata,
		}
	}
	return out
}
