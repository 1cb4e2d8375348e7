package grafanatest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/testkit/promtest"
	"github.com/prometheus/client_golang/exp/api/remote"
	"github.com/prometheus/prometheus/prompb"
)

// A dashboard with the shapes Queries must read: a variable whose query is
// a string, one whose query is an object, one of another type, a panel
// with two targets (one without an expression) and a collapsed row
// holding a panel.
const dashboard = `{
  "templating": {"list": [
    {"name": "ds", "type": "datasource", "query": "prometheus"},
    {"name": "job", "type": "query", "query": "label_values(job)"},
    {"name": "metric", "type": "query", "query": {"query": "metrics(probe_)", "refId": "V"}, "definition": "metrics(probe_)"}
  ]},
  "panels": [
    {"title": "A panel", "targets": [{"refId": "A", "expr": "sum(probe_total{job=~\"$job\"})"}, {"refId": "B"}]},
    {"title": "A row", "type": "row", "panels": [
      {"title": "Inside", "targets": [{"refId": "A", "expr": "${metric}[[job]]"}]}
    ]}
  ]
}`

func TestQueries(t *testing.T) {
	qs, err := Queries([]byte(dashboard))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, q := range qs {
		got = append(got, q.String()+" = "+q.Expr)
	}
	want := []string{
		"variable $job / job = label_values(job)",
		"variable $metric / metric = metrics(probe_)",
		`A panel / A = sum(probe_total{job=~"$job"})`,
		"Inside / A = ${metric}[[job]]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("queries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !qs[0].Variable || qs[2].Variable {
		t.Errorf("Variable: %+v", qs)
	}
	if _, err := Queries([]byte(`{"panels": [1]}`)); err == nil {
		t.Error("a malformed panel was accepted")
	}
}

func TestExpand(t *testing.T) {
	q := Query{Panel: "p", RefID: "A", Expr: `rate(x_$stat{a=~"$a", b="${b:regex}"}[$__rate_interval]) [[a]]`}
	got, err := q.Expand(map[string]string{"a": "1", "b": "2", "stat": "p99", "__rate_interval": "1m"})
	if want := `rate(x_p99{a=~"1", b="2"}[1m]) 1`; err != nil || got.Expr != want || got.Panel != "p" {
		t.Errorf("Expand = %+v, %v; want %q", got, err, want)
	}
	each, err := Query{Expr: `x{a="$a"}`}.ExpandEach(map[string]string{"a": "1", "b": "1"}, map[string]string{"a": "1", "b": "2"}, map[string]string{"a": "2"})
	if err != nil || len(each) != 2 || each[0].Expr != `x{a="1"}` || each[1].Expr != `x{a="2"}` {
		t.Errorf("ExpandEach = %+v, %v; want a=1 then a=2", each, err)
	}
	q.Expr = `x{a="$a", b="$b"}`
	if _, err := q.Expand(map[string]string{"a": "1"}); err == nil || !strings.Contains(err.Error(), "$b") {
		t.Errorf("a variable without a value: %v", err)
	}
}

// TestCount writes two series into a real Prometheus and counts what each
// kind of query returns.
func TestCount(t *testing.T) {
	srv := promtest.Start(t)
	api, err := remote.NewAPI(srv.WriteURL(), remote.WithAPIPath(""))
	if err != nil {
		t.Fatal(err)
	}
	end := time.Now().Truncate(time.Second)
	start := end.Add(-time.Minute)
	req := &prompb.WriteRequest{}
	for _, job := range []string{"a", "b"} {
		ts := prompb.TimeSeries{Labels: []prompb.Label{{Name: "__name__", Value: "probe_total"}, {Name: "job", Value: job}}}
		for at := start; !at.After(end); at = at.Add(10 * time.Second) {
			ts.Samples = append(ts.Samples, prompb.Sample{Value: 1, Timestamp: at.UnixMilli()})
		}
		req.Timeseries = append(req.Timeseries, ts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := api.Write(ctx, remote.WriteV1MessageType, req); err != nil {
		t.Fatalf("remote write: %v\n%s", err, srv.Log())
	}
	for _, tc := range []struct {
		q    Query
		want int
	}{
		{Query{Expr: "label_values(job)", Variable: true}, 2},
		{Query{Expr: `label_values(probe_total{job="a"}, job)`, Variable: true}, 1},
		{Query{Expr: "metrics(probe_)", Variable: true}, 1},
		{Query{Expr: "metrics(^nothing)", Variable: true}, 0},
		{Query{Expr: "query_result(probe_total)", Variable: true}, 2},
		{Query{Expr: `probe_total{job="a"}`}, 7},
		{Query{Expr: `sum(probe_total)`}, 7},
		{Query{Expr: `probe_total{job="c"}`}, 0},
	} {
		n, err := Count(ctx, srv, tc.q, start, end, 10*time.Second)
		if err != nil || n != tc.want {
			t.Errorf("%s: %d values, %v; want %d", tc.q.Expr, n, err, tc.want)
		}
	}
	if _, err := Count(ctx, srv, Query{Expr: "regex_values(x)", Variable: true}, start, end, time.Second); err == nil {
		t.Error("an unknown variable query was accepted")
	}
}
