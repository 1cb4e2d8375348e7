package engine

import (
	"testing"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
)

// A scenario whose end (startTime + duration + gracefulStop) is past the
// longest time.Duration is refused in one sentence with exit 104, by run
// and inspect alike, as one whose duration plus gracefulStop is; before,
// inspect --execution-requirements printed maxVUs 0 and totalDuration 0s
// for it and run accepted it. k6 v2.2.0 prints maxVUs 1 and a wrapped
// totalDuration (1500000h0m0s). Just inside the limit the numbers are
// k6's.
func TestRequirementsWithinTheLongestDuration(t *testing.T) {
	caps := executor.Capabilities{Functions: []string{"default"}}
	_, err := scenarios(options(t, `{"scenarios": {"a": {"executor": "constant-vus", "vus": 1, "duration": "1500000h", "startTime": "1500000h"}}}`), caps)
	want := "scenarios.a.startTime: is too long: the scenario would end more than 2562047h47m16.854775807s after the test starts"
	if err == nil || err.Error() != want || exitcode.Of(err) != exitcode.InvalidConfig {
		t.Errorf("error %v (exit %d), want %q and exit %d", err, exitcode.Of(err), want, exitcode.InvalidConfig)
	}
	cfgs, err := scenarios(options(t, `{"scenarios": {"a": {"executor": "constant-vus", "vus": 1, "duration": "1000000h", "startTime": "1000000h"},
		"b": {"executor": "constant-vus", "vus": 2, "duration": "1s"}}}`), caps)
	if err != nil {
		t.Fatal(err)
	}
	if vus, total := Requirements(cfgs); vus != 2 || total.String() != "2000000h0m30s" {
		t.Errorf("maxVUs %d, totalDuration %s; k6 prints 2 and 2000000h0m30s", vus, total)
	}
}
