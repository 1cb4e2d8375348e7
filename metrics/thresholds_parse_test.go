package metrics

import (
	"math"
	"strings"
	"testing"
)

func TestParseThresholdValid(t *testing.T) {
	cases := []struct {
		src   string
		agg   Aggregation
		p     float64
		op    Operator
		bound float64
		name  string
	}{
		{"p(95)<200", AggPercentile, 95, OpLess, 200, "p(95)"},
		{"p(95) < 200", AggPercentile, 95, OpLess, 200, "p(95)"},
		{"  p( 99.9 )<=1.5 ", AggPercentile, 99.9, OpLessEqual, 1.5, "p(99.9)"},
		{"p(0)>=0", AggPercentile, 0, OpGreaterEqual, 0, "p(0)"},
		{"p(100)>1", AggPercentile, 100, OpGreater, 1, "p(100)"},
		{"avg<=100.5", AggAvg, 0, OpLessEqual, 100.5, "avg"},
		{"min>-3", AggMin, 0, OpGreater, -3, "min"},
		{"max < 1e3", AggMax, 0, OpLess, 1000, "max"},
		{"med>=2", AggMed, 0, OpGreaterEqual, 2, "med"},
		{"count===10", AggCount, 0, OpEqual, 10, "count"},
		{"count==10", AggCount, 0, OpEqual, 10, "count"},
		{"rate!=0.5", AggRate, 0, OpNotEqual, 0.5, "rate"},
		{"value>=-0.25", AggValue, 0, OpGreaterEqual, -0.25, "value"},
		{"rate<.1", AggRate, 0, OpLess, 0.1, "rate"},
	}
	for _, c := range cases {
		e, err := ParseThreshold(c.src)
		if err != nil {
			t.Errorf("ParseThreshold(%q): %v", c.src, err)
			continue
		}
		if e.Agg != c.agg || e.Percentile != c.p || e.Op != c.op || e.Bound != c.bound || e.Source != c.src {
			t.Errorf("ParseThreshold(%q) = %+v", c.src, *e)
		}
		if e.AggName() != c.name {
			t.Errorf("ParseThreshold(%q).AggName() = %q, want %q", c.src, e.AggName(), c.name)
		}
	}
}

func TestParseThresholdInvalid(t *testing.T) {
	cases := []struct{ src, wantInErr string }{
		{"", "no comparison operator"},
		{"p(95)", "no comparison operator"},
		{"avg=1", "no comparison operator"},
		{"<200", "missing aggregation"},
		{"avg<", "no number"},
		{"avg<abc", "is not a number"},
		{"avg<NaN", "is not a number"},
		{"avg<1 2", "is not a number"},
		{"avg=<1", "unknown aggregation"},
		{"foo<1", "unknown aggregation"},
		{"AVG<1", "unknown aggregation"},
		{"p95<1", "unknown aggregation"},
		{"p(95<1", "closing parenthesis"},
		{"p(101)<1", "from 0 to 100"},
		{"p(-1)<1", "from 0 to 100"},
		{"p(NaN)<1", "from 0 to 100"},
		{"p()<1", "from 0 to 100"},
		{"p(abc)<1", "from 0 to 100"},
		{"avg<<1", "is not a number"},
		{"avg<==1", "is not a number"},
	}
	for _, c := range cases {
		e, err := ParseThreshold(c.src)
		if err == nil {
			t.Errorf("ParseThreshold(%q) = %+v, want an error", c.src, *e)
			continue
		}
		if !strings.Contains(err.Error(), c.wantInErr) {
			t.Errorf("ParseThreshold(%q) error %q does not mention %q", c.src, err, c.wantInErr)
		}
	}
}

func TestThresholdHolds(t *testing.T) {
	cases := []struct {
		src  string
		v    float64
		want bool
	}{
		{"avg<2", 1, true}, {"avg<2", 2, false},
		{"avg<=2", 2, true}, {"avg<=2", 2.0001, false},
		{"avg>2", 2, false}, {"avg>2", 3, true},
		{"avg>=2", 2, true}, {"avg>=2", 1.9, false},
		{"avg==2", 2, true}, {"avg===2", 2.5, false},
		{"avg!=2", 2, false}, {"avg!=2", 0, true},
	}
	for _, c := range cases {
		e, err := ParseThreshold(c.src)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Holds(c.v); got != c.want {
			t.Errorf("%q.Holds(%v) = %v, want %v", c.src, c.v, got, c.want)
		}
	}
}

func TestAggregationValidFor(t *testing.T) {
	valid := map[Type][]Aggregation{
		Counter: {AggCount, AggRate},
		Gauge:   {AggValue},
		Rate:    {AggRate},
		Trend:   {AggAvg, AggMin, AggMax, AggMed, AggPercentile},
	}
	all := []Aggregation{AggCount, AggRate, AggValue, AggAvg, AggMin, AggMax, AggMed, AggPercentile}
	for typ, ok := range valid {
		for _, a := range all {
			want := false
			for _, o := range ok {
				want = want || o == a
			}
			if got := a.ValidFor(typ); got != want {
				t.Errorf("%s.ValidFor(%s) = %v, want %v", a, typ, got, want)
			}
		}
	}
}

// TestParseSubmetric checks the parent, tags and name of submetric keys:
// the name keeps the selector as written, trimmed, as k6 v2.2.0 names
// 'my_counter{a:1, b:2}' and 'my_counter{"c":"3"}' (issue 25).
func TestParseSubmetric(t *testing.T) {
	cases := []struct {
		in, parent, display string
		tags                map[string]string
	}{
		{"http_req_duration", "http_req_duration", "http_req_duration", nil},
		{"http_req_duration{expected_response:true}", "http_req_duration", "http_req_duration{expected_response:true}",
			map[string]string{"expected_response": "true"}},
		{` http_req_duration{ status : "200" , method:'GET' } `, "http_req_duration", `http_req_duration{status : "200" , method:'GET'}`,
			map[string]string{"status": "200", "method": "GET"}},
		{"group_duration{group:::a::b}", "group_duration", "group_duration{group:::a::b}", map[string]string{"group": "::a::b"}},
		{"checks{check:}", "checks", "checks{check:}", map[string]string{"check": ""}},
		{`m{url:"http://x/?a=1"}`, "m", `m{url:"http://x/?a=1"}`, map[string]string{"url": "http://x/?a=1"}},
		{"my_counter{a:1, b:2}", "my_counter", "my_counter{a:1, b:2}", map[string]string{"a": "1", "b": "2"}},
		{`my_counter{"c":"3"}`, "my_counter", `my_counter{"c":"3"}`, map[string]string{"c": "3"}},
	}
	for _, c := range cases {
		parent, sel, display, err := parseSubmetric(c.in)
		if err != nil {
			t.Errorf("parseSubmetric(%q): %v", c.in, err)
			continue
		}
		if parent != c.parent || display != c.display {
			t.Errorf("parseSubmetric(%q) = %q, %q; want %q, %q", c.in, parent, display, c.parent, c.display)
		}
		if c.tags == nil {
			if sel != nil {
				t.Errorf("parseSubmetric(%q) selector = %v, want nil", c.in, sel)
			}
		} else if sel != NewTags(c.tags) {
			t.Errorf("parseSubmetric(%q) selector = %v, want %v", c.in, sel, c.tags)
		}
	}

	bad := []string{"", "  ", "m{", "m{}", "m{ }", "{a:b}", "m}", "m{a}", "m{:b}", "m{a:b,a:c}", "m{a:b}x", "m{a:{b}}", "m{a:b,}"}
	for _, in := range bad {
		if p, sel, err := ParseSubmetric(in); err == nil {
			t.Errorf("ParseSubmetric(%q) = %q, %v; want an error", in, p, sel)
		}
	}
}

func FuzzParseThreshold(f *testing.F) {
	for _, s := range []string{
		"p(95)<200", "p(95) < 200", "avg<=100.5", "count===1", "rate!=0", "value>-1",
		"p(99.999)>=1e-3", "p(101)<1", "med==", "<1", "p(", "max<Inf", "min>0x1p-2",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := ParseThreshold(src)
		if err != nil {
			if e != nil {
				t.Fatalf("ParseThreshold(%q) returned both a value and an error", src)
			}
			return
		}
		if e.Agg > AggPercentile || e.Op > OpNotEqual || math.IsNaN(e.Bound) {
			t.Fatalf("ParseThreshold(%q) = %+v is out of range", src, *e)
		}
		if e.Agg == AggPercentile && !(e.Percentile >= 0 && e.Percentile <= 100) {
			t.Fatalf("ParseThreshold(%q) accepted percentile %v", src, e.Percentile)
		}
		// The canonical form parses back to the same expression.
		again, err := ParseThreshold(e.String())
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", e.String(), src, err)
		}
		if again.Agg != e.Agg || again.Percentile != e.Percentile || again.Op != e.Op || again.Bound != e.Bound {
			t.Fatalf("%q → %q → %+v, want %+v", src, e.String(), *again, *e)
		}
	})
}
