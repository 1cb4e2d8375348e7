package audit

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output/hdrlog"
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
	// output. Anchor is where the schedule was placed, MaxLag the largest
	// lag.
	Intended, OnTime, Late, Dropped, Missing int64
	Anchor                                   time.Time
	MaxLag                                   time.Duration

	// How the requests were linked to their iterations (see linker).
	LinkedExact, LinkedByVU, LinkedByTime, Unlinked int64

	// Interval is a closed-model scenario's expectedInterval; VUs the
	// number of VUs its iterations ran on, taken from k6's vu metadata
	// (VUsFromMetadata) or reconstructed; Backfilled the samples added,
	// Unestimated the iterations that ran before their VU had an
	// estimate, Estimates each VU's last estimate, ascending.
	Interval        executor.ExpectedInterval
	VUs             int
	VUsFromMetadata bool
	Backfilled      int64
	Unestimated     int64
	Estimates       []time.Duration

	// Notes are what the account adds in words.
	Notes []string
}

// Row is one distribution of the audit's tables: k6's own samples of a
// raw duration metric, or the rebuilt corrected_latency, of one scenario
// or one request name. It extends the rows of metronome merge --json.
type Row struct {
	hdrlog.Summary
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

// finish sorts the samples, aggregates them for the summary and the
// thresholds, and builds the tables.
func (a *auditRun) finish() error {
	res := a.res
	slices.SortStableFunc(res.samples, func(x, y sample) int { return cmp.Compare(x.at, y.at) })
	res.Start = time.Unix(0, res.samples[0].at)
	res.End = time.Unix(0, res.samples[len(res.samples)-1].at)
	eng, err := metrics.NewEngine(a.reg, metrics.EngineOptions{
		Thresholds: a.o.Thresholds,
		Submetrics: []string{metrics.CorrectedLatencyName + "{" + summary.BackfilledTag + ":true}"},
	})
	if err != nil {
		return fmt.Errorf("thresholds: %w", err)
	}
	batch := make([]metrics.Sample, 0, 4096)
	for _, s := range res.samples {
		batch = append(batch, s.sample())
		if len(batch) == cap(batch) {
			eng.Ingest(batch)
			batch = batch[:0]
		}
	}
	eng.Ingest(batch)
	elapsed := res.End.Sub(res.Start)
	res.Report = eng.EvaluateThresholds(elapsed, true)
	res.Rows = a.rows()
	res.Summary = a.summaryInput(eng, elapsed)
	return nil
}

func (s sample) sample() metrics.Sample {
	return metrics.Sample{Metric: s.metric, Tags: s.tags, Time: time.Unix(0, s.at), Value: s.value}
}

// rowKey identifies a Row.
type rowKey struct {
	source, metric, scenario, name string
}

// rows aggregates k6's raw durations and the rebuilt corrected_latency
// per scenario and per request name, with the estimator of the summary
// and of metronome merge, and counts the values over the bound exactly.
func (a *auditRun) rows() []Row {
	res := a.res
	bound := metrics.Milliseconds(res.Bound)
	by := map[rowKey]*Row{}
	lastInterval := map[*Row]int64{}
	add := func(k rowKey, s sample) {
		r := by[k]
		if r == nil {
			labels := "scenario=" + k.scenario
			if k.name != "" {
				labels = "name=" + k.name
			}
			r = &Row{Summary: hdrlog.Summary{Metric: k.metric, Labels: labels}, Source: k.source, Reconstructed: k.source == SourceAudit,
				BoundMs: bound, sink: metrics.NewTrendSink()}
			by[k] = r
			lastInterval[r] = -1
		}
		r.sink.AddValue(s.value)
		if s.value > bound {
			r.OverBound++
		}
		// The log's intervals: count those the row has values in.
		iv := (s.at - res.samples[0].at) / int64(hdrlog.DefaultInterval)
		if iv != lastInterval[r] {
			r.Intervals++
			lastInterval[r] = iv
			end := res.Start.Add(time.Duration(iv+1) * hdrlog.DefaultInterval)
			if r.Start.IsZero() {
				r.Start = end.Add(-hdrlog.DefaultInterval)
			}
			r.End = end
		}
	}
	for _, s := range res.samples {
		source := SourceK6
		switch {
		case s.metric == a.b.CorrectedLatency:
			source = SourceAudit
		case !a.isRaw(s.metric):
			continue
		}
		if sc, ok := s.tags.Get("scenario"); ok && a.byID[sc] != nil {
			add(rowKey{source: source, metric: s.metric.Name, scenario: sc}, s)
		}
		if name, ok := s.tags.Get("name"); ok {
			add(rowKey{source: source, metric: s.metric.Name, name: name}, s)
		}
	}
	out := make([]Row, 0, len(by))
	for _, r := range by {
		r.Count = r.sink.Count()
		r.Min, r.Mean, r.Max = r.sink.Min(), r.sink.Avg(), r.sink.Max()
		r.Percentiles = map[string]float64{}
		for _, p := range hdrlog.Percentiles {
			r.Percentiles[hdrlog.PercentileName(p)] = r.sink.Percentile(p)
		}
		r.Start, r.End = r.Start.UTC(), r.End.UTC()
		out = append(out, *r)
	}
	order := map[string]int{}
	for i, sc := range res.Scenarios {
		order["scenario="+sc.Name] = i
	}
	slices.SortFunc(out, func(x, y Row) int {
		// Scenarios in the options' order, then names; within each, k6's
		// row before the audit's ("k6" > "audit").
		xs, xok := order[x.Labels]
		ys, yok := order[y.Labels]
		switch {
		case xok && yok && xs != ys:
			return cmp.Compare(xs, ys)
		case xok != yok:
			if xok {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(x.Labels, y.Labels), cmp.Compare(y.Source, x.Source), cmp.Compare(x.Metric, y.Metric))
	})
	return out
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
		case sc.Interval.Enabled():
			in.BackFills = append(in.BackFills, a.backFillReport(sc, raw, corrected))
		}
	}
	return in
}

// backFillReport is the summary's account of a back-filled scenario.
func (a *auditRun) backFillReport(sc *ScenarioAudit, raw, corrected float64) summary.BackFillReport {
	ms := metrics.Milliseconds
	rep := summary.BackFillReport{
		Name: sc.Name, Executor: sc.Executor,
		ExpectedInterval: sc.Interval.String(),
		Estimated:        sc.Interval.Mode == executor.IntervalAuto,
		Requests:         sc.Requests, Backfilled: sc.Backfilled, Unestimated: sc.Unestimated,
		RawP99: raw, CorrectedP99: corrected,
	}
	var its []float64
	for _, s := range a.res.samples {
		if s.metric == a.b.IterationDuration {
			if name, _ := s.tags.Get("scenario"); name == sc.Name {
				its = append(its, s.value)
			}
		}
	}
	if len(its) > 0 {
		t := metrics.NewTrendSink()
		for _, v := range its {
			t.AddValue(v)
		}
		rep.IterationP99 = t.Percentile(99)
	}
	switch est := sc.Estimates; {
	case !rep.Estimated:
		rep.CadenceMedian, rep.CadenceMin, rep.CadenceMax = ms(sc.Interval.Fixed), ms(sc.Interval.Fixed), ms(sc.Interval.Fixed)
	case len(est) > 0:
		rep.VUs = len(est)
		med := est[len(est)/2]
		if len(est)%2 == 0 {
			med = est[len(est)/2-1] + (est[len(est)/2]-est[len(est)/2-1])/2
		}
		rep.CadenceMedian, rep.CadenceMin, rep.CadenceMax = ms(med), ms(est[0]), ms(est[len(est)-1])
	}
	return rep
}

// WriteLog writes the audited run's HdrHistogram interval log: every time
// trend of k6's output and the rebuilt corrected_latency and schedule_lag,
// per scenario and request name, as -o hdrlog=FILE logs a metronome run,
// so metronome merge, compare and report read it. env holds the log's
// K6_HDRLOG_* settings; logf receives what the log leaves out.
func (r *Result) WriteLog(w io.Writer, env map[string]string, logf func(string, ...any)) error {
	lw, err := hdrlog.NewWriter(w, r.Start, env, logf)
	if err != nil {
		return err
	}
	batch := make([]metrics.Sample, 0, 4096)
	for _, s := range r.samples {
		if s.metric.Type != metrics.Trend || s.metric.Contains != metrics.Time {
			continue
		}
		batch = append(batch, s.sample())
		if len(batch) == cap(batch) {
			lw.Add(batch)
			batch = batch[:0]
		}
	}
	lw.Add(batch)
	return lw.Close()
}

// Failed reports whether a threshold failed on the audited data.
func (r *Result) Failed() bool { return r.Report.Failed() }
