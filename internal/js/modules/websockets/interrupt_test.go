package websockets_test

import (
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/internal/testkit/wstest"
	"github.com/metronome-load/metronome/js/jstest"

	_ "github.com/metronome-load/metronome/js/modules/k6"
	_ "github.com/metronome-load/metronome/js/modules/metrics"
)

// A WebSocket open at the hard stop, as in k6 v2.2.0 (test/compat's
// 216-interrupted-websockets-timers): what came before the stop is kept
// (the session, its message and the handler's metric), no close handler
// runs and no ws_session_duration is recorded after it, the iteration is
// interrupted, and the bytes the session moved are still counted in
// data_sent and data_received.
func TestSocketCutOffByTheStop(t *testing.T) {
	srv := wstest.Start(t)
	r := jstest.Load(t, map[string]string{"script.js": `
import { WebSocket } from "k6/websockets";
import { check } from "k6";
import { Counter } from "k6/metrics";
const after = new Counter("after");
export default function () {
	const ws = new WebSocket(__ENV.URL + "/cut");
	ws.onopen = () => ws.send("hi");
	ws.onmessage = () => after.add(1);
	ws.onclose = () => {
		check(true, { "close after the stop": (x) => x });
		after.add(10);
	};
}`}, &jstest.Config{Env: map[string]string{"URL": srv.URL}})
	vu, rec := r.NewVU(t, 1)
	if res := jstest.RunCut(vu, 300*time.Millisecond); res.Outcome != executor.Interrupted {
		t.Errorf("outcome %v, want Interrupted", res.Outcome)
	}
	got := jstest.Tally(rec)
	want := map[string]float64{"ws_sessions": 1, "ws_connecting": 1, "ws_msgs_sent": 1, "ws_msgs_received": 1, "after": 1, "corrected_latency": 1}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	for _, k := range []string{"ws_session_duration", "checks", "iterations"} {
		if _, ok := got[k]; ok {
			t.Errorf("recorded %s after the stop (all: %v)", k, got)
		}
	}
	if got["data_sent"] == 0 || got["data_received"] == 0 {
		t.Errorf("data_sent %v, data_received %v: the session's bytes are counted", got["data_sent"], got["data_received"])
	}
}

// The old name k6/experimental/websockets still works, with k6 v2.2.0's
// warning that it is deprecated, once per test however many VUs import it
// (test/compat's 193-experimental-websockets records k6's).
func TestExperimentalNameWarnsOnce(t *testing.T) {
	r := jstest.Load(t, map[string]string{"script.js": `
import { WebSocket } from "k6/experimental/websockets";
export default function () {}`}, nil)
	for id := uint64(1); id <= 3; id++ {
		r.NewVU(t, id)
	}
	const warning = "k6/experimental/websockets is deprecated and will be removed in a future release. Please use k6/websockets instead."
	if n := strings.Count(r.Stderr.String(), warning); n != 1 {
		t.Errorf("the warning was logged %d times, want once:\n%s", n, r.Stderr)
	}
}
