package counter_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/examples/extension/counter"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
	"github.com/metronome-load/metronome/js/jstest"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/metrics"
)

// recorded returns the counter_value samples in rec as counter name →
// values, in recording order.
func recorded(t *testing.T, r *jstest.Runner, rec *executortest.Recorder) map[string][]float64 {
	t.Helper()
	m := r.Registry.Get(counter.ValueMetric)
	if m == nil || m.Type != metrics.Gauge {
		t.Fatalf("%s is not defined as a gauge: %+v", counter.ValueMetric, m)
	}
	out := map[string][]float64{}
	for _, s := range jstest.Samples(rec, m) {
		name, ok := s.Tags.Get("counter")
		if !ok {
			t.Errorf("sample %+v has no counter tag", s)
		}
		out[name] = append(out[name], s.Value)
	}
	return out
}

func TestModuleIsRegistered(t *testing.T) {
	if _, ok := modules.Lookup(counter.ModuleName); !ok {
		t.Fatalf("%s is not registered", counter.ModuleName)
	}
}

// VUs of one test share the counters; record() publishes a value as a
// sample with the VU's tags, counter=NAME and its own tags.
func TestCountersAreSharedByVUs(t *testing.T) {
	r := jstest.Load(t, map[string]string{"script.js": `
		import counter from 'k6/x/counter';
		import { incr, get, record } from 'k6/x/counter';

		const atInit = incr('inits');

		export default function () {
			counter.incr('hits');
			incr('bytes', 512);
			record('hits', { vu: String(__VU) });
			record('bytes');
			record('inits');
			record('never');
			if (get('hits') !== counter.get('hits')) throw new Error('named and default exports disagree');
		}
	`}, nil)
	vu1, rec1 := r.NewVU(t, 1)
	vu2, rec2 := r.NewVU(t, 2)
	for _, run := range []executor.VU{vu1, vu2, vu1} {
		if res := jstest.Iterate(run); res.Outcome != executor.Completed {
			t.Fatalf("iteration %v: %s", res.Outcome, r.Stderr)
		}
	}
	got1, got2 := recorded(t, r, rec1), recorded(t, r, rec2)
	// VU 1 ran the first and the third iteration, VU 2 the second.
	if !slices.Equal(got1["hits"], []float64{1, 3}) || !slices.Equal(got2["hits"], []float64{2}) {
		t.Errorf("hits recorded by VU 1 %v, VU 2 %v; want [1 3] and [2]", got1["hits"], got2["hits"])
	}
	if !slices.Equal(got1["bytes"], []float64{512, 1536}) || !slices.Equal(got2["bytes"], []float64{1024}) {
		t.Errorf("bytes recorded by VU 1 %v, VU 2 %v", got1["bytes"], got2["bytes"])
	}
	if !slices.Equal(got1["never"], []float64{0, 0}) {
		t.Errorf("a counter never incremented recorded %v, want 0s", got1["never"])
	}
	// Each VU's init context incremented "inits" once before any
	// iteration ran (the loader may evaluate the init context more often,
	// to read the options, so only the lower bound is certain).
	if v := got1["inits"]; len(v) != 2 || v[0] < 2 {
		t.Errorf("inits recorded %v, want at least 2 (one per VU)", v)
	}
	for _, s := range jstest.Samples(rec1, r.Registry.Get(counter.ValueMetric)) {
		if name, _ := s.Tags.Get("counter"); name == "hits" {
			if vu, _ := s.Tags.Get("vu"); vu != "1" {
				t.Errorf("record()'s own tags are missing: %v", s.Tags)
			}
		}
	}
}

// Two test runs in one process (two loaded scripts) have counters of
// their own.
func TestCountersBelongToOneRun(t *testing.T) {
	script := map[string]string{"script.js": `
		import counter from 'k6/x/counter';
		export default function () { counter.incr('n'); counter.record('n'); }
	`}
	for run := range 2 {
		r := jstest.Load(t, script, nil)
		vu, rec := r.NewVU(t, 1)
		jstest.Iterate(vu)
		if got := recorded(t, r, rec)["n"]; !slices.Equal(got, []float64{1}) {
			t.Errorf("run %d recorded %v, want [1]", run, got)
		}
	}
}

func TestModuleMistakes(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"no name", `counter.incr();`, "counter.incr() needs a counter name"},
		{"empty name", `counter.get('');`, "counter.get(): the counter name must not be empty"},
		{"fractional step", `counter.incr('a', 1.5);`, `counter.incr("a", 1.5): the step must be a whole number`},
		{"step not a number", `counter.incr('a', 'x');`, `counter.incr("a", x): the step must be a whole number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := jstest.Load(t, map[string]string{"script.js": `
				import counter from 'k6/x/counter';
				export default function () {
					` + tc.body + `
				}
			`}, nil)
			vu, _ := r.NewVU(t, 1)
			if res := jstest.Iterate(vu); res.Outcome != executor.Failed {
				t.Errorf("outcome %v, want Failed", res.Outcome)
			}
			if !strings.Contains(r.Stderr.String(), tc.want) || !strings.Contains(r.Stderr.String(), "script.js:4") {
				t.Errorf("stderr %q, want %q at script.js:4", r.Stderr.String(), tc.want)
			}
		})
	}

	// record() adds a sample, which the init context cannot.
	_, err := jstest.TryLoad(t, map[string]string{"script.js": `
		import counter from 'k6/x/counter';
		counter.record('a');
		export default function () {}
	`}, nil)
	if err == nil || !strings.Contains(err.Error(), "the init context cannot") || !strings.Contains(err.Error(), "script.js:3") {
		t.Errorf("record() in the init context: %v", err)
	}
}
