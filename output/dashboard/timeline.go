package dashboard

import (
	"math"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/metronome-load/metronome/health"
	"github.com/metronome-load/metronome/metrics"
)

// Histogram geometry: microseconds, 3 significant digits, up to one day,
// the same as the hdrlog output, so that a report built from its logs and
// one built live bucket values alike.
const (
	lowestUS  = 1
	highestUS = 24 * 60 * 60 * 1_000_000
	sigDigits = 3
)

// Stats are one interval's numbers of a latency trend, in milliseconds.
type Stats struct {
	Count         int64
	P50, P99, Max float64
}

// Row is one interval of one section.
type Row struct {
	Raw, Corrected, Lag Stats
	// Counts within the interval. Intended counts the arrivals whose
	// intended start fell in it (completed, dropped or interrupted);
	// Iterations the iterations that completed in it, Completed those of
	// them that were open-model arrivals.
	Requests, Failures, Iterations, Completed, Intended, Dropped, Interrupted float64
	// VUs is the largest value of the vus gauge in the interval, -1 when
	// none was reported.
	VUs float64
	// WaitMs is the time arrivals spent waiting for a VU within the
	// interval, summed over arrivals: divided by the interval's length it
	// is the mean backlog.
	WaitMs float64
}

// Section is the timeline of the whole test (Name "") or of one scenario.
type Section struct {
	Name string
	Rows []Row
	// Spectrum holds every raw (http_req_duration) and corrected
	// (corrected_latency) value of the section, in microseconds.
	SpectrumRaw, SpectrumCorrected *hdrhistogram.Histogram
	// HasLag is set once a schedule_lag sample arrived (open model),
	// HasWait once a wait could be placed in time (backlog), HasCounters
	// once http_reqs or http_req_failed arrived (HdrHistogram logs have
	// neither).
	HasLag, HasWait, HasIntended, HasVUs, HasCounters bool
}

// Timeline is what the charts are drawn from: fixed-length intervals from
// Start, for the whole test and for each scenario.
type Timeline struct {
	Start    time.Time
	Period   time.Duration
	Sections []*Section // [0] is the whole test
	// Endpoints are the request names', slowest corrected p99 first;
	// EndpointsFolded counts the corrected_latency samples of the names
	// past metrics.MaxBreakdownValues, which have none.
	Endpoints       []*Endpoint
	EndpointsFolded int64
	// Inflated are the spans in which the generator may have inflated
	// the latency it measured (generator_limited), in time order.
	Inflated []Span
	// Done is set once the run (or the log) has ended.
	Done bool
}

// Span is a stretch of time.
type Span struct{ From, To time.Time }

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(lowestUS, highestUS, sigDigits) }

func newSection(name string) *Section {
	return &Section{Name: name, SpectrumRaw: newHist(), SpectrumCorrected: newHist()}
}

// row returns the row of interval i, growing the section as needed.
func (s *Section) row(i int) *Row {
	for len(s.Rows) <= i {
		s.Rows = append(s.Rows, Row{VUs: -1})
	}
	return &s.Rows[i]
}

// statsOf reduces a histogram of microseconds to Stats in milliseconds.
func statsOf(h *hdrhistogram.Histogram) Stats {
	if h == nil || h.TotalCount() == 0 {
		return Stats{}
	}
	return Stats{
		Count: h.TotalCount(),
		P50:   float64(h.ValueAtQuantile(50)) / 1000,
		P99:   float64(h.ValueAtQuantile(99)) / 1000,
		Max:   float64(h.Max()) / 1000,
	}
}

// trends are one section's latency histograms of one open interval.
type trends struct{ raw, corrected, lag *hdrhistogram.Histogram }

// sectionState is the aggregator's working state of one section.
type sectionState struct {
	sec  *Section
	open map[int]*trends // interval → histograms not yet reduced to Stats
}

// Aggregator turns samples into a Timeline. It is not safe for concurrent
// use: the output feeds it from one goroutine and takes snapshots there.
type Aggregator struct {
	start  time.Time
	period time.Duration
	// grace is how long an interval's histograms stay open after its end
	// for samples that arrive late.
	grace    time.Duration
	sections []*sectionState
	byName   map[string]*sectionState
	pool     []*hdrhistogram.Histogram
	// durations pairs an iteration's iteration_duration sample with the
	// schedule_lag sample executor.Deps.Account records right after it
	// (same tags, same time), to place the arrival's intended start and
	// its wait in time.
	durations map[lagKey]float64
	// eps is the per-endpoint view.
	eps *endpoints
	// inflated are the generator_limited intervals so far, lastHealth
	// the end of the last health interval.
	inflated   []Span
	lastHealth time.Time
}

type lagKey struct {
	tags *metrics.TagSet
	end  int64
}

// NewAggregator starts a timeline at start with intervals of period.
func NewAggregator(start time.Time, period time.Duration) *Aggregator {
	a := &Aggregator{start: start, period: period, grace: max(period, 2*time.Second),
		byName: map[string]*sectionState{}, durations: map[lagKey]float64{}, eps: newEndpoints()}
	a.section("")
	return a
}

func (a *Aggregator) section(name string) *sectionState {
	if s, ok := a.byName[name]; ok {
		return s
	}
	s := &sectionState{sec: newSection(name), open: map[int]*trends{}}
	a.byName[name] = s
	a.sections = append(a.sections, s)
	return s
}

// index is the interval t falls in; times before the start count as the
// first interval.
func (a *Aggregator) index(t time.Time) int {
	if t.Before(a.start) {
		return 0
	}
	return int(t.Sub(a.start) / a.period)
}

func (a *Aggregator) trendsAt(s *sectionState, i int) *trends {
	tr := s.open[i]
	if tr == nil {
		tr = &trends{}
		s.open[i] = tr
	}
	return tr
}

func (a *Aggregator) hist() *hdrhistogram.Histogram {
	if n := len(a.pool); n > 0 {
		h := a.pool[n-1]
		a.pool = a.pool[:n-1]
		return h
	}
	return newHist()
}

func (a *Aggregator) record(hp **hdrhistogram.Histogram, us int64) {
	if *hp == nil {
		*hp = a.hist()
	}
	_ = (*hp).RecordValue(us)
}

func toUS(ms float64) (int64, bool) {
	if math.IsNaN(ms) || ms < 0 {
		return 0, false
	}
	return int64(min(math.Round(ms*1000), highestUS)), true
}

// Add aggregates a batch of samples.
func (a *Aggregator) Add(batch []metrics.Sample) {
	for i := range batch {
		a.add(&batch[i])
	}
}

func (a *Aggregator) add(smp *metrics.Sample) {
	if smp.Metric == nil {
		return
	}
	name := smp.Metric.Name
	if name == metrics.GeneratorLimitedName {
		a.addHealth(smp)
		return
	}
	kind := endpointKind(name)
	switch name {
	case metrics.HTTPReqDurationName, metrics.CorrectedLatencyName, metrics.ScheduleLagName,
		metrics.HTTPReqsName, metrics.HTTPReqFailedName, metrics.IterationsName, metrics.IterationDurationName,
		metrics.DroppedIterationsName, metrics.VUsName:
	default:
		if kind >= 0 {
			a.eps.add(smp, kind, a.index(smp.Time))
		}
		return
	}
	t := smp.Time
	idx := a.index(t)
	if kind >= 0 {
		a.eps.add(smp, kind, idx)
	}
	states := [2]*sectionState{a.sections[0], nil}
	if sc := tagValue(smp.Tags, "scenario"); sc != "" {
		states[1] = a.section(sc)
	}
	for _, s := range states {
		if s == nil {
			continue
		}
		a.addTo(s, smp, name, t, idx)
	}
	switch name {
	case metrics.IterationDurationName:
		a.durations[lagKey{smp.Tags, t.UnixNano()}] = smp.Value
	case metrics.ScheduleLagName:
		delete(a.durations, lagKey{smp.Tags, t.UnixNano()})
	}
}

func (a *Aggregator) addTo(s *sectionState, smp *metrics.Sample, name string, t time.Time, idx int) {
	sec := s.sec
	switch name {
	case metrics.HTTPReqDurationName:
		if us, ok := toUS(smp.Value); ok {
			a.record(&a.trendsAt(s, idx).raw, us)
			_ = sec.SpectrumRaw.RecordValue(us)
		}
	case metrics.CorrectedLatencyName:
		us, ok := toUS(smp.Value)
		if !ok {
			return
		}
		a.record(&a.trendsAt(s, idx).corrected, us)
		_ = sec.SpectrumCorrected.RecordValue(us)
		// An arrival that did not complete carries an outcome: a dropped
		// one's value runs from its intended start; an interrupted
		// request's from its own start plus its iteration's lag, close
		// enough to place it. Completed arrivals are placed by their
		// schedule_lag.
		outcome := tagValue(smp.Tags, "outcome")
		if outcome == "" || tagValue(smp.Tags, "backfilled") == "true" {
			return
		}
		if outcome == "interrupted" {
			sec.row(idx).Interrupted++
		}
		intended := t.Add(-time.Duration(smp.Value * float64(time.Millisecond)))
		sec.row(a.index(intended)).Intended++
		sec.HasIntended = true
	case metrics.ScheduleLagName:
		us, ok := toUS(smp.Value)
		if !ok {
			return
		}
		a.record(&a.trendsAt(s, idx).lag, us)
		sec.HasLag = true
		// Only open-model arrivals have an intended start: their iteration
		// ran from intended + lag to t.
		d, paired := a.durations[lagKey{smp.Tags, t.UnixNano()}]
		if !paired {
			return
		}
		lag := time.Duration(smp.Value * float64(time.Millisecond))
		intended := t.Add(-time.Duration(d*float64(time.Millisecond)) - lag)
		sec.row(a.index(intended)).Intended++
		sec.HasIntended = true
		sec.row(idx).Completed++
		a.addWait(sec, intended, intended.Add(lag))
	case metrics.HTTPReqsName:
		sec.row(idx).Requests += smp.Value
		sec.HasCounters = true
	case metrics.HTTPReqFailedName:
		sec.row(idx).Failures += smp.Value
		sec.HasCounters = true
	case metrics.IterationsName:
		sec.row(idx).Iterations += smp.Value
	case metrics.DroppedIterationsName:
		sec.row(idx).Dropped += smp.Value
	case metrics.VUsName:
		r := sec.row(idx)
		r.VUs = max(r.VUs, smp.Value)
		sec.HasVUs = true
	}
}

// addHealth takes one interval's generator_limited sample, recorded at
// the interval's end: the interval began at the previous one's end (or a
// health.Period before). Adjacent limited intervals make one span.
func (a *Aggregator) addHealth(smp *metrics.Sample) {
	to := smp.Time
	from := to.Add(-health.Period)
	if last := a.lastHealth; !last.IsZero() && last.Before(to) && to.Sub(last) <= 2*health.Period {
		from = last
	}
	a.lastHealth = to
	if smp.Value == 0 {
		return
	}
	if n := len(a.inflated); n > 0 && !a.inflated[n-1].To.Before(from) {
		a.inflated[n-1].To = to
		return
	}
	a.inflated = append(a.inflated, Span{From: from, To: to})
}

// addWait spreads the wait [from, to) of one arrival over the intervals it
// overlaps.
func (a *Aggregator) addWait(sec *Section, from, to time.Time) {
	sec.HasWait = true
	for i := a.index(from); from.Before(to); i++ {
		end := a.start.Add(time.Duration(i+1) * a.period)
		stop := to
		if end.Before(stop) {
			stop = end
		}
		sec.row(i).WaitMs += float64(stop.Sub(from)) / float64(time.Millisecond)
		from = stop
	}
}

// Close reduces the histograms of intervals that ended at least grace
// before now (all of them when now is zero) to Stats, and clears the
// pairing of iteration durations whose schedule_lag sample can no longer
// come (closed-model iterations record none).
func (a *Aggregator) Close(now time.Time) {
	for _, s := range a.sections {
		for i, tr := range s.open {
			end := a.start.Add(time.Duration(i+1) * a.period)
			if !now.IsZero() && now.Sub(end) < a.grace {
				continue
			}
			a.reduce(s.sec.row(i), tr)
			delete(s.open, i)
		}
	}
	for k := range a.durations {
		if now.IsZero() || now.Sub(time.Unix(0, k.end)) > a.grace {
			delete(a.durations, k)
		}
	}
	a.eps.close(a, now)
}

func (a *Aggregator) reduce(r *Row, tr *trends) {
	for _, p := range []struct {
		h  *hdrhistogram.Histogram
		st *Stats
	}{{tr.raw, &r.Raw}, {tr.corrected, &r.Corrected}, {tr.lag, &r.Lag}} {
		if p.h == nil {
			continue
		}
		*p.st = statsOf(p.h)
		p.h.Reset()
		a.pool = append(a.pool, p.h)
	}
}

// Snapshot copies the timeline as it stands, open intervals included, for
// rendering on another goroutine.
func (a *Aggregator) Snapshot(done bool) *Timeline {
	tl := &Timeline{Start: a.start, Period: a.period, Done: done, Inflated: append([]Span(nil), a.inflated...)}
	for _, s := range a.sections {
		c := *s.sec
		c.Rows = append([]Row(nil), s.sec.Rows...)
		c.SpectrumRaw = hdrhistogram.Import(s.sec.SpectrumRaw.Export())
		c.SpectrumCorrected = hdrhistogram.Import(s.sec.SpectrumCorrected.Export())
		for i, tr := range s.open {
			for len(c.Rows) <= i {
				c.Rows = append(c.Rows, Row{VUs: -1})
			}
			r := &c.Rows[i]
			r.Raw, r.Corrected, r.Lag = statsOf(tr.raw), statsOf(tr.corrected), statsOf(tr.lag)
		}
		tl.Sections = append(tl.Sections, &c)
	}
	sortSections(tl.Sections)
	tl.Endpoints, tl.EndpointsFolded = a.eps.snapshot(), a.eps.folded
	return tl
}

// sortSections keeps the whole test first and the scenarios by name.
func sortSections(s []*Section) {
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].Name == "" || s[j].Name == "" {
			return s[i].Name == ""
		}
		return s[i].Name < s[j].Name
	})
}

func tagValue(tags *metrics.TagSet, key string) string {
	if tags == nil {
		return ""
	}
	v, _ := tags.Get(key)
	return v
}
