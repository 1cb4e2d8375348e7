package k6_test

import (
	"testing"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/js/jstest"

	_ "github.com/metronome-load/metronome/js/modules/metrics"
)

// A group whose function the hard stop cuts off (here in sleep) records no
// group_duration, as in k6 v2.2.0 (test/compat's
// 216-interrupted-websockets-timers): k6 pushes it after the function
// returns, on a done context. The check recorded in the group before the
// stop is kept.
func TestGroupCutOffByTheStop(t *testing.T) {
	r := jstest.Load(t, map[string]string{"script.js": `
import { check, group, sleep } from "k6";
import { Counter } from "k6/metrics";
const after = new Counter("after");
export default function () {
	group("cut", () => {
		check(true, { "in the group": (x) => x });
		after.add(1);
		sleep(3600);
		after.add(10);
	});
}`}, nil)
	vu, rec := r.NewVU(t, 1)
	if res := jstest.RunCut(vu, 100*time.Millisecond); res.Outcome != executor.Interrupted {
		t.Errorf("outcome %v, want Interrupted", res.Outcome)
	}
	got := jstest.Tally(rec, "group")
	if got["checks{group=::cut}"] != 1 || got["after{group=::cut}"] != 1 {
		t.Errorf("what the group recorded before the stop: %v", got)
	}
	for k := range got {
		switch k {
		case "checks{group=::cut}", "after{group=::cut}", "data_sent{group=}", "data_received{group=}":
		default:
			t.Errorf("recorded %s after the stop (all: %v)", k, got)
		}
	}
}
