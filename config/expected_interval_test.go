package config

import (
	"testing"
	"time"

	"github.com/metronome-load/metronome/executor"
)

// Closed-model scenarios that set no expectedInterval take the test-wide
// option, or without it their executor's default (auto for the looping
// executors, off for the iterations executors); a scenario's own setting
// always wins, and open-model scenarios are left alone.
func TestScenariosGetTheDefaultExpectedInterval(t *testing.T) {
	const scenarios = `{"scenarios": {
		"loop": {"executor": "constant-vus", "duration": "10s"},
		"ramp": {"executor": "ramping-vus", "stages": [{"duration": "10s", "target": 2}]},
		"shared": {"executor": "shared-iterations"},
		"own": {"executor": "per-vu-iterations", "expectedInterval": "7ms"},
		"open": {"executor": "constant-arrival-rate", "rate": 1, "duration": "10s", "preAllocatedVUs": 1}
	}`
	auto := executor.ExpectedInterval{Mode: executor.IntervalAuto}
	off := executor.ExpectedInterval{Mode: executor.IntervalOff}
	fixed := func(d time.Duration) executor.ExpectedInterval {
		return executor.ExpectedInterval{Mode: executor.IntervalFixed, Fixed: d}
	}
	for _, c := range []struct {
		option string
		want   map[string]executor.ExpectedInterval
	}{
		{"", map[string]executor.ExpectedInterval{"loop": auto, "ramp": auto, "shared": off, "own": fixed(7 * time.Millisecond)}},
		{`, "expectedInterval": "off"`, map[string]executor.ExpectedInterval{"loop": off, "ramp": off, "shared": off, "own": fixed(7 * time.Millisecond)}},
		{`, "expectedInterval": "auto"`, map[string]executor.ExpectedInterval{"loop": auto, "ramp": auto, "shared": auto, "own": fixed(7 * time.Millisecond)}},
		{`, "expectedInterval": "12.5ms"`, map[string]executor.ExpectedInterval{"loop": fixed(12500 * time.Microsecond), "ramp": fixed(12500 * time.Microsecond),
			"shared": fixed(12500 * time.Microsecond), "own": fixed(7 * time.Millisecond)}},
	} {
		o, err := Parse([]byte(scenarios+c.option+"}"), "script options")
		if err != nil {
			t.Fatal(err)
		}
		cfgs, err := Scenarios(o)
		if err != nil {
			t.Fatal(err)
		}
		for _, cfg := range cfgs {
			name := cfg.Base().Name
			var got executor.ExpectedInterval
			switch x := cfg.(type) {
			case *executor.ConstantVUsConfig:
				got = x.ExpectedInterval
			case *executor.RampingVUsConfig:
				got = x.ExpectedInterval
			case *executor.SharedIterationsConfig:
				got = x.ExpectedInterval
			case *executor.PerVUIterationsConfig:
				got = x.ExpectedInterval
			default:
				if _, ok := c.want[name]; ok {
					t.Fatalf("%s is a %T", name, cfg)
				}
				continue
			}
			if got != c.want[name] {
				t.Errorf("option%s: scenario %s has expectedInterval %q, want %q", c.option, name, got, c.want[name])
			}
		}
	}
	// The default scenario the shortcut options make gets it too.
	o, _ := Parse([]byte(`{"vus": 2, "duration": "5s"}`), "script options")
	cfgs, err := Scenarios(o)
	if err != nil || cfgs[0].(*executor.ConstantVUsConfig).ExpectedInterval != auto {
		t.Errorf("-u 2 -d 5s: %v %+v, want constant-vus with expectedInterval auto", err, cfgs)
	}
}
