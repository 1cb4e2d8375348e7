package summary

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/metronome-load/metronome/metrics"
)

// machineNames lists the names of the machine-readable metrics, in order.
func machineNames(doc map[string]any) []string {
	var out []string
	for _, m := range doc["results"].(map[string]any)["metrics"].([]any) {
		out = append(out, m.(map[string]any)["name"].(string))
	}
	return out
}

func machineMetricNamed(t *testing.T, doc map[string]any, name string) map[string]any {
	t.Helper()
	for _, m := range doc["results"].(map[string]any)["metrics"].([]any) {
		if mm := m.(map[string]any); mm["name"] == name {
			return mm
		}
	}
	t.Fatalf("no metric %s in %v", name, machineNames(doc))
	return nil
}

// The metrics are k6's sections in k6's order, by name within each; the
// compact mode leaves out the HTTP timing parts, both modes checks,
// group_duration and every name with those prefixes (checks_foo too, as
// k6 matches prefixes); metronome's own metrics are ordinary ones.
func TestMachineReadableMetrics(t *testing.T) {
	f := newFixture()
	compact := MachineReadable(f.in, Meta{})
	want := []string{"http_req_duration", "http_req_duration{expected_response:true}", "http_req_failed", "http_reqs",
		"iterations", "vus", "data_received",
		"corrected_latency", "corrected_latency{backfilled:true}", "my_trend", "schedule_lag"}
	if got := machineNames(compact); !reflect.DeepEqual(got, want) {
		t.Errorf("compact metrics %q\nwant %q", got, want)
	}
	f.in.Options.Mode = "full"
	full := MachineReadable(f.in, Meta{})
	want = append(want[:3:3], append([]string{"http_req_waiting"}, want[3:]...)...)
	if got := machineNames(full); !reflect.DeepEqual(got, want) {
		t.Errorf("full metrics %q\nwant %q", got, want)
	}

	// Values by type, under the schema's keys.
	eq := func(name string, got, want map[string]any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s values %v, want %v", name, got, want)
		}
	}
	eq("http_reqs", machineMetricNamed(t, compact, "http_reqs")["values"].(map[string]any), map[string]any{"count": 20.0})
	eq("http_req_failed", machineMetricNamed(t, compact, "http_req_failed")["values"].(map[string]any),
		map[string]any{"matches": int64(5), "rate": 0.25, "total": int64(20)})
	eq("vus", machineMetricNamed(t, compact, "vus")["values"].(map[string]any),
		map[string]any{"max": 5.0, "min": 1.0, "value": 3.0})
	my := machineMetricNamed(t, compact, "my_trend")
	eq("my_trend", my["values"].(map[string]any), map[string]any{
		"avg": 1.25, "max": 2.0, "med": f.in.Metrics[13].Sink.(*metrics.TrendSink).Med(), "min": 0.5,
		"p90": f.in.Metrics[13].Sink.(*metrics.TrendSink).Percentile(90), "p95": f.in.Metrics[13].Sink.(*metrics.TrendSink).Percentile(95)})
	if my["type"] != "trend" || my["contains"] != "default" {
		t.Errorf("my_trend is %v/%v", my["type"], my["contains"])
	}
	if c := machineMetricNamed(t, compact, "corrected_latency"); c["contains"] != "time" || c["type"] != "trend" {
		t.Errorf("corrected_latency is %v/%v", c["type"], c["contains"])
	}

	// A stat summaryTrendStats lacks is null; others are dropped.
	f.in.Options.TrendStats = []string{"avg", "p(99)", "count"}
	vals := machineMetricNamed(t, MachineReadable(f.in, Meta{}), "my_trend")["values"].(map[string]any)
	eq("my_trend (avg,p(99),count)", vals, map[string]any{"avg": 1.25, "max": nil, "med": nil, "min": nil, "p90": nil, "p95": nil})
}

// Checks are listed by name over every group, in order of first
// appearance, with the checks metrics k6 derives from the checks rate.
func TestMachineReadableChecks(t *testing.T) {
	f := newFixture()
	f.in.Checks = []metrics.CheckTally{
		{Group: "::setup", Name: "same", Passes: 1},
		{Group: "", Name: "first", Passes: 2, Fails: 1},
		{Group: "::a", Name: "same", Passes: 3, Fails: 2},
		{Group: "::a::b", Name: "first", Fails: 1},
	}
	checks := MachineReadable(f.in, Meta{})["results"].(map[string]any)["checks"].(map[string]any)
	wantResults := []any{
		map[string]any{"name": "same", "passes": int64(4), "fails": int64(2)},
		map[string]any{"name": "first", "passes": int64(2), "fails": int64(2)},
	}
	if !reflect.DeepEqual(checks["results"], wantResults) {
		t.Errorf("results %v, want %v", checks["results"], wantResults)
	}
	// The fixture's checks rate: 6 passes of 8.
	wantMetrics := []any{
		machineMetric("checks_total", "counter", "default", map[string]any{"count": 8.0}),
		machineMetric("checks_failed", "rate", "default", map[string]any{"matches": int64(2), "rate": 0.25, "total": int64(8)}),
		machineMetric("checks_succeeded", "rate", "default", map[string]any{"matches": int64(6), "rate": 0.75, "total": int64(8)}),
	}
	if !reflect.DeepEqual(checks["metrics"], wantMetrics) {
		t.Errorf("metrics %v\nwant %v", checks["metrics"], wantMetrics)
	}

	// Without the checks metric both lists are empty, not absent.
	empty := MachineReadable(&Input{}, Meta{})["results"].(map[string]any)["checks"].(map[string]any)
	if !reflect.DeepEqual(empty, map[string]any{"metrics": []any{}, "results": []any{}}) {
		t.Errorf("no checks: %v", empty)
	}
}

// The export is the schema's document: its five top-level parts, the
// script's source, the run's duration in seconds, k6's key order (the
// schema's alphabetical one) and no line break at the end.
func TestMachineReadableJSON(t *testing.T) {
	f := newFixture()
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	b, err := MachineReadableJSON(f.in, Meta{Script: "export default function () {}\n", GeneratedAt: at})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.HasSuffix(b, []byte("\n")) || !bytes.HasPrefix(b, []byte("{\n    \"config\": {\n        \"duration\": 10,\n")) {
		t.Errorf("export starts or ends wrong:\n%s", b)
	}
	var doc struct {
		Config struct {
			Duration  float64
			Execution string
			Script    string
		}
		Metadata struct {
			GeneratedAt string `json:"generated_at"`
			K6Version   string `json:"k6_version"`
		}
		Version string
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Config.Duration != 10 || doc.Config.Execution != "local" || doc.Config.Script != "export default function () {}\n" ||
		doc.Metadata.GeneratedAt != "2026-01-02T03:04:05.000000006Z" || doc.Metadata.K6Version != "2.2.0" || doc.Version != "1.0.0" {
		t.Errorf("header %+v", doc)
	}
	i := bytes.Index(b, []byte(`"contains"`))
	j := bytes.Index(b[i:], []byte(`"name"`))
	k := bytes.Index(b[i:], []byte(`"type"`))
	l := bytes.Index(b[i:], []byte(`"values"`))
	if !(0 < j && j < k && k < l) {
		t.Errorf("metric keys out of k6's order: %s", b[i:i+200])
	}
	// A value JSON cannot hold is null, not an encoding error.
	f.in.Metrics = append(f.in.Metrics, Metric{Name: "nan", Sink: &metrics.GaugeSink{Value: math.NaN()}})
	if _, err := MachineReadableJSON(f.in, Meta{}); err != nil {
		t.Errorf("NaN gauge: %v", err)
	}
}
