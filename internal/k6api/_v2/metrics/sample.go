package metrics

import (
	"context"
	"time"
)

// TimeSeries is a metric and the tags of its samples.
type TimeSeries struct {
	Metric *Metric
	Tags   *TagSet
}

// Sample is one measurement of a time series at a time. Metadata holds
// values that are not indexed (vu, iter, a trace id); it may be nil.
type Sample struct {
	TimeSeries
	Time     time.Time
	Value    float64
	Metadata map[string]string
}

// SampleContainer is anything that holds samples to emit.
type SampleContainer interface {
	GetSamples() []Sample
}

// ConnectedSampleContainer is a container whose samples share tags and a
// time (an HTTP request's timings, say).
type ConnectedSampleContainer interface {
	SampleContainer
	GetTags() *TagSet
	GetTime() time.Time
}

// Samples is a plain list of samples.
type Samples []Sample

// GetSamples returns the samples.
func (s Samples) GetSamples() []Sample { return s }

// ConnectedSamples are samples that share tags and a time.
type ConnectedSamples struct {
	Samples []Sample
	Tags    *TagSet
	Time    time.Time
}

// GetSamples returns the samples.
func (cs ConnectedSamples) GetSamples() []Sample { return cs.Samples }

// GetTags returns the shared tags.
func (cs ConnectedSamples) GetTags() *TagSet { return cs.Tags }

// GetTime returns the shared time.
func (cs ConnectedSamples) GetTime() time.Time { return cs.Time }

// GetSamples returns the sample alone.
func (s Sample) GetSamples() []Sample { return []Sample{s} }

// GetTags returns the sample's tags.
func (s Sample) GetTags() *TagSet { return s.Tags }

// GetTime returns the sample's time.
func (s Sample) GetTime() time.Time { return s.Time }

var (
	_ ConnectedSampleContainer = Sample{}
	_ ConnectedSampleContainer = ConnectedSamples{}
	_ SampleContainer          = Samples{}
)

// GetBufferedSamples takes every container waiting in input without
// blocking, and stops at the first wait or at input's close.
func GetBufferedSamples(input <-chan SampleContainer) []SampleContainer {
	var out []SampleContainer
	for {
		select {
		case c, ok := <-input:
			if !ok {
				return out
			}
			out = append(out, c)
		default:
			return out
		}
	}
}

// PushIfNotDone sends sample to output unless ctx is done already (the VU's
// iteration is over: its samples are dropped), and reports whether it
// did. A VU's lib.State.Samples hands the samples to the run at once, by
// the VU's rules: dropped too once the VU's iteration (or setup, or
// teardown) ended or was interrupted, and a sample of a latency trend
// also records its corrected_latency.
func PushIfNotDone(ctx context.Context, output chan<- SampleContainer, sample SampleContainer) bool {
	if ctx.Err() != nil {
		return false
	}
	if in, ok := inlets.Load(output); ok {
		return in.(*inlet).push(ctx, sample)
	}
	output <- sample
	return true
}
