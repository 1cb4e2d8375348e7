package grafana

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/testkit/grafanatest"
	"github.com/metronome-load/metronome/internal/testkit/promtest"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
	"github.com/metronome-load/metronome/output/prometheus"
)

// A realistic run: two scenarios for 3 minutes at 50 iterations/s each,
// one HTTP request per iteration (api calls login, web calls home); the api
// scenario's server stalls for 2 s every 30 s, so its iterations queue
// (schedule_lag) and some are dropped. corrected_latency is recorded per
// request with the request's tags, and per dropped arrival with the
// scenario's tags and outcome=dropped, as metronome does.
const (
	runLength  = 3 * time.Minute
	perSecond  = 50
	batchEvery = 5 * time.Second
)

type syntheticRun struct {
	batches   [][]metrics.Sample
	trends    [][]metrics.Sample // the trend samples of each batch
	start     time.Time
	end       time.Time
	corrected *metrics.TrendSink
	// byName holds the corrected_latency values of each endpoint.
	byName   map[string]*metrics.TrendSink
	requests int
}

// endpoints names the request each scenario's iterations make.
var endpoints = map[string]string{"api": "login", "web": "home"}

func makeRun(b *metrics.Builtin, testid string) *syntheticRun {
	rng := rand.New(rand.NewPCG(11, 12))
	r := &syntheticRun{corrected: metrics.NewTrendSink(), byName: map[string]*metrics.TrendSink{}}
	for _, name := range endpoints {
		r.byName[name] = metrics.NewTrendSink()
	}
	r.end = time.Now().Truncate(time.Second)
	r.start = r.end.Add(-runLength)
	global := metrics.NewTags(map[string]string{"testid": testid})
	var batch, trends []metrics.Sample
	add := func(s metrics.Sample) {
		batch = append(batch, s)
		if s.Metric.Type == metrics.Trend {
			trends = append(trends, s)
		}
	}
	step := time.Second / perSecond
	for at := r.start; at.Before(r.end); at = at.Add(step) {
		since := at.Sub(r.start)
		for _, sc := range []string{"api", "web"} {
			tags := global.With("scenario", sc)
			raw := 15 * math.Exp(rng.NormFloat64()*0.4)
			lag := 0.0
			if sc == "api" {
				// 2 s stall every 30 s: an arrival during it waits for
				// the rest of the stall.
				if in := since % (30 * time.Second); in < 2*time.Second {
					lag = metrics.Milliseconds(2*time.Second - in)
				}
				if lag > 1900 {
					add(metrics.Sample{Metric: b.DroppedIterations, Tags: tags, Time: at, Value: 1})
					add(metrics.Sample{Metric: b.CorrectedLatency, Tags: tags.With("outcome", "dropped"), Time: at, Value: lag})
					r.corrected.AddValue(lag)
					continue
				}
			}
			failed := rng.IntN(100) == 0
			req := tags.With("method", "GET").With("status", "200").With("name", endpoints[sc]).
				With("url", "http://127.0.0.1/"+sc).With("expected_response", fmt.Sprint(!failed))
			if failed {
				req = req.With("status", "503")
			}
			r.corrected.AddValue(raw + lag)
			r.byName[endpoints[sc]].AddValue(raw + lag)
			r.requests++
			add(metrics.Sample{Metric: b.HTTPReqDuration, Tags: req, Time: at, Value: raw})
			add(metrics.Sample{Metric: b.HTTPReqs, Tags: req, Time: at, Value: 1})
			add(metrics.Sample{Metric: b.HTTPReqFailed, Tags: req, Time: at, Value: map[bool]float64{true: 1}[failed]})
			add(metrics.Sample{Metric: b.ScheduleLag, Tags: tags, Time: at, Value: lag})
			add(metrics.Sample{Metric: b.IterationDuration, Tags: tags, Time: at, Value: raw + 0.2})
			add(metrics.Sample{Metric: b.CorrectedLatency, Tags: req, Time: at, Value: raw + lag})
			add(metrics.Sample{Metric: b.Iterations, Tags: tags, Time: at, Value: 1})
		}
		if since%time.Second == 0 {
			add(metrics.Sample{Metric: b.VUs, Tags: global, Time: at, Value: 20})
		}
		if (since+step)%batchEvery == 0 {
			r.batches = append(r.batches, batch)
			r.trends = append(r.trends, trends)
			batch, trends = nil, nil
		}
	}
	return r
}

// pushAll sends the batches through one output, waiting after each until
// the output has pushed it, as a run's pushes come between its batches:
// each batch is then one point of every series it changed. A push that
// took two batches at once (an output's 10 ms flush falling behind on a
// loaded machine) left a 10 s gap among the 5 s points, and rate() over a
// 1m window that began in the gap extrapolated to its edge only half a
// point interval: 87.5/s mid-run instead of 100/s.
func pushAll(t *testing.T, srv *promtest.Server, batches [][]metrics.Sample, env map[string]string) {
	t.Helper()
	var logs []string
	write, pushed := countingProxy(t, srv.WriteURL())
	env["K6_PROMETHEUS_RW_SERVER_URL"] = write
	env["K6_PROMETHEUS_RW_PUSH_INTERVAL"] = "10ms"
	o, err := prometheus.New(output.Params{Env: env, Logf: func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Start(); err != nil {
		t.Fatal(err)
	}
	for i, b := range batches {
		before := pushed.Load()
		o.AddSamples(b)
		for deadline := time.Now().Add(30 * time.Second); pushed.Load() == before; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("batch %d was not pushed within 30 s", i)
			}
		}
	}
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
	if len(logs) > 0 {
		t.Fatalf("output reported:\n%s\nserver:\n%s", strings.Join(logs, "\n"), srv.Log())
	}
}

// countingProxy forwards requests to target on a loopback port of its own
// and counts the ones the target accepted.
func countingProxy(t *testing.T, target string) (string, *atomic.Int64) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int64
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(&url.URL{Scheme: u.Scheme, Host: u.Host}) },
		ModifyResponse: func(resp *http.Response) error {
			if resp.StatusCode/100 == 2 {
				accepted.Add(1)
			}
			return nil
		},
	}
	front := httptest.NewServer(proxy)
	t.Cleanup(front.Close)
	return front.URL + u.Path, &accepted
}

// dashboardQueries returns the queries of the checked-in JSON.
func dashboardQueries(t *testing.T) []grafanatest.Query {
	t.Helper()
	raw, err := os.ReadFile("metronome.json")
	if err != nil {
		t.Fatal(err)
	}
	qs, err := grafanatest.Queries(raw)
	if err != nil {
		t.Fatal(err)
	}
	return qs
}

// values are the dashboard's variables as Grafana sets them for one test
// run, all scenarios and endpoints, p99 and a 1m rate interval.
func values(testid string) map[string]string {
	return map[string]string{
		"datasource":      "prometheus",
		"__rate_interval": "1m",
		"testid":          testid,
		"scenario":        ".*",
		"name":            ".+",
		"quantile":        "0.99",
		"stat":            "p99",
	}
}

// TestDashboardQueries pushes a run into a real Prometheus (trend stats and
// native histograms, as two outputs of the same run would) and runs every
// query of the dashboard, its variables' queries included: each must return data,
// with every endpoint and with one picked in the name variable.
func TestDashboardQueries(t *testing.T) {
	srv := promtest.Start(t)
	b := metrics.RegisterBuiltin(metrics.NewRegistry())
	testid := fmt.Sprint("dash-", time.Now().UnixNano())
	r := makeRun(b, testid)
	// The native-histogram output gets only the trends, so the counters of
	// the two outputs do not collide.
	pushAll(t, srv, r.batches, map[string]string{})
	pushAll(t, srv, r.trends, map[string]string{"K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM": "true"})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	qs := dashboardQueries(t)
	if len(qs) < 20 {
		t.Fatalf("only %d queries in the dashboard", len(qs))
	}
	last := func(res promtest.Result) float64 {
		s := res.Series[len(res.Series)-1]
		return s.Points[len(s.Points)-1].V
	}
	withinBucket := func(got, want float64) bool {
		return got/want <= math.Exp2(1.0/8) && want/got <= math.Exp2(1.0/8)
	}
	one := values(testid)
	one["name"] = "login"
	for _, q := range qs {
		each, err := q.ExpandEach(values(testid), one)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range each {
			n, err := grafanatest.Count(ctx, srv, e, r.start, r.end, 15*time.Second)
			t.Logf("%-64s %4d values  %s", e, n, e.Expr)
			if err != nil {
				t.Errorf("%s: %v", e, err)
			} else if n == 0 {
				t.Errorf("%s: no data for %s", e, e.Expr)
			} else if e.Variable && e.RefID == "name" && n != len(endpoints) {
				t.Errorf("%s: %d endpoints, want %d", e, n, len(endpoints))
			}
		}
	}
	// Spot checks of the numbers against the run.
	query := func(expr string) promtest.Result {
		t.Helper()
		e, err := grafanatest.Query{Expr: expr}.Expand(values(testid))
		if err != nil {
			t.Fatal(err)
		}
		res, err := srv.QueryRange(ctx, e.Expr, r.start, r.end, 15*time.Second)
		if err != nil || res.Empty() {
			t.Fatalf("%s: %v, %+v", e.Expr, err, res)
		}
		return res
	}
	for _, q := range qs {
		switch q.String() {
		case "Requests / A":
			if got := last(query(q.Expr)); got != float64(r.requests) {
				t.Errorf("requests %g, want %d", got, r.requests)
			}
		case "Corrected p$quantile / A":
			want := r.corrected.Percentile(99) / 1000
			if got := last(query(q.Expr)); !withinBucket(got, want) {
				t.Errorf("corrected p99 %g s, summary %g s", got, want)
			}
		case "Achieved vs intended iteration rate / B":
			// Mid-run, intended = 2 × 50/s, dropped ones included.
			res := query(q.Expr)
			mid := res.Series[0].Points[len(res.Series[0].Points)/2].V
			if math.Abs(mid-2*perSecond) > 0.1*2*perSecond {
				t.Errorf("intended rate %g/s mid-run, want about %d/s", mid, 2*perSecond)
			}
		case "Whole run by endpoint: raw vs corrected p$quantile / B":
			// One row per endpoint, dropped arrivals in none.
			res := query(q.Expr)
			if len(res.Series) != len(endpoints) {
				t.Errorf("%d endpoints, want %d: %+v", len(res.Series), len(endpoints), res)
			}
			for _, s := range res.Series {
				sink := r.byName[s.Labels["name"]]
				if sink == nil {
					t.Errorf("endpoint %q is not one the run named", s.Labels["name"])
					continue
				}
				got, want := s.Points[len(s.Points)-1].V, sink.Percentile(99)/1000
				t.Logf("corrected p99 of %s: PromQL %.4f s, summary %.4f s", s.Labels["name"], got, want)
				if !withinBucket(got, want) {
					t.Errorf("corrected p99 of %s: %g s, summary %g s", s.Labels["name"], got, want)
				}
			}
		}
	}
}
