package grpc_test

import (
	"testing"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/internal/testkit/grpctest"
	"github.com/metronome-load/metronome/js/jstest"

	_ "github.com/metronome-load/metronome/js/modules/metrics"
)

// gRPC calls and a stream cut off by the hard stop, as in k6 v2.2.0
// (test/compat's 215-interrupted-grpc): a call answered before the stop
// keeps its grpc_req_duration, also an asyncInvoke answered while the VU
// slept; a call cut off records none and is charged to corrected_latency
// with outcome=interrupted; a stream open at the stop keeps its messages
// and runs no end or error handler; nothing the script records after the
// stop is kept, and the iteration is interrupted.
func TestCallsCutOffByTheStop(t *testing.T) {
	s := startServer(t)
	s.SetStall(func(time.Time) time.Duration { return time.Minute })
	cases := []struct {
		name, body string
		want       map[string]float64
	}{
		{"invoke", `
			client.invoke("metronome.test.Greeter/SayHello", { name: "a" }, { tags: { kind: "answered" } });
			const r = client.invoke("metronome.test.Greeter/Stall", { name: "b" }, { tags: { kind: "cut" } });
			check(r, { "after the stop": () => true });
			after.add(1);`,
			map[string]float64{"grpc_req_duration{kind=answered}": 1, "corrected_latency{kind=answered}": 1,
				"corrected_latency{kind=cut,outcome=interrupted}": 1}},
		{"asyncInvoke while asleep", `
			client.asyncInvoke("metronome.test.Greeter/SayHello", { name: "a" }, { tags: { kind: "answered" } }).then(() => after.add(1));
			client.asyncInvoke("metronome.test.Greeter/Stall", { name: "b" }, { tags: { kind: "cut" } }).then(() => after.add(1));
			sleep(3600);
			after.add(1);`,
			map[string]float64{"grpc_req_duration{kind=answered}": 1, "corrected_latency{kind=answered}": 1,
				"corrected_latency{kind=cut,outcome=interrupted}": 1}},
		{"stream", `
			const s = new grpc.Stream(client, "metronome.test.Greeter/Chat");
			s.on("data", () => after.add(1));
			s.on("end", () => after.add(10));
			s.on("error", () => after.add(100));
			s.write({ name: "open" });`,
			map[string]float64{"grpc_streams": 1, "grpc_streams_msgs_sent": 1, "grpc_streams_msgs_received": 1, "after": 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := jstest.Load(t, map[string]string{"protos/hello.proto": grpctest.Proto, "script.js": `
import grpc from "k6/net/grpc";
import { check, sleep } from "k6";
import { Counter } from "k6/metrics";
const after = new Counter("after");
const client = new grpc.Client();
client.load(["protos"], "hello.proto");
export default function () {
	client.connect(__ENV.ADDR, { plaintext: true });` + c.body + `
}`}, &jstest.Config{Env: map[string]string{"ADDR": s.Addr}})
			vu, rec := r.NewVU(t, 1)
			if res := jstest.RunCut(vu, 500*time.Millisecond); res.Outcome != executor.Interrupted {
				t.Errorf("outcome %v, want Interrupted", res.Outcome)
			}
			got := jstest.Tally(rec, "kind", "outcome")
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
				}
			}
			for k := range got {
				if _, ok := c.want[k]; !ok && k != "data_sent" && k != "data_received" {
					t.Errorf("recorded %s = %v; k6 records nothing of it (all: %v)", k, got[k], got)
				}
			}
		})
	}
}
