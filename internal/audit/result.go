package audit

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/internal/percentiles"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/summary"
)

// ScenarioAudit is the account of one scenario's rebuild.
type ScenarioAudit struct {
	Name, Executor, Description string
	// Open is set for an arrival-rate scenario, rebuilt from its
	// schedule; a closed-model one is back-filled.
	Open bool
	// Iterations and Requests count what the output holds of the
	// scenario; K6Dropped is the sum of its dropped_iterations.
	Iterations, Requests, K6Dropped int64
	// WithoutBlocked counts the k6/http requests whose http_req_blocked
	// the output lacks: their own time is http_req_duration alone.
	WithoutBlocked int64

	// Intended counts the arrivals of the schedule; OnTime and Late split
	// the started ones by their lag (executor.OnTimeTolerance), Dropped
	// counts those charged as dropped, Missing those with no event in the
	// output, PastEnd those k6 settled after the end of the duration (and
	// Intended counts). Anchor is where the schedule was placed, MaxLag
	// the largest lag.
	Intended, OnTime, Late, Dropped, Missing, PastEnd int64
	Anchor                                            time.Time
	MaxLag                                            time.Duration

	// How the requests were linked to their iterations (see linker).
	LinkedExact, LinkedByVU, LinkedByTime, Unlinked int64

	// BackFill is a closed-model scenario's back-fill account, as a
	// metronome run keeps it; VUs is the number of VUs its iterations ran
	// on, taken from k6's vu metadata (VUsFromMetadata) or reconstructed.
	BackFill        executor.BackFillAccount
	VUs             int
	VUsFromMetadata bool

	// Notes are what the account adds in words.
	Notes []string
}

// Row is one distribution of the audit's tables: k6's own samples of a
// raw duration metric, or the rebuilt corrected_latency, of one scenario
// or one request name. It extends the rows of metronome merge --json.
type Row struct {
	percentiles.Summary
	// Source is "k6" for k6's own samples, "audit" for the rebuilt ones;
	// Reconstructed says the same for those who read one field.
	Source        string `json:"source"`
	Reconstructed bool   `json:"reconstructed"`
	// BoundMs is the tables' bound in milliseconds, OverBound how many
	// values exceed it.
	BoundMs   float64 `json:"boundMs"`
	OverBound int64   `json:"overBound"`

	sink *metrics.TrendSink
}

// Sources of a Row.
const (
	SourceK6    = "k6"
	SourceAudit = "audit"
)

// finish evaluates the thresholds, writes the log of the rebuilt samples
// and builds the tables and the summary.
func (a *auditRun) finish() error {
	res := a.res
	eng := a.eng.finish()
	elapsed := res.End.Sub(res.Start)
	res.Report = eng.EvaluateThresholds(elapsed, true)
	if a.log != nil {
		var err error
		if res.k6Log, err = a.log.close(); err != nil {
			return fmt.Errorf("the HdrHistogram log: %w", err)
		}
		if res.rebuiltLog, err = a.rebuiltLog().close(); err != nil {
			return fmt.Errorf("the HdrHistogram log: %w", err)
		}
	}
	res.Rows = a.rows.rows(a.scenarioNames())
	res.Folded = a.rows.foldedNames()
	res.Summary = a.summaryInput(eng, elapsed)
	return nil
}

// summaryInput is the end-of-test summary metronome would have printed,
// its corrected_latency and schedule_lag rebuilt.
func (a *auditRun) summaryInput(eng *metrics.Engine, elapsed time.Duration) *summary.Input {
	in := &summary.Input{Options: a.o.Summary, State: summary.State{TestRunDuration: elapsed}}
	for _, m := range eng.Observed() {
		sm := summary.Metric{Name: m.Name, Metric: m.Metric, Sink: m.Sink, Parent: m.Parent, Selector: m.Selector}
		for _, t := range a.res.Report.Results(m.Name) {
			sm.Thresholds = append(sm.Thresholds, summary.Threshold{Source: t.Source, OK: t.OK, AbortOnFail: t.AbortOnFail})
		}
		in.Metrics = append(in.Metrics, sm)
	}
	in.RootGroup = summary.GroupTree(eng.Groups(), eng.Checks())
	p99 := func(source, metric, scenario string) float64 {
		for _, r := range a.res.Rows {
			if r.Source == source && r.Metric == metric && r.Labels == "scenario="+scenario {
				return r.Percentiles["p99"]
			}
		}
		return 0
	}
	for _, sc := range a.res.Scenarios {
		raw := p99(SourceK6, metrics.HTTPReqDurationName, sc.Name)
		corrected := p99(SourceAudit, metrics.CorrectedLatencyName, sc.Name)
		switch {
		case sc.Open:
			in.Scenarios = append(in.Scenarios, summary.ScenarioReport{
				Name: sc.Name, Executor: sc.Executor,
				Intended: sc.Intended, OnTime: sc.OnTime, Late: sc.Late, Dropped: sc.Dropped,
				RawP99: raw, CorrectedP99: corrected,
			})
		case sc.BackFill.Interval.Enabled():
			in.BackFills = append(in.BackFills, a.backFillReport(sc, raw, corrected))
		}
	}
	return in
}

// backFillReport is the summary's account of a back-filled scenario.
func (a *auditRun) backFillReport(sc *ScenarioAudit, raw, corrected float64) summary.BackFillReport {
	ms := metrics.Milliseconds
	b := sc.BackFill
	rep := summary.BackFillReport{
		Name: sc.Name, Executor: sc.Executor,
		ExpectedInterval: b.Interval.String(),
		Estimated:        b.Interval.Mode == executor.IntervalAuto,
		Requests:         b.Requests, Backfilled: b.Backfilled, Unestimated: b.Unestimated,
		RawP99: raw, CorrectedP99: corrected,
	}
	if t := a.byID[sc.Name].durations; t.Count() > 0 {
		rep.IterationP99 = t.Percentile(99)
	}
	vus, med, lo, hi := b.Cadences()
	rep.VUs, rep.CadenceMedian, rep.CadenceMin, rep.CadenceMax = vus, ms(med), ms(lo), ms(hi)
	return rep
}

// WriteLog writes the audited run's HdrHistogram interval log: every time
// trend of k6's output and the rebuilt corrected_latency and schedule_lag,
// per scenario and request name, as -o hdrlog=FILE logs a metronome run,
// so metronome merge, compare and report read it.
// The audit must have been made with Options.Log.
func (r *Result) WriteLog(w io.Writer) error {
	if r.k6Log == nil {
		return errors.New("the audit was made without its log (Options.Log)")
	}
	return mergeLogs(w, r.k6Log, r.rebuiltLog)
}

// Failed reports whether a threshold failed on the audited data.
func (r *Result) Failed() bool { return r.Report.Failed() }
