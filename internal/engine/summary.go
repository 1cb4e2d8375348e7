package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/health"
	"github.com/metronome-load/metronome/internal/wholefile"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/secrets"
	"github.com/metronome-load/metronome/summary"
)

// finish writes the end of the run: --summary-export, then handleSummary's
// files or the text summary (see summaryWriter.write).
func (r *testRun) finish(parent context.Context, in *summary.Input) error {
	w := summaryWriter{
		mode: r.cfg.SummaryMode, export: r.cfg.SummaryExport,
		stdout: r.cfg.Stdout, stderr: r.cfg.Stderr,
		timeout: optDuration(r.opts.HandleSummaryTimeout, 120*time.Second), logf: r.logf,
		log: r.cfg.Log.Slog(slog.LevelInfo), secrets: r.cfg.Secrets, machine: r.cfg.MachineReadableSummary,
	}
	if r.caps.HandleSummary {
		w.handle = r.cfg.Script.HandleSummary
	}
	return w.write(parent, in)
}

// summaryWriter writes the end of a test: that of a run, and that of a
// merge of result files, alike.
type summaryWriter struct {
	// mode is the summary mode ("disabled" writes nothing), export the
	// --summary-export path ("" for none).
	mode, export   string
	stdout, stderr io.Writer
	// handle is the script's handleSummary, nil when it exports none;
	// timeout bounds it.
	handle  func(ctx context.Context, data map[string]any) (map[string][]byte, bool, error)
	timeout time.Duration
	logf    func(format string, args ...any)
	// log gets handleSummary's exception, which writes itself as k6 does.
	log *slog.Logger
	// secrets are hidden in the files written; nil hides nothing.
	secrets *secrets.Store
	// machine, when set, makes --summary-export and handleSummary's data
	// k6's machine-readable summary (--new-machine-readable-summary), of
	// the script whose source it holds.
	machine *summary.Meta
}

// write writes --summary-export, then handleSummary's files or the text
// summary. A signal (parent cancelled) that arrives while handleSummary
// runs interrupts it; one that came earlier has already stopped the test
// and does not. handleSummary's failure, its timeout or that interruption
// print the text summary instead, so the results are never lost; a
// timeout exits 102.
func (w summaryWriter) write(parent context.Context, in *summary.Input) error {
	if w.mode == "disabled" {
		return nil
	}
	var errs []string
	data := summary.Data
	export := summary.ExportJSON
	if w.machine != nil {
		meta := *w.machine
		meta.GeneratedAt = time.Now()
		data = func(in *summary.Input) map[string]any { return summary.MachineReadable(in, meta) }
		export = func(in *summary.Input) ([]byte, error) { return summary.MachineReadableJSON(in, meta) }
	}
	if w.export != "" {
		b, err := export(in)
		if err == nil {
			err = wholefile.Write(w.export, w.secrets.RedactBytes(b), 0o644)
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("--summary-export: %v", err))
		}
	}
	base := parent
	if parent.Err() != nil {
		base = context.Background()
	}
	ctx, cancel := context.WithTimeout(base, w.timeout)
	defer cancel()
	var out map[string][]byte
	var ok bool
	var err error
	if w.handle != nil {
		out, ok, err = w.handle(ctx, data(in))
	}
	var timeoutErr error
	switch {
	case err == nil:
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		timeoutErr = exitcode.Errorf(exitcode.GenericTimeout,
			"handleSummary() did not finish within %s (handleSummaryTimeout); the default summary was printed instead", w.timeout)
		w.logf("handleSummary() did not finish within %s, printing the default summary instead", w.timeout)
		ok = false
	case parent.Err() != nil && base == parent:
		w.logf("handleSummary() was interrupted by the signal, printing the default summary instead")
		ok = false
	default:
		// k6 logs handleSummary's exception, prints the default summary
		// and exits 0.
		if ex, isLogged := errors.AsType[LoggedError](err); isLogged {
			ex.Log(w.log)
		} else {
			w.logf("handleSummary() failed, printing the default summary instead: %v", err)
		}
		ok = false
	}
	if !ok {
		fmt.Fprint(w.stdout, summary.Text(in))
	}
	for dest, content := range out {
		switch dest {
		case "stdout":
			_, err = w.stdout.Write(content)
		case "stderr":
			_, err = w.stderr.Write(content)
		default:
			err = wholefile.Write(dest, w.secrets.RedactBytes(content), 0o644)
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("handleSummary output %s: %v", dest, err))
		}
	}
	if len(errs) > 0 {
		return exitcode.Errorf(exitcode.Generic, "%s", strings.Join(errs, "; "))
	}
	return timeoutErr
}

// summaryInput gathers what the summary shows.
func (r *testRun) summaryInput(elapsed time.Duration, setupData []byte, rep *metrics.ThresholdReport) *summary.Input {
	src := summarySource{
		engine: r.engine, opts: r.opts, start: r.start,
		mode: r.cfg.SummaryMode, noColor: r.cfg.NoColor || !r.cfg.StdoutTTY,
		stdoutTTY: r.cfg.StdoutTTY, stderrTTY: r.cfg.StderrTTY,
	}
	for _, sc := range r.scenarios {
		if !sc.started.Load() {
			continue
		}
		acc := scenarioAccount{cfg: sc.cfg, can: sc.can}
		acc.open, acc.backFill = sc.can.EndAccount()
		src.scenarios = append(src.scenarios, acc)
	}
	src.health = r.health.snapshot()
	in := src.input(configs(r.scenarios), elapsed, setupData, rep)
	// What only the run knows: its capacity searches.
	var warns []string
	in.Capacity, warns = r.capacityReports()
	in.Warnings = append(in.Warnings, warns...)
	return in
}

// configs returns the configs of the scenarios of a run.
func configs(runs []*scenarioRun) []executor.Config {
	cfgs := make([]executor.Config, len(runs))
	for i, sc := range runs {
		cfgs[i] = sc.cfg
	}
	return cfgs
}

// summarySource is what the end-of-test summary is made of: the
// aggregated metrics, the options, the accounts of the scenarios that
// started and how the summary is shown. A run and a merge of result files
// fill it alike.
type summarySource struct {
	engine               *metrics.Engine
	opts                 *config.Options
	mode                 string
	noColor              bool
	stdoutTTY, stderrTTY bool
	scenarios            []scenarioAccount
	// start is when the run's clock started, the windows' origin; zero
	// for a merge.
	start time.Time
	// health is what the generator's health intervals add up to (every
	// instance's in a merge), nil when none was measured.
	health *health.Tally
}

// scenarioAccount is the account of one scenario that started.
type scenarioAccount struct {
	cfg executor.Config
	// can is what the scenario's config (and executor) can do.
	can executor.Abilities
	// open is an open-model scenario's account, nil for a closed one.
	open *executor.Account
	// backFill is a closed-model scenario's back-fill account.
	backFill executor.BackFillAccount
}

// input builds the summary of the scenarios cfgs ran.
func (src *summarySource) input(cfgs []executor.Config, elapsed time.Duration, setupData []byte, rep *metrics.ThresholdReport) *summary.Input {
	in := &summary.Input{
		Options: summary.Options{
			TrendStats: src.opts.SummaryTrendStats,
			Mode:       src.mode,
			NoColor:    src.noColor,
		},
		State: summary.State{
			IsStdOutTTY: src.stdoutTTY, IsStdErrTTY: src.stderrTTY, TestRunDuration: elapsed,
			Start: src.start,
		},
		SetupData: setupData,
	}
	if src.opts.SummaryTimeUnit != nil {
		in.Options.TimeUnit = *src.opts.SummaryTimeUnit
	}
	internal := map[string]bool{}
	for _, name := range summarySubmetrics(cfgs, src.opts.LatencyTrends) {
		if _, user := src.opts.Thresholds[name]; !user && !strings.Contains(name, summary.BackfilledTag) {
			internal[name] = true
		}
	}
	for _, m := range src.engine.Observed() {
		if internal[m.Name] {
			continue
		}
		sm := summary.Metric{Name: m.Name, Metric: m.Metric, Sink: m.Sink, Parent: m.Parent, Selector: m.Selector}
		for _, t := range rep.Results(m.Name) {
			st := summary.Threshold{Source: t.Source, OK: t.OK, AbortOnFail: t.AbortOnFail, Window: t.Window}
			if t.Window != 0 {
				st.Windows = summary.WindowVerdict{Judged: t.Windows, Failed: t.FailedWindows,
					Failing: t.Failing, Worst: t.Worst, Value: t.Value, Late: t.Late}
			}
			sm.Thresholds = append(sm.Thresholds, st)
		}
		in.Metrics = append(in.Metrics, sm)
	}
	in.Checks = src.engine.Checks()
	in.RootGroup = summary.GroupTree(src.engine.Groups(), in.Checks)
	in.Endpoints, in.EndpointsFolded = endpoints(src.engine, src.opts.LatencyTrends)
	in.Scenarios, in.BackFills, in.Warnings = scenarioReports(src.engine, src.scenarios, src.opts.LatencyTrends)
	var warn string
	if in.Health, warn = healthReport(src.engine, src.health); warn != "" {
		in.Warnings = append(in.Warnings, warn)
	}
	return in
}

// endpointRawMetrics are the duration metrics of the operations that
// record corrected_latency, in the order the per-endpoint table looks for
// a name's raw figures: the built-in requests', then the latency trends
// of options.latencyTrends.
func endpointRawMetrics(latencyTrends []string) []string {
	return append(slices.Clip(metrics.RequestDurationNames), latencyTrends...)
}

// endpointBreakdowns asks the engine to break the raw metrics and
// corrected_latency down by name, when the name system tag is on.
func endpointBreakdowns(systemTags map[string]bool, latencyTrends []string) []metrics.Breakdown {
	if !systemTags["name"] {
		return nil
	}
	var bs []metrics.Breakdown
	for _, m := range append([]string{metrics.CorrectedLatencyName}, endpointRawMetrics(latencyTrends)...) {
		bs = append(bs, metrics.Breakdown{Metric: m, Tag: "name"})
	}
	return bs
}

// endpoints returns the summary's per-endpoint rows: for each name that
// recorded corrected_latency, its requests and raw figures from the first
// raw metric that has the name, and its corrected figures (back-filled
// samples included). folded counts the corrected samples of names past
// the breakdown's cap.
func endpoints(eng *metrics.Engine, latencyTrends []string) (rows []summary.EndpointReport, folded int64) {
	_, corrected, folded, ok := eng.Breakdown(metrics.CorrectedLatencyName)
	if !ok {
		return nil, 0
	}
	rawMetrics := endpointRawMetrics(latencyTrends)
	raws := map[string]map[string]*metrics.TrendSink{}
	for _, name := range rawMetrics {
		_, parts, _, _ := eng.Breakdown(name)
		for _, p := range parts {
			if t, ok := p.Sink.(*metrics.TrendSink); ok {
				if raws[p.Value] == nil {
					raws[p.Value] = map[string]*metrics.TrendSink{}
				}
				raws[p.Value][name] = t
			}
		}
	}
	for _, p := range corrected {
		c, ok := p.Sink.(*metrics.TrendSink)
		if !ok {
			continue
		}
		row := summary.EndpointReport{Name: p.Value,
			Corrected: summary.Percentiles{P50: c.Percentile(50), P99: c.Percentile(99), P999: c.Percentile(99.9)}}
		for _, m := range rawMetrics {
			if t := raws[p.Value][m]; t != nil {
				row.RawMetric, row.Requests = m, t.Count()
				row.Raw = summary.Percentiles{P50: t.Percentile(50), P99: t.Percentile(99), P999: t.Percentile(99.9)}
				break
			}
		}
		rows = append(rows, row)
	}
	return rows, folded
}

// isOpenModel reports whether a scenario is open-model, as its config
// declares.
func isOpenModel(c executor.Config) bool { return c.Model() == executor.ModelOpen }

// summarySubmetrics are the submetrics the summary's accounts read: per
// scenario, raw (http_req_duration and the latency trends) and corrected
// latency of open-model scenarios and of closed-model ones that
// back-fill, and the iteration duration of closed-model ones; and the
// back-filled part of corrected_latency.
func summarySubmetrics(cfgs []executor.Config, latencyTrends []string) []string {
	subs := []string{metrics.CorrectedLatencyName + "{" + summary.BackfilledTag + ":true}"}
	for _, c := range cfgs {
		name := c.Base().Name
		if isOpenModel(c) || executor.Ask(c, nil).BackFills() {
			for _, raw := range scenarioRawMetrics(latencyTrends) {
				subs = append(subs, raw+"{scenario:"+name+"}")
			}
			subs = append(subs, metrics.CorrectedLatencyName+"{scenario:"+name+"}")
		}
		if !isOpenModel(c) {
			subs = append(subs, metrics.IterationDurationName+"{scenario:"+name+"}")
		}
	}
	return subs
}

// scenarioRawMetrics are the metrics a scenario's raw p99 is read from,
// the first that has samples of the scenario: http_req_duration, then the
// latency trends.
func scenarioRawMetrics(latencyTrends []string) []string {
	return append([]string{metrics.HTTPReqDurationName}, latencyTrends...)
}

// omissionRatio is how far a closed-model scenario's slowest iteration
// must stand above its p99.9 before the summary calls it the signature of
// coordinated omission; omissionMinCount keeps tiny runs out of it.
const (
	omissionRatio    = 10
	omissionMinCount = 1000
)

// scenarioReports returns the open-model accounts, the closed-model
// back-fill accounts and the warnings of docs/DESIGN.md §2.4.
func scenarioReports(eng *metrics.Engine, accounts []scenarioAccount, latencyTrends []string) ([]summary.ScenarioReport, []summary.BackFillReport, []string) {
	var reps []summary.ScenarioReport
	var fills []summary.BackFillReport
	var warns []string
	p99 := func(name string) float64 {
		if t, ok := eng.Sink(name).(*metrics.TrendSink); ok && t != nil {
			return t.Percentile(99)
		}
		return 0
	}
	count := func(name string) int64 {
		if t, ok := eng.Sink(name).(*metrics.TrendSink); ok && t != nil {
			return t.Count()
		}
		return 0
	}
	// raw is a scenario's raw p99, from the first raw metric it has
	// samples of, and that metric.
	raw := func(scenario string) (float64, string) {
		for _, m := range scenarioRawMetrics(latencyTrends) {
			if count(m+"{scenario:"+scenario+"}") > 0 {
				return p99(m + "{scenario:" + scenario + "}"), m
			}
		}
		return 0, metrics.HTTPReqDurationName
	}
	for _, sc := range accounts {
		name := sc.cfg.Base().Name
		rawP99, rawMetric := raw(name)
		if sc.open != nil {
			a := *sc.open
			reps = append(reps, summary.ScenarioReport{
				Name: name, Executor: sc.cfg.Base().Executor,
				Intended: a.Intended, OnTime: a.OnTime, Late: a.Late, LateForVU: a.LateForVU,
				Dropped: a.Dropped, Interrupted: a.Interrupted, PeakBacklog: a.PeakBacklog,
				RawP99: rawP99, RawMetric: rawMetric,
				CorrectedP99: p99(metrics.CorrectedLatencyName + "{scenario:" + name + "}"),
			})
			if a.Completed > 0 && count(metrics.CorrectedLatencyName+"{scenario:"+name+"}") <= a.Dropped {
				warns = append(warns, fmt.Sprintf("scenario %s: its iterations made no request that records corrected_latency "+
					"(k6/http, gRPC, WebSocket connects, or a custom Trend named in latencyTrends), so corrected_latency holds only what was dropped; "+
					"how late the iterations started is in schedule_lag", name))
			}
			switch {
			case a.Dropped > 0 && sc.can.Search != nil:
				// A capacity search overloads on purpose; its steps say so.
			case a.Dropped > 0 && sc.can.Queues():
				warns = append(warns, fmt.Sprintf("scenario %s: %d arrivals were still waiting for a VU when the scenario stopped; "+
					"the target rate is more than the system or maxVUs sustains, so corrected_latency measures the test's length, not the server",
					name, a.Dropped))
			case a.Dropped > 0:
				warns = append(warns, fmt.Sprintf("scenario %s: %d iterations were dropped for want of a free VU; "+
					"each is charged to corrected_latency{outcome:dropped} (a lower bound) — raise preAllocatedVUs/maxVUs or use intended-arrival-rate",
					name, a.Dropped))
			}
			continue
		}
		var fill *summary.BackFillReport
		if a := sc.backFill; a.Interval.Enabled() {
			rep := backFillReport(name, sc.cfg.Base().Executor, a, p99)
			rep.RawP99, rep.RawMetric = rawP99, rawMetric
			fills = append(fills, rep)
			fill = &fills[len(fills)-1]
		}
		t, ok := eng.Sink(metrics.IterationDurationName + "{scenario:" + name + "}").(*metrics.TrendSink)
		if !ok || t == nil || t.Count() < omissionMinCount {
			continue
		}
		if tail := t.Percentile(99.9); tail > 0 && t.Max() > omissionRatio*tail {
			warns = append(warns, omissionWarning(name, t.Max(), tail, fill))
		}
	}
	return reps, fills, warns
}

// backFillReport turns a closed-model scenario's back-fill account into
// the summary's, with the scenario's p99s read through p99 (all but the
// raw one, which the caller picks).
func backFillReport(name, executorName string, a executor.BackFillAccount, p99 func(string) float64) summary.BackFillReport {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	rep := summary.BackFillReport{
		Name: name, Executor: executorName,
		ExpectedInterval: a.Interval.String(),
		Estimated:        a.Interval.Mode == executor.IntervalAuto,
		Requests:         a.Requests, Backfilled: a.Backfilled, Unestimated: a.Unestimated,
		IterationP99: p99(metrics.IterationDurationName + "{scenario:" + name + "}"),
		CorrectedP99: p99(metrics.CorrectedLatencyName + "{scenario:" + name + "}"),
	}
	vus, med, lo, hi := a.Cadences()
	rep.VUs, rep.CadenceMedian, rep.CadenceMin, rep.CadenceMax = vus, ms(med), ms(lo), ms(hi)
	return rep
}

// omissionWarning words the coordinated-omission warning of a closed-model
// scenario whose slowest iteration (max) stands far above its p(99.9)
// (tail); fill is its back-fill account, nil when it does not back-fill.
func omissionWarning(name string, max, tail float64, fill *summary.BackFillReport) string {
	w := fmt.Sprintf("scenario %s (closed model): the slowest iteration took %.0fms, %.0f× its p(99.9) of %.1fms — "+
		"the signature of coordinated omission: while the target stalled, VUs waited instead of sending, so the stall barely reaches the percentiles; ",
		name, max, max/tail, tail)
	if fill == nil {
		return w + "measure with intended-arrival-rate, or set expectedInterval ('auto' or a duration) to back-fill corrected_latency"
	}
	how := "the hand-set expectedInterval " + fill.ExpectedInterval
	if fill.Estimated {
		how = fmt.Sprintf("each VU's estimated cadence (median %.1fms)", fill.CadenceMedian)
	}
	w += fmt.Sprintf("corrected_latency back-fills what they would have sent at %s: %d samples, p(99) %.1fms against iteration_duration's %.1fms",
		how, fill.Backfilled, fill.CorrectedP99, fill.IterationP99)
	if fill.Estimated {
		w += " — an estimate"
	}
	return w + "; measure with intended-arrival-rate for a measurement"
}

// capacityReports returns the results of the capacity-search scenarios
// and a warning for each that found the generator to be the limit.
func (r *testRun) capacityReports() ([]summary.CapacityReport, []string) {
	var reps []summary.CapacityReport
	var warns []string
	for _, sc := range r.scenarios {
		if !sc.started.Load() || sc.can.Capacity == nil {
			continue
		}
		res := sc.can.Capacity.CapacityReport()
		name := sc.cfg.Base().Name
		rep := summary.CapacityReport{Name: name, Capacity: res.Capacity, FailedAt: res.FailedAt, Verdict: res.Verdict, Limit: res.Limit}
		if sc.can.Search != nil {
			rep.Objective = sc.can.Search.Objective()
		}
		for _, st := range res.Steps {
			rep.Steps = append(rep.Steps, st)
		}
		reps = append(reps, rep)
		if res.Warning != "" {
			warns = append(warns, fmt.Sprintf("scenario %s: %s", name, res.Warning))
		}
	}
	return reps, warns
}
