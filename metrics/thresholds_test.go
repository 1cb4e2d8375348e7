package metrics

import (
	"strings"
	"testing"
	"time"
)

// thresholdFixture is a registry with the built-ins and one custom metric
// of each type: c (counter), g (gauge), r (rate), t (trend).
type thresholdFixture struct {
	reg        *Registry
	b          *Builtin
	c, g, r, t *Metric
}

func newThresholdFixture(t *testing.T) *thresholdFixture {
	t.Helper()
	reg := NewRegistry()
	f := &thresholdFixture{reg: reg, b: RegisterBuiltin(reg)}
	f.c = reg.MustNew("c", Counter, Default)
	f.g = reg.MustNew("g", Gauge, Default)
	f.r = reg.MustNew("r", Rate, Default)
	f.t = reg.MustNew("t", Trend, Time)
	return f
}

func (f *thresholdFixture) engine(t *testing.T, defs map[string][]ThresholdDef) *Engine {
	t.Helper()
	e, err := NewEngine(f.reg, EngineOptions{Thresholds: defs})
	if err != nil {
		t.Fatalf("NewEngine: %v", err)
	}
	return e
}

func src(sources ...string) []ThresholdDef {
	defs := make([]ThresholdDef, len(sources))
	for i, s := range sources {
		defs[i] = ThresholdDef{Source: s}
	}
	return defs
}

// outcome maps "key source" to OK for every threshold of a report.
func outcome(rep *ThresholdReport) map[string]bool {
	m := make(map[string]bool)
	for _, mt := range rep.Metrics {
		for _, r := range mt.Thresholds {
			m[mt.Key+" "+r.Source] = r.OK
		}
	}
	return m
}

func TestNewThresholdsErrors(t *testing.T) {
	f := newThresholdFixture(t)
	cases := []struct {
		key, source string
		want        string
	}{
		{"nope", "avg<1", `thresholds.nope: metric "nope" is not defined`},
		{"nope{a:b}", "avg<1", `thresholds.nope{a:b}: metric "nope" is not defined`},
		{"http_req_duration", "count<10", `thresholds.http_req_duration: "count" is not valid for a trend metric; use avg, min, max, med or p(N)`},
		{"http_reqs", "p(95)<1", `thresholds.http_reqs: "p(95)" is not valid for a counter metric; use count or rate`},
		{"vus", "avg<1", `thresholds.vus: "avg" is not valid for a gauge metric; use value`},
		{"checks", "count>1", `thresholds.checks: "count" is not valid for a rate metric; use rate`},
		{"http_req_duration", "p(95)<abc", `thresholds.http_req_duration: "p(95)<abc": "abc" is not a number`},
		{"http_req_duration", "p(101)<1", `thresholds.http_req_duration: "p(101)<1"`},
		{"http_req_duration{status}", "avg<1", `thresholds.http_req_duration{status}:`},
		{"http_req_duration{}", "avg<1", `has an empty tag selector`},
	}
	for _, c := range cases {
		_, err := NewThresholds(f.reg, map[string][]ThresholdDef{c.key: src(c.source)})
		if err == nil {
			t.Errorf("%s: %q accepted", c.key, c.source)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q: error %q, want it to contain %q", c.key, c.source, err, c.want)
		}
	}

	// Every problem is reported.
	_, err := NewThresholds(f.reg, map[string][]ThresholdDef{
		"a": src("avg<1"), "t": src("count<1", "p(95)<1", "bogus"),
	})
	if err == nil || strings.Count(err.Error(), "\n") != 2 {
		t.Errorf("want three errors on three lines, got %v", err)
	}

	_, err = NewThresholds(f.reg, map[string][]ThresholdDef{"t": {{Source: "avg<1", DelayAbortEval: -time.Second}}})
	if err == nil {
		t.Errorf("negative delayAbortEval accepted")
	}

	th, err := NewThresholds(f.reg, map[string][]ThresholdDef{
		"t": src("p(95)<200", "avg<100"), "c": src("count>0", "rate<5"), "g": src("value<3"), "r": src("rate>0.9"),
		"t{status:200}": src("max<1"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if th.Len() != 7 {
		t.Errorf("Len = %d, want 7", th.Len())
	}
}

func TestThresholdAggregations(t *testing.T) {
	f := newThresholdFixture(t)
	e := f.engine(t, map[string][]ThresholdDef{
		"c": src("count==6", "count>6", "rate==3", "rate<3"),
		"g": src("value==2", "value>2"),
		"r": src("rate==0.75", "rate>0.75"),
		"t": src("avg==50.5", "min==1", "max==100", "max<100", "med<50.6", "med>50.4", "p(90)<90.2", "p(90)<90", "p(99)>98.9"),
	})
	t0 := time.Unix(1000, 0)
	var batch []Sample
	for _, v := range []float64{1, 2, 3} {
		batch = append(batch, Sample{Metric: f.c, Value: v, Time: t0})
	}
	batch = append(batch, Sample{Metric: f.g, Value: 5, Time: t0}, Sample{Metric: f.g, Value: 2, Time: t0.Add(time.Second)})
	for _, v := range []float64{1, 1, 0, 1} {
		batch = append(batch, Sample{Metric: f.r, Value: v, Time: t0})
	}
	for i := 1; i <= 100; i++ {
		batch = append(batch, Sample{Metric: f.t, Value: float64(i), Time: t0})
	}
	e.Ingest(batch)

	rep := e.EvaluateThresholds(2*time.Second, false)
	want := map[string]bool{
		"c count==6": true, "c count>6": false, "c rate==3": true, "c rate<3": false,
		"g value==2": true, "g value>2": false,
		"r rate==0.75": true, "r rate>0.75": false,
		"t avg==50.5": true, "t min==1": true, "t max==100": true, "t max<100": false,
		"t med<50.6": true, "t med>50.4": true, "t p(90)<90.2": true, "t p(90)<90": false, "t p(99)>98.9": true,
	}
	got := outcome(rep)
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s: OK = %v (present %v), want %v", k, g, ok, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("report has %d thresholds, want %d", len(got), len(want))
	}
	if !rep.Failed() || rep.Abort() {
		t.Errorf("Failed = %v, Abort = %v; want true, false", rep.Failed(), rep.Abort())
	}
	if crossed := strings.Join(rep.FailedMetrics(), ","); crossed != "c,g,r,t" {
		t.Errorf("Crossed = %q", crossed)
	}
	for _, mt := range rep.Metrics {
		if mt.Key == "c" && mt.Thresholds[2].Value != 3 {
			t.Errorf("counter rate value = %v, want 3", mt.Thresholds[2].Value)
		}
	}

	// A counter's rate before any time elapsed has no value and passes.
	rep = e.EvaluateThresholds(0, false)
	if got := outcome(rep); !got["c rate<3"] {
		t.Errorf("counter rate at 0 elapsed should pass")
	}
}

func TestThresholdsOnEmptySinks(t *testing.T) {
	f := newThresholdFixture(t)
	e := f.engine(t, map[string][]ThresholdDef{
		"t": src("avg>0", "max<1", "p(95)==0"),
		"c": src("count>0", "rate>0", "count==0"),
		"r": src("rate>0.5", "rate<0.5"),
		"g": src("value>0", "value==0"),
	})

	// During the run, empty sinks are not evaluated: everything is OK.
	rep := e.EvaluateThresholds(10*time.Second, false)
	if rep.Failed() {
		t.Errorf("thresholds on empty sinks failed during the run")
	}
	for _, mt := range rep.Metrics {
		for _, r := range mt.Thresholds {
			if r.Evaluated || !r.OK {
				t.Errorf("%s %s: evaluated %v, OK %v during the run", mt.Key, r.Source, r.Evaluated, r.OK)
			}
		}
	}

	rep = e.EvaluateThresholds(10*time.Second, true)
	want := map[string]bool{
		"t avg>0": false, "t max<1": true, "t p(95)==0": true,
		"c count>0": false, "c rate>0": false, "c count==0": true,
		"r rate>0.5": true, "r rate<0.5": true, // an empty Rate passes
		"g value>0": false, "g value==0": true,
	}
	got := outcome(rep)
	for k, w := range want {
		if got[k] != w {
			t.Errorf("final %s: OK = %v, want %v", k, got[k], w)
		}
	}
	for _, mt := range rep.Metrics {
		for _, r := range mt.Thresholds {
			if !r.Evaluated {
				t.Errorf("final %s %s not evaluated", mt.Key, r.Source)
			}
		}
	}

	// Thresholds make their metrics observed, tainted when failing.
	obs := map[string]ObservedMetric{}
	for _, o := range e.Observed() {
		obs[o.Name] = o
	}
	for name, tainted := range map[string]bool{"t": true, "c": true, "r": false, "g": true} {
		o, ok := obs[name]
		if !ok {
			t.Errorf("%s with thresholds is not observed", name)
			continue
		}
		if o.Tainted != tainted {
			t.Errorf("%s tainted = %v, want %v", name, o.Tainted, tainted)
		}
		if len(o.Thresholds) == 0 {
			t.Errorf("%s observed without its thresholds", name)
		}
	}
}

func TestThresholdsKeepResultWhileSkipped(t *testing.T) {
	f := newThresholdFixture(t)
	e := f.engine(t, map[string][]ThresholdDef{
		"t":             src("max<10"),
		"t{status:500}": src("max<10"),
	})
	now := time.Unix(0, 0)
	e.Ingest([]Sample{{Metric: f.t, Tags: EmptyTags.With("status", "200"), Value: 20, Time: now}})
	rep := e.EvaluateThresholds(time.Second, false)
	got := outcome(rep)
	if got["t max<10"] || !got["t{status:500} max<10"] {
		t.Errorf("after one sample: %v", got)
	}
	// The submetric is still empty and skipped; the metric keeps failing
	// even when evaluated again with nothing new.
	rep = e.EvaluateThresholds(2*time.Second, false)
	if got := outcome(rep); got["t max<10"] || !rep.Failed() {
		t.Errorf("failing threshold recovered without new samples: %v", got)
	}
}

func TestThresholdAbortOnFail(t *testing.T) {
	f := newThresholdFixture(t)
	e := f.engine(t, map[string][]ThresholdDef{
		"t": {{Source: "max<10", AbortOnFail: true, DelayAbortEval: 10 * time.Second}},
		"c": {{Source: "count<5", AbortOnFail: false}},
		"r": {{Source: "rate>0.5", AbortOnFail: true}},
	})
	now := time.Unix(0, 0)

	// A failing threshold without abortOnFail never aborts.
	e.Ingest([]Sample{{Metric: f.c, Value: 10, Time: now}})
	if rep := e.EvaluateThresholds(time.Second, false); !rep.Failed() || rep.Abort() {
		t.Errorf("counter: Failed %v Abort %v, want true false", rep.Failed(), rep.Abort())
	}

	// abortOnFail with delayAbortEval: no abort before the delay.
	e.Ingest([]Sample{{Metric: f.t, Value: 50, Time: now}})
	if rep := e.EvaluateThresholds(5*time.Second, false); rep.Abort() {
		t.Errorf("aborted before delayAbortEval")
	}
	if rep := e.EvaluateThresholds(10*time.Second, false); !rep.Abort() {
		t.Errorf("no abort once delayAbortEval passed")
	}

	// abortOnFail without delay aborts at once; a passing one does not.
	f2 := newThresholdFixture(t)
	e2 := f2.engine(t, map[string][]ThresholdDef{"r": {{Source: "rate>0.5", AbortOnFail: true}}})
	e2.Ingest([]Sample{{Metric: f2.r, Value: 1, Time: now}})
	if rep := e2.EvaluateThresholds(time.Second, false); rep.Abort() || rep.Failed() {
		t.Errorf("passing rate: Failed %v Abort %v", rep.Failed(), rep.Abort())
	}
	e2.Ingest([]Sample{{Metric: f2.r, Value: 0, Time: now}, {Metric: f2.r, Value: 0, Time: now}})
	if rep := e2.EvaluateThresholds(time.Second, false); !rep.Abort() {
		t.Errorf("failing rate with abortOnFail did not abort")
	}
}

func TestSubmetricThresholds(t *testing.T) {
	f := newThresholdFixture(t)
	e := f.engine(t, map[string][]ThresholdDef{
		"t":                          src("max<10"),
		"t{status:200}":              src("max<10", "avg==4"),
		`t{ status : "200" }`:        src("p(50)<=5"),
		"t{status:200,method:GET}":   src("max==3"),
		"t{status:500}":              src("max>40"),
		"t{status:404}":              src("max<1"),
		"http_req_failed{name:home}": src("rate<0.1"),
	})
	now := time.Unix(0, 0)
	get := EmptyTags.With("status", "200").With("method", "GET")
	post := EmptyTags.With("status", "200").With("method", "POST")
	e.Ingest([]Sample{
		{Metric: f.t, Tags: get, Value: 3, Time: now},
		{Metric: f.t, Tags: post, Value: 5, Time: now},
		{Metric: f.t, Tags: EmptyTags.With("status", "500"), Value: 50, Time: now},
		{Metric: f.t, Value: 1, Time: now}, // nil tags belong to no submetric
	})
	rep := e.EvaluateThresholds(time.Second, true)
	got := outcome(rep)
	want := map[string]bool{
		"t max<10":                            false,
		"t{status:200} max<10":                true,
		"t{status:200} avg==4":                true,
		`t{ status : "200" } p(50)<=5`:        true,
		"t{status:200,method:GET} max==3":     true,
		"t{status:500} max>40":                true,
		"t{status:404} max<1":                 true,
		"http_req_failed{name:home} rate<0.1": true,
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s: OK = %v (present %v), want %v", k, g, ok, w)
		}
	}

	// Both spellings of {status:200} share one submetric and its results,
	// named by the first key in sorted order, as written.
	if res := rep.Results(`t{status : "200"}`); len(res) != 3 {
		t.Errorf(`Results(t{status : "200"}) = %+v, want the 3 thresholds of both keys`, res)
	}
	if res := rep.Results("t"); len(res) != 1 || res[0].OK || res[0].Value != 50 {
		t.Errorf("Results(t) = %+v", res)
	}
	if got := strings.Join(rep.FailedMetrics(), ","); got != "t" {
		t.Errorf("FailedMetrics = %q", got)
	}

	s, ok := e.Sink("t{status:200}").(*TrendSink)
	if !ok || s.Count() != 2 {
		t.Fatalf("t{status:200} sink = %#v", e.Sink("t{status:200}"))
	}
	var names []string
	for _, o := range e.Observed() {
		if o.Metric == f.t {
			names = append(names, o.Name)
		}
	}
	if strings.Join(names, " ") != `t t{status : "200"} t{status:200,method:GET} t{status:404} t{status:500}` {
		t.Errorf("observed t metrics: %q", names)
	}
}
