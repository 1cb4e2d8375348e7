// Package audit reconstructs, from the JSON output of a run made with
// stock k6 (k6 run -o json=FILE) and the options of its script, what
// metronome would have measured in that run: corrected_latency for every
// request and schedule_lag for every iteration (docs/DESIGN.md §2.2), and
// with them the percentiles that coordinated omission hid from k6's own
// summary.
//
// The output holds every sample with its time and tags: each request's
// duration, each iteration's end and duration (so its start), and each
// dropped arrival with its moment. The script's options give every
// arrival-rate scenario's schedule exactly, with the executor package's
// arithmetic (k6's own). An arrival-rate scenario is rebuilt by matching
// the started and dropped iterations to the schedule (see rebuildOpen);
// each request is charged its own time plus its iteration's lag, each drop
// the wait until a VU was free. A closed-model scenario is back-filled per
// request from its VUs' cadence, with executor.Cadence and
// executor.BackFill, as a metronome run back-fills (see rebuildClosed).
// Everything rebuilt is labelled: it is arithmetic on k6's samples, not a
// measurement.
package audit

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/schedule"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output/hdrlog"
	"github.com/metronome-load/metronome/summary"
)

// Options are what an audit needs besides the output.
type Options struct {
	// Scenarios are the run's scenarios, from the script's options.
	Scenarios []executor.Config
	// Thresholds are evaluated on the audited data: k6's samples and the
	// rebuilt ones.
	Thresholds map[string][]metrics.ThresholdDef
	// Bound is the latency the tables count the samples above (100 ms
	// when zero).
	Bound time.Duration
	// MinIterationDuration is the run's minIterationDuration: a VU idles
	// that long at most between two iterations.
	MinIterationDuration time.Duration
	// LatencyTrends are the run's options.latencyTrends: custom Trends of
	// time each of whose samples is one operation's own time. Their
	// samples are rebuilt as requests are, the corrected_latency tagged
	// metric=NAME, as a metronome run records them.
	LatencyTrends []string
	// Summary sets the summary's trend columns and time unit.
	Summary summary.Options
	// Log makes the audit write the HdrHistogram log (Result.WriteLog);
	// LogEnv holds its K6_HDRLOG_* settings, and Logf receives what it
	// leaves out (see hdrlog.Writer).
	Log    bool
	LogEnv map[string]string
	Logf   func(format string, args ...any)

	// rebuilt, when set, receives every rebuilt sample (the package's
	// tests read them).
	rebuilt func(metrics.Sample)
}

// DefaultBound is the latency the tables count samples above by default:
// the stall experiment's (docs/DESIGN.md §7).
const DefaultBound = 100 * time.Millisecond

// Result is an audit: the rebuilt scenarios, the numbers beside k6's, the
// summary and the threshold verdict.
type Result struct {
	// Source names the output audited.
	Source  string
	Reading Reading
	// Scenarios are the accounts of the run's scenarios, in the order of
	// the options.
	Scenarios []*ScenarioAudit
	// Outside counts the requests made outside every scenario (setup,
	// teardown), which record no corrected_latency, as in metronome.
	Outside int64
	// Rows are k6's raw figures beside the rebuilt corrected_latency, per
	// scenario and per request name: the first metrics.MaxBreakdownValues
	// names, as in the summary and the log, and the later ones together
	// in folded rows (labels folded=true). Folded says how many names
	// those are, "" when there are none.
	Rows   []Row
	Folded string
	Bound  time.Duration
	// Summary is the end-of-test summary metronome would have printed for
	// the run, its corrected_latency and schedule_lag rebuilt.
	Summary *summary.Input
	// Report is the threshold verdict on the audited data.
	Report *metrics.ThresholdReport
	// Start and End span the output's samples.
	Start, End time.Time

	// k6Log and rebuiltLog are the interval logs of k6's time trends and
	// of the rebuilt samples, each in time order; WriteLog interleaves
	// them.
	k6Log, rebuiltLog []byte
}

// sample is one rebuilt sample of an iteration or a drop, kept (with
// Options.Log) to be logged in time order among the requests' samples.
type sample struct {
	at     int64 // Unix nanoseconds
	value  float64
	metric *metrics.Metric
	tags   *metrics.TagSet
}

// iteration is one completed iteration of the output.
type iteration struct {
	start, end int64 // Unix nanoseconds
	tags       *metrics.TagSet
	vu, iter   int64
	// lag is how late it started (open model); interval is the cadence
	// its requests are back-filled with (closed model), 0 for none.
	lag, interval time.Duration
}

// request is one request of the output with its own time. The requests
// are spooled (see spool) between the reading of the output and their
// charge.
type request struct {
	end      int64 // Unix nanoseconds
	own      time.Duration
	tags     *metrics.TagSet
	vu, iter int64
	// blocked is set once http_req_blocked was added to a k6/http
	// request's own time.
	blocked, http bool
}

// drop is one dropped_iterations sample: n arrivals dropped at its time.
type drop struct {
	at   int64
	n    int64
	tags *metrics.TagSet
}

// auditRun is one audit in progress.
type auditRun struct {
	o    Options
	reg  *metrics.Registry
	b    *metrics.Builtin
	res  *Result
	byID map[string]*scenario
	// scenarioTagged is set once a sample carried a scenario tag.
	scenarioTagged bool
	// untagged are requests, iterations and drops without a scenario
	// tag, given to the only scenario when the run has one and never
	// tagged any sample.
	untagged scenario
	unknown  map[string]int64 // samples of scenarios the options do not have
	// pending is the last request read, of scenario pendingSc (an index
	// into scens, -1 for the untagged pile), waiting for its
	// http_req_blocked before it is spooled; hasPending says there is one.
	pending    request
	pendingSc  int
	hasPending bool
	raw        map[*metrics.Metric]rawKind
	// scens are the scenarios in the options' order.
	scens []*scenario
	// requests spools the requests to be charged once every iteration
	// is read.
	requests spool
	// untaggedTo is the scenario the untagged pile's requests are
	// charged to, nil when they were made outside the scenarios.
	untaggedTo *scenario
	// backFilled counts the samples back-filled so far (see maxBackFill).
	backFilled int64
	// timed holds the rebuilt samples of iterations and drops, with
	// Options.Log, sorted by time to be logged among the requests'.
	timed []sample

	// The aggregates, fed as the output is read (see sinks.go); rows.base
	// is the first sample's time, where the log's and the rows' intervals
	// begin.
	eng  engineFeed
	log  *logBuffer
	rows rowSet
	// relog is the log of the rebuilt samples (with Options.Log).
	relog *logBuffer
}

// scenario is one scenario's samples and its rebuild.
type scenario struct {
	cfg        executor.Config
	index      int
	iterations []iteration
	drops      []drop
	// requests and withoutBlocked count the scenario's requests (which
	// are spooled) and the k6/http ones among them without
	// http_req_blocked.
	requests, withoutBlocked int64
	// durations are the iterations' durations (iteration_duration), for
	// the account's p99.
	durations *metrics.TrendSink
	audit     *ScenarioAudit
	// The rebuild: the linker of requests to iterations, and whether
	// the requests are charged (open: their iteration's lag; closed:
	// back-filled at their iteration's interval).
	linker           *linker
	open, backFilled bool
	// notFilled counts the requests left without back-fill past
	// maxBackFill.
	notFilled int64
}

// Audit reads k6's JSON output from r (name is used in messages) and
// rebuilds what metronome would have measured in that run. An output that
// is not k6's JSON output, or whose scenarios the options do not explain,
// is an error; one that is cut short or holds lines it cannot read is
// audited as far as it goes, and Result.Reading says what was skipped.
func Audit(r io.Reader, name string, o Options) (*Result, error) {
	if o.Bound <= 0 {
		o.Bound = DefaultBound
	}
	reg := metrics.NewRegistry()
	a := &auditRun{
		o: o, reg: reg, b: metrics.RegisterBuiltin(reg),
		res:     &Result{Source: name, Bound: o.Bound},
		byID:    map[string]*scenario{},
		unknown: map[string]int64{},
		raw:     map[*metrics.Metric]rawKind{},
		rows:    newRowSet(o.Bound),
	}
	defer a.requests.close()
	defer a.eng.wait.close()
	a.untagged.durations = metrics.NewTrendSink()
	a.untagged.index = -1
	for _, cfg := range o.Scenarios {
		if _, dup := a.byID[cfg.Base().Name]; dup {
			continue
		}
		sc := &scenario{cfg: cfg, index: len(a.scens), durations: metrics.NewTrendSink(), audit: &ScenarioAudit{Name: cfg.Base().Name, Executor: cfg.Base().Executor, Description: cfg.Description()}}
		a.byID[sc.audit.Name] = sc
		a.scens = append(a.scens, sc)
		a.res.Scenarios = append(a.res.Scenarios, sc.audit)
	}
	if len(a.byID) == 0 {
		return nil, fmt.Errorf("the options have no scenario to audit")
	}
	rd, err := newReader(r, name, reg)
	if err != nil {
		return nil, err
	}
	for {
		p, err := rd.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		a.take(p)
		if a.eng.err != nil {
			return nil, a.eng.err
		}
	}
	a.flushPending()
	a.res.Reading = rd.rd
	if a.res.Reading.Points == 0 {
		return nil, fmt.Errorf("%s holds no samples of k6's JSON output", name)
	}
	if len(a.unknown) > 0 {
		names := slices.Sorted(maps.Keys(a.unknown))
		return nil, fmt.Errorf("%s holds samples of scenario %s, which the options do not have (they have %s): audit with the run's script and options (the same -e variables, --config and option flags as k6 run)",
			name, strings.Join(names, ", "), strings.Join(a.scenarioNames(), ", "))
	}
	for i, trend := range o.LatencyTrends {
		if m := reg.Get(trend); m != nil && (m.Type != metrics.Trend || m.Contains != metrics.Time) {
			return nil, fmt.Errorf("options.latencyTrends[%d]: %s declares %q a %s of %s values, not a Trend of time", i, name, trend, m.Type, m.Contains)
		}
	}
	// Every metric the output declares is declared now: the engine can
	// be made, and it takes the samples that waited for it.
	if err := a.eng.ready(a); err != nil {
		return nil, err
	}
	if err := a.placeUntagged(); err != nil {
		return nil, err
	}
	for _, sc := range a.scens {
		if err := a.rebuild(sc); err != nil {
			return nil, err
		}
	}
	if err := a.charge(); err != nil {
		return nil, err
	}
	if err := a.finish(); err != nil {
		return nil, err
	}
	return a.res, nil
}

// take files one point: every point goes into the summary's aggregates
// and every time trend into the log; iterations and drops are kept by
// scenario for the rebuild, and requests spooled.
func (a *auditRun) take(p point) {
	if a.rows.base.IsZero() {
		a.begin(p.time)
	}
	a.res.Start = minTime(a.res.Start, p.time)
	a.res.End = maxTime(a.res.End, p.time)
	s := metrics.Sample{Metric: p.metric, Tags: p.tags, Time: p.time, Value: p.value}
	a.eng.add(a, s)
	if a.log != nil && p.metric.Type == metrics.Trend && p.metric.Contains == metrics.Time {
		a.log.add(s)
	}
	name, tagged := p.tags.Get("scenario")
	if tagged {
		a.scenarioTagged = true
	}
	at := p.time.UnixNano()
	switch p.metric.Name {
	case metrics.IterationDurationName:
		if sc := a.scenarioOf(name, tagged); sc != nil {
			sc.iterations = append(sc.iterations, iteration{start: at - millisToNanos(p.value), end: at, tags: p.tags, vu: p.vu, iter: p.iter})
			sc.durations.AddValue(p.value)
		}
	case metrics.DroppedIterationsName:
		if sc := a.scenarioOf(name, tagged); sc != nil {
			sc.drops = append(sc.drops, drop{at: at, n: int64(math.Round(p.value)), tags: p.tags})
		}
	case metrics.HTTPReqBlockedName:
		// k6 writes a request's samples together: its http_req_blocked
		// follows its http_req_duration, at the same time and tags.
		if q := &a.pending; a.hasPending && q.http && !q.blocked && q.end == at && q.tags == p.tags && q.vu == p.vu && q.iter == p.iter {
			q.own += time.Duration(millisToNanos(p.value))
			q.blocked = true
		}
	default:
		if !a.isRaw(p.metric) {
			return
		}
		a.rows.add(SourceK6, s)
		sc := a.scenarioOf(name, tagged)
		if sc == nil {
			if !tagged {
				a.res.Outside++
			}
			return
		}
		a.flushPending()
		tags := p.tags
		if a.raw[p.metric] == rawTrend {
			tags = tags.With(executor.LatencyTrendTag, p.metric.Name)
		}
		a.pending = request{end: at, own: time.Duration(millisToNanos(p.value)), tags: tags,
			vu: p.vu, iter: p.iter, http: p.metric.Name == metrics.HTTPReqDurationName}
		a.pendingSc, a.hasPending = sc.index, true
	}
}

// flushPending counts the pending request in its scenario and spools it.
func (a *auditRun) flushPending() {
	if !a.hasPending {
		return
	}
	a.hasPending = false
	sc := &a.untagged
	if a.pendingSc >= 0 {
		sc = a.scens[a.pendingSc]
	}
	sc.requests++
	if q := a.pending; q.http && !q.blocked {
		sc.withoutBlocked++
	}
	a.putRequest(a.pendingSc, a.pending)
}

// rawKind says whether a metric's samples are operations that record
// corrected_latency, and which kind.
type rawKind uint8

const (
	notRaw rawKind = iota
	// rawRequest is a built-in protocol's request duration.
	rawRequest
	// rawTrend is a latency trend of the options.
	rawTrend
)

// isRaw reports whether m is the duration metric of requests that record
// corrected_latency (docs/DESIGN.md §2.2): k6/http's, gRPC's, WebSocket
// connects' (hdrlog.RawMetrics), or one of the options' latency trends,
// when the output declares it a Trend of time. A k6/http request's own
// time, from asking for a connection to its answer, is http_req_blocked
// (which in k6 spans the connection's dialling and TLS) plus
// http_req_duration.
func (a *auditRun) isRaw(m *metrics.Metric) bool {
	raw, ok := a.raw[m]
	if !ok {
		switch {
		case slices.Contains(hdrlog.RawMetrics, m.Name):
			raw = rawRequest
		case slices.Contains(a.o.LatencyTrends, m.Name) && m.Type == metrics.Trend && m.Contains == metrics.Time:
			raw = rawTrend
		}
		a.raw[m] = raw
	}
	return raw != notRaw
}

// scenarioOf returns the scenario a sample belongs to: the one its
// scenario tag names, or for a sample without the tag the untagged pile
// (nil once some sample had the tag: then it was made outside every
// scenario, in setup or teardown).
func (a *auditRun) scenarioOf(name string, tagged bool) *scenario {
	if !tagged {
		if a.scenarioTagged {
			return nil
		}
		return &a.untagged
	}
	sc := a.byID[name]
	if sc == nil {
		a.unknown[name]++
	}
	return sc
}

// placeUntagged gives the samples read before any scenario tag to the
// only scenario when the run never tagged one (--system-tags without
// scenario), and otherwise counts untagged requests as made outside the
// scenarios.
func (a *auditRun) placeUntagged() error {
	u := &a.untagged
	if int64(len(u.iterations)+len(u.drops))+u.requests == 0 {
		return nil
	}
	if a.scenarioTagged {
		// Read before the first tagged sample: setup's.
		a.res.Outside += u.requests
		return nil
	}
	if len(a.byID) > 1 {
		return fmt.Errorf("%s has no scenario tags (the run's --system-tags left out scenario), so its samples cannot be told apart among the options' %d scenarios; audit a run made with the scenario system tag", a.res.Source, len(a.byID))
	}
	for _, sc := range a.byID {
		sc.iterations, sc.drops, sc.durations = u.iterations, u.drops, u.durations
		sc.requests, sc.withoutBlocked = u.requests, u.withoutBlocked
		a.untaggedTo = sc
		a.rows.untaggedAre(sc.audit.Name)
		sc.audit.Notes = append(sc.audit.Notes, "the run had no scenario tag: every sample is taken as this scenario's (setup's and teardown's requests too)")
	}
	return nil
}

// scenarioNames names the options' scenarios, in their order.
func (a *auditRun) scenarioNames() []string {
	var out []string
	for _, sc := range a.res.Scenarios {
		out = append(out, sc.Name)
	}
	return out
}

// rebuild rebuilds one scenario from its iterations and drops: an open
// one's schedule (each iteration's lag, each drop's charge), a closed
// one's VUs and cadences (each iteration's interval). Its requests are
// charged after, by charge.
func (a *auditRun) rebuild(sc *scenario) error {
	slices.SortStableFunc(sc.iterations, func(x, y iteration) int { return cmp.Compare(x.start, y.start) })
	sc.audit.Iterations = int64(len(sc.iterations))
	sc.audit.Requests = sc.requests
	for _, d := range sc.drops {
		sc.audit.K6Dropped += d.n
	}
	sc.audit.WithoutBlocked = sc.withoutBlocked
	if n := sc.audit.WithoutBlocked; n > 0 {
		sc.audit.Notes = append(sc.audit.Notes, fmt.Sprintf("%d k6/http requests have no http_req_blocked in the output: their own time is http_req_duration alone, without the wait for a connection", n))
	}
	rec := metrics.RecorderFunc(a.rebuiltTimed)
	if sched := scheduleOf(sc.cfg); sched != nil {
		return a.rebuildOpen(sc, sched, rec)
	}
	a.rebuildClosed(sc)
	return nil
}

// charge reads the spooled requests back, in the output's order, and
// charges each as its scenario's rebuild says; the rebuilt samples of
// iterations and drops are logged among theirs, by time.
func (a *auditRun) charge() error {
	if a.log != nil {
		slices.SortStableFunc(a.timed, func(x, y sample) int { return cmp.Compare(x.at, y.at) })
	}
	if err := a.requests.rewind(); err != nil {
		return err
	}
	rec := metrics.RecorderFunc(a.rebuilt)
	for range a.requests.n {
		i, q := a.nextRequest()
		if err := a.requests.err; err != nil {
			return err
		}
		a.logTimedUntil(q.end)
		sc := a.untaggedTo
		if i >= 0 && i < len(a.scens) {
			sc = a.scens[i]
		}
		switch {
		case sc == nil:
		case sc.open:
			a.chargeOpen(sc, q, rec)
		case sc.backFilled:
			a.chargeClosed(sc, q, rec)
		}
	}
	a.logTimedUntil(math.MaxInt64)
	a.requests.close()
	for _, sc := range a.scens {
		if sc.linker != nil {
			sc.linker.account(sc.audit)
		}
		if sc.notFilled > 0 {
			sc.audit.Notes = append(sc.audit.Notes, fmt.Sprintf("%d requests record their own time alone: the audit stopped back-filling at %d samples, which only a damaged output or an expectedInterval far below the requests' times reaches", sc.notFilled, maxBackFill))
		}
	}
	return nil
}

// scheduleOf returns the intended schedule of an open-model scenario, nil
// for a closed-model one.
func scheduleOf(cfg executor.Config) *schedule.Schedule {
	if cfg.Model() != executor.ModelOpen {
		return nil
	}
	return executor.Ask(cfg, nil).RateSchedule()
}

// rebuilt takes one rebuilt sample of a request.
func (a *auditRun) rebuilt(s metrics.Sample) {
	a.aggregate(s)
	if a.log != nil {
		a.rebuiltLog().add(s)
	}
}

// rebuiltTimed takes one rebuilt sample of an iteration or a drop, which
// is logged later, among the requests' samples (see charge).
func (a *auditRun) rebuiltTimed(s metrics.Sample) {
	a.aggregate(s)
	if a.log != nil {
		a.timed = append(a.timed, sample{at: s.Time.UnixNano(), value: s.Value, metric: s.Metric, tags: s.Tags})
	}
}

// aggregate feeds a rebuilt sample to the summary and the tables.
func (a *auditRun) aggregate(s metrics.Sample) {
	a.eng.add(a, s)
	if s.Metric == a.b.CorrectedLatency {
		a.rows.add(SourceAudit, s)
	}
	if a.o.rebuilt != nil {
		a.o.rebuilt(s)
	}
}

// logTimedUntil logs the rebuilt samples of iterations and drops up to
// the time at (Unix nanoseconds).
func (a *auditRun) logTimedUntil(at int64) {
	if a.log == nil {
		return
	}
	n := 0
	for n < len(a.timed) && a.timed[n].at <= at {
		s := a.timed[n]
		a.rebuiltLog().add(metrics.Sample{Metric: s.metric, Tags: s.tags, Time: time.Unix(0, s.at), Value: s.value})
		n++
	}
	a.timed = a.timed[n:]
}

// rebuiltLog returns the log of the rebuilt samples, made at the first.
func (a *auditRun) rebuiltLog() *logBuffer {
	if a.relog == nil {
		a.relog = newLogBuffer(a.rows.base, a.o.LogEnv, a.o.Logf)
	}
	return a.relog
}

// millisToNanos converts k6's milliseconds to whole nanoseconds.
func millisToNanos(ms float64) int64 { return int64(math.Round(ms * 1e6)) }

func minTime(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
