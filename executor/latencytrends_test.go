package executor_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
	"github.com/metronome-load/metronome/metrics"
)

// latencyTrendFixture is a registry with a latency trend, op_duration, and
// the metrics a sample of it must not be confused with.
type latencyTrendFixture struct {
	b                    *metrics.Builtin
	op, other, plain, nb *metrics.Metric
}

func newLatencyTrendFixture() latencyTrendFixture {
	reg := metrics.NewRegistry()
	return latencyTrendFixture{
		b:     metrics.RegisterBuiltin(reg),
		op:    reg.MustNew("op_duration", metrics.Trend, metrics.Time),
		other: reg.MustNew("other_duration", metrics.Trend, metrics.Time),
		plain: reg.MustNew("op_size", metrics.Trend, metrics.Default),
		nb:    reg.MustNew("op_count", metrics.Counter, metrics.Default),
	}
}

// A sample of a latency trend records exactly what a module's
// RecordLatency call with the same duration, time and tags records —
// the lag added in an open model, the back-fill in a closed one, nothing
// in setup and teardown (the zero Latency) — plus the metric tag; the
// sample itself goes on unchanged, first.
func TestLatencyRecorderRecordsAsLatencyDoes(t *testing.T) {
	f := newLatencyTrendFixture()
	t0 := time.Unix(100, 0)
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	tags := metrics.EmptyTags.With("scenario", "redis").With("op", "GET")
	for _, c := range []struct {
		name  string
		it    executor.Iteration
		start time.Duration // after t0
		value float64       // the sample's value, ms
		want  []float64     // corrected_latency values
	}{
		{"open, on time", executor.Iteration{Intended: t0}, 0, 12, []float64{12}},
		{"open, late", executor.Iteration{Intended: t0}, ms(30), 12, []float64{42}},
		{"open, late, sub-millisecond value", executor.Iteration{Intended: t0}, ms(30), 0.25, []float64{30.25}},
		{"open, late, zero value", executor.Iteration{Intended: t0}, ms(30), 0, []float64{30}},
		{"closed, no back-fill", executor.Iteration{}, ms(30), 12, nil},
		{"closed, back-filled", executor.Iteration{BackFill: &executor.BackFiller{Interval: ms(10)}}, ms(30), 35, []float64{35, 25, 15}},
		{"closed, shorter than twice the interval", executor.Iteration{BackFill: &executor.BackFiller{Interval: ms(10)}}, ms(30), 19, []float64{19}},
		{"setup or teardown (zero Latency)", executor.Iteration{Intended: t0}, ms(30), 12, nil},
	} {
		var rec, ref executortest.Recorder
		lat := c.it.Latency(t0.Add(c.start))
		if strings.HasPrefix(c.name, "setup") {
			lat = executor.Latency{}
		}
		at := t0.Add(c.start + ms(c.value))
		s := metrics.Sample{Metric: f.op, Tags: tags, Time: at, Value: c.value}
		executor.NewLatencyRecorder(&rec, &lat, f.b.CorrectedLatency, []*metrics.Metric{f.op}).Record(s)

		got := rec.Samples()
		if len(got) == 0 || got[0].Metric != f.op || got[0].Value != c.value || got[0].Tags != tags || !got[0].Time.Equal(at) {
			t.Fatalf("%s: first sample %+v, want the trend's own sample unchanged", c.name, got)
		}
		got = got[1:]
		var vals []float64
		for _, g := range got {
			vals = append(vals, g.Value)
		}
		if !slices.Equal(vals, c.want) {
			t.Errorf("%s: corrected_latency %v, want %v", c.name, vals, c.want)
		}
		// The same path: Latency.Record with the sample's duration.
		refLat := c.it.Latency(t0.Add(c.start))
		if strings.HasPrefix(c.name, "setup") {
			refLat = executor.Latency{}
		}
		refLat.Record(&ref, f.b.CorrectedLatency, tags.With(executor.LatencyTrendTag, "op_duration"), at, ms(c.value))
		same := func(a, b metrics.Sample) bool {
			return a.Metric == b.Metric && a.Tags == b.Tags && a.Time.Equal(b.Time) && a.Value == b.Value
		}
		if want := ref.Samples(); !slices.EqualFunc(got, want, same) {
			t.Errorf("%s: recorded %+v, Latency.Record records %+v", c.name, got, want)
		}
		for k, g := range got {
			if g.Metric != f.b.CorrectedLatency || !g.Time.Equal(at) {
				t.Errorf("%s: sample %d is %s at %v, want corrected_latency at the trend sample's time", c.name, k, g.Metric.Name, g.Time)
			}
			if v, _ := g.Tags.Get(executor.LatencyTrendTag); v != "op_duration" || !g.Tags.Contains(tags) {
				t.Errorf("%s: sample %d tags %v, want the sample's own plus metric=op_duration", c.name, k, g.Tags)
			}
			if b, _ := g.Tags.Get("backfilled"); (b == "true") != (k > 0) {
				t.Errorf("%s: sample %d backfilled=%q", c.name, k, b)
			}
		}
	}
}

// Only the samples of the named trends record anything more: not another
// time trend, not a Trend of plain numbers or a Counter, not a value that
// is no duration; and what the recorder adds goes to the VU's recorder,
// not through itself again, so nothing loops.
func TestLatencyRecorderLeavesOtherSamplesAlone(t *testing.T) {
	f := newLatencyTrendFixture()
	t0 := time.Unix(100, 0)
	lat := executor.Iteration{Intended: t0}.Latency(t0.Add(5 * time.Millisecond))
	var rec executortest.Recorder
	r := executor.NewLatencyRecorder(&rec, &lat, f.b.CorrectedLatency, []*metrics.Metric{f.op, f.b.CorrectedLatency})
	in := []metrics.Sample{
		{Metric: f.other, Tags: metrics.EmptyTags, Time: t0, Value: 3},
		{Metric: f.plain, Tags: metrics.EmptyTags, Time: t0, Value: 3},
		{Metric: f.nb, Tags: metrics.EmptyTags, Time: t0, Value: 1},
		{Metric: f.b.HTTPReqDuration, Tags: metrics.EmptyTags, Time: t0, Value: 3},
		{Metric: f.op, Tags: metrics.EmptyTags, Time: t0, Value: -1},
		{Metric: f.op, Tags: metrics.EmptyTags, Time: t0, Value: math.NaN()},
		{Metric: f.op, Tags: metrics.EmptyTags, Time: t0, Value: math.Inf(1)},
		{Metric: f.op, Tags: metrics.EmptyTags, Time: t0, Value: 1e300},
	}
	for _, s := range in {
		r.Record(s)
	}
	got := rec.Samples()
	if len(got) != len(in) {
		t.Fatalf("%d samples recorded for %d, want each passed on and nothing added: %+v", len(got), len(in), got)
	}
	for k := range in {
		if got[k].Metric != in[k].Metric || !(got[k].Value == in[k].Value || math.IsNaN(in[k].Value)) {
			t.Errorf("sample %d = %+v, want %+v unchanged", k, got[k], in[k])
		}
	}
	// Even with corrected_latency named among the trends (options refuse
	// it), its sample adds one more, which is not taken for another.
	r.Record(metrics.Sample{Metric: f.b.CorrectedLatency, Tags: metrics.EmptyTags, Time: t0, Value: 3})
	if n := len(rec.Samples()); n != len(in)+2 {
		t.Errorf("a corrected_latency sample led to %d samples, want itself and one, not a loop", n-len(in))
	}
	// A sample without tags gets the metric tag alone.
	r.Record(metrics.Sample{Metric: f.op, Time: t0, Value: 1})
	last := rec.Samples()[len(rec.Samples())-1]
	if last.Metric != f.b.CorrectedLatency || last.Value != 6 || last.Tags != metrics.EmptyTags.With(executor.LatencyTrendTag, "op_duration") {
		t.Errorf("untagged sample recorded %+v, want corrected_latency 6 tagged metric=op_duration alone", last)
	}
}

// parkRecorder counts the calls a LatencyRecorder must pass on.
type parkRecorder struct {
	executortest.Recorder
	parks, unparks int
	meta           map[string]string
}

func (p *parkRecorder) Park()                           { p.parks++ }
func (p *parkRecorder) Unpark()                         { p.unparks++ }
func (p *parkRecorder) SetMetadata(m map[string]string) { p.meta = m }

// A VU that sleeps parks its recorder, and k6/execution sets metadata on
// it: through the wrapper, the VU's own recorder gets both.
func TestLatencyRecorderPassesParkAndMetadataOn(t *testing.T) {
	f := newLatencyTrendFixture()
	var lat executor.Latency
	next := &parkRecorder{}
	r := executor.NewLatencyRecorder(next, &lat, f.b.CorrectedLatency, []*metrics.Metric{f.op})
	var rec metrics.Recorder = r
	p, ok := rec.(metrics.Parker)
	if !ok {
		t.Fatal("LatencyRecorder is no metrics.Parker")
	}
	p.Park()
	p.Unpark()
	rec.(metrics.MetadataSetter).SetMetadata(map[string]string{"trace_id": "abc"})
	if next.parks != 1 || next.unparks != 1 || next.meta["trace_id"] != "abc" {
		t.Errorf("wrapped recorder got %d parks, %d unparks, metadata %v", next.parks, next.unparks, next.meta)
	}
	// A recorder that cannot park or stamp metadata is left alone.
	plain := executor.NewLatencyRecorder(&executortest.Recorder{}, &lat, f.b.CorrectedLatency, nil)
	plain.Park()
	plain.Unpark()
	plain.SetMetadata(nil)
}

func TestResolveLatencyTrends(t *testing.T) {
	f := newLatencyTrendFixture()
	reg := metrics.NewRegistry()
	for _, m := range []*metrics.Metric{f.op, f.other, f.plain, f.nb} {
		reg.MustNew(m.Name, m.Type, m.Contains)
	}
	got, err := executor.ResolveLatencyTrends(reg, []string{"op_duration", "other_duration", "op_duration"})
	if err != nil || len(got) != 2 || got[0] != reg.Get("op_duration") || got[1] != reg.Get("other_duration") {
		t.Errorf("resolved %v, %v; want op_duration and other_duration once each", got, err)
	}
	_, err = executor.ResolveLatencyTrends(reg, []string{"op_duration", "redis_latncy", "op_count", "op_size"})
	want := []string{
		`options.latencyTrends[1]: metric "redis_latncy" is not defined: neither the script's init context nor a module it imports defines it`,
		`options.latencyTrends[2]: "op_count" is a counter metric; only a Trend of time qualifies (in a script, new Trend("op_count", true))`,
		`options.latencyTrends[3]: "op_size" is a Trend of plain numbers, not of time; declare it new Trend("op_size", true) so that its values are milliseconds`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("error:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
}

// Through an executor, in virtual time: an intended-arrival-rate scenario
// whose VUs (too few, so arrivals start late) time each 10 ms operation
// with a latency trend records, for every arrival, the same
// corrected_latency as when its module records it itself: 10 ms plus the
// iteration's lag, each tagged metric=op_duration.
func TestLatencyTrendOpenModel(t *testing.T) {
	run := func(trend bool) ([]metrics.Sample, []float64, executor.Account) {
		var samples []metrics.Sample
		var lags []float64
		var acc executor.Account
		synctest.Test(t, func(t *testing.T) {
			h := newArrivalHarness(executortest.Constant(10*time.Millisecond), 4)
			h.pool.Think = executortest.Constant(100 * time.Millisecond)
			if trend {
				h.pool.Trend = metrics.NewRegistry().MustNew("op_duration", metrics.Trend, metrics.Time)
			}
			cfg := arrivalParse(t, `{"executor":"intended-arrival-rate","rate":80,"duration":"1s","preAllocatedVUs":4}`)
			acc, _ = h.run(t, t.Context(), cfg)
			for _, s := range h.pool.Rec.Samples() {
				if s.Metric == h.m.CorrectedLatency {
					samples = append(samples, s)
				}
			}
			lags = h.pool.Rec.Of(h.m.ScheduleLag, nil)
		})
		return samples, lags, acc
	}
	got, lags, acc := run(true)
	ref, _, _ := run(false)
	if acc.Intended != 80 || acc.Completed != 80 || acc.Late == 0 {
		t.Fatalf("account %+v, want 80 arrivals completed, some late", acc)
	}
	if len(got) != 80 || len(ref) != 80 {
		t.Fatalf("%d corrected_latency samples through the trend, %d through the module; want 80 each", len(got), len(ref))
	}
	want := make([]float64, len(lags))
	for k, lag := range lags {
		want[k] = 10 + lag
	}
	vals := func(ss []metrics.Sample) []float64 {
		var v []float64
		for _, s := range ss {
			v = append(v, s.Value)
		}
		return slices.Sorted(slices.Values(v))
	}
	if g, w := vals(got), slices.Sorted(slices.Values(want)); !slices.Equal(g, w) {
		t.Errorf("corrected_latency %v, want 10 ms plus each schedule_lag %v", g, w)
	}
	if g, r := vals(got), vals(ref); !slices.Equal(g, r) {
		t.Errorf("through the trend %v, through the module %v", g, r)
	}
	for _, s := range got {
		if v, _ := s.Tags.Get(executor.LatencyTrendTag); v != "op_duration" || s.Tags.Without(executor.LatencyTrendTag) != ref[0].Tags {
			t.Fatalf("tags %v, want the trend sample's (%v) plus metric=op_duration", s.Tags, ref[0].Tags)
		}
	}
}

// In a closed model that back-fills, a latency trend's 500 ms sample is
// back-filled at the 12.5 ms interval as a module's request is: 40
// samples, 39 of them back-filled, tagged metric=op_duration too, and the
// scenario's back-fill account counts it as a request.
func TestLatencyTrendClosedModelBackFills(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const d, interval = 500 * time.Millisecond, 12500 * time.Microsecond
		h := newHarness(executortest.Constant(d))
		h.pool.Trend = metrics.NewRegistry().MustNew("op_duration", metrics.Trend, metrics.Time)
		cfg := mustParse(t, `{"executor":"shared-iterations","expectedInterval":"12.5ms"}`)
		h.run(t, context.Background(), cfg)
		acc := h.fill
		op := metrics.EmptyTags.With(executor.LatencyTrendTag, "op_duration")
		all := h.pool.Rec.Of(h.m.CorrectedLatency, op)
		filled := h.pool.Rec.Of(h.m.CorrectedLatency, op.With("backfilled", "true"))
		if len(all) != 40 || len(filled) != 39 || all[0] != 500 {
			t.Fatalf("corrected_latency{metric:op_duration}: %d samples (first %v), %d back-filled; want 40 (500 first) and 39", len(all), all, len(filled))
		}
		for k, v := range filled {
			if want := metrics.Milliseconds(d - time.Duration(k+1)*interval); v != want {
				t.Errorf("back-filled sample %d = %v, want %v", k, v, want)
			}
		}
		if acc.Requests != 1 || acc.Backfilled != 39 {
			t.Errorf("back-fill account %+v, want 1 request and 39 back-filled", acc)
		}
	})
}

// BenchmarkLatencyRecorder is what one sample costs recorded into a VU's
// buffer: direct (no latencyTrends: the VU hands its modules the buffer
// itself), through the LatencyRecorder for a sample of another metric,
// and for a sample of a latency trend in an open-model iteration, which
// records its corrected_latency too.
func BenchmarkLatencyRecorder(b *testing.B) {
	f := newLatencyTrendFixture()
	tags := metrics.EmptyTags.With("scenario", "default").With("op", "GET")
	now := time.Now()
	lat := executor.Iteration{Intended: now}.Latency(now.Add(3 * time.Millisecond))
	buf := metrics.NewBuffer(metrics.ReleaseBatch)
	wrapped := executor.NewLatencyRecorder(buf, &lat, f.b.CorrectedLatency, []*metrics.Metric{f.op})
	for _, c := range []struct {
		name string
		rec  metrics.Recorder
		m    *metrics.Metric
	}{
		{"direct", buf, f.other},
		{"wrapped/other", wrapped, f.other},
		{"wrapped/trend", wrapped, f.op},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.rec.Record(metrics.Sample{Metric: c.m, Tags: tags, Time: now, Value: 1.5})
			}
		})
	}
}
