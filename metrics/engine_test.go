package metrics

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestEngineSinksAndObserved(t *testing.T) {
	reg := NewRegistry()
	b := RegisterBuiltin(reg)
	e, err := NewEngine(reg, EngineOptions{
		ExpectedResponseSubmetric: true,
		Submetrics:                []string{"http_reqs{status:200}", "http_reqs{ status: '200' }", "iterations{scenario:a}"},
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(10, 0)
	ok := EmptyTags.With("status", "200").With("expected_response", "true")
	bad := EmptyTags.With("status", "500").With("expected_response", "false")
	e.Ingest([]Sample{
		{Metric: b.HTTPReqDuration, Tags: ok, Value: 10, Time: now},
		{Metric: b.HTTPReqDuration, Tags: bad, Value: 30, Time: now},
		{Metric: b.HTTPReqDuration, Tags: ok, Value: 20, Time: now},
		{Metric: b.HTTPReqs, Tags: ok, Value: 1, Time: now},
		{Metric: b.HTTPReqs, Tags: bad, Value: 1, Time: now},
		{Metric: b.VUs, Value: 3, Time: now},
	})
	custom := reg.MustNew("late_metric", Counter, Default) // defined after the engine
	e.Ingest([]Sample{{Metric: custom, Value: 7, Time: now}})

	var got []string
	for _, o := range e.Observed() {
		got = append(got, fmt.Sprintf("%s|%s|%v", o.Name, o.Parent, o.Selector != nil))
	}
	want := []string{
		"vus||false",
		"http_reqs||false",
		"http_reqs{status:200}|http_reqs|true",
		"http_req_duration||false",
		"http_req_duration{expected_response:true}|http_req_duration|true",
		"late_metric||false",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Observed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	d := e.Sink("http_req_duration").(*TrendSink)
	if d.Count() != 3 || d.Max() != 30 {
		t.Errorf("http_req_duration count %d max %v", d.Count(), d.Max())
	}
	er := e.Sink(ExpectedResponseSubmetric).(*TrendSink)
	if er.Count() != 2 || er.Max() != 20 || er.Avg() != 15 {
		t.Errorf("expected_response submetric count %d max %v avg %v", er.Count(), er.Max(), er.Avg())
	}
	if c := e.Sink("http_reqs{status:200}").(*CounterSink); c.Sum != 1 {
		t.Errorf("http_reqs{status:200} = %v", c.Sum)
	}
	if c := e.Sink("late_metric").(*CounterSink); c.Sum != 7 {
		t.Errorf("late_metric = %v", c.Sum)
	}
	if e.Sink("vus_max") != nil || e.Sink("nope") != nil || e.Sink("http_reqs{status:404}") != nil {
		t.Errorf("Sink returned a sink for something without one")
	}

	// The sinks Observed returns are snapshots.
	snap := e.Observed()[3].Sink.(*TrendSink)
	e.Ingest([]Sample{{Metric: b.HTTPReqDuration, Tags: ok, Value: 1000, Time: now}})
	if snap.Count() != 3 || snap.Max() != 30 {
		t.Errorf("observed sink changed after the call: count %d max %v", snap.Count(), snap.Max())
	}
}

func TestEngineIgnoresForeignAndNilMetrics(t *testing.T) {
	reg := NewRegistry()
	b := RegisterBuiltin(reg)
	other := NewRegistry()
	ob := RegisterBuiltin(other)
	e, err := NewEngine(reg, EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(0, 0)
	e.Ingest([]Sample{
		{Metric: nil, Value: 1, Time: now},
		{Metric: ob.VUs, Value: 5, Time: now},
		{Metric: &Metric{Name: "vus", Type: Gauge}, Value: 6, Time: now},
		{Metric: b.VUs, Value: 1, Time: now},
		{Metric: ob.VUs, Value: 5, Time: now},
	})
	if g := e.Sink("vus").(*GaugeSink); g.Value != 1 || g.Max != 1 {
		t.Errorf("vus = %+v, foreign samples leaked in", g)
	}
}

func TestNewEngineErrors(t *testing.T) {
	reg := NewRegistry()
	RegisterBuiltin(reg)
	for _, sub := range []string{"nope{a:b}", "http_reqs", "http_reqs{}", "http_reqs{a}"} {
		if _, err := NewEngine(reg, EngineOptions{Submetrics: []string{sub}}); err == nil {
			t.Errorf("submetric %q accepted", sub)
		}
	}
	_, err := NewEngine(reg, EngineOptions{
		Submetrics: []string{"nope{a:b}"},
		Thresholds: map[string][]ThresholdDef{"http_reqs": src("p(95)<1")},
	})
	if err == nil || !strings.Contains(err.Error(), `metric "nope" is not defined`) ||
		!strings.Contains(err.Error(), `thresholds.http_reqs: "p(95)" is not valid for a counter metric`) {
		t.Errorf("NewEngine error %v, want both problems", err)
	}
}

func TestEngineChecksAndGroups(t *testing.T) {
	reg := NewRegistry()
	b := RegisterBuiltin(reg)
	e, err := NewEngine(reg, EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(0, 0)
	check := func(group, name string, pass bool) Sample {
		v := 0.0
		if pass {
			v = 1
		}
		return Sample{Metric: b.Checks, Tags: EmptyTags.With("group", group).With("check", name).With("scenario", "s"), Value: v, Time: now}
	}
	groupDur := func(group string) Sample {
		return Sample{Metric: b.GroupDuration, Tags: EmptyTags.With("group", group), Value: 5, Time: now}
	}
	e.Ingest([]Sample{
		check("", "status is 200", true),
		check("::login::form", "has token", true),
		check("", "status is 200", false),
		groupDur("::login::form"),
		groupDur("::login"),
		check("::login::form", "has token", false),
		check("::login::form", "has token", false),
		groupDur("::cart"),
		check("::cart", "status is 200", true),
		{Metric: b.Checks, Value: 1, Time: now}, // no tags: root group, unnamed
	})
	got := e.Checks()
	want := []CheckTally{
		{"", "status is 200", 1, 1},
		{"::login::form", "has token", 1, 2},
		{"::cart", "status is 200", 1, 0},
		{"", "", 1, 0},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Checks = %v, want %v", got, want)
	}
	if g := strings.Join(e.Groups(), " "); g != "::login ::login::form ::cart" {
		t.Errorf("Groups = %q", g)
	}
	if r := e.Sink("checks").(*RateSink); r.Trues != 4 || r.Total != 7 {
		t.Errorf("checks rate %d/%d", r.Trues, r.Total)
	}
}

// TestEngineConcurrentIngest feeds the engine from many buffers at once and
// checks that nothing is lost; run it with -race.
func TestEngineConcurrentIngest(t *testing.T) {
	reg := NewRegistry()
	b := RegisterBuiltin(reg)
	e, err := NewEngine(reg, EngineOptions{ExpectedResponseSubmetric: true, Thresholds: map[string][]ThresholdDef{
		"http_req_duration{status:200}": src("p(95)<1000"),
		"http_reqs":                     src("count>0"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	const vus, perVU = 8, 5000
	start := time.Unix(0, 0)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	// A reader evaluates and snapshots while samples arrive.
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				e.EvaluateThresholds(time.Second, false)
				e.Observed()
				e.Checks()
			}
		}
	})
	var writers sync.WaitGroup
	for vu := range vus {
		writers.Go(func() {
			buf := NewBuffer(func(batch []Sample) {
				e.Ingest(batch)
				ReleaseBatch(batch)
			})
			status := []*TagSet{
				EmptyTags.With("status", "200").With("expected_response", "true").With("vu", fmt.Sprint(vu)),
				EmptyTags.With("status", "500").With("expected_response", "false"),
			}
			for i := range perVU {
				tags := status[i%2]
				at := start.Add(time.Duration(i) * time.Millisecond)
				buf.Record(Sample{Metric: b.HTTPReqs, Tags: tags, Value: 1, Time: at})
				buf.Record(Sample{Metric: b.HTTPReqDuration, Tags: tags, Value: float64(i % 100), Time: at})
				buf.Record(Sample{Metric: b.Checks, Tags: EmptyTags.With("check", "ok"), Value: float64(i % 2), Time: at})
			}
			buf.Flush()
		})
	}
	writers.Wait()
	close(stop)
	wg.Wait()

	if c := e.Sink("http_reqs").(*CounterSink); c.Sum != vus*perVU {
		t.Errorf("http_reqs = %v, want %d", c.Sum, vus*perVU)
	}
	if d := e.Sink("http_req_duration").(*TrendSink); d.Count() != vus*perVU {
		t.Errorf("http_req_duration count = %d", d.Count())
	}
	for _, name := range []string{"http_req_duration{status:200}", ExpectedResponseSubmetric} {
		if d := e.Sink(name).(*TrendSink); d.Count() != vus*perVU/2 || d.Max() != 98 {
			t.Errorf("%s count = %d max %v, want %d and 98", name, d.Count(), d.Max(), vus*perVU/2)
		}
	}
	if cs := e.Checks(); len(cs) != 1 || cs[0].Passes != vus*perVU/2 || cs[0].Fails != vus*perVU/2 {
		t.Errorf("Checks = %v", cs)
	}
	if rep := e.EvaluateThresholds(time.Minute, true); rep.Failed() {
		t.Errorf("thresholds failed: %+v", rep)
	}
}

// TestEngineSubmetricCacheBounded checks that a flood of distinct tag sets
// neither breaks matching nor keeps every set in the cache.
func TestEngineSubmetricCacheBounded(t *testing.T) {
	reg := NewRegistry()
	b := RegisterBuiltin(reg)
	e, err := NewEngine(reg, EngineOptions{Submetrics: []string{"http_reqs{kind:even}"}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(0, 0)
	n := maxTagCache + 1000
	batch := make([]Sample, 0, n)
	for i := range n {
		kind := "odd"
		if i%2 == 0 {
			kind = "even"
		}
		batch = append(batch, Sample{Metric: b.HTTPReqs, Tags: EmptyTags.With("kind", kind).With("url", fmt.Sprint("/", i)), Value: 1, Time: now})
	}
	e.Ingest(batch)
	if c := e.Sink("http_reqs{kind:even}").(*CounterSink); int(c.Sum) != (n+1)/2 {
		t.Errorf("even = %v, want %d", c.Sum, (n+1)/2)
	}
	st := e.states[b.HTTPReqs.ID]
	if len(st.matches) > maxTagCache {
		t.Errorf("cache holds %d tag sets", len(st.matches))
	}
}

// httpBatch builds a batch like the ones a VU doing HTTP requests records:
// per request http_reqs, the seven timings and http_req_failed, per
// iteration iterations and iteration_duration, with k6's usual tags.
func httpBatch(b *Builtin, n int) []Sample {
	base := EmptyTags.With("scenario", "default").With("group", "")
	urls := []string{"https://test.k6.io/", "https://test.k6.io/news.php", "https://test.k6.io/contacts.php"}
	var reqTags []*TagSet
	for _, u := range urls {
		for _, st := range []string{"200", "503"} {
			exp := "true"
			if st != "200" {
				exp = "false"
			}
			reqTags = append(reqTags, base.With("method", "GET").With("url", u).With("name", u).
				With("status", st).With("proto", "HTTP/1.1").With("expected_response", exp))
		}
	}
	timings := []*Metric{b.HTTPReqDuration, b.HTTPReqBlocked, b.HTTPReqConnecting, b.HTTPReqTLSHandshaking,
		b.HTTPReqSending, b.HTTPReqWaiting, b.HTTPReqReceiving}
	now := time.Now()
	batch := make([]Sample, 0, n)
	for i := 0; len(batch) < n; i++ {
		tags := reqTags[i%len(reqTags)]
		batch = append(batch, Sample{Metric: b.HTTPReqs, Tags: tags, Value: 1, Time: now})
		for k, m := range timings {
			batch = append(batch, Sample{Metric: m, Tags: tags, Value: float64(i%50+k) * 1.7, Time: now})
		}
		batch = append(batch, Sample{Metric: b.HTTPReqFailed, Tags: tags, Value: float64(i % 2), Time: now})
		if i%3 == 2 {
			batch = append(batch,
				Sample{Metric: b.Iterations, Tags: base, Value: 1, Time: now},
				Sample{Metric: b.IterationDuration, Tags: base, Value: 123.4, Time: now})
		}
	}
	return batch[:n]
}

func benchEngine(b *testing.B) (*Engine, *Builtin) {
	reg := NewRegistry()
	bi := RegisterBuiltin(reg)
	e, err := NewEngine(reg, EngineOptions{ExpectedResponseSubmetric: true, Thresholds: map[string][]ThresholdDef{
		"http_req_duration": src("p(95)<500", "avg<200"),
		"http_req_failed":   src("rate<0.01"),
		"http_req_duration{name:https://test.k6.io/}": src("p(99)<1000"),
	}})
	if err != nil {
		b.Fatal(err)
	}
	return e, bi
}

// BenchmarkEngineIngest ingests realistic HTTP batches of BufferSize
// samples and reports samples per second.
func BenchmarkEngineIngest(b *testing.B) {
	e, bi := benchEngine(b)
	batch := httpBatch(bi, BufferSize)
	b.ReportAllocs()
	for b.Loop() {
		e.Ingest(batch)
	}
	b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "samples/s")
}

// BenchmarkEngineIngestParallel is BenchmarkEngineIngest with every
// goroutine ingesting at once, as VUs flushing their buffers do.
func BenchmarkEngineIngestParallel(b *testing.B) {
	e, bi := benchEngine(b)
	batch := httpBatch(bi, BufferSize)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			e.Ingest(batch)
		}
	})
	b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "samples/s")
}

func BenchmarkEvaluateThresholds(b *testing.B) {
	e, bi := benchEngine(b)
	batch := httpBatch(bi, BufferSize)
	for range 2000 {
		e.Ingest(batch)
	}
	b.ReportAllocs()
	for b.Loop() {
		e.EvaluateThresholds(time.Minute, false)
	}
}

// BenchmarkEngineIngestWindowed is BenchmarkEngineIngest with windowed
// thresholds on http_req_duration (1 min) and http_req_failed (10 s): each
// batch is 10 ms later than the one before, and thresholds are evaluated
// every 2 s of that time, as during a run, so windows fill, are judged and
// have their steps reused.
func BenchmarkEngineIngestWindowed(b *testing.B) {
	reg := NewRegistry()
	bi := RegisterBuiltin(reg)
	e, err := NewEngine(reg, EngineOptions{ExpectedResponseSubmetric: true, Thresholds: map[string][]ThresholdDef{
		"http_req_duration": append(src("p(95)<500", "avg<200"), ThresholdDef{Source: "p(99)<300", Window: time.Minute}),
		"http_req_failed":   append(src("rate<0.01"), ThresholdDef{Source: "rate<0.05", Window: 10 * time.Second}),
		"http_req_duration{name:https://test.k6.io/}": src("p(99)<1000"),
	}})
	if err != nil {
		b.Fatal(err)
	}
	batch := httpBatch(bi, BufferSize)
	start := batch[0].Time
	e.SetStart(start)
	const tick = 10 * time.Millisecond
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		at := start.Add(time.Duration(i) * tick)
		for j := range batch {
			batch[j].Time = at
		}
		e.Ingest(batch)
		if i%200 == 0 {
			e.EvaluateThresholds(time.Duration(i)*tick, false)
		}
	}
	b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "samples/s")
}
