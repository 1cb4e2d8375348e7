package metrics

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Aggregation is the statistic a threshold compares: the left-hand side of
// "p(95)<200".
type Aggregation uint8

// The aggregations of k6's threshold grammar.
const (
	AggCount      Aggregation = iota // Counter: the sum of the values
	AggRate                          // Counter: sum per second; Rate: fraction of non-zero values
	AggValue                         // Gauge: the last value
	AggAvg                           // Trend
	AggMin                           // Trend
	AggMax                           // Trend
	AggMed                           // Trend
	AggPercentile                    // Trend: p(N)
)

var aggNames = [...]string{
	AggCount: "count", AggRate: "rate", AggValue: "value",
	AggAvg: "avg", AggMin: "min", AggMax: "max", AggMed: "med",
	AggPercentile: "p",
}

func (a Aggregation) String() string {
	if int(a) < len(aggNames) {
		return aggNames[a]
	}
	return fmt.Sprintf("aggregation(%d)", uint8(a))
}

// ValidFor reports whether a threshold may use a on a metric of type t.
func (a Aggregation) ValidFor(t Type) bool {
	switch t {
	case Counter:
		return a == AggCount || a == AggRate
	case Gauge:
		return a == AggValue
	case Rate:
		return a == AggRate
	case Trend:
		return a >= AggAvg && a <= AggPercentile
	}
	return false
}

// aggregationsFor lists, for error messages, what a metric type accepts.
func aggregationsFor(t Type) string {
	switch t {
	case Counter:
		return "count or rate"
	case Gauge:
		return "value"
	case Rate:
		return "rate"
	}
	return "avg, min, max, med or p(N)"
}

// Operator compares an aggregated value with a threshold's bound.
type Operator uint8

// The operators. k6 accepts "===" as a synonym of "==".
const (
	OpLess Operator = iota
	OpLessEqual
	OpGreater
	OpGreaterEqual
	OpEqual
	OpNotEqual
)

var opNames = [...]string{
	OpLess: "<", OpLessEqual: "<=", OpGreater: ">", OpGreaterEqual: ">=",
	OpEqual: "==", OpNotEqual: "!=",
}

func (o Operator) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("operator(%d)", uint8(o))
}

// operatorSearch is the order in which operators are looked for in an
// expression. Two-character operators come before their one-character
// prefixes, and "===" before "==", so the longest operator at a position
// wins.
var operatorSearch = [...]struct {
	text string
	op   Operator
}{
	{"<=", OpLessEqual},
	{"<", OpLess},
	{">=", OpGreaterEqual},
	{">", OpGreater},
	{"===", OpEqual},
	{"==", OpEqual},
	{"!=", OpNotEqual},
}

// ThresholdExpr is a parsed threshold expression such as "p(95) < 200".
type ThresholdExpr struct {
	// Source is the expression as written.
	Source string
	Agg    Aggregation
	// Percentile is N of p(N), in [0, 100]; 0 for other aggregations.
	Percentile float64
	Op         Operator
	Bound      float64
}

// ParseThreshold parses a threshold expression: an aggregation, an
// operator and a number, with optional spaces between them. It does not
// know the metric, so it accepts every aggregation; Aggregation.ValidFor
// tells whether one suits a metric type.
func ParseThreshold(source string) (*ThresholdExpr, error) {
	e := &ThresholdExpr{Source: source}
	opAt, opLen := -1, 0
	for _, o := range operatorSearch {
		if i := strings.Index(source, o.text); i >= 0 {
			opAt, opLen, e.Op = i, len(o.text), o.op
			break
		}
	}
	if opAt < 0 {
		return nil, fmt.Errorf("%q has no comparison operator (one of <, <=, >, >=, ==, !=)", source)
	}
	lhs := strings.TrimSpace(source[:opAt])
	rhs := strings.TrimSpace(source[opAt+opLen:])
	if err := e.parseAggregation(lhs); err != nil {
		return nil, fmt.Errorf("%q: %w", source, err)
	}
	if rhs == "" {
		return nil, fmt.Errorf("%q has no number after %s", source, e.Op)
	}
	b, err := strconv.ParseFloat(rhs, 64)
	if err != nil || math.IsNaN(b) {
		return nil, fmt.Errorf("%q: %q is not a number", source, rhs)
	}
	e.Bound = b
	return e, nil
}

func (e *ThresholdExpr) parseAggregation(s string) error {
	switch s {
	case "":
		return fmt.Errorf("missing aggregation before the operator")
	case "count":
		e.Agg = AggCount
	case "rate":
		e.Agg = AggRate
	case "value":
		e.Agg = AggValue
	case "avg":
		e.Agg = AggAvg
	case "min":
		e.Agg = AggMin
	case "max":
		e.Agg = AggMax
	case "med":
		e.Agg = AggMed
	default:
		inner, ok := strings.CutPrefix(s, "p(")
		if !ok {
			return fmt.Errorf("unknown aggregation %q (want count, rate, value, avg, min, max, med or p(N))", s)
		}
		inner, ok = strings.CutSuffix(inner, ")")
		if !ok {
			return fmt.Errorf("percentile %q lacks its closing parenthesis", s)
		}
		inner = strings.TrimSpace(inner)
		p, err := strconv.ParseFloat(inner, 64)
		if err != nil || !(p >= 0 && p <= 100) {
			return fmt.Errorf("the percentile in %q must be a number from 0 to 100", s)
		}
		e.Agg, e.Percentile = AggPercentile, p
	}
	return nil
}

// AggName is the aggregation as k6 names it: "avg", "p(99.9)".
func (e *ThresholdExpr) AggName() string {
	if e.Agg == AggPercentile {
		return "p(" + strconv.FormatFloat(e.Percentile, 'f', -1, 64) + ")"
	}
	return e.Agg.String()
}

// String formats the expression canonically, "p(95)<200".
func (e *ThresholdExpr) String() string {
	return e.AggName() + e.Op.String() + strconv.FormatFloat(e.Bound, 'g', -1, 64)
}

// Holds reports whether v satisfies the expression's comparison.
func (e *ThresholdExpr) Holds(v float64) bool {
	switch e.Op {
	case OpLess:
		return v < e.Bound
	case OpLessEqual:
		return v <= e.Bound
	case OpGreater:
		return v > e.Bound
	case OpGreaterEqual:
		return v >= e.Bound
	case OpEqual:
		return v == e.Bound
	case OpNotEqual:
		return v != e.Bound
	}
	return false
}

// ParseSubmetric splits a metric name that may carry a submetric selector,
// "http_req_duration{status:200, method:GET}", into the parent metric's
// name and the selector's tags (nil without a selector). Keys and values
// are trimmed of spaces and then of surrounding quotes; a value may
// be empty, a key may not.
func ParseSubmetric(name string) (parent string, selector *TagSet, err error) {
	parent, selector, _, err = parseSubmetric(name)
	return parent, selector, err
}

// parseSubmetric is ParseSubmetric that also returns the submetric's
// name as k6 shows it in the summary, --summary-export and handleSummary's
// data: the parent, then the selector as written, spaces around it
// trimmed, "metric{k: v, 'k2':\"v2\"}". A handleSummary that looks the
// name up as written in options.thresholds finds it.
func parseSubmetric(name string) (parent string, selector *TagSet, display string, err error) {
	name = strings.TrimSpace(name)
	open := strings.IndexByte(name, '{')
	if open < 0 {
		if strings.IndexByte(name, '}') >= 0 {
			return "", nil, "", fmt.Errorf("%q has a '}' without a '{'", name)
		}
		if name == "" {
			return "", nil, "", fmt.Errorf("empty metric name")
		}
		return name, nil, name, nil
	}
	parent = strings.TrimSpace(name[:open])
	if parent == "" {
		return "", nil, "", fmt.Errorf("%q has no metric name before '{'", name)
	}
	if !strings.HasSuffix(name, "}") {
		return "", nil, "", fmt.Errorf("%q must end with the '}' that closes its tag selector", name)
	}
	body := name[open+1 : len(name)-1]
	if strings.ContainsAny(body, "{}") {
		return "", nil, "", fmt.Errorf("%q has nested braces in its tag selector", name)
	}
	if strings.TrimSpace(body) == "" {
		return "", nil, "", fmt.Errorf("%q has an empty tag selector", name)
	}
	selector = EmptyTags
	seen := make(map[string]bool)
	for pair := range strings.SplitSeq(body, ",") {
		k, v, ok := strings.Cut(pair, ":")
		if !ok {
			return "", nil, "", fmt.Errorf("%q: %q in the tag selector is not a key:value pair", name, strings.TrimSpace(pair))
		}
		k, v = unquote(k), unquote(v)
		if k == "" {
			return "", nil, "", fmt.Errorf("%q: a tag in the selector has an empty key", name)
		}
		if seen[k] {
			return "", nil, "", fmt.Errorf("%q: tag %q appears twice in the selector", name, k)
		}
		seen[k] = true
		selector = selector.With(k, v)
	}
	return parent, selector, parent + "{" + strings.TrimSpace(body) + "}", nil
}

// unquote trims spaces and then the quotes around a key or value.
func unquote(s string) string {
	return strings.Trim(strings.TrimSpace(s), `"'`)
}
