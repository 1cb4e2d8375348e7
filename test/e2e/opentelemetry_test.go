package e2e

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/internal/testkit/otlptest"
)

// otelFixture is what real k6 v2.2.0 exported for testdata/outputs/metrics.js
// over OTLP/gRPC: the shape of its metrics (see otelShapes).
const otelFixture = "testdata/outputs/opentelemetry-k6.txt"

// otelShapes lists the distinct shapes of the points received: the
// resource's attribute keys (with service.name's value), the scope's name,
// and per metric its name, kind, unit and attributes (the target's
// address written as TARGET). Exponential histograms count as histograms:
// they are where metronome means to differ.
func otelShapes(points []otlptest.Point, target string) []string {
	host := strings.TrimPrefix(target, "http://")
	set := map[string]bool{}
	for _, p := range points {
		var res []string
		for _, k := range otlptest.SortedKeys(p.Resource) {
			if k == "service.name" {
				k += "=" + p.Resource[k]
			}
			res = append(res, k)
		}
		set["resource "+strings.Join(res, ",")] = true
		set["scope "+p.Scope] = true
		kind := p.Kind
		if kind == "exponential_histogram" {
			kind = "histogram"
		}
		var attrs []string
		for _, k := range otlptest.SortedKeys(p.Attrs) {
			attrs = append(attrs, k+"="+strings.ReplaceAll(p.Attrs[k], host, "TARGET"))
		}
		set[fmt.Sprintf("metric %s %s unit=%q monotonic=%v cumulative=%v {%s}", p.Metric, kind, p.Unit, p.Monotonic, p.Cumulative,
			strings.Join(attrs, ","))] = true
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// TestOpenTelemetryOutput runs testdata/outputs/metrics.js with
// -o experimental-opentelemetry into an OTLP/gRPC receiver on loopback and
// checks that metronome exports the metrics k6 v2.2.0 exports for the same
// script (recorded in otelFixture) under the same names, kinds, units and
// attributes, plus corrected_latency and schedule_lag, with trends as
// exponential histograms at scale 10 whose counts are the samples'. With
// K6_BINARY set, k6 is re-run and must still match the fixture.
func TestOpenTelemetryOutput(t *testing.T) {
	t.Parallel()
	runInto := func(rn runner) ([]otlptest.Point, string, int64) {
		rcv := otlptest.Start(t)
		tg := newTarget(t)
		r := rn.run(t, runSpec{
			args: []string{"run", "-q", "-e", "TARGET=" + tg.URL, "-o", "experimental-opentelemetry", script("outputs/metrics.js")},
			env: []string{"K6_OTEL_GRPC_EXPORTER_ENDPOINT=" + rcv.GRPCAddr, "K6_OTEL_GRPC_EXPORTER_INSECURE=true",
				"K6_OTEL_EXPORT_INTERVAL=500ms", "K6_OTEL_FLUSH_INTERVAL=100ms"},
		})
		if r.code != 0 {
			t.Fatalf("%s exited %d\nstderr:\n%s", rn.name, r.code, r.stderr)
		}
		return rcv.Points(), tg.URL, tg.requests.Load()
	}

	if k6Binary() != "" {
		points, target, _ := runInto(runner{"k6", runK6})
		matchK6Fixture(t, otelFixture, "-o experimental-opentelemetry for metrics.js", otelShapes(points, target))
	}

	k6 := readFixture(t, otelFixture)
	points, target, requests := runInto(runner{"metronome", metronome})
	got := otelShapes(points, target)
	for _, s := range k6 {
		if !slices.Contains(got, s) {
			t.Errorf("metronome exported nothing shaped as k6's\n  %s", s)
		}
	}
	metricName := func(s string) string { return strings.Fields(s)[1] }
	k6Metrics := map[string]bool{}
	for _, s := range k6 {
		if strings.HasPrefix(s, "metric ") {
			k6Metrics[metricName(s)] = true
		}
	}
	for _, s := range got {
		switch {
		case !strings.HasPrefix(s, "metric "):
			if !slices.Contains(k6, s) {
				t.Errorf("metronome exported %s; k6 does not", s)
			}
		case k6Metrics[metricName(s)]:
			if !slices.Contains(k6, s) {
				t.Errorf("metronome exported a point k6 does not:\n  %s", s)
			}
		case !slices.Contains(metronomeOnly, metricName(s)) &&
			!slices.Contains(generatorHealth, strings.TrimSuffix(metricName(s), ".total")):
			t.Errorf("metronome exported a metric k6 does not: %s", s)
		}
	}
	if t.Failed() {
		t.Logf("metronome exported:\n%s", strings.Join(got, "\n"))
	}

	// The last export holds the totals: every request, every iteration's
	// corrected latency, in exponential histograms at scale 10.
	last := map[string]otlptest.Point{}
	for _, p := range points {
		last[p.Metric] = p
	}
	if p := last["http_reqs"]; p.Value != float64(requests) {
		t.Errorf("http_reqs = %v, the target answered %d", p.Value, requests)
	}
	for _, name := range append([]string{"http_req_duration"}, metronomeOnly...) {
		p := last[name]
		if p.Kind != "exponential_histogram" || p.Exp.GetScale() != 10 || p.Count != uint64(requests) {
			t.Errorf("%s: %s at scale %d with %d values, want an exponential histogram at scale 10 with %d",
				name, p.Kind, p.Exp.GetScale(), p.Count, requests)
		}
	}
}
