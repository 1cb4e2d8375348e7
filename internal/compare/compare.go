// Package compare judges whether a run is slower than a baseline run: per
// metric and tag set (each scenario, each request name), the percentiles
// of both runs, their difference and an interval for it, and a verdict on
// one chosen percentile by a fixed rule: worse by more than a tolerance,
// with the interval wholly above zero. It reads the runs' HdrHistogram
// interval logs or result files (ReadFile) and knows nothing of how they
// were measured.
//
// The interval is that of a two-sample bootstrap test over intervals of
// time. Both runs' intervals are pooled, as if one server had produced
// them; a replicate draws a run of each length from the pool, in blocks
// of about the cube root of its number of intervals, merges their
// histograms and reads the percentile, and the difference of the two is
// one draw of how far apart two runs of one server can be. The interval is
// the observed difference less the central Confidence share of Resamples
// such draws: it holds zero unless the observation is beyond the runs'
// own noise. Intervals, not requests, are drawn because requests are not
// independent: a stall or a pause slows every request of a second or
// more, and drawing requests one by one would scatter it and understate
// how far one run can drift from the next; blocks of several intervals
// keep stalls that span intervals whole. Pooling makes the rule honest
// where a percentile rests on a few rare events that one run happened to
// have and the other not, which a bootstrap of each run alone cannot see.
package compare

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output/hdrlog"
)

// Percentiles are the percentiles compare reports; the judged one is added
// when it is not among them.
var Percentiles = []float64{50, 90, 99, 99.9}

// Options are the rule and how it is computed.
type Options struct {
	// Metric is the judged metric: "corrected" (corrected_latency), "raw"
	// (the requests' own duration: http_req_duration, else
	// grpc_req_duration or ws_connecting) or a trend's name.
	Metric string
	// Tags selects the judged row: "" for all of the metric's samples,
	// "scenario=NAME" or "name=NAME" for one scenario's or request name's.
	Tags string
	// Percentile is the judged percentile, Tolerance (in percent) how much
	// worse than the baseline it may be.
	Percentile, Tolerance float64
	// Confidence (in percent) is the intervals' coverage; Resamples the
	// bootstrap's replicates; Seed seeds them, so that a comparison gives
	// the same intervals every time.
	Confidence float64
	Resamples  int
	Seed       uint64
	// Done, if not nil, stops the bootstrap once closed (a signal came):
	// Compare then returns ErrStopped.
	Done <-chan struct{}
}

// ErrStopped is Compare's error when Options.Done closed before it ended.
var ErrStopped = errors.New("stopped before the comparison ended")

// DefaultOptions are the defaults of `metronome compare`.
var DefaultOptions = Options{Metric: "corrected", Percentile: 99, Tolerance: 5, Confidence: 95, Resamples: 1000, Seed: 1}

// Report is a comparison of two runs.
type Report struct {
	Base, New RunInfo
	Options   Options
	// Percentiles are the percentiles of every row's Diffs.
	Percentiles []float64
	Rows        []Row
	Verdict     Verdict

	runs [2]*Run
}

// RunInfo describes one compared run.
type RunInfo struct {
	File, Kind string
	// Intervals counts the run's intervals; Start and End bound them.
	Intervals  int
	Start, End int64 // Unix milliseconds
}

// Row compares one metric's samples of one tag set.
type Row struct {
	Metric string
	// Labels is "" for all the metric's samples, else "scenario=NAME" or
	// "name=NAME".
	Labels string
	// Count and Intervals are each run's samples and the intervals that
	// hold some; Block is the bootstrap's block length, in intervals.
	Count, Intervals [2]int64
	Block            int64
	Diffs            []Diff
	Judged           bool
	// Time reports whether the values are times, in milliseconds.
	Time bool
}

// Diff is one percentile of both runs (in milliseconds for time metrics:
// trend values), the new run's minus the base's, relative to the base, and
// the confidence interval of the difference. Values are NaN where a run
// has no sample.
type Diff struct {
	Percentile          float64
	Base, New, Diff     float64
	Relative, Low, High float64
}

// Verdict is the rule's answer: Regression when the judged percentile is
// worse than the baseline by more than the tolerance and its interval lies
// wholly above zero.
type Verdict struct {
	Metric, Labels string
	Diff
	Regression bool
	// Reason says why, in a sentence.
	Reason string
}

// Compare compares run b (the baseline) with run n.
func Compare(b, n *Run, o Options) (*Report, error) {
	if o.Resamples < 1 {
		return nil, fmt.Errorf("--resamples must be at least 1, got %d", o.Resamples)
	}
	if !(o.Confidence > 0 && o.Confidence < 100) {
		return nil, fmt.Errorf("--confidence must be between 0 and 100 (a percentage), got %v", o.Confidence)
	}
	if !(o.Percentile > 0 && o.Percentile < 100) {
		return nil, fmt.Errorf("--percentile must be between 0 and 100, got %v", o.Percentile)
	}
	if !(o.Tolerance >= 0) {
		return nil, fmt.Errorf("--tolerance must be a percentage of at least 0, got %v", o.Tolerance)
	}
	judged, err := resolveMetric(o.Metric, b, n)
	if err != nil {
		return nil, err
	}
	rep := &Report{Base: infoOf(b), New: infoOf(n), Options: o, Percentiles: slices.Clone(Percentiles), runs: [2]*Run{b, n}}
	if !slices.Contains(rep.Percentiles, o.Percentile) {
		rep.Percentiles = append(rep.Percentiles, o.Percentile)
		slices.Sort(rep.Percentiles)
	}
	// The judged metric, corrected_latency and the first raw metric
	// present, as the summary's endpoint table.
	shown := []string{judged}
	show := func(m string) {
		if !slices.Contains(shown, m) {
			shown = append(shown, m)
		}
	}
	if has(b, metrics.CorrectedLatencyName) || has(n, metrics.CorrectedLatencyName) {
		show(metrics.CorrectedLatencyName)
	}
	for _, m := range hdrlog.RawMetrics {
		if has(b, m) || has(n, m) {
			show(m)
			break
		}
	}
	found := false
	for _, m := range shown {
		for _, g := range groupsOf(m, b, n, o.Tags) {
			row := compareGroup(m, g, b, n, rep.Percentiles, o)
			if stopped(o.Done) {
				return nil, ErrStopped
			}
			if m == judged && g.labels == o.Tags {
				row.Judged, found = true, true
				rep.Verdict = verdictOf(row, o)
			}
			rep.Rows = append(rep.Rows, row)
		}
	}
	if !found {
		var labels []string
		for _, g := range groupsOf(judged, b, n, "*") {
			if g.labels != "" {
				labels = append(labels, g.labels)
			}
		}
		return nil, fmt.Errorf("--tags %s: no such tag set of %s; there are %s", o.Tags, judged, orNone(labels))
	}
	return rep, nil
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none (only all of its samples)"
	}
	return strings.Join(xs, ", ")
}

func infoOf(r *Run) RunInfo {
	return RunInfo{File: r.File, Kind: r.Kind, Intervals: len(r.Starts),
		Start: r.Starts[0].UnixMilli(), End: r.End.UnixMilli()}
}

// resolveMetric names the judged metric.
func resolveMetric(m string, b, n *Run) (string, error) {
	switch m {
	case "corrected":
		m = metrics.CorrectedLatencyName
	case "raw":
		for _, raw := range hdrlog.RawMetrics {
			if has(b, raw) && has(n, raw) {
				return raw, nil
			}
		}
		return "", fmt.Errorf("--metric raw: the runs do not both hold %s", strings.Join(hdrlog.RawMetrics, ", "))
	}
	for _, r := range []*Run{b, n} {
		if !has(r, m) {
			return "", fmt.Errorf("--metric %s: %s holds no %s; it holds %s", m, r.File, m, strings.Join(metricsOf(r), ", "))
		}
	}
	return m, nil
}

func has(r *Run, metric string) bool {
	return slices.ContainsFunc(r.Series, func(s *Series) bool { return s.Metric == metric })
}

func metricsOf(r *Run) []string {
	var out []string
	for _, s := range r.Series {
		if !slices.Contains(out, s.Metric) {
			out = append(out, s.Metric)
		}
	}
	slices.Sort(out)
	return out
}

// group is the series of one row in each run.
type group struct {
	labels string
	series [2][]*Series
}

// groupsOf returns the rows of metric: all its samples, each scenario's
// and each request name's, leaving out those that hold all the samples
// unless want names them (or is "*").
func groupsOf(metric string, b, n *Run, want string) []group {
	all := group{}
	byScenario := map[string]*group{}
	byName := map[string]*group{}
	for i, r := range []*Run{b, n} {
		for _, s := range r.Series {
			if s.Metric != metric {
				continue
			}
			all.series[i] = append(all.series[i], s)
			add(byScenario, "scenario="+s.Scenario, i, s)
			if s.Folded {
				add(byName, "name="+FoldedName, i, s)
			} else if s.Name != "" {
				add(byName, "name="+s.Name, i, s)
			}
		}
	}
	out := []group{all}
	for _, g := range append(sorted(byScenario), sorted(byName)...) {
		// A tag set that holds every sample repeats the first row.
		if want == "*" || g.labels == want || !g.same(all) {
			out = append(out, g)
		}
	}
	return out
}

// same reports whether g and o hold the same series.
func (g group) same(o group) bool {
	return slices.Equal(g.series[0], o.series[0]) && slices.Equal(g.series[1], o.series[1])
}

// FoldedName stands for the names an hdrlog logged together past its cap.
const FoldedName = "(folded)"

func add(m map[string]*group, labels string, i int, s *Series) {
	g := m[labels]
	if g == nil {
		g = &group{labels: labels}
		m[labels] = g
	}
	g.series[i] = append(g.series[i], s)
}

func sorted(m map[string]*group) []group {
	out := make([]group, 0, len(m))
	for _, g := range m {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b group) int { return cmp.Compare(a.labels, b.labels) })
	return out
}

// stopped reports whether done is closed.
func stopped(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// compareGroup computes one row: the percentiles of both runs, and each
// difference's interval.
func compareGroup(metric string, g group, b, n *Run, ps []float64, o Options) Row {
	row := Row{Metric: metric, Labels: g.labels, Time: !b.untimed[metric] && !n.untimed[metric]}
	d := newDictionary(g.series[0], g.series[1])
	samples := [2]*sample{sampleOf(b, g.series[0], d), sampleOf(n, g.series[1], d)}
	counts := make([]int64, len(d.mids))
	var point [2][]float64
	for i, s := range samples {
		point[i] = make([]float64, len(ps))
		d.percentiles(counts, s.all(counts), ps, point[i])
		row.Count[i] = s.count
		row.Intervals[i] = int64(s.populated())
	}
	null := make([][]float64, len(ps))
	if row.Count[0] > 0 && row.Count[1] > 0 {
		pool := newPooled(samples[0], samples[1])
		row.Block = int64(pool.l)
		rng := rand.New(rand.NewPCG(o.Seed, seedOf(metric, g.labels)))
		var rep [2][]float64
		rep[0], rep[1] = make([]float64, len(ps)), make([]float64, len(ps))
		for range o.Resamples {
			if stopped(o.Done) {
				break
			}
			for i, s := range samples {
				d.percentiles(counts, pool.resample(rng, len(s.intervals), counts), ps, rep[i])
			}
			for j := range ps {
				// A replicate that drew only empty intervals has no value.
				if x := rep[1][j] - rep[0][j]; !math.IsNaN(x) {
					null[j] = append(null[j], x)
				}
			}
		}
	}
	alpha := 1 - o.Confidence/100
	for j, p := range ps {
		df := Diff{Percentile: p, Base: point[0][j], New: point[1][j], Diff: point[1][j] - point[0][j],
			Low: math.NaN(), High: math.NaN()}
		df.Relative = df.Diff / df.Base
		if len(null[j]) > 0 {
			// The observed difference less the differences two runs of
			// one server show: the interval holds zero unless the
			// observation is beyond what the pooled runs' noise makes.
			slices.Sort(null[j])
			df.Low, df.High = df.Diff-quantile(null[j], 1-alpha/2), df.Diff-quantile(null[j], alpha/2)
		}
		row.Diffs = append(row.Diffs, df)
	}
	return row
}

// seedOf gives each row a stream of its own, so that a row's interval
// does not depend on which other rows were compared.
func seedOf(metric, labels string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(metric))
	h.Write([]byte{0})
	h.Write([]byte(labels))
	return binary.LittleEndian.Uint64(h.Sum(nil))
}

// verdictOf applies the rule to the judged row.
func verdictOf(row Row, o Options) Verdict {
	v := Verdict{Metric: row.Metric, Labels: row.Labels}
	for _, d := range row.Diffs {
		if d.Percentile == o.Percentile {
			v.Diff = d
		}
	}
	what := fmt.Sprintf("%s p%s", row.Metric, trimFloat(o.Percentile))
	switch {
	case row.Count[0] == 0 || row.Count[1] == 0:
		v.Reason = fmt.Sprintf("%s: a run has no sample, so there is nothing to judge", what)
	case v.Relative <= 0:
		v.Reason = fmt.Sprintf("%s is %s, no worse than the base's", what, percent(v.Relative))
	case v.Relative*100 <= o.Tolerance:
		v.Reason = fmt.Sprintf("%s is %s worse, within the %s%% tolerance", what, percent(v.Relative), trimFloat(o.Tolerance))
	case !(v.Low > 0):
		v.Reason = fmt.Sprintf("%s is %s worse, beyond the %s%% tolerance, but its %s%% interval reaches %s: the runs' own noise could explain it",
			what, percent(v.Relative), trimFloat(o.Tolerance), trimFloat(o.Confidence), signed(v.Low, row.Time))
	default:
		v.Regression = true
		v.Reason = fmt.Sprintf("%s is %s worse, beyond the %s%% tolerance, and its %s%% interval lies above zero",
			what, percent(v.Relative), trimFloat(o.Tolerance), trimFloat(o.Confidence))
	}
	return v
}
