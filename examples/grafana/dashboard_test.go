package grafana

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/promtest"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
	"github.com/metronome-load/metronome/output/prometheus"
)

// A realistic run: two scenarios for 3 minutes at 50 iterations/s each,
// one HTTP request per iteration; the api scenario's server stalls for 2 s
// every 30 s, so its iterations queue (schedule_lag) and some are dropped.
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
	requests  int
}

func makeRun(b *metrics.Builtin, testid string) *syntheticRun {
	rng := rand.New(rand.NewPCG(11, 12))
	r := &syntheticRun{corrected: metrics.NewTrendSink()}
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
					continue
				}
			}
			failed := rng.IntN(100) == 0
			req := tags.With("method", "GET").With("status", "200").With("name", "http://127.0.0.1/"+sc).
				With("expected_response", fmt.Sprint(!failed))
			if failed {
				req = req.With("status", "503")
			}
			r.corrected.AddValue(raw + lag)
			r.requests++
			add(metrics.Sample{Metric: b.HTTPReqDuration, Tags: req, Time: at, Value: raw})
			add(metrics.Sample{Metric: b.HTTPReqs, Tags: req, Time: at, Value: 1})
			add(metrics.Sample{Metric: b.HTTPReqFailed, Tags: req, Time: at, Value: map[bool]float64{true: 1}[failed]})
			add(metrics.Sample{Metric: b.ScheduleLag, Tags: tags, Time: at, Value: lag})
			add(metrics.Sample{Metric: b.IterationDuration, Tags: tags, Time: at, Value: raw + 0.2})
			add(metrics.Sample{Metric: b.CorrectedLatency, Tags: tags, Time: at, Value: raw + lag})
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

// pushAll sends the batches through one output, letting it push between
// batches as it would during a run.
func pushAll(t *testing.T, srv *promtest.Server, batches [][]metrics.Sample, env map[string]string) {
	t.Helper()
	var logs []string
	env["K6_PROMETHEUS_RW_SERVER_URL"] = srv.WriteURL()
	env["K6_PROMETHEUS_RW_PUSH_INTERVAL"] = "10ms"
	o, err := prometheus.New(output.Params{Env: env, Logf: func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Start(); err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		o.AddSamples(b)
		time.Sleep(30 * time.Millisecond)
	}
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
	if len(logs) > 0 {
		t.Fatalf("output reported:\n%s\nserver:\n%s", strings.Join(logs, "\n"), srv.Log())
	}
}

// dashboardQueries returns every panel's PromQL, keyed by panel title and
// refId, from the checked-in JSON.
func dashboardQueries(t *testing.T) (titles []string, exprs []string) {
	t.Helper()
	raw, err := os.ReadFile("metronome.json")
	if err != nil {
		t.Fatal(err)
	}
	type panel struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr  string `json:"expr"`
			RefID string `json:"refId"`
		} `json:"targets"`
		Panels []json.RawMessage `json:"panels"`
	}
	var d struct {
		Panels []json.RawMessage `json:"panels"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	var walk func([]json.RawMessage)
	walk = func(ps []json.RawMessage) {
		for _, r := range ps {
			var p panel
			if err := json.Unmarshal(r, &p); err != nil {
				t.Fatal(err)
			}
			for _, tg := range p.Targets {
				titles = append(titles, p.Title+" / "+tg.RefID)
				exprs = append(exprs, tg.Expr)
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return titles, exprs
}

var leftover = regexp.MustCompile(`\$\{?\w+`)

// substitute replaces the dashboard's variables as Grafana would for one
// test run, all scenarios, p99 and a 1m rate interval.
func substitute(t *testing.T, expr, testid string) string {
	t.Helper()
	e := strings.NewReplacer(
		"$__rate_interval", "1m",
		"$testid", testid,
		"$scenario", ".*",
		"$quantile", "0.99",
		"$stat", "p99",
	).Replace(expr)
	if v := leftover.FindString(e); v != "" {
		t.Fatalf("%s: variable %s left after substitution", expr, v)
	}
	return e
}

// TestDashboardQueries pushes a run into a real Prometheus (trend stats and
// native histograms, as two outputs of the same run would) and runs every
// query of the dashboard: each must return data.
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
	titles, exprs := dashboardQueries(t)
	if len(exprs) < 15 {
		t.Fatalf("only %d queries in the dashboard", len(exprs))
	}
	last := func(res promtest.Result) float64 {
		s := res.Series[len(res.Series)-1]
		return s.Points[len(s.Points)-1].V
	}
	for i, expr := range exprs {
		q := substitute(t, expr, testid)
		res, err := srv.QueryRange(ctx, q, r.start, r.end, 15*time.Second)
		if err != nil {
			t.Errorf("%s: %v", titles[i], err)
			continue
		}
		points := 0
		for _, s := range res.Series {
			for _, p := range s.Points {
				if !math.IsNaN(p.V) {
					points++
				}
			}
		}
		t.Logf("%-60s %2d series %3d points  %s", titles[i], len(res.Series), points, q)
		if points == 0 {
			t.Errorf("%s: no data for %s", titles[i], q)
			continue
		}
		// Spot checks of the numbers against the run.
		switch titles[i] {
		case "Requests / A":
			if got := last(res); got != float64(r.requests) {
				t.Errorf("requests %g, want %d", got, r.requests)
			}
		case "Corrected p$quantile / A":
			want := r.corrected.Percentile(99) / 1000
			if got := last(res); got/want > math.Exp2(1.0/8) || want/got > math.Exp2(1.0/8) {
				t.Errorf("corrected p99 %g s, summary %g s", got, want)
			}
		case "Achieved vs intended iteration rate / B":
			// Mid-run, intended = 2 × 50/s, dropped ones included.
			mid := res.Series[0].Points[len(res.Series[0].Points)/2].V
			if math.Abs(mid-2*perSecond) > 0.1*2*perSecond {
				t.Errorf("intended rate %g/s mid-run, want about %d/s", mid, 2*perSecond)
			}
		}
	}
}
