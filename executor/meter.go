package executor

import (
	"context"
	"time"

	"github.com/metronome-load/metronome/health"
	"github.com/metronome-load/metronome/metrics"
)

// Meter measures spans of one running scenario, for an executor that
// adapts to what its iterations measured (capacity-search judges each
// step by it). The samples a scenario's VUs record travel through their
// buffers to the metrics engine on their own schedule; a Meter is the seam
// through which the engine hands an executor the part of them that fell in
// a span, complete. The engine gives every scenario one in Deps.Meter;
// tests give their own (executortest.Meter).
type Meter interface {
	// Begin starts a span at from. Only the scenario's samples with times
	// at or after from count. A Meter measures one span at a time.
	Begin(from time.Time)
	// End closes the span at to and returns what the scenario recorded
	// with sample times in [from, to). Every sample recorded before End
	// was called is in it, so an executor calls End once its iterations
	// of the span have returned (the kit's arrival loop has flushed its
	// VUs' buffers when Run returns). It returns early with ctx's error.
	End(ctx context.Context, to time.Time) (Span, error)
}

// Span is what a scenario recorded in a span of time.
type Span struct {
	From, To time.Time
	// Corrected holds the span's corrected_latency samples, dropped and
	// interrupted arrivals included; Raw the requests' own durations
	// (metrics.RequestDurationNames, and the latency trends'); Lag the
	// iterations' schedule_lag. In milliseconds.
	Corrected, Raw, Lag *metrics.TrendSink
	// Failed is http_req_failed over the span.
	Failed metrics.RateSink
	// Health is the generator's health over the span (its arrival counts
	// are the whole process's; an executor knows its own).
	Health health.Interval
}
