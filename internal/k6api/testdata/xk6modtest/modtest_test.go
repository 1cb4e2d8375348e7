package modtest

import (
	"testing"

	"go.k6.io/k6/v2/js/modulestest"
	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/metrics"
)

// TestAdd is an extension author's test: a runtime, the module's instance
// made in the init context, a script run on the event loop in the VU
// context, and what the module emitted and settled.
func TestAdd(t *testing.T) {
	rt := modulestest.NewRuntime(t)
	inst := New().NewModuleInstance(rt.VU)
	if err := rt.VU.Runtime().Set("modtest", inst.Exports().Default); err != nil {
		t.Fatal(err)
	}
	root := rt.VU.InitEnv().Registry.RootTagSet()
	samples := make(chan metrics.SampleContainer, 10)
	rt.MoveToVUContext(&lib.State{
		Samples:        samples,
		BuiltinMetrics: rt.BuiltinMetrics,
		Tags:           lib.NewVUStateTags(root.With("vu", "1")),
	})
	v, err := rt.RunOnEventLoop(`var got; modtest.add(21).then((x) => { got = x; }); got === undefined`)
	if err != nil {
		t.Fatal(err)
	}
	if !v.ToBoolean() {
		t.Error("the promise settled before the script returned: it must settle on the loop")
	}
	if got := rt.VU.Runtime().Get("got"); got == nil || got.ToInteger() != 42 {
		t.Errorf("the promise resolved to %v on the loop, want 42", got)
	}
	var seen []metrics.Sample
	for _, c := range metrics.GetBufferedSamples(samples) {
		seen = append(seen, c.GetSamples()...)
	}
	if len(seen) != 1 {
		t.Fatalf("%d samples, want modtest_adds once", len(seen))
	}
	s := seen[0]
	op, _ := s.Tags.Get("op")
	vu, _ := s.Tags.Get("vu")
	if s.Metric.Name != "modtest_adds" || s.Value != 21 || op != "add" || vu != "1" {
		t.Errorf("sample %s=%v op=%q vu=%q, want modtest_adds=21 op=add vu=1", s.Metric.Name, s.Value, op, vu)
	}
}
