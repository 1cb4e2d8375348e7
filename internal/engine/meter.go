package engine

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/health"
	"github.com/metronome-load/metronome/metrics"
)

// meter is the engine's executor.Meter of one scenario. While a span is
// open the ingest loop hands it every batch, and it keeps the scenario's
// samples of the metrics a Span holds; End flushes the executor's own
// samples and waits until everything recorded before it has been ingested,
// so the span is complete (the kit's arrival loop flushes its VUs' buffers
// before its Run returns). Samples are told apart by their scenario tag;
// with the scenario system tag off, a span holds every scenario's samples.
type meter struct {
	run      *testRun
	scenario string
	rec      *lockedRecorder

	// Owned by the ingest loop while the span is open; read by End after
	// the meter has left the open set.
	span   executor.Span
	raw    map[*metrics.Metric]bool
	ours   map[*metrics.TagSet]bool
	tagged bool
	begin  health.Reading
}

// newMeter returns the meter of the scenario whose executor records its
// own samples into rec.
func (r *testRun) newMeter(scenario string, rec *lockedRecorder) *meter {
	return &meter{run: r, scenario: scenario, rec: rec, tagged: r.systemTags["scenario"]}
}

// Begin opens a span at from.
func (m *meter) Begin(from time.Time) {
	m.span = executor.Span{From: from,
		Corrected: metrics.NewTrendSink(), Raw: metrics.NewTrendSink(), Lag: metrics.NewTrendSink()}
	m.raw = map[*metrics.Metric]bool{}
	// The requests' own durations: the built-in protocols' and the
	// operations of the latency trends.
	raw := metrics.RequestDurationNames
	if o := m.run.opts; o != nil {
		raw = append(slices.Clip(raw), o.LatencyTrends...)
	}
	for _, name := range raw {
		if d := m.run.reg.Get(name); d != nil {
			m.raw[d] = true
		}
	}
	m.ours = map[*metrics.TagSet]bool{}
	m.begin = m.run.monitor.Reading()
	m.run.meters.open(m)
}

// End closes the span at to, once the samples recorded before the call
// have been ingested.
func (m *meter) End(ctx context.Context, to time.Time) (executor.Span, error) {
	m.rec.Flush()
	err := m.run.ingested(ctx)
	m.run.meters.close(m)
	if err != nil {
		return executor.Span{}, err
	}
	end := m.run.monitor.Reading()
	m.span.To = to
	m.span.Health = health.Between(&m.begin, &end)
	return m.span, nil
}

// add takes the scenario's samples of a batch that fall in the span.
func (m *meter) add(batch []metrics.Sample) {
	b := m.run.builtin
	for i := range batch {
		s := &batch[i]
		var sink metrics.Sink
		switch {
		case s.Metric == b.CorrectedLatency:
			sink = m.span.Corrected
		case s.Metric == b.ScheduleLag:
			sink = m.span.Lag
		case s.Metric == b.HTTPReqFailed:
			sink = &m.span.Failed
		case m.raw[s.Metric]:
			sink = m.span.Raw
		default:
			continue
		}
		if s.Time.Before(m.span.From) || !m.ourTags(s.Tags) {
			continue
		}
		sink.Add(*s)
	}
}

// ourTags reports whether a sample with tags is the scenario's.
func (m *meter) ourTags(tags *metrics.TagSet) bool {
	if !m.tagged {
		return true
	}
	ours, ok := m.ours[tags]
	if !ok {
		v, _ := tags.Get("scenario")
		ours = v == m.scenario
		if len(m.ours) >= maxMeterTags {
			clear(m.ours)
		}
		m.ours[tags] = ours
	}
	return ours
}

// maxMeterTags bounds a meter's cache of tag sets, as the metrics
// engine's caches are bounded.
const maxMeterTags = 1 << 16

// meterSet is the set of meters whose span is open, read by the ingest
// loop for every batch; empty, it costs one atomic load.
type meterSet struct {
	n    atomic.Int32
	mu   sync.Mutex
	list []*meter
}

// open adds m.
func (s *meterSet) open(m *meter) {
	s.mu.Lock()
	s.list = append(s.list, m)
	s.n.Store(int32(len(s.list)))
	s.mu.Unlock()
}

// close removes m.
func (s *meterSet) close(m *meter) {
	s.mu.Lock()
	s.list = slices.DeleteFunc(s.list, func(o *meter) bool { return o == m })
	s.n.Store(int32(len(s.list)))
	s.mu.Unlock()
}

// add hands a batch to every open meter.
func (s *meterSet) add(batch []metrics.Sample) {
	if s.n.Load() == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.list {
		m.add(batch)
	}
}
