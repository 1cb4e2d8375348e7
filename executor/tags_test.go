package executor

import (
	"testing"

	"github.com/metronome-load/metronome/metrics"
)

func TestNewScenarioTags(t *testing.T) {
	run := metrics.NewTags(map[string]string{"run": "r", "kind": "run"})
	sc := &Scenario{Name: "api", Tags: map[string]string{"kind": "api"}}
	cases := []struct {
		system     map[string]bool
		exec, iter map[string]string
	}{
		{map[string]bool{"scenario": true, "group": true},
			map[string]string{"run": "r", "kind": "run", "scenario": "api"},
			map[string]string{"run": "r", "kind": "api", "scenario": "api", "group": ""}},
		{map[string]bool{"group": true},
			map[string]string{"run": "r", "kind": "run"},
			map[string]string{"run": "r", "kind": "api", "group": ""}},
		{nil,
			map[string]string{"run": "r", "kind": "run"},
			map[string]string{"run": "r", "kind": "api"}},
	}
	for _, c := range cases {
		got := NewScenarioTags(run, c.system, sc)
		if want := metrics.NewTags(c.exec); got.Executor != want {
			t.Errorf("system tags %v: executor tags %v, want %v", c.system, got.Executor.Map(), c.exec)
		}
		if want := metrics.NewTags(c.iter); got.Iteration != want {
			t.Errorf("system tags %v: iteration tags %v, want %v", c.system, got.Iteration.Map(), c.iter)
		}
	}
}

func TestCapabilitiesExports(t *testing.T) {
	c := Capabilities{Functions: []string{"api", "default"}}
	for name, want := range map[string]bool{"api": true, "default": true, "setup": false, "": false} {
		if got := c.Exports(name); got != want {
			t.Errorf("Exports(%q) = %v, want %v", name, got, want)
		}
	}
}
