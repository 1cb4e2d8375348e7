// Package summary renders the end of a test run: the text summary in k6's
// compact and full layouts, the --summary-export JSON, and the data object
// handed to a script's handleSummary. It reads aggregated sinks; it never
// sees individual samples.
package summary

import (
	"encoding/json"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/metrics"
)

// Input is everything the summary is made of.
type Input struct {
	// Metrics are the observed metrics and submetrics (a metric is
	// observed once it got a sample, or when it has thresholds), in
	// registry order with each metric's submetrics right after it.
	Metrics []Metric
	// RootGroup holds the checks and groups, "" at the root.
	RootGroup *Group
	// Checks are the checks' tallies in order of first appearance, for
	// the machine-readable summary, which lists checks by name across
	// groups.
	Checks  []metrics.CheckTally
	Options Options
	State   State
	// SetupData is what setup() returned, JSON-encoded; nil when it
	// returned nothing.
	SetupData json.RawMessage
	// Scenarios are the per-scenario accounts of open-model scenarios,
	// BackFills those of closed-model scenarios that back-fill
	// corrected_latency, and Warnings the warnings of docs/DESIGN.md §2.4,
	// all printed after the metrics.
	Scenarios []ScenarioReport
	BackFills []BackFillReport
	Warnings  []string
	// Endpoints are the per-name rows of raw against corrected latency,
	// sorted by name; EndpointsFolded counts the corrected_latency samples
	// of names past the engine's cap (metrics.MaxBreakdownValues).
	Endpoints       []EndpointReport
	EndpointsFolded int64
	// Health is the account of the generator's own health over the
	// scenarios, nil when it was not measured.
	Health *HealthReport
	// Capacity are the results of the capacity-search scenarios.
	Capacity []CapacityReport
}

// CapacityReport is where a capacity-search scenario ended and the steps
// that took it there. Rates are per second, times in milliseconds.
type CapacityReport struct {
	Name string
	// Objective is the threshold each step had to meet on
	// corrected_latency, "p(99)<50".
	Objective string
	// Limit is "server" when the search found the server's capacity,
	// "generator" when the generator was the limit (then Capacity is
	// only a lower bound), "none" when every step met the objective.
	Limit string
	// Capacity is the highest rate that met the objective, 0 for none;
	// FailedAt the lowest that failed, 0 for none.
	Capacity, FailedAt float64
	// Verdict is the search's one-sentence result.
	Verdict string
	Steps   []CapacityStep
}

// CapacityStep is one step of a capacity search, as the capacity
// executor reports it.
type CapacityStep = executor.CapacityStep

// HealthReport is the account of the generator's health, measured per
// interval while the scenarios ran (package health). Times are in
// milliseconds; CPU shares run from 0 to 1 and are NaN where the platform
// does not report CPU time.
type HealthReport struct {
	Interval time.Duration
	// Intervals counts the intervals measured; Limited those in which
	// the generator may have inflated latency, for the Reasons given.
	Intervals, Limited int
	Reasons            []HealthReason
	// Procs is how many cores the process could use (GOMAXPROCS).
	Procs int
	// CPUMedian and CPUMax are over the intervals' CPU shares;
	// SchedP99Median and SchedP99Max over their p99 scheduling
	// latencies; GCPauseMax is the most pause time of one interval.
	CPUMedian, CPUMax           float64
	SchedP99Median, SchedP99Max float64
	GCPauseMax                  float64
	// Arrivals counts the open-model arrivals that started; LateWakeup
	// those late although a VU was free, LateForVU those late because
	// every VU was busy.
	Arrivals, LateWakeup, LateForVU int64
}

// HealthReason is one reason the generator may have inflated latency and
// in how many intervals it held.
type HealthReason struct {
	Reason    string
	Intervals int
}

// EndpointReport is one request name's raw and corrected latency.
type EndpointReport struct {
	// Name is the requests' name tag (their URL unless the script named
	// them).
	Name string
	// RawMetric is the duration metric the raw figures come from
	// (http_req_duration, grpc_req_duration or ws_connecting), "" when the
	// name recorded none; Requests is its sample count.
	RawMetric string
	Requests  int64
	// Raw and Corrected are in milliseconds; Corrected includes
	// back-filled samples.
	Raw, Corrected Percentiles
}

// Percentiles are a distribution's p50, p99 and p99.9.
type Percentiles struct{ P50, P99, P999 float64 }

// Metric is one metric or submetric with its aggregated sink.
type Metric struct {
	// Name is "http_req_duration" or, for a submetric,
	// "http_req_duration{expected_response:true}".
	Name   string
	Metric *metrics.Metric
	Sink   metrics.Sink
	// Parent is the parent metric's name for a submetric, else "".
	Parent string
	// Selector is the submetric's tag selector, nil for a metric.
	Selector   *metrics.TagSet
	Thresholds []Threshold
}

// Threshold is one evaluated threshold.
type Threshold struct {
	Source      string
	OK          bool
	AbortOnFail bool
	// Window is the length of the windows a windowed threshold was judged
	// on, 0 for a threshold on the whole run; Windows is how they went.
	Window  time.Duration
	Windows WindowVerdict
}

// WindowVerdict is how the windows of a windowed threshold went.
type WindowVerdict struct {
	// Judged counts the windows judged, Failed those that failed.
	Judged, Failed int
	// Failing are the stretches of the run the failing windows cover, as
	// offsets from its start (State.Start).
	Failing []metrics.WindowSpan
	// Worst is the window furthest on the failing side; Value is its
	// aggregated value.
	Worst metrics.WindowSpan
	Value float64
	// Late counts samples that came after their windows were judged.
	Late int64
}

// Group is a group of checks and groups.
type Group struct {
	Name, Path string
	Groups     []*Group
	Checks     []*Check
}

// Check is one check's tally.
type Check struct {
	Name, Path    string
	Passes, Fails int64
}

// Options are the summary options.
type Options struct {
	// TrendStats are summaryTrendStats, e.g. avg, min, med, max, p(90).
	TrendStats []string
	// TimeUnit is "", "s", "ms" or "us".
	TimeUnit string
	// Mode is "compact" or "full".
	Mode    string
	NoColor bool
}

// State describes the run.
type State struct {
	IsStdOutTTY, IsStdErrTTY bool
	TestRunDuration          time.Duration
	// Start is when the run's clock started, the origin of the windows of
	// windowed thresholds.
	Start time.Time
}

// ScenarioReport is the account of one open-model scenario (docs/DESIGN.md §2.4).
type ScenarioReport struct {
	Name     string
	Executor string
	// Intended counts the arrivals the schedule intended.
	Intended int64
	// OnTime and Late count started arrivals by whether they started
	// within the on-time tolerance of their intended time.
	OnTime, Late int64
	// LateForVU counts the late arrivals that waited for a busy VU; the
	// rest of Late had a VU free in time and woke late.
	LateForVU   int64
	Dropped     int64
	Interrupted int64
	PeakBacklog int64
	// RawP99 is RawMetric's p99 and CorrectedP99 corrected_latency's
	// p99, both for this scenario, in milliseconds.
	RawP99, CorrectedP99 float64
	// RawMetric is the metric RawP99 is of: http_req_duration, or when
	// the scenario made no HTTP request the first latency trend
	// (options.latencyTrends) it recorded; "" means http_req_duration.
	RawMetric string
}

// BackFillReport is the account of one closed-model scenario that
// back-fills corrected_latency (docs/DESIGN.md §2.3–2.4). Times are in
// milliseconds.
type BackFillReport struct {
	Name     string
	Executor string
	// ExpectedInterval is the scenario's setting: "auto" or a duration.
	ExpectedInterval string
	// Estimated is true for 'auto': the interval, and so every
	// back-filled sample, is an estimate from each VU's own cadence.
	Estimated bool
	// Requests counts the requests that recorded corrected_latency,
	// Backfilled the samples added, Unestimated the iterations that ran
	// before their VU had an estimate (auto only; their requests were not
	// back-filled).
	Requests, Backfilled, Unestimated int64
	// VUs is how many VUs had an estimate; CadenceMedian, CadenceMin and
	// CadenceMax are the median and range of their estimates (auto), or
	// the hand-set interval.
	VUs                                   int
	CadenceMedian, CadenceMin, CadenceMax float64
	// RawP99 is RawMetric's p99 (0: no request), IterationP99
	// iteration_duration's, CorrectedP99 corrected_latency's, back-filled
	// samples included, all for this scenario.
	RawP99, IterationP99, CorrectedP99 float64
	// RawMetric is as in ScenarioReport.
	RawMetric string
}
