package config

import (
	"strings"
	"testing"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
)

// The segment options reach every scenario, and a bad value is one
// sentence naming the option, with exit code 104.
func TestExecutionSegmentOptions(t *testing.T) {
	o := mustParse(t, `{"executionSegment":"1/3:2/3","executionSegmentSequence":"0,1/3,2/3,1",
		"scenarios":{"a":{"executor":"constant-vus","vus":10,"duration":"5s"},
		"b":{"executor":"constant-arrival-rate","rate":10,"duration":"5s","preAllocatedVUs":7,"maxVUs":10}}}`, "script options")
	cfgs, err := Scenarios(o)
	if err != nil {
		t.Fatal(err)
	}
	// 10 VUs in thirds are 4/3/3; the middle instance gets 3 (and 2 of 7).
	if cfgs[0].(*executor.ConstantVUsConfig).VUs != 3 || cfgs[1].MaxVUs() != 3 || cfgs[1].InitialVUs() != 2 {
		t.Errorf("segmented scenarios: vus %d, arrival VUs %d-%d; want 3 and 2-3",
			cfgs[0].(*executor.ConstantVUsConfig).VUs, cfgs[1].InitialVUs(), cfgs[1].MaxVUs())
	}
	for _, c := range []struct{ js, want string }{
		{`{"executionSegment":"2/3:1/3"}`, "options.executionSegment:"},
		{`{"executionSegment":"0:1/4","executionSegmentSequence":"0,1/3,1"}`, "options.executionSegment: the segment 0:1/4 is not one of the sequence's segments"},
		{`{"executionSegmentSequence":"0,1/2,1/3"}`, "options.executionSegmentSequence:"},
		{`{"executionSegment":"10.5%"}`, "options.executionSegment:"},
	} {
		_, err := Scenarios(mustParse(t, c.js, "script options"))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || exitcode.Of(err) != exitcode.InvalidConfig {
			t.Errorf("%s: %v (code %d), want %q and 104", c.js, err, exitcode.Of(err), c.want)
		}
	}
}
