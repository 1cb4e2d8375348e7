package metrics_test

import (
	"strings"
	"testing"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/js/jstest"
	_ "github.com/metronome-load/metronome/js/modules/metrics"
	"github.com/metronome-load/metronome/metrics"
)

func TestCustomMetrics(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
import { Counter, Gauge, Rate, Trend } from "k6/metrics";
import m from "k6/metrics";
const c = new Counter("my_counter");
const g = new Gauge("my_gauge");
const rate = new Rate("my_rate");
const tr = new Trend("my_trend", true);
const plain = new m.Trend("my_plain_trend");
export default function () {
	console.log(c.name, tr.name);
	c.add(2);
	c.add(3, { kind: "x" });
	g.add(-1.5);
	rate.add(true);
	rate.add(false);
	rate.add(0);
	tr.add(12.5, { group: "override" });
	console.log(plain.add(NaN), plain.add(null), plain.add("7"));
}`,
	}, nil)
	vu, rec := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
	}
	def := func(name string, typ metrics.Type, contains metrics.ValueType) *metrics.Metric {
		m := r.Registry.Get(name)
		if m == nil || m.Type != typ || m.Contains != contains {
			t.Fatalf("metric %s is %+v", name, m)
		}
		return m
	}
	c := def("my_counter", metrics.Counter, metrics.Default)
	g := def("my_gauge", metrics.Gauge, metrics.Default)
	rate := def("my_rate", metrics.Rate, metrics.Default)
	tr := def("my_trend", metrics.Trend, metrics.Time)
	plain := def("my_plain_trend", metrics.Trend, metrics.Default)

	base := metrics.NewTags(map[string]string{"scenario": "default", "group": ""})
	check := func(m *metrics.Metric, want []float64, tags []*metrics.TagSet) {
		t.Helper()
		got := jstest.Samples(rec, m)
		if len(got) != len(want) {
			t.Fatalf("%s: %d samples, want %d", m.Name, len(got), len(want))
		}
		for i := range want {
			if got[i].Value != want[i] || got[i].Tags != tags[i] {
				t.Errorf("%s sample %d: %v %v, want %v %v", m.Name, i, got[i].Value, got[i].Tags, want[i], tags[i])
			}
		}
	}
	check(c, []float64{2, 3}, []*metrics.TagSet{base, base.With("kind", "x")})
	check(g, []float64{-1.5}, []*metrics.TagSet{base})
	check(rate, []float64{1, 0, 0}, []*metrics.TagSet{base, base, base})
	check(tr, []float64{12.5}, []*metrics.TagSet{base.With("group", "override")})
	check(plain, []float64{7}, []*metrics.TagSet{base})
	out := r.Stderr.String()
	if !strings.Contains(out, "my_counter my_trend") || !strings.Contains(out, "false false true") {
		t.Fatalf("stderr:\n%s", out)
	}
	if !strings.Contains(out, "not a number") {
		t.Fatalf("no warning for NaN:\n%s", out)
	}
}

func TestMetricErrors(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{"import { Counter } from \"k6/metrics\";\nconst c = new Counter(\"bad-name\");", "invalid metric name"},
		{"import { Counter } from \"k6/metrics\";\nconst c = new Counter(\"x\");", "invalid metric name"},
		{"import { Counter, Trend } from \"k6/metrics\";\nnew Counter(\"dup\");\nconst t = new Trend(\"dup\");", "already defined as a counter"},
		{"import { Counter } from \"k6/metrics\";\nconst c = new Counter(\"fine\");\nc.add(1);", "not in the init context"},
	} {
		_, err := jstest.TryLoad(t, map[string]string{"script.js": tc.script + "\nexport default function () {}"}, nil)
		if err == nil || exitcode.Of(err) != exitcode.ScriptException || !strings.Contains(err.Error(), tc.want) ||
			!strings.Contains(err.Error(), "script.js:") {
			t.Errorf("%q: got %v, want an error containing %q", tc.script, err, tc.want)
		}
	}

	r := jstest.Load(t, map[string]string{
		"script.js": `import { Counter } from "k6/metrics";
export default function () { new Counter("late"); }`,
	}, nil)
	vu, _ := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Failed || !strings.Contains(r.Stderr.String(), "only be declared in the init context") {
		t.Fatalf("constructor outside init: %v: %s", res.Outcome, r.Stderr)
	}
}
