package audit

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/internal/percentiles"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output/hdrlog"
	"github.com/metronome-load/metronome/summary"
)

// The output is aggregated as it is read, so an audit holds k6's samples
// only as aggregates (the metrics engine's sinks, the log's intervals, the
// tables' trends); what it keeps one by one is a few numbers per
// iteration and drop for the rebuild, and it spools the requests (see
// spool).

// begin starts the aggregates at the output's first sample.
func (a *auditRun) begin(first time.Time) {
	a.rows.base = first
	if a.o.Log {
		a.log = newLogBuffer(first, a.o.LogEnv, a.o.Logf)
	}
}

// engineFeed feeds the metrics engine, which aggregates every metric for
// the summary and evaluates the thresholds. The engine is made once every
// metric a threshold names is declared (the output declares a custom
// metric with its first sample), at the latest when the whole output is
// read; the samples before wait for it in a spool.
type engineFeed struct {
	eng   *metrics.Engine
	err   error
	wait  spool
	batch []metrics.Sample
}

func (f *engineFeed) add(a *auditRun, s metrics.Sample) {
	if f.eng == nil && f.err == nil && a.thresholdsDeclared() {
		f.make(a)
	}
	switch {
	case f.err != nil:
	case f.eng == nil:
		f.wait.putSample(s)
		f.err = f.wait.err
	default:
		f.batch = append(f.batch, s)
		if len(f.batch) >= 4096 {
			f.eng.Ingest(f.batch)
			f.batch = f.batch[:0]
		}
	}
}

func (f *engineFeed) make(a *auditRun) {
	f.eng, f.err = metrics.NewEngine(a.reg, metrics.EngineOptions{
		Thresholds: a.o.Thresholds,
		Submetrics: append([]string{metrics.CorrectedLatencyName + "{" + summary.BackfilledTag + ":true}"}, executor.LatencyTrendSubmetrics(a.o.LatencyTrends)...),
	})
	if f.err != nil {
		f.err = fmt.Errorf("thresholds: %w", f.err)
		if missing := a.undeclared(); len(missing) > 0 {
			f.err = fmt.Errorf("%w (the output holds no sample of %s)", f.err, strings.Join(missing, ", "))
		}
		f.eng = nil
		return
	}
	if f.err = f.wait.rewind(); f.err != nil {
		f.eng = nil
		return
	}
	byID := map[int]*metrics.Metric{}
	for _, m := range a.reg.All() {
		byID[m.ID] = m
	}
	for range f.wait.n {
		s := f.wait.nextSample(byID)
		if f.err = f.wait.err; f.err != nil {
			f.eng = nil
			return
		}
		f.batch = append(f.batch, s)
		if len(f.batch) >= 4096 {
			f.eng.Ingest(f.batch)
			f.batch = f.batch[:0]
		}
	}
	f.wait.close()
}

// ready makes the engine if it is not made yet, once the whole output is
// read.
func (f *engineFeed) ready(a *auditRun) error {
	if f.eng == nil && f.err == nil {
		f.make(a)
	}
	return f.err
}

// finish hands the engine what is pending.
func (f *engineFeed) finish() *metrics.Engine {
	f.eng.Ingest(f.batch)
	f.batch = nil
	return f.eng
}

// thresholdsDeclared reports whether every metric the thresholds name is
// in the registry.
func (a *auditRun) thresholdsDeclared() bool { return len(a.undeclared()) == 0 }

// undeclared returns the metrics the thresholds name that are not in the
// registry, sorted; a malformed name counts as declared, so the engine
// reports it.
func (a *auditRun) undeclared() []string {
	var out []string
	for name := range a.o.Thresholds {
		parent, _, err := metrics.ParseSubmetric(name)
		if err == nil && a.reg.Get(parent) == nil {
			out = append(out, parent)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// logBuffer writes an HdrHistogram interval log into memory as samples in
// time order come.
type logBuffer struct {
	buf   bytes.Buffer
	w     *hdrlog.Writer
	batch []metrics.Sample
	err   error
}

func newLogBuffer(start time.Time, env map[string]string, logf func(string, ...any)) *logBuffer {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	l := &logBuffer{}
	l.w, l.err = hdrlog.NewWriter(&l.buf, start, env, logf)
	return l
}

func (l *logBuffer) add(s metrics.Sample) {
	if l.err != nil {
		return
	}
	l.batch = append(l.batch, s)
	if len(l.batch) >= 4096 {
		l.w.Add(l.batch)
		l.batch = l.batch[:0]
	}
}

// close writes what is open and returns the log.
func (l *logBuffer) close() ([]byte, error) {
	if l.err != nil {
		return nil, l.err
	}
	l.w.Add(l.batch)
	if err := l.w.Close(); err != nil {
		return nil, err
	}
	return l.buf.Bytes(), nil
}

// mergeLogs writes the interval logs a and b, each in time order and with
// the same header (the same start), as one log in time order: a's header,
// then the interval lines of both, a's first where they start together.
func mergeLogs(w io.Writer, a, b []byte) error {
	ah, al := splitLog(a)
	_, bl := splitLog(b)
	bw := bufio.NewWriter(w)
	for _, l := range ah {
		bw.WriteString(l)
	}
	for len(al) > 0 || len(bl) > 0 {
		var l string
		if len(bl) == 0 || (len(al) > 0 && intervalStart(al[0]) <= intervalStart(bl[0])) {
			l, al = al[0], al[1:]
		} else {
			l, bl = bl[0], bl[1:]
		}
		bw.WriteString(l)
	}
	return bw.Flush()
}

// splitLog splits a log into its header lines and its interval lines.
func splitLog(log []byte) (header, intervals []string) {
	for _, l := range strings.SplitAfter(string(log), "\n") {
		switch {
		case l == "":
		case strings.HasPrefix(l, "#") || strings.HasPrefix(l, `"`):
			header = append(header, l)
		default:
			intervals = append(intervals, l)
		}
	}
	return header, intervals
}

// intervalStart reads the start of an interval line: the field after its
// tag (which has its commas percent-encoded), or the first one.
func intervalStart(line string) float64 {
	if strings.HasPrefix(line, "Tag=") {
		_, line, _ = strings.Cut(line, ",")
	}
	field, _, _ := strings.Cut(line, ",")
	v, _ := strconv.ParseFloat(field, 64)
	return v
}

// rowKey identifies a Row: a source and a metric, per scenario, per
// request name, or for the names past the cap together (folded).
type rowKey struct {
	source, metric, scenario, name string
	folded                         bool
}

// foldedLabels are the folded rows' labels, as metronome merge labels
// the log's folded series.
const foldedLabels = "folded=true"

// maxFoldedNames bounds the names past the cap a rowSet remembers, to
// count them: past it the count is a lower bound (as in the log).
const maxFoldedNames = 1 << 16

// rowAgg is a Row being aggregated.
type rowAgg struct {
	row       Row
	sink      *metrics.TrendSink
	intervals map[int64]bool
}

// rowSet aggregates k6's raw durations and the rebuilt corrected_latency
// per scenario and per request name, with the estimator of the summary
// and of metronome merge, and counts the values over the bound exactly.
type rowSet struct {
	by    map[rowKey]*rowAgg
	bound float64 // milliseconds
	// base is where the intervals count from: the output's first sample,
	// as in the log.
	base time.Time
	// untagged names the scenario the samples without a scenario tag
	// belong to, "" when they belong to none (setup's, teardown's).
	untagged string
	// names are the request names with rows of their own: the first
	// metrics.MaxBreakdownValues, as in the summary and the log; the
	// samples of later names go to folded rows, and folded holds those
	// names (up to maxFoldedNames) to count them.
	names, folded map[string]bool
}

func newRowSet(bound time.Duration) rowSet {
	return rowSet{by: map[rowKey]*rowAgg{}, bound: metrics.Milliseconds(bound), names: map[string]bool{}, folded: map[string]bool{}}
}

// add files one sample of source.
func (rs *rowSet) add(source string, s metrics.Sample) {
	sc, _ := s.Tags.Get("scenario")
	rs.file(rowKey{source: source, metric: s.Metric.Name, scenario: sc}, s)
	name, ok := s.Tags.Get("name")
	switch {
	case !ok:
	case rs.names[name] || len(rs.names) < metrics.MaxBreakdownValues:
		rs.names[name] = true
		rs.file(rowKey{source: source, metric: s.Metric.Name, name: name}, s)
	default:
		if len(rs.folded) < maxFoldedNames {
			rs.folded[name] = true
		}
		rs.file(rowKey{source: source, metric: s.Metric.Name, folded: true}, s)
	}
}

// foldedNames says how many request names came past the cap, "" when
// none did.
func (rs *rowSet) foldedNames() string {
	n := len(rs.folded)
	if n == 0 {
		return ""
	}
	return hdrlog.FoldedNames(n, n == maxFoldedNames, metrics.MaxBreakdownValues)
}

func (rs *rowSet) file(k rowKey, s metrics.Sample) {
	r := rs.by[k]
	if r == nil {
		r = &rowAgg{row: Row{Summary: percentiles.Summary{Metric: k.metric}, Source: k.source, Reconstructed: k.source == SourceAudit},
			sink: metrics.NewTrendSink(), intervals: map[int64]bool{}}
		rs.by[k] = r
	}
	r.sink.AddValue(s.Value)
	if s.Value > rs.bound {
		r.row.OverBound++
	}
	r.intervals[rs.interval(s.Time)] = true
}

// interval returns the index of the interval t falls in. A sample from
// before the first (k6 writes its lines only roughly in time order) is
// the first interval's, as the log files it.
func (rs *rowSet) interval(t time.Time) int64 {
	return int64(max(t.Sub(rs.base), 0) / hdrlog.DefaultInterval)
}

// untaggedAre says that the samples without a scenario tag are the
// scenario's.
func (rs *rowSet) untaggedAre(scenario string) { rs.untagged = scenario }

// rows returns the Rows: scenarios in the order of names, then request
// names; within each, k6's row before the audit's.
func (rs *rowSet) rows(names []string) []Row {
	order := map[string]int{}
	for i, n := range names {
		order[n] = i
	}
	type keyed struct {
		k rowKey
		r Row
	}
	var out []keyed
	for k, agg := range rs.by {
		named := k.name != "" || k.folded
		if !named {
			if k.scenario == "" {
				k.scenario = rs.untagged
			}
			if _, ok := order[k.scenario]; !ok {
				continue
			}
		}
		r := agg.row
		t := agg.sink
		switch {
		case k.folded:
			r.Labels = foldedLabels
		case k.name != "":
			r.Labels = "name=" + k.name
		default:
			r.Labels = "scenario=" + k.scenario
		}
		r.Count, r.Min, r.Mean, r.Max = t.Count(), t.Min(), t.Avg(), t.Max()
		r.BoundMs = rs.bound
		r.Percentiles = map[string]float64{}
		for _, p := range percentiles.Table {
			r.Percentiles[percentiles.Name(p)] = t.Percentile(p)
		}
		ivs := slices.Sorted(maps.Keys(agg.intervals))
		r.Intervals = len(ivs)
		r.Start = rs.base.Add(time.Duration(ivs[0]) * hdrlog.DefaultInterval).UTC()
		r.End = rs.base.Add(time.Duration(ivs[len(ivs)-1]+1) * hdrlog.DefaultInterval).UTC()
		out = append(out, keyed{k, r})
	}
	// Scenarios first, then names, then the folded names.
	group := func(k rowKey) int {
		switch {
		case k.folded:
			return 2
		case k.name != "":
			return 1
		}
		return 0
	}
	slices.SortFunc(out, func(x, y keyed) int {
		gx, gy := group(x.k), group(y.k)
		switch {
		case gx != gy:
			return cmp.Compare(gx, gy)
		case gx == 0:
			if c := cmp.Compare(order[x.k.scenario], order[y.k.scenario]); c != 0 {
				return c
			}
		default:
			if c := cmp.Compare(x.k.name, y.k.name); c != 0 {
				return c
			}
		}
		// "k6" before "audit", then by metric.
		return cmp.Or(cmp.Compare(y.k.source, x.k.source), cmp.Compare(x.k.metric, y.k.metric))
	})
	rows := make([]Row, len(out))
	for i, o := range out {
		rows[i] = o.r
	}
	return rows
}
