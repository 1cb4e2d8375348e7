// Command grafana-dashboard writes metronome's Grafana dashboard, examples/grafana/metronome.json.
// It runs from `go generate ./examples/grafana/...` (or `make dashboard`);
// edit this program, not the JSON.
//
// The dashboard reads what the experimental-prometheus-rw output writes,
// with k6's metric names, and puts the latency the server showed
// (http_req_duration) beside the latency users experienced
// (corrected_latency, measured from each request's intended start), with
// schedule_lag, the achieved and intended iteration rates, errors and VUs.
// corrected_latency carries the labels of each request's own duration
// metric, so the comparison is also drawn per endpoint (the name label),
// for the endpoints picked in the name variable. The latency panels use
// native histograms (K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=true); a
// collapsed row holds the same comparison for the default trend-stat
// series.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/metronome-load/metronome/internal/wholefile"
)

func main() {
	out := flag.String("o", "metronome.json", "file to write")
	flag.Parse()
	js, err := Render()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if err := wholefile.Write(*out, js, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// Render returns the dashboard as indented JSON, as checked in.
func Render() ([]byte, error) {
	d, err := Build()
	if err != nil {
		return nil, err
	}
	js, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(js, '\n'), nil
}

// ds is the Prometheus data source, picked with the datasource variable.
var ds = common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${datasource}")}

// Selectors of the dashboard's filters: a test run (the testid tag, as in
// k6's dashboards), its scenarios, and its endpoints (the name tag; the
// variable's All is ".+", so a sample without a name, a dropped arrival,
// belongs to no endpoint).
const (
	run         = `testid=~"$testid"`
	runScenario = `testid=~"$testid", scenario=~"$scenario"`
	runEndpoint = `testid=~"$testid", scenario=~"$scenario", name=~"$name"`
)

// rawMetrics matches the requests' own duration metrics, whose labels
// corrected_latency repeats request by request: the raw side of a
// per-endpoint comparison, whatever the protocol.
const rawMetrics = `http_req_duration|grpc_req_duration|ws_connecting`

// query is one PromQL target of a panel.
func query(ref, legend, expr string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().Datasource(ds).RefId(ref).LegendFormat(legend).Expr(expr).Range()
}

// Native-histogram expressions. With a range vector the quantile is over
// the last $__rate_interval; without, over the whole test so far (the
// histograms are cumulative).
func quantileOverTime(metric, by string) string {
	return fmt.Sprintf(`histogram_quantile($quantile, sum%s(rate(k6_%s_seconds{%s}[$__rate_interval])))`, by, metric, runScenario)
}

func quantileWholeTest(metric string) string {
	return fmt.Sprintf(`histogram_quantile($quantile, sum(k6_%s_seconds{%s}))`, metric, runScenario)
}

// Per-endpoint expressions: raw is the requests' own duration metrics,
// corrected is corrected_latency; both per name, over each
// $__rate_interval or over the whole test.
func rawByName(overTime bool) string {
	return byName(fmt.Sprintf(`{__name__=~"k6_(%s)_seconds", %s}`, rawMetrics, runEndpoint), overTime)
}

func correctedByName(overTime bool) string {
	return byName(fmt.Sprintf(`k6_corrected_latency_seconds{%s}`, runEndpoint), overTime)
}

func byName(sel string, overTime bool) string {
	if overTime {
		sel = "rate(" + sel + "[$__rate_interval])"
	}
	return fmt.Sprintf(`histogram_quantile($quantile, sum by (name) (%s))`, sel)
}

func timeseriesPanel(id uint32, title, desc, unit string, w, h uint32, targets ...*prometheus.DataqueryBuilder) *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().Id(id).Title(title).Description(desc).Datasource(ds).
		Unit(unit).Span(w).Height(h).Min(0).FillOpacity(8).LineWidth(1).
		Legend(common.NewVizLegendOptionsBuilder().ShowLegend(true).DisplayMode(common.LegendDisplayModeList).Placement(common.LegendPlacementBottom))
	for _, t := range targets {
		p = p.WithTarget(t)
	}
	return p
}

func tablePanel(id uint32, title, desc string, w, h uint32, targets ...*prometheus.DataqueryBuilder) *table.PanelBuilder {
	p := table.NewPanelBuilder().Id(id).Title(title).Description(desc).Datasource(ds).Unit("s").Span(w).Height(h).
		Footer(common.NewTableFooterOptionsBuilder().Show(false).Reducer([]string{}))
	for _, t := range targets {
		p = p.WithTarget(t)
	}
	return p
}

// instant is a query of a table: one row per series at the end of the
// time range.
func instant(ref, expr string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().Datasource(ds).RefId(ref).Expr(expr).Instant().Format(prometheus.PromQueryFormatTable)
}

func statPanel(id uint32, title, desc, unit string, w, h uint32, targets ...*prometheus.DataqueryBuilder) *stat.PanelBuilder {
	p := stat.NewPanelBuilder().Id(id).Title(title).Description(desc).Datasource(ds).Unit(unit).Span(w).Height(h).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"})).
		GraphMode(common.BigValueGraphModeNone)
	for _, t := range targets {
		p = p.WithTarget(t)
	}
	return p
}

func option(v string, selected bool) dashboard.VariableOption {
	return dashboard.VariableOption{
		Selected: cog.ToPtr(selected),
		Text:     dashboard.StringOrArrayOfString{String: cog.ToPtr(v)},
		Value:    dashboard.StringOrArrayOfString{String: cog.ToPtr(v)},
	}
}

// idGen numbers panels and rows from 1, in the order they are built.
type idGen uint32

func (g *idGen) next() uint32 { *g++; return uint32(*g) }

// nameValues lists the endpoints of the picked runs and scenarios for the
// name variable: the names corrected_latency carries, whichever trend mode
// wrote it.
const nameValues = `label_values({__name__=~"k6_corrected_latency_.+", testid=~"$testid", scenario=~"$scenario"}, name)`

// Build assembles the dashboard.
func Build() (dashboard.Dashboard, error) {
	var ids idGen
	all := option("All", true)
	all.Text = dashboard.StringOrArrayOfString{String: cog.ToPtr("All")}
	all.Value = dashboard.StringOrArrayOfString{String: cog.ToPtr("$__all")}

	b := dashboard.NewDashboardBuilder("metronome: raw vs corrected latency").
		Uid("metronome-latency").
		Description("Latency the server showed (http_req_duration) beside latency users experienced (corrected_latency, from each request's intended start), from metronome's Prometheus remote-write output.").
		Tags([]string{"metronome", "k6", "load testing"}).
		Refresh("10s").
		Time("now-30m", "now").
		Timezone(common.TimeZoneBrowser).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Data source").Type("prometheus")).
		WithVariable(dashboard.NewQueryVariableBuilder("testid").Label("Test ID").
			Description("The testid tag of the run (k6 run --tag testid=...); All also matches runs without one.").
			Datasource(ds).
			Query(dashboard.StringOrMap{String: cog.ToPtr(`label_values(k6_iterations_total, testid)`)}).
			Definition(`label_values(k6_iterations_total, testid)`).
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
			Sort(dashboard.VariableSortAlphabeticalDesc).
			Multi(true).IncludeAll(true).AllValue(".*")).
		WithVariable(dashboard.NewQueryVariableBuilder("scenario").Label("Scenario").
			Datasource(ds).
			Query(dashboard.StringOrMap{String: cog.ToPtr(`label_values(k6_iterations_total{testid=~"$testid"}, scenario)`)}).
			Definition(`label_values(k6_iterations_total{testid=~"$testid"}, scenario)`).
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
			Sort(dashboard.VariableSortAlphabeticalAsc).
			Multi(true).IncludeAll(true).AllValue(".*").Current(all)).
		WithVariable(dashboard.NewQueryVariableBuilder("name").Label("Endpoint").
			Description("The name tag of the requests (their URL unless the script sets tags.name), from corrected_latency, which carries each request's labels. All is every named request; dropped arrivals have no name and are in the scenario panels only.").
			Datasource(ds).
			Query(dashboard.StringOrMap{String: cog.ToPtr(nameValues)}).
			Definition(nameValues).
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
			Sort(dashboard.VariableSortAlphabeticalAsc).
			Multi(true).IncludeAll(true).AllValue(".+").Current(all)).
		WithVariable(dashboard.NewCustomVariableBuilder("quantile").Label("Quantile").
			Description("The quantile of the native-histogram panels.").
			Values(dashboard.StringOrMap{String: cog.ToPtr("0.5,0.9,0.95,0.99,0.999")}).
			Current(option("0.99", true))).
		WithVariable(dashboard.NewCustomVariableBuilder("stat").Label("Trend stat").
			Description("The trend-stat series of the collapsed row; it must be one of K6_PROMETHEUS_RW_TREND_STATS (default p(99) → p99).").
			Values(dashboard.StringOrMap{String: cog.ToPtr("p99,p999,p95,p90,med,avg,max")}).
			Current(option("p99", true)))

	b = b.WithRow(dashboard.NewRowBuilder("Overview").Id(ids.next())).
		WithPanel(statPanel(ids.next(), "Requests", "HTTP requests of the selected runs.", "short", 4, 4,
			query("A", "requests", fmt.Sprintf(`sum(k6_http_reqs_total{%s})`, runScenario)))).
		WithPanel(statPanel(ids.next(), "Failed requests", "Share of HTTP requests with an unexpected response (http_req_failed).", "percentunit", 4, 4,
			query("A", "failed", fmt.Sprintf(`sum(k6_http_req_failed_rate{%[1]s} * k6_http_reqs_total{%[1]s}) / sum(k6_http_reqs_total{%[1]s})`, runScenario)))).
		WithPanel(statPanel(ids.next(), "Raw p$quantile", "http_req_duration over the whole run: measured from when each request was actually sent.", "s", 4, 4,
			query("A", "http_req_duration", quantileWholeTest("http_req_duration")))).
		WithPanel(statPanel(ids.next(), "Corrected p$quantile", "corrected_latency over the whole run: measured from when each iteration should have started. The gap to the raw value is coordinated omission.", "s", 4, 4,
			query("A", "corrected_latency", quantileWholeTest("corrected_latency")))).
		WithPanel(statPanel(ids.next(), "Dropped iterations", "Iterations that never started (dropped_iterations).", "short", 4, 4,
			query("A", "dropped", fmt.Sprintf(`sum(k6_dropped_iterations_total{%s}) or vector(0)`, runScenario)))).
		WithPanel(statPanel(ids.next(), "VUs", "Virtual users now.", "short", 4, 4,
			query("A", "vus", fmt.Sprintf(`sum(k6_vus{%s})`, run))))

	b = b.WithRow(dashboard.NewRowBuilder("Latency: raw vs corrected (native histograms)").Id(ids.next())).
		WithPanel(timeseriesPanel(ids.next(), "p$quantile over time: raw vs corrected",
			"Quantile over each $__rate_interval. http_req_duration starts when the request was sent; corrected_latency when the iteration should have started, so it includes the wait (schedule_lag) that a stalled server or generator caused.",
			"s", 24, 10,
			query("A", "http_req_duration (raw)", quantileOverTime("http_req_duration", "")),
			query("B", "corrected_latency", quantileOverTime("corrected_latency", "")),
			query("C", "schedule_lag", quantileOverTime("schedule_lag", "")))).
		WithPanel(timeseriesPanel(ids.next(), "Corrected p$quantile by scenario", "corrected_latency per scenario over each $__rate_interval.", "s", 12, 8,
			query("A", "{{scenario}}", quantileOverTime("corrected_latency", " by (scenario) ")))).
		WithPanel(timeseriesPanel(ids.next(), "Schedule lag p$quantile by scenario", "How late iterations started: schedule_lag per scenario over each $__rate_interval. A growing lag means the target rate exceeds what the system or maxVUs sustains.", "s", 12, 8,
			query("A", "{{scenario}}", quantileOverTime("schedule_lag", " by (scenario) ")))).
		WithPanel(timeseriesPanel(ids.next(), "Raw p$quantile by endpoint",
			"Each endpoint's (name's) own request duration over each $__rate_interval: http_req_duration, grpc_req_duration or ws_connecting. Compare with the corrected panel beside it.",
			"s", 12, 8,
			query("A", "{{name}}", rawByName(true)))).
		WithPanel(timeseriesPanel(ids.next(), "Corrected p$quantile by endpoint",
			"corrected_latency per endpoint (name) over each $__rate_interval: each request's own time plus how late its iteration started. An endpoint whose line rises here and not beside it is one the stall hit.",
			"s", 12, 8,
			query("A", "{{name}}", correctedByName(true)))).
		WithPanel(tablePanel(ids.next(), "Whole run by endpoint: raw vs corrected p$quantile",
			"Per endpoint (name) over the whole run: the raw quantile of its requests' own duration, the corrected one, and how many requests it made.",
			24, 8,
			instant("A", rawByName(false)),
			instant("B", correctedByName(false)),
			instant("C", fmt.Sprintf(`sum by (name) (histogram_count({__name__=~"k6_(%s)_seconds", %s}))`, rawMetrics, runEndpoint))).
			WithTransformation(dashboard.DataTransformerConfig{Id: "merge", Options: map[string]any{}}).
			WithTransformation(dashboard.DataTransformerConfig{Id: "organize", Options: map[string]any{
				"excludeByName": map[string]bool{"Time": true},
				"renameByName":  map[string]string{"name": "endpoint", "Value #A": "raw p$quantile", "Value #B": "corrected p$quantile", "Value #C": "requests"},
			}}).
			OverrideByName("requests", []dashboard.DynamicConfigValue{{Id: "unit", Value: "short"}}))

	b = b.WithRow(dashboard.NewRowBuilder("Load").Id(ids.next())).
		WithPanel(timeseriesPanel(ids.next(), "Achieved vs intended iteration rate",
			"Achieved: completed iterations per second. Intended: completed plus dropped iterations per second, what the schedule asked for.",
			"reqps", 12, 8,
			query("A", "achieved", fmt.Sprintf(`sum(rate(k6_iterations_total{%s}[$__rate_interval]))`, runScenario)),
			query("B", "intended", fmt.Sprintf(`sum(rate(k6_iterations_total{%[1]s}[$__rate_interval])) + (sum(rate(k6_dropped_iterations_total{%[1]s}[$__rate_interval])) or vector(0))`, runScenario)))).
		WithPanel(timeseriesPanel(ids.next(), "Dropped iterations", "Iterations dropped per second (dropped_iterations).", "reqps", 12, 8,
			query("A", "{{scenario}}", fmt.Sprintf(`sum by (scenario) (rate(k6_dropped_iterations_total{%s}[$__rate_interval]))`, runScenario)))).
		WithPanel(timeseriesPanel(ids.next(), "Requests and errors", "HTTP requests per second, and those with an unexpected response (expected_response=false).", "reqps", 12, 8,
			query("A", "requests", fmt.Sprintf(`sum(rate(k6_http_reqs_total{%s}[$__rate_interval]))`, runScenario)),
			query("B", "errors", fmt.Sprintf(`sum(rate(k6_http_reqs_total{%s, expected_response="false"}[$__rate_interval])) or vector(0)`, runScenario)))).
		WithPanel(timeseriesPanel(ids.next(), "Failed requests (http_req_failed)", "Share of failed requests since the start of the run, by scenario.", "percentunit", 6, 8,
			query("A", "{{scenario}}", fmt.Sprintf(`sum by (scenario) (k6_http_req_failed_rate{%[1]s} * k6_http_reqs_total{%[1]s}) / sum by (scenario) (k6_http_reqs_total{%[1]s})`, runScenario)))).
		WithPanel(timeseriesPanel(ids.next(), "VUs", "Virtual users, summed over instances.", "short", 6, 8,
			query("A", "vus", fmt.Sprintf(`sum(k6_vus{%s})`, run))))

	stats := dashboard.NewRowBuilder("Latency: raw vs corrected (trend stats, cumulative)").Id(ids.next()).Collapsed(true).
		WithPanel(timeseriesPanel(ids.next(), "$stat since the start: raw vs corrected",
			"The default trend-stat series (K6_PROMETHEUS_RW_TREND_STATS). Each is the stat of all samples of one series since the test started, like k6's; percentiles of different series cannot be combined, so this shows the largest.",
			"s", 24, 10,
			query("A", "http_req_duration (raw, worst series)", fmt.Sprintf(`max(k6_http_req_duration_$stat{%s})`, runScenario)),
			query("B", "corrected_latency (worst series)", fmt.Sprintf(`max(k6_corrected_latency_$stat{%s})`, runScenario)),
			query("C", "schedule_lag (worst series)", fmt.Sprintf(`max(k6_schedule_lag_$stat{%s})`, runScenario)))).
		WithPanel(timeseriesPanel(ids.next(), "Corrected $stat by scenario", "corrected_latency stat per scenario (the largest of its series) since the start.", "s", 24, 8,
			query("A", "{{scenario}}", fmt.Sprintf(`max by (scenario) (k6_corrected_latency_$stat{%s})`, runScenario)))).
		WithPanel(timeseriesPanel(ids.next(), "Raw $stat by endpoint", "Each endpoint's (name's) own request duration stat since the start, the largest of its series (one per status, method, …).", "s", 12, 8,
			query("A", "{{name}}", fmt.Sprintf(`max by (name) ({__name__=~"k6_(%s)_$stat", %s})`, rawMetrics, runEndpoint)))).
		WithPanel(timeseriesPanel(ids.next(), "Corrected $stat by endpoint", "corrected_latency stat per endpoint (name) since the start, the largest of its series.", "s", 12, 8,
			query("A", "{{name}}", fmt.Sprintf(`max by (name) (k6_corrected_latency_$stat{%s})`, runEndpoint))))
	b = b.WithRow(stats)

	return b.Build()
}
