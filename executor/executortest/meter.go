package executortest

import (
	"context"
	"sync"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/health"
	"github.com/metronome-load/metronome/metrics"
)

// Meter is an executor.Meter over a Recorder: a span holds the samples
// recorded with times in it. The fakes record synchronously, so every
// sample is in when End is called.
type Meter struct {
	Rec     *Recorder
	Metrics *metrics.Builtin
	// Health, when set, gives the generator's health over a span;
	// without it every span is healthy (CPU 10 %).
	Health func(from, to time.Time) health.Interval

	mu    sync.Mutex
	from  time.Time
	spans []executor.Span
}

// Begin starts a span at from.
func (m *Meter) Begin(from time.Time) {
	m.mu.Lock()
	m.from = from
	m.mu.Unlock()
}

// End returns the span from the last Begin to to.
func (m *Meter) End(ctx context.Context, to time.Time) (executor.Span, error) {
	if err := ctx.Err(); err != nil {
		return executor.Span{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	sp := executor.Span{From: m.from, To: to,
		Corrected: metrics.NewTrendSink(), Raw: metrics.NewTrendSink(), Lag: metrics.NewTrendSink()}
	b := m.Metrics
	for _, s := range m.Rec.Samples() {
		if s.Time.Before(m.from) || !s.Time.Before(to) {
			continue
		}
		switch s.Metric {
		case b.CorrectedLatency:
			sp.Corrected.Add(s)
		case b.HTTPReqDuration:
			sp.Raw.Add(s)
		case b.ScheduleLag:
			sp.Lag.Add(s)
		case b.HTTPReqFailed:
			sp.Failed.Add(s)
		}
	}
	if m.Health != nil {
		sp.Health = m.Health(m.from, to)
	} else {
		sp.Health = health.Interval{From: m.from, To: to, CPU: 0.1}
	}
	m.spans = append(m.spans, sp)
	return sp, nil
}

// Spans returns the spans ended so far.
func (m *Meter) Spans() []executor.Span {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]executor.Span(nil), m.spans...)
}
