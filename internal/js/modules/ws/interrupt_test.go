package ws_test

import (
	"testing"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/internal/testkit/wstest"
	"github.com/metronome-load/metronome/js/jstest"

	_ "github.com/metronome-load/metronome/js/modules/metrics"
)

// A ws.connect whose session is still open at the hard stop returns
// because the VU is stopping, as in k6 v2.2.0 (test/compat's
// 213-interrupted-ws-check): the session's samples so far are kept, its
// ws_session_duration is not recorded, nor what the script records after
// the connect returns, and the iteration is interrupted; the bytes it
// moved are still counted.
func TestConnectCutOffByTheStop(t *testing.T) {
	srv := wstest.Start(t)
	r := jstest.Load(t, map[string]string{"script.js": `
import ws from "k6/ws";
import { check, group } from "k6";
import { Counter } from "k6/metrics";
const after = new Counter("after");
export default function () {
	const res = ws.connect(__ENV.URL + "/cut", {}, (socket) => {
		socket.on("open", () => socket.send("hi"));
		socket.on("close", () => after.add(1));
	});
	check(res, { "after the stop": () => true });
	after.add(1);
	group("after", () => {});
}`}, &jstest.Config{Env: map[string]string{"URL": srv.URL}})
	vu, rec := r.NewVU(t, 1)
	if res := jstest.RunCut(vu, 300*time.Millisecond); res.Outcome != executor.Interrupted {
		t.Errorf("outcome %v, want Interrupted", res.Outcome)
	}
	got := jstest.Tally(rec)
	want := map[string]float64{"ws_sessions": 1, "ws_connecting": 1, "ws_msgs_sent": 1, "ws_msgs_received": 1, "corrected_latency": 1}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	for _, k := range []string{"ws_session_duration", "checks", "after", "group_duration", "iterations"} {
		if _, ok := got[k]; ok {
			t.Errorf("recorded %s after the stop (all: %v)", k, got)
		}
	}
	if got["data_sent"] == 0 || got["data_received"] == 0 {
		t.Errorf("data_sent %v, data_received %v: the session's bytes are counted", got["data_sent"], got["data_received"])
	}
}
