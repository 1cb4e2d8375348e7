package metrics

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// maxTagCache bounds each per-tag-set cache of the engine. A cache that
// reaches it is cleared and refilled, which only costs a recomputation, so
// a test with unbounded tag cardinality (a URL per request) keeps bounded
// memory.
const maxTagCache = 1 << 16

// ExpectedResponseSubmetric is the submetric the engine creates when the
// expected_response system tag is enabled, so that the summary shows the
// durations of the expected responses.
const ExpectedResponseSubmetric = HTTPReqDurationName + "{expected_response:true}"

// EngineOptions configure an Engine.
type EngineOptions struct {
	// Thresholds to evaluate, keyed by metric or submetric name as in
	// options.thresholds (see NewThresholds); nil for none.
	Thresholds map[string][]ThresholdDef
	// Submetrics to aggregate besides those of the thresholds, as
	// "metric{tag:value,...}".
	Submetrics []string
	// ExpectedResponseSubmetric creates ExpectedResponseSubmetric; set it
	// when the expected_response system tag is enabled.
	ExpectedResponseSubmetric bool
	// Breakdowns are the metrics to aggregate per value of a tag too (see
	// Breakdown); a metric has at most one.
	Breakdowns []Breakdown
}

// Engine aggregates the samples of a run: one sink per metric that got a
// sample, one per submetric, the tally of checks and the groups seen. It is
// safe for concurrent use; Ingest takes its lock once per batch.
type Engine struct {
	reg *Registry

	mu     sync.Mutex
	states []*metricState // by Metric.ID

	checks     []CheckTally
	checkByKey map[checkKey]int
	checkByTag map[*TagSet]int

	groups      []string
	groupSeen   map[string]bool
	groupByTags map[*TagSet]bool

	// breakdowns maps a metric's name to the tag it is broken down by.
	breakdowns map[string]string

	// origin is the run's start, from which windows are counted; zero
	// until SetStart.
	origin time.Time
}

type checkKey struct{ group, name string }

// metricRole marks the built-ins whose samples feed the checks and groups.
type metricRole uint8

const (
	roleNone metricRole = iota
	roleChecks
	roleGroupDuration
)

type metricState struct {
	metric   *Metric
	sink     Sink
	observed bool
	role     metricRole
	tainted  bool
	sets     []*thresholdSet
	// wins are the windows of the sets' windowed thresholds, fed every
	// sample.
	wins []*windowState

	subs []*subState
	// by is the metric's breakdown, nil when it has none.
	by *breakdownState
	// matches caches, per interned tag set, the submetrics whose selector
	// the set contains; last is a one-entry cache in front of it.
	matches   map[*TagSet][]*subState
	lastTags  *TagSet
	lastMatch []*subState
}

type subState struct {
	name     string
	selector *TagSet
	sink     Sink
	observed bool
	tainted  bool
	sets     []*thresholdSet
	wins     []*windowState
}

// NewEngine returns an engine for the metrics of reg with the submetrics
// and thresholds of opts.
func NewEngine(reg *Registry, opts EngineOptions) (*Engine, error) {
	e := &Engine{
		reg:         reg,
		checkByKey:  make(map[checkKey]int),
		checkByTag:  make(map[*TagSet]int),
		groupSeen:   make(map[string]bool),
		groupByTags: make(map[*TagSet]bool),
	}
	if len(opts.Breakdowns) > 0 {
		e.breakdowns = make(map[string]string, len(opts.Breakdowns))
		for _, b := range opts.Breakdowns {
			e.breakdowns[b.Metric] = b.Tag
		}
	}
	if opts.ExpectedResponseSubmetric && reg.Get(HTTPReqDurationName) != nil {
		if _, err := e.addSubmetric(ExpectedResponseSubmetric); err != nil {
			return nil, err
		}
	}
	var errs []error
	for _, name := range opts.Submetrics {
		if _, err := e.addSubmetric(name); err != nil {
			errs = append(errs, err)
		}
	}
	th, err := NewThresholds(reg, opts.Thresholds)
	if err != nil {
		errs = append(errs, err)
	} else {
		for _, set := range th.sets {
			st := e.state(set.metric)
			// A metric with thresholds is observed even without samples,
			// and so is the parent of a submetric with thresholds.
			st.observed = true
			if set.selector == nil {
				st.sets = append(st.sets, set)
				st.wins = append(st.wins, set.wins...)
				continue
			}
			// Keys that select the same tags share one submetric, named
			// by the first key in sorted order.
			sub := st.sub(set.selector, set.name)
			set.name = sub.name
			sub.observed = true
			sub.sets = append(sub.sets, set)
			sub.wins = append(sub.wins, set.wins...)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return e, nil
}

// addSubmetric creates the submetric named name unless it exists.
func (e *Engine) addSubmetric(name string) (*subState, error) {
	parent, sel, display, err := parseSubmetric(name)
	if err != nil {
		return nil, fmt.Errorf("submetric %q: %w", name, err)
	}
	if sel == nil {
		return nil, fmt.Errorf("submetric %q has no {tag:value} selector", name)
	}
	m := e.reg.Get(parent)
	if m == nil {
		return nil, fmt.Errorf("submetric %q: metric %q is not defined", name, parent)
	}
	return e.state(m).sub(sel, display), nil
}

// state returns the state of m, creating it on m's first sample. It returns
// nil for a metric of another registry. Callers hold e.mu or own e
// exclusively.
func (e *Engine) state(m *Metric) *metricState {
	if m.ID < len(e.states) {
		if st := e.states[m.ID]; st != nil && st.metric == m {
			return st
		}
	}
	if m.ID < 0 || e.reg.Get(m.Name) != m {
		return nil
	}
	for m.ID >= len(e.states) {
		e.states = append(e.states, nil)
	}
	st := &metricState{metric: m, sink: NewSink(m.Type)}
	if tag, ok := e.breakdowns[m.Name]; ok {
		st.by = newBreakdownState(tag, m.Type)
	}
	switch {
	case m.Name == ChecksName && m.Type == Rate:
		st.role = roleChecks
	case m.Name == GroupDurationName && m.Type == Trend:
		st.role = roleGroupDuration
	}
	e.states[m.ID] = st
	return st
}

// sub returns the submetric of st with selector sel, creating it as name.
func (st *metricState) sub(sel *TagSet, name string) *subState {
	for _, s := range st.subs {
		if s.selector == sel {
			return s
		}
	}
	s := &subState{name: name, selector: sel, sink: NewSink(st.metric.Type)}
	st.subs = append(st.subs, s)
	st.matches, st.lastTags, st.lastMatch = nil, nil, nil
	return s
}

// match returns the submetrics of st that tags belong to.
func (st *metricState) match(tags *TagSet) []*subState {
	if tags == st.lastTags {
		return st.lastMatch
	}
	m, ok := st.matches[tags]
	if !ok {
		for _, s := range st.subs {
			if tags.Contains(s.selector) {
				m = append(m, s)
			}
		}
		if st.matches == nil || len(st.matches) >= maxTagCache {
			st.matches = make(map[*TagSet][]*subState)
		}
		st.matches[tags] = m
	}
	st.lastTags, st.lastMatch = tags, m
	return m
}

// Ingest aggregates a batch of samples. It does not keep batch. Samples of
// metrics from another registry are ignored.
func (e *Engine) Ingest(batch []Sample) {
	if len(batch) == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range batch {
		s := &batch[i]
		if s.Metric == nil {
			continue
		}
		st := e.state(s.Metric)
		if st == nil {
			continue
		}
		st.sink.Add(*s)
		st.observed = true
		for _, w := range st.wins {
			w.add(s, e.origin)
		}
		tags := s.Tags
		if tags == nil {
			tags = EmptyTags
		}
		seeSeries(s.Metric, tags)
		if st.subs == nil && st.role == roleNone && st.by == nil {
			continue
		}
		if st.by != nil {
			st.by.add(s, tags)
		}
		for _, sub := range st.match(tags) {
			sub.sink.Add(*s)
			sub.observed = true
			for _, w := range sub.wins {
				w.add(s, e.origin)
			}
		}
		switch st.role {
		case roleChecks:
			if s.Value != 0 {
				e.countCheck(tags, 1, 0)
			} else {
				e.countCheck(tags, 0, 1)
			}
		case roleGroupDuration:
			e.seeGroupTags(tags)
		}
	}
}

// IngestSink aggregates src, the aggregate of samples of m that all
// carried tags (one series of a result file), as Ingest aggregates those
// samples: into m's sink, its breakdown, the submetrics whose selector
// tags contain, and the checks and groups. src must be a sink of m's type;
// the engine does not keep it. It reports whether m belongs to the
// engine's registry and src to m's type.
func (e *Engine) IngestSink(m *Metric, tags *TagSet, src Sink) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.state(m)
	if st == nil || !MergeSink(st.sink, src) {
		return false
	}
	if src.IsEmpty() {
		return true
	}
	st.observed = true
	if tags == nil {
		tags = EmptyTags
	}
	if st.by != nil {
		st.by.addSink(src, tags)
	}
	for _, sub := range st.match(tags) {
		MergeSink(sub.sink, src)
		sub.observed = true
	}
	switch st.role {
	case roleChecks:
		if r, ok := src.(*RateSink); ok {
			e.countCheck(tags, r.Trues, r.Total-r.Trues)
		}
	case roleGroupDuration:
		e.seeGroupTags(tags)
	}
	return true
}

// countCheck adds passes and fails to the tally of the check tags name.
func (e *Engine) countCheck(tags *TagSet, passes, fails int64) {
	i, ok := e.checkByTag[tags]
	if !ok {
		group, _ := tags.Get("group")
		name, _ := tags.Get("check")
		k := checkKey{group, name}
		if i, ok = e.checkByKey[k]; !ok {
			i = len(e.checks)
			e.checks = append(e.checks, CheckTally{Group: group, Name: name})
			e.checkByKey[k] = i
			e.seeGroup(group)
		}
		if len(e.checkByTag) >= maxTagCache {
			clear(e.checkByTag)
		}
		e.checkByTag[tags] = i
	}
	e.checks[i].Passes += passes
	e.checks[i].Fails += fails
}

func (e *Engine) seeGroupTags(tags *TagSet) {
	if e.groupByTags[tags] {
		return
	}
	if len(e.groupByTags) >= maxTagCache {
		clear(e.groupByTags)
	}
	e.groupByTags[tags] = true
	group, _ := tags.Get("group")
	e.seeGroup(group)
}

// seeGroup records a group path and, before it, its ancestors.
func (e *Engine) seeGroup(path string) {
	if path == "" || e.groupSeen[path] {
		return
	}
	for i := 2; i < len(path); i++ {
		if strings.HasPrefix(path[i:], "::") {
			if anc := path[:i]; !e.groupSeen[anc] {
				e.groupSeen[anc] = true
				e.groups = append(e.groups, anc)
			}
		}
	}
	e.groupSeen[path] = true
	e.groups = append(e.groups, path)
}

// CheckTally counts the passes and fails of one check in one group.
type CheckTally struct {
	// Group is the check's group path, "" at the root, "::a::b" nested.
	Group         string
	Name          string
	Passes, Fails int64
}

// Checks returns the tally of every check seen, in order of first
// appearance.
func (e *Engine) Checks() []CheckTally {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]CheckTally(nil), e.checks...)
}

// Groups returns the paths of the groups seen in checks and group_duration
// samples ("::a", "::a::b"), in order of first appearance, each after its
// ancestors. The root group "" is not listed.
func (e *Engine) Groups() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.groups...)
}

// ObservedMetric is a metric or submetric that got a sample or has
// thresholds.
type ObservedMetric struct {
	// Name is the metric's name or, for a submetric, its name as first
	// written, "metric{tag:value, ...}".
	Name   string
	Metric *Metric
	// Sink is a copy, safe to read while the engine goes on.
	Sink Sink
	// Parent is the metric's name for a submetric, "" for a metric.
	Parent string
	// Selector is the submetric's selector, nil for a metric.
	Selector *TagSet
	// Tainted reports whether one of its thresholds is failing.
	Tainted bool
	// Thresholds are the last results of its thresholds, under every key
	// that names it.
	Thresholds []ThresholdResult
}

// Observed returns the observed metrics in registry order, each metric's
// submetrics right after it, in the order they were created.
func (e *Engine) Observed() []ObservedMetric {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []ObservedMetric
	for _, st := range e.states {
		if st == nil {
			continue
		}
		if st.observed {
			out = append(out, ObservedMetric{
				Name: st.metric.Name, Metric: st.metric, Sink: CloneSink(st.sink),
				Tainted: st.tainted, Thresholds: results(st.sets),
			})
		}
		for _, sub := range st.subs {
			if !sub.observed {
				continue
			}
			out = append(out, ObservedMetric{
				Name: sub.name, Metric: st.metric, Sink: CloneSink(sub.sink),
				Parent: st.metric.Name, Selector: sub.selector,
				Tainted: sub.tainted, Thresholds: results(sub.sets),
			})
		}
	}
	return out
}

func results(sets []*thresholdSet) []ThresholdResult {
	var r []ThresholdResult
	for _, set := range sets {
		for _, th := range set.items {
			r = append(r, th.result())
		}
	}
	return r
}

// Sink returns a copy of the sink of a metric or submetric
// ("metric{tag:value}"), or nil when the engine has none.
func (e *Engine) Sink(name string) Sink {
	parent, sel, _, err := parseSubmetric(name)
	if err != nil {
		return nil
	}
	m := e.reg.Get(parent)
	if m == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if m.ID >= len(e.states) || e.states[m.ID] == nil {
		return nil
	}
	st := e.states[m.ID]
	if sel == nil {
		return CloneSink(st.sink)
	}
	for _, sub := range st.subs {
		if sub.selector == sel {
			return CloneSink(sub.sink)
		}
	}
	return nil
}

// SetStart sets the run's start, from which the windows of windowed
// thresholds are counted and to which EvaluateThresholds' elapsed time is
// relative. Samples ingested before it count in the first window.
func (e *Engine) SetStart(t time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.origin = t
}

// EvaluateThresholds evaluates the thresholds at elapsed test time. During
// the run (final false) thresholds on empty sinks are skipped and keep
// their last result; the final evaluation, after the last sample was
// ingested, evaluates them all: an empty Trend's statistics are 0, an
// empty Counter's count is 0, and a threshold on an empty Rate passes.
// A Counter's rate is its sum per second of elapsed.
//
// Windowed thresholds are judged on each window once, during the run
// WindowGrace after the window's end, at the final evaluation every window
// left; a window without samples is not judged, except a Counter's, whose
// count is then 0. A Counter's rate in a window is per second of the
// window, or of the part of it the run lasted.
func (e *Engine) EvaluateThresholds(elapsed time.Duration, final bool) *ThresholdReport {
	e.mu.Lock()
	defer e.mu.Unlock()
	rep := &ThresholdReport{}
	for _, st := range e.states {
		if st == nil {
			continue
		}
		if st.sets != nil {
			st.tainted = false
			for _, set := range st.sets {
				if set.evaluate(st.sink, elapsed, final, rep) {
					st.tainted = true
				}
			}
		}
		for _, sub := range st.subs {
			if sub.sets == nil {
				continue
			}
			sub.tainted = false
			for _, set := range sub.sets {
				if set.evaluate(sub.sink, elapsed, final, rep) {
					sub.tainted = true
				}
			}
		}
	}
	return rep
}
