package config

import (
	"strings"
	"testing"

	"github.com/metronome-load/metronome/exitcode"
)

// CheckLimits names the option that asks for too much, with the limit.
func TestCheckLimits(t *testing.T) {
	lim := VULimit{Max: 1000, Why: "the 1000 this test allows"}
	for _, tc := range []struct {
		name, opts string
		want       []string // substrings of the error; none: accepted
	}{
		{"rate at the limit", `{"scenarios": {"s": {"executor": "constant-arrival-rate", "rate": 1000, "timeUnit": "1ms",
			"duration": "1s", "preAllocatedVUs": 1}}}`, nil},
		{"rate over the limit", `{"scenarios": {"s": {"executor": "constant-arrival-rate", "rate": 1, "timeUnit": "1ns",
			"duration": "1s", "preAllocatedVUs": 1}}}`, []string{"scenarios.s.rate", "1 per 1ns", "1,000,000,000 arrivals/s", "1,000,000/s"}},
		{"startRate over the limit", `{"scenarios": {"r": {"executor": "ramping-arrival-rate", "startRate": 2000001,
			"preAllocatedVUs": 1, "stages": [{"duration": "1s", "target": 1}]}}}`, []string{"scenarios.r.startRate", "2,000,001"}},
		{"stage over the limit", `{"scenarios": {"r": {"executor": "ramping-arrival-rate", "preAllocatedVUs": 1,
			"stages": [{"duration": "1s", "target": 10}, {"duration": "1s", "target": 2000}], "timeUnit": "1ms"}}}`,
			[]string{"scenarios.r.stages[1].target", "2,000,000 arrivals/s"}},
		{"intended-arrival-rate too", `{"scenarios": {"i": {"executor": "intended-arrival-rate", "rate": 5000000,
			"duration": "1s", "preAllocatedVUs": 1}}}`, []string{"scenarios.i.rate"}},
		{"vus at the limit", `{"vus": 1000, "duration": "1s"}`, nil},
		{"vus shortcut", `{"vus": 1001, "duration": "1s"}`,
			[]string{"scenarios.default.vus", "1001 VUs", "the 1000 this test allows", "made from the vus and duration options"}},
		{"preAllocatedVUs", `{"scenarios": {"s": {"executor": "constant-arrival-rate", "rate": 1, "duration": "1s",
			"preAllocatedVUs": 10000000}}}`, []string{"scenarios.s.preAllocatedVUs", "10000000 VUs"}},
		{"maxVUs", `{"scenarios": {"s": {"executor": "constant-arrival-rate", "rate": 1, "duration": "1s",
			"preAllocatedVUs": 1, "maxVUs": 5000}}}`, []string{"scenarios.s.maxVUs", "5000 VUs"}},
		{"ramping-vus stage", `{"scenarios": {"v": {"executor": "ramping-vus", "stages": [{"duration": "1s", "target": 10},
			{"duration": "1s", "target": 1500}]}}}`, []string{"scenarios.v.stages[1].target", "1500 VUs"}},
		{"ramping-vus stage as text", `{"scenarios": {"v": {"executor": "ramping-vus", "stages": [{"duration": "1s", "target": 10},
			{"duration": "1s", "target": "1500"}]}}}`, []string{"scenarios.v.stages[1].target", "1500 VUs"}},
		{"ramping-vus startVUs", `{"scenarios": {"v": {"executor": "ramping-vus", "startVUs": 1200,
			"stages": [{"duration": "1s", "target": 1}]}}}`, []string{"scenarios.v.startVUs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Parse([]byte(tc.opts), "test")
			if err != nil {
				t.Fatal(err)
			}
			cfgs, err := Scenarios(o)
			if err != nil {
				t.Fatal(err)
			}
			err = CheckLimits(o, cfgs, lim)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if exitcode.Of(err) != exitcode.InvalidConfig {
				t.Fatalf("got %v (exit %d), want exit 104", err, exitcode.Of(err))
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
		})
	}
}

// Without a machine limit, MaxVUs still holds.
func TestCheckLimitsWithoutMemoryFigure(t *testing.T) {
	o, err := Parse([]byte(`{"vus": 200000000, "duration": "1s"}`), "test")
	if err != nil {
		t.Fatal(err)
	}
	cfgs, err := Scenarios(o)
	if err != nil {
		t.Fatal(err)
	}
	err = CheckLimits(o, cfgs, VULimit{})
	if exitcode.Of(err) != exitcode.InvalidConfig || !strings.Contains(err.Error(), "100,000,000 VUs metronome allows") {
		t.Errorf("got %v, want the fixed cap of 100,000,000", err)
	}
	// An unknown memory limit (the zero VULimit) leaves only that cap.
	small := mustParse(t, `{"vus": 10, "duration": "1s"}`, "test")
	if cfgs, err = Scenarios(small); err != nil {
		t.Fatal(err)
	}
	if err := CheckLimits(small, cfgs, VULimit{}); err != nil {
		t.Errorf("10 VUs with no memory limit known: %v, want no error", err)
	}
}
