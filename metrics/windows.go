package metrics

import (
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Windowed thresholds (ThresholdDef.Window) are judged on every window of
// the run instead of on the whole run: windows of length W that start at
// every multiple of a step from the run's start (Engine.SetStart), the
// step being W/n with n = min(⌈W/1s⌉, MaxWindowSteps): windows up to a
// minute slide by a second, longer ones by a sixtieth of their length. The
// samples of each step are kept apart (a count, a sum and, for a Trend, a
// sparse HdrHistogram), and a window's sink is those of its n steps merged,
// so a window's counts, rates, sums, min and max are exact and its
// percentiles have a whole-run threshold's precision (see TrendSink).
//
// Sliding rather than tumbling windows: a bad stretch shorter than W−step
// lies wholly inside some window, wherever it falls, so a stall is never
// split across two windows that each dilute it.
const (
	// MinWindow is the shortest window a threshold may have.
	MinWindow = time.Second
	// MaxWindowSteps is the most steps a window is made of.
	MaxWindowSteps = 60
	// WindowGrace is how long after a window's end it is judged during
	// the run, for samples that reach the engine late (the hdrlog and
	// dashboard outputs wait as long for theirs).
	WindowGrace = 2 * time.Second
)

// WindowStep returns the step windows of length w slide by and the number of
// steps a window holds.
func WindowStep(w time.Duration) (step time.Duration, n int) {
	n = int(min((w+time.Second-1)/time.Second, MaxWindowSteps))
	n = max(n, 1)
	return w / time.Duration(n), n
}

// WindowSpan is a stretch of the run, as offsets from its start.
type WindowSpan struct {
	From, To time.Duration
}

// windowState judges the windowed thresholds of one metric or submetric
// that share a window length: it keeps the samples of the steps whose
// windows are not judged yet.
type windowState struct {
	typ Type
	// asked is the window as the thresholds give it; window is n steps,
	// which it is but for the nanoseconds a division leaves.
	asked, window time.Duration
	step          time.Duration
	n             int64
	items         []*threshold

	// first is the index of the step slots[0] holds, which is also the
	// first window not yet judged; slots[i] is nil while step first+i has
	// no sample.
	first int64
	slots []*windowSlot
	free  []*windowSlot
	late  int64
	// scratch is the sink a window's steps are merged into to judge it.
	scratch Sink
}

func newWindowState(typ Type, window time.Duration) *windowState {
	step, n := WindowStep(window)
	return &windowState{typ: typ, asked: window, window: step * time.Duration(n), step: step, n: int64(n), scratch: NewSink(typ)}
}

// add puts s into the slot of its step; origin is the run's start, zero
// before it started (samples then go to the first step, as do those
// stamped before the start).
func (w *windowState) add(s *Sample, origin time.Time) {
	var k int64
	if !origin.IsZero() {
		if d := s.Time.Sub(origin); d > 0 {
			k = int64(d / w.step)
		}
	}
	i := k - w.first
	if i < 0 {
		w.late++
		return
	}
	for int64(len(w.slots)) <= i {
		w.slots = append(w.slots, nil)
	}
	sl := w.slots[i]
	if sl == nil {
		sl = w.newSlot()
		w.slots[i] = sl
	}
	sl.add(s, w.typ)
}

func (w *windowState) newSlot() *windowSlot {
	if n := len(w.free); n > 0 {
		sl := w.free[n-1]
		w.free = w.free[:n-1]
		return sl
	}
	sl := &windowSlot{}
	if w.typ == Trend {
		sl.pos = NewPackedTrendHistogram()
	}
	return sl
}

// NewPackedTrendHistogram returns a sparse histogram with a trend's range
// and precision: what a window's step, or a reader of interval logs, keeps
// of a trend at a few KB instead of the dense form's hundreds.
func NewPackedTrendHistogram() *hdrhistogram.PackedHistogram {
	return hdrhistogram.NewPacked(1, trendHighest, TrendSignificantDigits)
}

// advance judges the windows that are due at elapsed test time: during the
// run (final false) those that ended WindowGrace ago; at the end every
// window whose steps have all begun, or the first window of a run shorter
// than one window, so that every sample is in a judged window.
func (w *windowState) advance(elapsed time.Duration, final bool, rep *ThresholdReport) {
	last := int64(-1)
	if final {
		begun := max(int64((elapsed+w.step-1)/w.step), w.first+int64(len(w.slots)))
		last = max(begun-w.n, 0)
		if w.first > 0 && begun-w.n < w.first {
			// Every step that began is in a window judged already.
			last = w.first - 1
		}
	} else if due := elapsed - WindowGrace - w.window; due >= 0 {
		last = int64(due / w.step)
	}
	judged := int64(0)
	for k := w.first; k <= last; k++ {
		w.judge(k, elapsed, final, rep)
		judged++
	}
	w.drop(judged)
}

// judge evaluates the thresholds on window k, steps k to k+n−1.
func (w *windowState) judge(k int64, elapsed time.Duration, final bool, rep *ThresholdReport) {
	span := WindowSpan{From: time.Duration(k) * w.step}
	span.To = span.From + w.window
	length := w.window
	if final && span.To > elapsed {
		length = max(elapsed-span.From, 0)
	}
	if !w.merge(k) && w.typ != Counter {
		// Nothing happened in the window: there is nothing to judge,
		// except a Counter's count, which is then 0.
		return
	}
	for _, th := range w.items {
		v, ok := aggregate(w.scratch, th.expr, length)
		pass := !ok || th.expr.Holds(v)
		th.judged(span, v, pass)
		// delayAbortEval spares the windows that end before it.
		if !pass && th.def.AbortOnFail && span.To >= th.def.DelayAbortEval {
			rep.abort = true
		}
	}
}

// merge fills the scratch sink with the samples of window k and reports
// whether it has any.
func (w *windowState) merge(k int64) bool {
	resetSink(w.scratch)
	some := false
	for i := k - w.first; i < k-w.first+w.n && i < int64(len(w.slots)); i++ {
		if sl := w.slots[i]; sl != nil {
			sl.mergeInto(w.scratch)
			some = true
		}
	}
	return some
}

// drop forgets the first m steps, whose windows have all been judged.
func (w *windowState) drop(m int64) {
	if m <= 0 {
		return
	}
	w.first += m
	if m >= int64(len(w.slots)) {
		m = int64(len(w.slots))
	}
	for _, sl := range w.slots[:m] {
		if sl != nil {
			sl.reset()
			w.free = append(w.free, sl)
		}
	}
	n := copy(w.slots, w.slots[m:])
	clear(w.slots[n:])
	w.slots = w.slots[:n]
}

// windowSlot aggregates the samples of one step: what the sink of the
// metric's type keeps, with a Trend's histograms stored sparsely.
type windowSlot struct {
	count, trues int64
	sum          float64
	min, max     float64
	// last and lastTime are a Gauge's latest value.
	last     float64
	lastTime time.Time
	pos, neg *hdrhistogram.PackedHistogram
}

func (sl *windowSlot) add(s *Sample, typ Type) {
	v := s.Value
	if typ == Trend && math.IsNaN(v) {
		return
	}
	if sl.count == 0 || v < sl.min {
		sl.min = v
	}
	if sl.count == 0 || v > sl.max {
		sl.max = v
	}
	if sl.count == 0 || !s.Time.Before(sl.lastTime) {
		sl.last, sl.lastTime = v, s.Time
	}
	sl.count++
	sl.sum += v
	if v != 0 {
		sl.trues++
	}
	if typ != Trend {
		return
	}
	if v < 0 {
		if sl.neg == nil {
			sl.neg = NewPackedTrendHistogram()
		}
		_ = sl.neg.RecordValue(toUnits(-v))
		return
	}
	_ = sl.pos.RecordValue(toUnits(v))
}

func (sl *windowSlot) reset() {
	pos, neg := sl.pos, sl.neg
	*sl = windowSlot{pos: pos, neg: neg}
	if pos != nil {
		pos.Reset()
	}
	if neg != nil {
		neg.Reset()
	}
}

// mergeInto adds the slot's samples to a sink of the metric's type.
func (sl *windowSlot) mergeInto(s Sink) {
	switch s := s.(type) {
	case *CounterSink:
		s.Sum += sl.sum
		s.Count += sl.count
	case *RateSink:
		s.Trues += sl.trues
		s.Total += sl.count
	case *GaugeSink:
		if !s.Set || sl.min < s.Min {
			s.Min = sl.min
		}
		if !s.Set || sl.max > s.Max {
			s.Max = sl.max
		}
		if !s.Set || !sl.lastTime.Before(s.Last) {
			s.Value, s.Last = sl.last, sl.lastTime
		}
		s.Set = true
	case *TrendSink:
		s.MergeParts(sl.count, sl.sum, sl.min, sl.max, sl.pos, sl.neg)
	}
}

// resetSink empties a sink of this package for reuse, keeping a Trend's
// histograms.
func resetSink(s Sink) {
	switch s := s.(type) {
	case *CounterSink:
		*s = CounterSink{}
	case *RateSink:
		*s = RateSink{}
	case *GaugeSink:
		*s = GaugeSink{}
	case *TrendSink:
		s.reset()
	}
}

// judged records the verdict on one window of a windowed threshold.
func (th *threshold) judged(span WindowSpan, v float64, pass bool) {
	r := &th.last
	r.Evaluated = true
	if r.Windows == 0 || th.worse(v, r.Value, !pass) {
		r.Value, r.Worst = v, span
	}
	r.Windows++
	if pass {
		return
	}
	r.FailedWindows++
	r.OK = false
	if n := len(r.Failing); n > 0 && r.Failing[n-1].To >= span.From {
		r.Failing[n-1].To = span.To
		return
	}
	r.Failing = append(r.Failing, span)
}

// worse reports whether a window's value v (failing or not) is worse than
// the worst so far, prev: further on the failing side of the bound. For ==
// and != the first failing window is the worst.
func (th *threshold) worse(v, prev float64, failing bool) bool {
	switch th.expr.Op {
	case OpLess, OpLessEqual:
		return v > prev
	case OpGreater, OpGreaterEqual:
		return v < prev
	}
	return failing && th.last.FailedWindows == 0
}
