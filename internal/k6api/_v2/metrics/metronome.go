package metrics

import (
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

// inlet forwards containers into metronome's inlet of a run.
type inlet struct {
	in *mm.Inlet
	ch chan SampleContainer
}

// inlets are the channels MetronomeSamples made, by channel.
var inlets sync.Map // chan<- SampleContainer → *inlet

var (
	inletsMu sync.Mutex
	byInlet  = map[*mm.Inlet]chan<- SampleContainer{}
)

// samplesBuffer is how many containers a run's channel holds before a
// send on it waits: k6's default metricSamplesBufferSize.
const samplesBuffer = 1000

// MetronomeSamples returns the channel of lib.State.Samples for the run
// whose inlet is in, the same for every call with in. PushIfNotDone hands
// what it is given to the inlet at once; what is sent on the channel
// directly is forwarded by a goroutine, which after the run takes and
// drops it. A nil inlet (outside a run) drops everything.
func MetronomeSamples(in *mm.Inlet) chan<- SampleContainer {
	inletsMu.Lock()
	defer inletsMu.Unlock()
	if ch, ok := byInlet[in]; ok {
		return ch
	}
	ch := make(chan SampleContainer, samplesBuffer)
	var out chan<- SampleContainer = ch
	byInlet[in] = out
	fw := &inlet{in: in, ch: ch}
	inlets.Store(out, fw)
	go fw.forward()
	return out
}

// forward hands what is sent on the channel to the inlet until the run
// ends, and drops it afterwards, so that an extension's goroutine that
// still sends (and an extension waiting for it to finish) never blocks.
func (fw *inlet) forward() {
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
			delete(byInlet, fw.in)
			inletsMu.Unlock()
			for range fw.ch {
			}
			return
		}
	}
}

// send converts c's samples into metronome's and hands them to the run.
func (fw *inlet) send(c SampleContainer) {
	if fw.in == nil || c == nil {
		return
	}
	if batch := AppendMetronome(nil, c); len(batch) > 0 {
		fw.in.Send(batch)
	}
}

// AppendMetronome appends c's samples to dst as metronome's samples and
// returns the extended slice. Samples of a metric no Registry made are
// left out.
func AppendMetronome(dst []mm.Sample, c SampleContainer) []mm.Sample {
	for _, s := range c.GetSamples() {
		m := MetronomeMetric(s.Metric)
		if m == nil {
			continue
		}
		dst = append(dst, mm.Sample{Metric: m, Tags: s.Tags.set(), Metadata: s.Metadata, Time: s.Time, Value: s.Value})
	}
	return dst
}
