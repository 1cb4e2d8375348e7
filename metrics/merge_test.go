package metrics

import (
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// mergeSamples is a run's worth of samples over a few tag sets: counters,
// a gauge, checks in groups, trends with negative values, and names for a
// breakdown, in time order.
func mergeSamples(b *Builtin, custom *Metric) []Sample {
	rng := rand.New(rand.NewPCG(7, 11))
	base := EmptyTags.With("scenario", "s")
	var out []Sample
	at := time.Unix(1000, 0)
	for i := range 3000 {
		at = at.Add(time.Duration(rng.IntN(3)) * time.Millisecond)
		name := fmt.Sprintf("n%d", i%7)
		status := []string{"200", "200", "200", "500"}[rng.IntN(4)]
		tags := base.With("name", name).With("status", status)
		d := rng.ExpFloat64() * 80
		out = append(out,
			Sample{Metric: b.HTTPReqDuration, Tags: tags, Time: at, Value: d},
			Sample{Metric: b.HTTPReqs, Tags: tags, Time: at, Value: 1},
			Sample{Metric: b.HTTPReqFailed, Tags: tags, Time: at, Value: map[bool]float64{true: 1}[status == "500"]},
			Sample{Metric: b.CorrectedLatency, Tags: tags, Time: at, Value: d + rng.Float64()*5},
			Sample{Metric: custom, Tags: base, Time: at, Value: rng.NormFloat64() * 3},
		)
		if i%5 == 0 {
			group := []string{"", "::g", "::g::h"}[rng.IntN(3)]
			check := base.With("group", group).With("check", "ok")
			out = append(out,
				Sample{Metric: b.Checks, Tags: check, Time: at, Value: float64(rng.IntN(2))},
				Sample{Metric: b.VUs, Tags: base, Time: at, Value: float64(rng.IntN(10))},
			)
		}
		if i%50 == 0 && i > 0 {
			out = append(out, Sample{Metric: b.GroupDuration, Tags: base.With("group", "::g::h"), Time: at, Value: 3})
		}
	}
	return out
}

// The series of a run, each aggregated apart and merged with IngestSink,
// give the engine the same sinks, submetrics, breakdown, checks, groups
// and threshold results as ingesting every sample; so do the series cut
// into time slices (a result file's intervals), merged in any order.
func TestIngestSinkMatchesIngest(t *testing.T) {
	reg := NewRegistry()
	b := RegisterBuiltin(reg)
	custom := reg.MustNew("signed", Trend, Default)
	opts := EngineOptions{
		Thresholds: map[string][]ThresholdDef{
			"http_req_duration":          {{Source: "p(99)<200"}, {Source: "avg<40"}},
			"corrected_latency{name:n3}": {{Source: "p(90)<100"}},
			"http_reqs{status:500}":      {{Source: "count<700"}},
			"http_req_failed":            {{Source: "rate<0.2"}},
			"checks":                     {{Source: "rate>0.4"}},
			"vus":                        {{Source: "value<5"}},
			"signed":                     {{Source: "med>-1"}},
		},
		Submetrics: []string{"corrected_latency{scenario:s}"},
		Breakdowns: []Breakdown{{Metric: CorrectedLatencyName, Tag: "name"}, {Metric: HTTPReqDurationName, Tag: "name"}},
	}
	samples := mergeSamples(b, custom)

	live, err := NewEngine(reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	live.Ingest(samples)

	type key struct {
		m     *Metric
		tags  *TagSet
		slice int
	}
	series := map[key]Sink{}
	var keys []key
	for i, s := range samples {
		k := key{s.Metric, s.Tags, i * 4 / len(samples)}
		if series[k] == nil {
			series[k] = NewSink(s.Metric.Type)
			keys = append(keys, k)
		}
		series[k].Add(s)
	}
	rand.New(rand.NewPCG(3, 5)).Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	merged, err := NewEngine(reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !merged.IngestSink(k.m, k.tags, series[k]) {
			t.Fatalf("IngestSink refused %s%s", k.m.Name, k.tags)
		}
	}

	const elapsed = 10 * time.Second
	want, got := live.EvaluateThresholds(elapsed, true), merged.EvaluateThresholds(elapsed, true)
	if !reflect.DeepEqual(summaryOf(want), summaryOf(got)) {
		t.Errorf("thresholds:\n%v\nwant\n%v", summaryOf(got), summaryOf(want))
	}
	if !want.Failed() {
		t.Error("no threshold failed: the comparison checks too little")
	}
	lo, mo := live.Observed(), merged.Observed()
	if len(lo) != len(mo) {
		t.Fatalf("%d observed metrics, want %d", len(mo), len(lo))
	}
	for i := range lo {
		if lo[i].Name != mo[i].Name {
			t.Fatalf("observed %d is %s, want %s", i, mo[i].Name, lo[i].Name)
		}
		if w, g := statsOf(lo[i].Sink), statsOf(mo[i].Sink); !nearlyEqual(w, g) {
			t.Errorf("%s: %v, want %v", lo[i].Name, g, w)
		}
	}
	if w, g := live.Checks(), merged.Checks(); !sameElements(w, g) {
		t.Errorf("checks %v, want %v", g, w)
	}
	if w, g := live.Groups(), merged.Groups(); !sameElements(w, g) {
		t.Errorf("groups %v, want %v", g, w)
	}
	_, lp, lf, _ := live.Breakdown(CorrectedLatencyName)
	_, mp, mf, _ := merged.Breakdown(CorrectedLatencyName)
	if len(lp) != 7 || len(lp) != len(mp) || lf != mf {
		t.Fatalf("breakdown: %d parts (%d folded), want %d (%d)", len(mp), mf, len(lp), lf)
	}
	for i := range lp {
		if lp[i].Value != mp[i].Value || !nearlyEqual(statsOf(lp[i].Sink), statsOf(mp[i].Sink)) {
			t.Errorf("breakdown %s: %v, want %s %v", mp[i].Value, statsOf(mp[i].Sink), lp[i].Value, statsOf(lp[i].Sink))
		}
	}
}

// sameElements reports whether a and b hold the same elements in any order.
func sameElements[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	n := map[T]int{}
	for _, x := range a {
		n[x]++
	}
	for _, x := range b {
		n[x]--
	}
	for _, c := range n {
		if c != 0 {
			return false
		}
	}
	return true
}

func summaryOf(r *ThresholdReport) []string {
	var out []string
	for _, m := range r.Metrics {
		for _, th := range m.Thresholds {
			out = append(out, fmt.Sprintf("%s %s ok=%v value=%.9g", m.Key, th.Source, th.OK, th.Value))
		}
	}
	return out
}

// statsOf is what the summary reads of a sink.
func statsOf(s Sink) []float64 {
	switch s := s.(type) {
	case *CounterSink:
		return []float64{s.Sum, float64(s.Count), float64(s.First.UnixNano())}
	case *GaugeSink:
		return []float64{s.Value, s.Min, s.Max, float64(s.Last.UnixNano())}
	case *RateSink:
		return []float64{float64(s.Trues), float64(s.Total)}
	case *TrendSink:
		return []float64{float64(s.Count()), s.Sum(), s.Min(), s.Max(), s.Avg(),
			s.Percentile(50), s.Percentile(90), s.Percentile(99), s.Percentile(99.9)}
	}
	return nil
}

// nearlyEqual compares stats exactly, but for sums of floats added in another
// order, which may differ in their last bits.
func nearlyEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		d := a[i] - b[i]
		if d < 0 {
			d = -d
		}
		if d > 1e-9*max(1, a[i], -a[i]) {
			return false
		}
	}
	return true
}

// A trend sink rebuilt from what it exposes (count, sum, min, max and its
// histograms, packed as a file holds them) answers as the original; a
// histogram of another geometry is carried over by value.
func TestTrendMergeParts(t *testing.T) {
	for _, n := range []int{0, 1, 100, 5000} {
		orig := trendOf(-5, -0.25, 0, 1.5, 3, 1e6, 42)
		for i := range n {
			orig.AddValue(float64(i%1000) - 300)
		}
		pos, neg := NewPackedTrendHistogram(), NewPackedTrendHistogram()
		if dropped := orig.MergeHistogramsInto(pos, neg); dropped != 0 {
			t.Fatalf("%d dropped", dropped)
		}
		if pos.TotalCount()+neg.TotalCount() != orig.Count() {
			t.Errorf("histograms hold %d+%d values of %d", pos.TotalCount(), neg.TotalCount(), orig.Count())
		}
		got := NewTrendSink()
		got.MergeParts(orig.Count(), orig.Sum(), orig.Min(), orig.Max(), pos, neg)
		if w, g := statsOf(orig), statsOf(got); !nearlyEqual(w, g) {
			t.Errorf("rebuilt: %v, want %v", g, w)
		}
	}
	other := hdrhistogram.NewPacked(1, 1_000_000, 3)
	_ = other.RecordValue(1500)
	small := trendOf(1.5)
	small.MergeParts(1, 1.5, 1.5, 1.5, other, nil)
	if small.Count() != 2 || small.Percentile(50) != 1.5 {
		t.Errorf("count %d median %v", small.Count(), small.Percentile(50))
	}
}

// MergeSink refuses sinks of different types and keeps a gauge's later
// value.
func TestMergeSink(t *testing.T) {
	if MergeSink(&CounterSink{}, &RateSink{}) || MergeSink(NewTrendSink(), &GaugeSink{}) {
		t.Error("merged sinks of different types")
	}
	a, b := &GaugeSink{}, &GaugeSink{}
	a.Add(Sample{Value: 5, Time: time.Unix(2, 0)})
	a.Add(Sample{Value: 1, Time: time.Unix(3, 0)})
	b.Add(Sample{Value: 9, Time: time.Unix(1, 0)})
	MergeSink(a, b)
	if a.Value != 1 || a.Min != 1 || a.Max != 9 {
		t.Errorf("gauge %+v", a)
	}
	c := &CounterSink{}
	MergeSink(c, &CounterSink{Sum: 3, Count: 2, First: time.Unix(5, 0)})
	MergeSink(c, &CounterSink{Sum: 1, Count: 1, First: time.Unix(4, 0)})
	if c.Sum != 4 || c.Count != 3 || !c.First.Equal(time.Unix(4, 0)) {
		t.Errorf("counter %+v", c)
	}
}
