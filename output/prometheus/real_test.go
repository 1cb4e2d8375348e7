package prometheus

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/testkit/promtest"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
)

// schemaWidth is the ratio of a bucket's upper to lower bound at a
// schema. A quantile PromQL interpolates inside the bucket of the true
// quantile is off by less than this factor; the HdrHistogram percentile it
// is compared with adds at most 0.05% (metrics.TrendSink's precision), and
// the two estimators' ranks (q·n against q·(n-1)) differ by less than one
// sample.
func schemaWidth(schema int32) float64 { return math.Exp2(math.Exp2(-float64(schema))) }

// run is a synthetic test run: samples of two scenarios spread over the
// last minute, and the exact summaries the test compares against.
type run struct {
	samples []metrics.Sample
	// corrected holds every corrected_latency value (ms); perScenario the
	// values of each scenario, perName those of each endpoint.
	corrected   *metrics.TrendSink
	perScenario map[string]*metrics.TrendSink
	perName     map[string]*metrics.TrendSink
	reqs        map[string]int
	end         time.Time
}

// names are the endpoints both scenarios call; search is the one the
// stalls hit.
var names = []string{"login", "search"}

// makeRun builds n iterations per scenario, each one request to login or
// search, whose corrected latency (recorded per request with the request's
// tags, as metronome does) has a long tail: a lognormal body around 20 ms
// plus stalls up to 2 s on 4% of the searches.
func makeRun(reg *metrics.Registry, b *metrics.Builtin, testid string, n int) *run {
	rng := rand.New(rand.NewPCG(42, 7))
	r := &run{corrected: metrics.NewTrendSink(), perScenario: map[string]*metrics.TrendSink{},
		perName: map[string]*metrics.TrendSink{}, reqs: map[string]int{}}
	for _, name := range names {
		r.perName[name] = metrics.NewTrendSink()
	}
	start := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	r.end = start.Add(time.Minute)
	for _, sc := range []string{"api", "web"} {
		r.perScenario[sc] = metrics.NewTrendSink()
		tags := metrics.NewTags(map[string]string{"testid": testid, "scenario": sc})
		for i := range n {
			at := start.Add(time.Duration(i) * time.Minute / time.Duration(n))
			name := names[rng.IntN(len(names))]
			reqTags := tags.With("method", "GET").With("status", "200").With("expected_response", "true").
				With("name", name).With("url", "http://127.0.0.1/"+name)
			raw := 20 * math.Exp(rng.NormFloat64()*0.5)
			lag := 0.0
			if name == "search" && rng.Float64() < 0.04 {
				lag = rng.Float64() * 2000
			}
			corrected := raw + lag
			r.corrected.AddValue(corrected)
			r.perScenario[sc].AddValue(corrected)
			r.perName[name].AddValue(corrected)
			r.reqs[sc]++
			r.samples = append(r.samples,
				metrics.Sample{Metric: b.HTTPReqDuration, Tags: reqTags, Time: at, Value: raw},
				metrics.Sample{Metric: b.HTTPReqs, Tags: reqTags, Time: at, Value: 1},
				metrics.Sample{Metric: b.HTTPReqFailed, Tags: reqTags, Time: at, Value: 0},
				metrics.Sample{Metric: b.ScheduleLag, Tags: tags, Time: at, Value: lag},
				metrics.Sample{Metric: b.CorrectedLatency, Tags: reqTags, Time: at, Value: corrected},
				metrics.Sample{Metric: b.IterationDuration, Tags: tags, Time: at, Value: raw},
				metrics.Sample{Metric: b.Iterations, Tags: tags, Time: at, Value: 1},
				metrics.Sample{Metric: b.VUs, Tags: metrics.NewTags(map[string]string{"testid": testid}), Time: at, Value: float64(1 + i%10)},
			)
		}
	}
	return r
}

// push sends the run through a new output in batches of about a second,
// with pushes in between, and stops it.
func push(t *testing.T, srv *promtest.Server, r *run, env map[string]string) {
	t.Helper()
	var errs []string
	p := output.Params{
		Env:  env,
		Logf: func(f string, a ...any) { errs = append(errs, fmt.Sprintf(f, a...)) },
	}
	p.Env["K6_PROMETHEUS_RW_SERVER_URL"] = srv.WriteURL()
	p.Env["K6_PROMETHEUS_RW_PUSH_INTERVAL"] = "50ms"
	o, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Start(); err != nil {
		t.Fatal(err)
	}
	const batches = 6
	per := (len(r.samples) + batches - 1) / batches
	for i := 0; i < len(r.samples); i += per {
		o.AddSamples(r.samples[i:min(i+per, len(r.samples))])
		time.Sleep(80 * time.Millisecond)
	}
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
	if len(errs) > 0 {
		t.Fatalf("output reported:\n%s\nserver log:\n%s", strings.Join(errs, "\n"), srv.Log())
	}
}

func queryOne(t *testing.T, srv *promtest.Server, expr string, at time.Time) promtest.Point {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := srv.Query(ctx, expr, at)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Series) != 1 || len(res.Series[0].Points) != 1 {
		t.Fatalf("%s: %d series, want 1: %+v", expr, len(res.Series), res)
	}
	return res.Series[0].Points[0]
}

// TestRealPrometheus pushes a run into Debian's Prometheus 2.42, once as
// trend stats and once as native histograms, and reads it back with
// PromQL.
func TestRealPrometheus(t *testing.T) {
	srv := promtest.Start(t)
	reg := metrics.NewRegistry()
	b := metrics.RegisterBuiltin(reg)
	const n = 10_000

	t.Run("trend stats", func(t *testing.T) {
		id := fmt.Sprint("stats-", time.Now().UnixNano())
		r := makeRun(reg, b, id, n)
		push(t, srv, r, map[string]string{"K6_PROMETHEUS_RW_TREND_STATS": "p(99),p(99.9),avg,count"})
		// One series per request tag set: the stats of a name in one
		// scenario are exactly those of its samples.
		sinks := map[string]*metrics.TrendSink{}
		for _, smp := range r.samples {
			if smp.Metric == b.CorrectedLatency {
				sc, _ := smp.Tags.Get("scenario")
				name, _ := smp.Tags.Get("name")
				sel := fmt.Sprintf(`{testid=%q,scenario=%q,name=%q}`, id, sc, name)
				if sinks[sel] == nil {
					sinks[sel] = metrics.NewTrendSink()
				}
				sinks[sel].AddValue(smp.Value)
			}
		}
		if len(sinks) != 4 {
			t.Fatalf("%d corrected_latency tag sets, want 2 scenarios × 2 names", len(sinks))
		}
		for sel, sink := range sinks {
			for stat, want := range map[string]float64{
				"p99": sink.Percentile(99) / 1000, "p999": sink.Percentile(99.9) / 1000,
				"avg": sink.Avg() / 1000, "count": float64(sink.Count()),
			} {
				got := queryOne(t, srv, "k6_corrected_latency_"+stat+sel, r.end).V
				if math.Abs(got-want) > 1e-9*want {
					t.Errorf("k6_corrected_latency_%s%s = %g, want %g", stat, sel, got, want)
				}
			}
		}
		for name, sink := range r.perName {
			expr := fmt.Sprintf(`sum by (name) (k6_corrected_latency_count{testid=%q,name=%q})`, id, name)
			if got := queryOne(t, srv, expr, r.end).V; got != float64(sink.Count()) {
				t.Errorf("%s = %g, want %d", expr, got, sink.Count())
			}
		}
		for sc := range r.perScenario {
			got := queryOne(t, srv, fmt.Sprintf(`sum(k6_http_reqs_total{testid=%q,scenario=%q})`, id, sc), r.end).V
			if got != float64(r.reqs[sc]) {
				t.Errorf("k6_http_reqs_total for %s = %g, want %d", sc, got, r.reqs[sc])
			}
		}
		if got := queryOne(t, srv, fmt.Sprintf(`max(k6_http_req_failed_rate{testid=%q,scenario="api"})`, id), r.end).V; got != 0 {
			t.Errorf("k6_http_req_failed_rate = %g", got)
		}
		if got := queryOne(t, srv, fmt.Sprintf(`k6_vus{testid=%q}`, id), r.end).V; got < 1 || got > 10 {
			t.Errorf("k6_vus = %g", got)
		}
	})

	// Every schema from k6's 3 to Prometheus's finest, 8: the
	// disagreement logged for each is the table in docs/outputs.md,
	// "Precision and Prometheus 2.42 notes".
	for schema := defaultNativeSchema; schema <= int(maxNativeSchema); schema++ {
		t.Run(fmt.Sprint("native histograms at schema ", schema), func(t *testing.T) {
			nativeRun(t, srv, reg, b, n, int32(schema))
		})
	}
}

// nativeRun pushes a run as native histograms at schema and checks what
// PromQL reads back.
func nativeRun(t *testing.T, srv *promtest.Server, reg *metrics.Registry, b *metrics.Builtin, n int, schema int32) {
	id := fmt.Sprint("native-", schema, "-", time.Now().UnixNano())
	r := makeRun(reg, b, id, n)
	push(t, srv, r, map[string]string{"K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM": "true", "K6_PROMETHEUS_RW_STALE_MARKERS": "true",
		"K6_PROMETHEUS_RW_NATIVE_HISTOGRAM_SCHEMA": fmt.Sprint(schema)})
	sel := fmt.Sprintf(`k6_corrected_latency_seconds{testid=%q}`, id)
	if got := queryOne(t, srv, "histogram_count(sum("+sel+"))", r.end).V; got != float64(r.corrected.Count()) {
		t.Errorf("histogram_count = %g, want %d", got, r.corrected.Count())
	}
	if got, want := queryOne(t, srv, "histogram_sum(sum("+sel+"))", r.end).V, r.corrected.Sum()/1000; math.Abs(got-want) > 1e-9*want {
		t.Errorf("histogram_sum = %g, want %g", got, want)
	}
	width := schemaWidth(schema)
	worst := 0.0
	var offs []string
	for _, q := range []float64{0.5, 0.9, 0.95, 0.99, 0.999} {
		got := queryOne(t, srv, fmt.Sprintf("histogram_quantile(%g, sum(%s))", q, sel), r.end).V
		want := r.corrected.Percentile(q*100) / 1000
		ratio := got / want
		worst = max(worst, math.Abs(ratio-1))
		offs = append(offs, fmt.Sprintf("p%g %+.3f%%", q*100, (ratio-1)*100))
		if ratio > width*1.0005 || ratio < 1/(width*1.0005) {
			t.Errorf("p%g: PromQL %g s against %g s: outside one schema-%d bucket (×%.4f)", q*100, got, want, schema, width)
		}
	}
	t.Logf("schema %d: PromQL's histogram_quantile against the HdrHistogram summary: %s; worst %.3f%% (bucket width %.3f%%)",
		schema, strings.Join(offs, ", "), worst*100, (width-1)*100)
	// Per endpoint: the query the dashboard's per-name panels make. An
	// endpoint holds fewer samples, so PromQL's and k6's estimators may
	// part by the gap between the ranks around p99 as well as by a bucket:
	// the answer must lie within a bucket of that gap.
	for name, sink := range r.perName {
		expr := fmt.Sprintf(`histogram_quantile(0.99, sum by (name) (k6_corrected_latency_seconds{testid=%q,name=%q}))`, id, name)
		step := 100 / float64(sink.Count())
		lo, hi := sink.Percentile(99-step)/1000, sink.Percentile(99+step)/1000
		if got := queryOne(t, srv, expr, r.end).V; got > hi*width*1.0005 || got < lo/(width*1.0005) {
			t.Errorf("%s: %g s, want %g to %g s within one schema-%d bucket", expr, got, lo, hi, schema)
		}
	}
	// Each scenario keeps its own series (one per endpoint): their
	// counts add up to the scenario's requests.
	for sc, sink := range r.perScenario {
		expr := fmt.Sprintf(`histogram_count(sum(k6_corrected_latency_seconds{testid=%q,scenario=%q}))`, id, sc)
		if got := queryOne(t, srv, expr, r.end).V; got != float64(sink.Count()) {
			t.Errorf("%s = %g, want %d", expr, got, sink.Count())
		}
	}
	// Stale markers end every series at stop.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	later := time.Now().Add(time.Second)
	for _, expr := range []string{sel, fmt.Sprintf(`k6_http_reqs_total{testid=%q}`, id)} {
		res, err := srv.Query(ctx, expr, later)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Empty() {
			t.Errorf("%s still has values after the stale markers: %+v", expr, res)
		}
	}
}
