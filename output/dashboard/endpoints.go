package dashboard

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/metronome-load/metronome/internal/hdrhist"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output/hdrlog"
	"github.com/metronome-load/metronome/summary"
)

// The per-endpoint view: each request name's raw latency (the request's
// own time: http_req_duration, grpc_req_duration or ws_connecting) against
// its corrected_latency, over the whole run and per interval, across every
// scenario. Names are the k6 name tag, the URL unless the script named its
// requests; at most metrics.MaxBreakdownValues of them, as in the
// end-of-test summary.

// Endpoint is the timeline of the requests of one name.
type Endpoint struct {
	Name string
	// ID is unique in a page and stays the same while the run goes on:
	// endpoint-<n>, in the order the names were first seen.
	ID string
	// RawMetric is the first of hdrlog.RawMetrics the name has samples
	// of, "" when it has none; Raw its figures, Corrected those of the
	// name's corrected_latency (back-filled samples included).
	RawMetric      string
	Raw, Corrected Percentiles
	// Rows are the name's intervals, as the timeline's.
	Rows []EndpointRow
}

// Percentiles are a distribution's count and p50, p99 and p99.9 in
// milliseconds.
type Percentiles struct {
	Count          int64
	P50, P99, P999 float64
}

// EndpointRow is one interval of an endpoint.
type EndpointRow struct{ Raw, Corrected Stats }

// endpointKind is where a metric's samples go in an endpoint: 0 for
// corrected_latency, 1 + its index for the hdrlog.RawMetrics, -1 for the
// metrics the view has no use for.
func endpointKind(metric string) int {
	if metric == metrics.CorrectedLatencyName {
		return 0
	}
	for i, m := range hdrlog.RawMetrics {
		if m == metric {
			return i + 1
		}
	}
	return -1
}

// kinds is how many endpointKinds there are.
var kinds = 1 + len(hdrlog.RawMetrics)

// endpointState is the aggregation of one name: whole-run and open
// interval histograms by kind.
type endpointState struct {
	ep   *Endpoint
	run  []hdrhist.Hist
	open map[int][]hdrhist.Hist
	// last is open[lastIdx], nil when unknown: most samples fall in the
	// interval of the one before.
	last    []hdrhist.Hist
	lastIdx int
}

// endpoints aggregates the samples of the endpoint metrics by name.
type endpoints struct {
	pool   *hdrhist.Pool
	byName map[string]*endpointState
	order  []*endpointState
	// byTags maps a tag set to its name's state (stateOf); last is a
	// one-entry cache in front of it.
	byTags    map[*metrics.TagSet]*endpointState
	last      *metrics.TagSet
	lastState *endpointState
	// folded counts the corrected_latency samples of names past the cap.
	folded int64
}

func newEndpoints() *endpoints {
	return &endpoints{pool: hdrhist.NewPool(lowestUS, highestUS, sigDigits),
		byName: map[string]*endpointState{}, byTags: map[*metrics.TagSet]*endpointState{}}
}

// state returns the state of name, nil when the cap is reached.
func (e *endpoints) state(name string) *endpointState {
	if s, ok := e.byName[name]; ok {
		return s
	}
	if len(e.byName) >= metrics.MaxBreakdownValues {
		return nil
	}
	s := &endpointState{ep: &Endpoint{Name: name, ID: "endpoint-" + strconv.Itoa(len(e.order)+1)},
		run: make([]hdrhist.Hist, kinds), open: map[int][]hdrhist.Hist{}}
	e.byName[name] = s
	e.order = append(e.order, s)
	return s
}

// pastCap stands for the names met after the cap.
var pastCap = &endpointState{}

// stateOf is the state of the name in tags: nil when there is none,
// pastCap when the cap is reached.
func (e *endpoints) stateOf(tags *metrics.TagSet) *endpointState {
	name := tagValue(tags, "name")
	if name == "" {
		return nil
	}
	if s := e.state(name); s != nil {
		return s
	}
	return pastCap
}

// add aggregates one sample of kind, in interval idx.
func (e *endpoints) add(smp *metrics.Sample, kind, idx int) {
	s := e.lastState
	if smp.Tags != e.last {
		var ok bool
		if s, ok = e.byTags[smp.Tags]; !ok {
			s = e.stateOf(smp.Tags)
			if len(e.byTags) >= maxTagSets {
				clear(e.byTags)
			}
			e.byTags[smp.Tags] = s
		}
		e.last, e.lastState = smp.Tags, s
	}
	switch s {
	case nil:
		return
	case pastCap:
		if kind == 0 {
			e.folded++
		}
		return
	}
	us, ok := toUS(smp.Value)
	if !ok {
		return
	}
	e.pool.Record(&s.run[kind], us)
	if s.last == nil || s.lastIdx != idx {
		s.last, s.lastIdx = s.open[idx], idx
		if s.last == nil {
			s.last = make([]hdrhist.Hist, kinds)
			s.open[idx] = s.last
		}
	}
	e.pool.Record(&s.last[kind], us)
}

// maxTagSets bounds the cache from tag set to name, as the metrics engine
// bounds its own: a script with an ID in every URL has a tag set a request.
const maxTagSets = 1 << 16

// close reduces the open intervals that ended at least grace before now
// (all of them when now is zero) to rows.
func (e *endpoints) close(a *Aggregator, now time.Time) {
	for _, s := range e.order {
		for i, iv := range s.open {
			end := a.start.Add(time.Duration(i+1) * a.period)
			if !now.IsZero() && now.Sub(end) < a.grace {
				continue
			}
			*s.row(i) = rowOf(iv)
			for k := range iv {
				e.pool.Release(&iv[k])
			}
			delete(s.open, i)
		}
		s.last = nil
	}
}

func (s *endpointState) row(i int) *EndpointRow {
	for len(s.ep.Rows) <= i {
		s.ep.Rows = append(s.ep.Rows, EndpointRow{})
	}
	return &s.ep.Rows[i]
}

// rowOf reduces an interval's histograms by kind to a row: the raw figures
// from the first raw metric with samples.
func rowOf(hs []hdrhist.Hist) EndpointRow {
	r := EndpointRow{Corrected: histStats(&hs[0])}
	if k := rawKind(hs); k > 0 {
		r.Raw = histStats(&hs[k])
	}
	return r
}

// rawKind is the kind of the first raw metric hs has samples of, 0 for
// none.
func rawKind(hs []hdrhist.Hist) int {
	for k := 1; k < len(hs); k++ {
		if hs[k].TotalCount() > 0 {
			return k
		}
	}
	return 0
}

func histStats(h *hdrhist.Hist) Stats {
	if h.TotalCount() == 0 {
		return Stats{}
	}
	return Stats{Count: h.TotalCount(), P50: float64(h.ValueAtPercentile(50)) / 1000,
		P99: float64(h.ValueAtPercentile(99)) / 1000, Max: float64(h.Max()) / 1000}
}

func histPercentiles(h *hdrhist.Hist) Percentiles {
	if h.TotalCount() == 0 {
		return Percentiles{}
	}
	return Percentiles{Count: h.TotalCount(), P50: float64(h.ValueAtPercentile(50)) / 1000,
		P99: float64(h.ValueAtPercentile(99)) / 1000, P999: float64(h.ValueAtPercentile(99.9)) / 1000}
}

// snapshot copies the endpoints as they stand, open intervals included,
// slowest corrected p99 first.
func (e *endpoints) snapshot() []*Endpoint {
	out := make([]*Endpoint, 0, len(e.order))
	for _, s := range e.order {
		c := *s.ep
		c.Rows = slices.Clone(s.ep.Rows)
		for i, iv := range s.open {
			for len(c.Rows) <= i {
				c.Rows = append(c.Rows, EndpointRow{})
			}
			c.Rows[i] = rowOf(iv)
		}
		c.Corrected = histPercentiles(&s.run[0])
		if k := rawKind(s.run); k > 0 {
			c.RawMetric, c.Raw = hdrlog.RawMetrics[k-1], histPercentiles(&s.run[k])
		}
		out = append(out, &c)
	}
	sortEndpoints(out)
	return out
}

// sortEndpoints puts the slowest corrected p99 first, as the summary's
// table does.
func sortEndpoints(eps []*Endpoint) {
	slices.SortStableFunc(eps, func(a, b *Endpoint) int {
		if c := cmp.Compare(b.Corrected.P99, a.Corrected.P99); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
}

// logEndpoints builds the endpoints of a log's intervals (sorted by
// start), in rows of period from start. Each name's histograms are merged
// a row at a time, so memory stays that of one row whatever the run's
// length.
func logEndpoints(ivs []logInterval, start time.Time, period time.Duration) (eps []*Endpoint, folded int64) {
	e := newEndpoints()
	type current struct {
		row int
		hs  []hdrhist.Hist
	}
	cur := map[*endpointState]*current{}
	flush := func(s *endpointState, c *current) {
		*s.row(c.row) = rowOf(c.hs)
		for k := range c.hs {
			e.pool.Release(&c.hs[k])
		}
	}
	for _, iv := range ivs {
		kind := endpointKind(iv.series.Metric)
		if kind < 0 || (iv.series.Name == "" && !iv.series.Folded) {
			continue
		}
		var s *endpointState
		if !iv.series.Folded {
			s = e.state(iv.series.Name)
		}
		if s == nil {
			if kind == 0 {
				folded += iv.h.TotalCount()
			}
			continue
		}
		row := int(iv.start.Sub(start) / period)
		c := cur[s]
		switch {
		case c == nil:
			c = &current{row: row, hs: make([]hdrhist.Hist, kinds)}
			cur[s] = c
		case c.row != row:
			flush(s, c)
			c.row = row
		}
		e.pool.MergePacked(&s.run[kind], iv.h)
		e.pool.MergePacked(&c.hs[kind], iv.h)
	}
	for s, c := range cur {
		flush(s, c)
	}
	return e.snapshot(), folded
}

// maxEndpointCharts is how many endpoints get a chart over time, the
// slowest by corrected p99 first; the table lists every name.
const maxEndpointCharts = 20

// EndpointView is the page's per-endpoint part: a table of every name and
// a chart over time for the slowest.
type EndpointView struct {
	Rows   []EndpointTableRow
	Charts []EndpointChart
	// Note says where the figures come from and what is left out.
	Note string
}

// EndpointTableRow is one name's row, formatted for display.
type EndpointTableRow struct {
	Name string
	// Chart is the ID of the name's chart, "" when it has none.
	Chart     string
	Requests  string
	RawMetric string
	// Raw and Corrected are p50, p99 and p99.9.
	Raw, Corrected [3]string
	// RawP99 and CorrectedP99 are the p99s in milliseconds, for scripts
	// that read the page (-1: none).
	RawP99, CorrectedP99 float64
}

// EndpointChart is one name's chart; Open marks the one shown unfolded.
type EndpointChart struct {
	Name  string
	ID    string
	Open  bool
	Chart Chart
}

// endpointViewOf lays out the endpoints of tl. When in (the end-of-test
// summary) has endpoints, the table shows its figures, exact, as the
// terminal does; the charts are the timeline's.
func endpointViewOf(tl *Timeline, in *summary.Input) (*EndpointView, error) {
	hasSummary := in != nil && len(in.Endpoints) > 0
	if len(tl.Endpoints) == 0 && !hasSummary {
		return nil, nil
	}
	v := &EndpointView{}
	charted := map[string]string{}
	for _, ep := range tl.Endpoints {
		if len(v.Charts) == maxEndpointCharts {
			break
		}
		raw := ep.RawMetric
		if raw == "" {
			raw = "none"
		}
		c, err := newChart(ep.ID+"-latency", "Raw vs corrected latency",
			fmt.Sprintf("The requests named %s: blue is what each took (%s), red what its user waited from the intended start (corrected_latency).", ep.Name, raw),
			timeAxis, "latency per interval (ms)", latencySeries(len(ep.Rows), tl.Period.Seconds(), func(i int) (Stats, Stats) {
				return ep.Rows[i].Raw, ep.Rows[i].Corrected
			}))
		if err != nil {
			return nil, err
		}
		if c == nil {
			continue
		}
		charted[ep.Name] = c.ID
		v.Charts = append(v.Charts, EndpointChart{Name: ep.Name, ID: ep.ID, Open: len(v.Charts) == 0, Chart: *c})
	}
	row := func(name, rawMetric string, requests int64, raw Percentiles, corrected *Percentiles, unit string) EndpointTableRow {
		r := EndpointTableRow{Name: name, Chart: charted[name], Requests: strconv.FormatInt(requests, 10), RawMetric: rawMetric,
			Raw: [3]string{"n/a", "n/a", "n/a"}, Corrected: [3]string{"n/a", "n/a", "n/a"}, RawP99: -1, CorrectedP99: -1}
		if rawMetric != "" {
			r.Raw = [3]string{summary.FormatTime(raw.P50, unit), summary.FormatTime(raw.P99, unit), summary.FormatTime(raw.P999, unit)}
			r.RawP99 = raw.P99
		}
		if corrected != nil {
			r.Corrected = [3]string{summary.FormatTime(corrected.P50, unit), summary.FormatTime(corrected.P99, unit), summary.FormatTime(corrected.P999, unit)}
			r.CorrectedP99 = corrected.P99
		}
		return r
	}
	folded := tl.EndpointsFolded
	if hasSummary {
		eps := slices.Clone(in.Endpoints)
		slices.SortStableFunc(eps, func(a, b summary.EndpointReport) int { return cmp.Compare(b.Corrected.P99, a.Corrected.P99) })
		for _, e := range eps {
			v.Rows = append(v.Rows, row(e.Name, e.RawMetric, e.Requests,
				Percentiles{P50: e.Raw.P50, P99: e.Raw.P99, P999: e.Raw.P999},
				&Percentiles{P50: e.Corrected.P50, P99: e.Corrected.P99, P999: e.Corrected.P999}, in.Options.TimeUnit))
		}
		folded = in.EndpointsFolded
		v.Note = "Percentiles from the end-of-test summary."
	} else {
		for _, ep := range tl.Endpoints {
			var corrected *Percentiles
			if ep.Corrected.Count > 0 {
				corrected = &ep.Corrected
			}
			v.Rows = append(v.Rows, row(ep.Name, ep.RawMetric, ep.Raw.Count, ep.Raw, corrected, ""))
		}
		v.Note = "Percentiles from the dashboard's histograms (3 significant digits)."
	}
	v.Note = "Each request name (the name tag; the URL unless the script named its requests) over every scenario: raw is the request's own time, corrected its corrected_latency (back-filled samples included), slowest corrected p99 first. " + v.Note
	if n := len(v.Rows) - len(v.Charts); n > 0 && len(v.Charts) == maxEndpointCharts {
		v.Note += fmt.Sprintf(" Charts for the %d slowest only.", maxEndpointCharts)
	}
	if folded > 0 {
		v.Note += fmt.Sprintf(" %d corrected_latency samples of names beyond the first %d are in the totals only.", folded, metrics.MaxBreakdownValues)
	}
	return v, nil
}
