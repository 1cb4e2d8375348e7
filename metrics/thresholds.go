package metrics

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"
)

// ThresholdDef is one threshold as the options define it.
type ThresholdDef struct {
	// Source is the expression, "p(95)<200".
	Source string
	// AbortOnFail stops the test as soon as the threshold fails during
	// the run, once DelayAbortEval of test time has passed.
	AbortOnFail    bool
	DelayAbortEval time.Duration
	// Window, when not 0, judges the threshold on every window of this
	// length (see WindowStep) instead of on the whole run: it fails when
	// one window fails, and AbortOnFail acts on the first failing window
	// that ends at or after DelayAbortEval.
	Window time.Duration
}

// Thresholds are the validated thresholds of a run, with the result of
// their last evaluation. NewEngine makes its own from
// EngineOptions.Thresholds; NewThresholds alone validates them.
type Thresholds struct {
	sets []*thresholdSet // sorted by key
}

// thresholdSet holds the thresholds written under one key of
// options.thresholds.
type thresholdSet struct {
	key      string // as written
	name     string // metric or submetric name, as ObservedMetric.Name
	metric   *Metric
	selector *TagSet // nil for the metric itself
	items    []*threshold
	// wins judge the windowed thresholds among items, one per window
	// length.
	wins []*windowState
}

type threshold struct {
	def  ThresholdDef
	expr *ThresholdExpr
	last ThresholdResult
}

// NewThresholds validates defs, keyed by metric or submetric name as in
// options.thresholds, against the metrics defined in reg. Every problem is
// reported, one sentence each, naming the option path.
func NewThresholds(reg *Registry, defs map[string][]ThresholdDef) (*Thresholds, error) {
	keys := make([]string, 0, len(defs))
	for k := range defs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t := &Thresholds{}
	var errs []error
	for _, key := range keys {
		path := "thresholds." + key
		parent, sel, name, err := parseSubmetric(key)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
			continue
		}
		m := reg.Get(parent)
		if m == nil {
			errs = append(errs, fmt.Errorf("%s: metric %q is not defined", path, parent))
			continue
		}
		set := &thresholdSet{key: key, name: name, metric: m, selector: sel}
		for _, d := range defs[key] {
			e, err := ParseThreshold(d.Source)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", path, err))
				continue
			}
			if !e.Agg.ValidFor(m.Type) {
				errs = append(errs, fmt.Errorf("%s: %q is not valid for a %s metric; use %s",
					path, e.AggName(), m.Type, aggregationsFor(m.Type)))
				continue
			}
			if d.DelayAbortEval < 0 {
				errs = append(errs, fmt.Errorf("%s: delayAbortEval of %q must not be negative", path, d.Source))
				continue
			}
			if d.Window != 0 && d.Window < MinWindow {
				errs = append(errs, fmt.Errorf("%s: the window of %q must be at least %s, got %s", path, d.Source, MinWindow, d.Window))
				continue
			}
			th := &threshold{def: d, expr: e}
			th.last = ThresholdResult{Source: d.Source, AbortOnFail: d.AbortOnFail, DelayAbortEval: d.DelayAbortEval, OK: true}
			set.items = append(set.items, th)
			if d.Window != 0 {
				ws := set.window(d.Window)
				ws.items = append(ws.items, th)
				th.last.Window = ws.window
			}
		}
		t.sets = append(t.sets, set)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return t, nil
}

// window returns the set's windowState of windows of length w.
func (set *thresholdSet) window(w time.Duration) *windowState {
	for _, ws := range set.wins {
		if ws.asked == w {
			return ws
		}
	}
	ws := newWindowState(set.metric.Type, w)
	set.wins = append(set.wins, ws)
	return ws
}

// Len returns the number of thresholds.
func (t *Thresholds) Len() int {
	if t == nil {
		return 0
	}
	n := 0
	for _, s := range t.sets {
		n += len(s.items)
	}
	return n
}

// ThresholdReport is the outcome of one evaluation of every threshold.
type ThresholdReport struct {
	// Metrics lists, per key of options.thresholds, its thresholds, in
	// registry order with a metric's own thresholds before those of its
	// submetrics.
	Metrics []MetricThresholds

	failed, abort bool
}

// Failed reports whether any threshold is failing as of its last
// evaluation.
func (r *ThresholdReport) Failed() bool { return r.failed }

// Abort reports whether this evaluation found an abortOnFail threshold
// failing once its delayAbortEval had passed. Only evaluations during the
// run should act on it.
func (r *ThresholdReport) Abort() bool { return r.abort }

// FailedMetrics returns the names of the metrics and submetrics with a
// failing threshold, each once, in report order, for "thresholds on
// metrics ... have been crossed".
func (r *ThresholdReport) FailedMetrics() []string {
	var names []string
	for _, m := range r.Metrics {
		if m.Tainted && !slices.Contains(names, m.Name) {
			names = append(names, m.Name)
		}
	}
	return names
}

// Results returns the thresholds of the metric or submetric with the
// name name (ObservedMetric.Name), under every key that names it.
func (r *ThresholdReport) Results(name string) []ThresholdResult {
	var res []ThresholdResult
	for _, m := range r.Metrics {
		if m.Name == name {
			res = append(res, m.Thresholds...)
		}
	}
	return res
}

// MetricThresholds are the thresholds written under one key.
type MetricThresholds struct {
	// Key is the name as written in options.thresholds.
	Key string
	// Name is the metric or submetric name, as in ObservedMetric.Name.
	Name     string
	Metric   *Metric
	Selector *TagSet
	// Tainted reports whether one of these thresholds is failing.
	Tainted    bool
	Thresholds []ThresholdResult
}

// ThresholdResult is the state of one threshold.
type ThresholdResult struct {
	Source         string
	AbortOnFail    bool
	DelayAbortEval time.Duration
	// OK is false when the last evaluation found the threshold failing.
	// A threshold that was never evaluated is OK.
	OK bool
	// Evaluated reports whether the last evaluation that produced this
	// result looked at the threshold; during the run thresholds on empty
	// sinks are skipped and keep their earlier result.
	Evaluated bool
	// Value is the aggregated value that was compared, 0 when the sink
	// had none (an empty Rate, a Counter's rate before any time passed);
	// such a threshold passes. For a windowed threshold it is the value
	// of the Worst window.
	Value float64

	// Window is the length of the windows of a windowed threshold, 0 for
	// one judged on the whole run; the fields below are a windowed
	// threshold's.
	Window time.Duration
	// Windows counts the windows judged so far, FailedWindows those that
	// failed.
	Windows, FailedWindows int
	// Failing are the stretches of the run the failing windows cover,
	// overlapping ones joined, in order.
	Failing []WindowSpan
	// Worst is the window whose value is furthest on the failing side of
	// the bound (for == and !=, the first failing window).
	Worst WindowSpan
	// Late counts samples that reached the engine after every window
	// holding them had been judged (WindowGrace): they are in no window.
	Late int64
}

// evaluate runs the thresholds of set against sink and appends the results
// to rep. It reports whether the set is failing.
func (set *thresholdSet) evaluate(sink Sink, elapsed time.Duration, final bool, rep *ThresholdReport) bool {
	mt := MetricThresholds{Key: set.key, Name: set.name, Metric: set.metric, Selector: set.selector}
	run := final || !sink.IsEmpty()
	for _, ws := range set.wins {
		ws.advance(elapsed, final, rep)
		for _, th := range ws.items {
			th.last.Late = ws.late
		}
	}
	for _, th := range set.items {
		// Windowed thresholds were judged window by window above.
		if run && th.def.Window == 0 {
			v, ok := aggregate(sink, th.expr, elapsed)
			th.last.Evaluated = true
			th.last.Value = v
			th.last.OK = !ok || th.expr.Holds(v)
			if !th.last.OK && th.def.AbortOnFail && elapsed >= th.def.DelayAbortEval {
				rep.abort = true
			}
		}
		if !th.last.OK {
			mt.Tainted = true
			rep.failed = true
		}
		mt.Thresholds = append(mt.Thresholds, th.result())
	}
	rep.Metrics = append(rep.Metrics, mt)
	return mt.Tainted
}

// result is a copy of the threshold's last result that later judgements
// leave alone.
func (th *threshold) result() ThresholdResult {
	r := th.last
	r.Failing = slices.Clone(r.Failing)
	return r
}

// Aggregate computes e's aggregation over sink as a threshold does, a
// Counter's rate per second of elapsed; ok is false when the sink has no
// such value (an empty Rate, another metric type's aggregation).
func (e *ThresholdExpr) Aggregate(sink Sink, elapsed time.Duration) (v float64, ok bool) {
	return aggregate(sink, e, elapsed)
}

// aggregate computes e's aggregation over sink; ok is false when the sink
// has no such value, which makes the threshold pass.
func aggregate(sink Sink, e *ThresholdExpr, elapsed time.Duration) (v float64, ok bool) {
	switch s := sink.(type) {
	case *CounterSink:
		if e.Agg == AggCount {
			return s.Sum, true
		}
		if elapsed <= 0 {
			return 0, false
		}
		return s.Rate(elapsed), true
	case *GaugeSink:
		return s.Value, true
	case *RateSink:
		if s.Total == 0 {
			return 0, false
		}
		return s.Rate(), true
	case *TrendSink:
		switch e.Agg {
		case AggAvg:
			return s.Avg(), true
		case AggMin:
			return s.Min(), true
		case AggMax:
			return s.Max(), true
		case AggMed:
			return s.Med(), true
		case AggPercentile:
			return s.Percentile(e.Percentile), true
		}
	}
	return 0, false
}
