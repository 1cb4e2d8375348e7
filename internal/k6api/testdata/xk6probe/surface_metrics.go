package probe

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.k6.io/k6/v2/metrics"
)

// surfaceMetrics uses the names of go.k6.io/k6/v2/metrics that published
// extensions use, and says what each gave, for the test to compare.
func surfaceMetrics(p *probe) []string {
	var out []string
	add := func(f string, a ...any) { out = append(out, fmt.Sprintf(f, a...)) }

	var names []string
	for _, t := range []metrics.MetricType{metrics.Counter, metrics.Gauge, metrics.Trend, metrics.Rate} {
		names = append(names, t.String())
	}
	for _, v := range []metrics.ValueType{metrics.Default, metrics.Time, metrics.Data} {
		names = append(names, v.String())
	}
	add("types %s", strings.Join(names, ","))
	add("D=%v B=%v,%v", metrics.D(1500*time.Millisecond), metrics.B(true), metrics.B(false))

	// Registry: a second NewMetric of a name with another type fails,
	// MustNewMetric of the same one returns the metric.
	var reg *metrics.Registry = p.reg
	var m *metrics.Metric = reg.MustNewMetric("probe_surface", metrics.Gauge)
	again := reg.MustNewMetric("probe_surface", metrics.Gauge)
	_, err := reg.NewMetric("probe_surface", metrics.Trend)
	add("metric %s %s %s same=%v conflict=%v", m.Name, m.Type, m.Contains, m == again, err != nil)

	// Tag sets.
	var root *metrics.TagSet = reg.RootTagSet()
	ts := root.With("a", "1").With("b", "2")
	v, ok := ts.Get("a")
	_, missing := ts.Get("z")
	keys := make([]string, 0)
	for k, val := range ts.Map() {
		keys = append(keys, k+"="+val)
	}
	sort.Strings(keys)
	add("tags %s get=%s,%v,%v root=%d", strings.Join(keys, ","), v, ok, missing, len(root.Map()))

	// Samples and containers.
	now := time.Unix(1700000000, 0)
	var tm metrics.TagsAndMeta = p.vu.State().Tags.GetCurrentValues()
	s := metrics.Sample{TimeSeries: metrics.TimeSeries{Metric: m, Tags: tm.Tags}, Time: now, Value: 7, Metadata: map[string]string{"trace": "t1"}}
	var c metrics.SampleContainer = metrics.ConnectedSamples{Samples: []metrics.Sample{s, s}, Tags: ts, Time: now}
	got := c.GetSamples()
	var series metrics.TimeSeries = got[0].TimeSeries
	add("samples %d %v %s %v %s", len(got), got[0].Value, series.Metric.Name, got[1].Time.Equal(now), got[0].Metadata["trace"])

	// PushIfNotDone refuses once the context is done.
	ch := make(chan metrics.SampleContainer, 1)
	pushed := metrics.PushIfNotDone(context.Background(), ch, s)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	refused := metrics.PushIfNotDone(done, ch, s)
	add("push %v %v", pushed, refused)

	// System tags: names, a set, the enabled map.
	var set metrics.SystemTagSet = metrics.SystemTagSet(metrics.TagVU | metrics.TagIter | metrics.TagIP | metrics.TagStatus | metrics.TagURL)
	var enabled metrics.EnabledTags = set.Map()
	add("system %s %s %s %s %s has=%v enabled=%d", metrics.TagVU, metrics.TagIter, metrics.TagIP, metrics.TagStatus, metrics.TagURL,
		set.Has(metrics.TagURL), len(enabled))

	// Built-in metrics of the VU's state.
	var b *metrics.BuiltinMetrics = p.vu.State().BuiltinMetrics
	add("builtin %s %s %s %s %s", b.DataSent.Name, b.DataReceived.Name, b.HTTPReqs.Name, b.HTTPReqDuration.Name, b.Iterations.Name)

	// Thresholds, as an output gets them.
	var ths metrics.Thresholds = metrics.NewThresholds([]string{"count>1"})
	var th *metrics.Threshold = ths.Thresholds[0]
	add("threshold %s", th.Source)
	return out
}
