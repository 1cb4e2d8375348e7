package watch

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output/prometheus"
)

// check is one threshold as the watch evaluates it in Prometheus.
type check struct {
	// Key is the threshold's key (metric or submetric), Def the
	// threshold and Expr its parsed expression.
	Key  string
	Def  metrics.ThresholdDef
	Expr *metrics.ThresholdExpr
	// Query is the PromQL of the value to compare; Scale turns its
	// result into the metric's unit (seconds to milliseconds for time
	// metrics); PerSecond divides it by the test's elapsed seconds (a
	// counter's rate).
	Query     string
	Scale     float64
	PerSecond bool
}

// newCheck returns how to evaluate threshold d on the metric or submetric
// key of reg in Prometheus, over the series base selects; the error says
// why it cannot be, in a sentence that starts with the threshold.
func newCheck(reg *metrics.Registry, key string, d metrics.ThresholdDef, base string) (*check, error) {
	what := fmt.Sprintf("%s %s", key, d.Source)
	parent, sel, err := metrics.ParseSubmetric(key)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	m := reg.Get(parent)
	if m == nil {
		return nil, fmt.Errorf("%s: metric %q is not defined", what, parent)
	}
	e, err := metrics.ParseThreshold(d.Source)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	if !e.Agg.ValidFor(m.Type) {
		return nil, fmt.Errorf("%s: %q is not valid for a %s metric", what, e.AggName(), m.Type)
	}
	matchers := []string{}
	if base != "" {
		matchers = append(matchers, base)
	}
	if sel != nil {
		sel.Range(func(k, v string) bool {
			matchers = append(matchers, prometheus.LabelName(k)+"="+strconv.Quote(v))
			return true
		})
	}
	series := func(m *metrics.Metric) string {
		return prometheus.SeriesName(m) + "{" + strings.Join(matchers, ",") + "}"
	}
	c := &check{Key: key, Def: d, Expr: e, Scale: 1}
	switch m.Type {
	case metrics.Counter:
		c.Query = "sum(" + series(m) + ")"
		c.PerSecond = e.Agg == metrics.AggRate
	case metrics.Gauge:
		if m.Name != metrics.VUsName && m.Name != metrics.VUsMaxName {
			return nil, fmt.Errorf("%s: a gauge's value in Prometheus is each instance's own, and only the VUs' add up over the instances", what)
		}
		c.Query = "sum(" + series(m) + ")"
	case metrics.Rate:
		// Prometheus gets each series' ratio, not its counts; only
		// http_req_failed has a counter with the same series that gives
		// them: every request adds one to http_reqs.
		if m.Name != metrics.HTTPReqFailedName {
			return nil, fmt.Errorf("%s: Prometheus gets each series' ratio of a rate, not its counts, so only http_req_failed (weighed by http_reqs) adds up over the instances", what)
		}
		reqs := &metrics.Metric{Name: metrics.HTTPReqsName, Type: metrics.Counter}
		c.Query = "sum(round(" + series(m) + " * " + series(reqs) + ")) / sum(" + series(reqs) + ")"
	case metrics.Trend:
		h := "sum(" + series(m) + ")"
		switch e.Agg {
		case metrics.AggPercentile:
			c.Query = "histogram_quantile(" + strconv.FormatFloat(e.Percentile/100, 'g', -1, 64) + ", " + h + ")"
		case metrics.AggMed:
			c.Query = "histogram_quantile(0.5, " + h + ")"
		case metrics.AggAvg:
			c.Query = "histogram_sum(" + h + ") / histogram_count(" + h + ")"
		default:
			return nil, fmt.Errorf("%s: a native histogram keeps no exact %s", what, e.AggName())
		}
		if m.Contains == metrics.Time {
			c.Scale = 1000
		}
	}
	return c, nil
}
