package grpc_test

import (
	"strings"
	"testing"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/internal/testkit/grpctest"
	"github.com/metronome-load/metronome/js/jstest"
)

// params.discardResponseMessage as k6 v2.2.0 answers it (test/compat's
// 452-grpc-discard-response): invoke's and asyncInvoke's message is null
// while status, headers, trailers and error stay, a stream's data
// handlers get an empty object, and every call keeps its
// grpc_req_duration with its status.
func TestDiscardResponseMessage(t *testing.T) {
	s := startServer(t)
	r := jstest.Load(t, map[string]string{"protos/hello.proto": grpctest.Proto, "script.js": `
import grpc from "k6/net/grpc";
const client = new grpc.Client();
client.load(["protos"], "hello.proto");
const d = { discardResponseMessage: true };
export default async function () {
	client.connect(__ENV.ADDR, { plaintext: true });
	const r = client.invoke("metronome.test.Greeter/SayHello", { name: "d" }, { discardResponseMessage: true, metadata: { "x-name": "md" } });
	console.log("ok", r.message, r.status, r.headers["x-echo"][0], r.trailers["x-trailer"][0], r.error);
	const f = client.invoke("metronome.test.Greeter/Fail", { name: "d" }, d);
	console.log("fail", f.message, f.status, f.error.code, f.error.message);
	const a = await client.asyncInvoke("metronome.test.Greeter/SayHello", { name: "a" }, d);
	console.log("async", a.message, a.status);
	const n = client.invoke("metronome.test.Greeter/SayHello", { name: "n" }, { discardResponseMessage: false });
	console.log("kept", n.message.message);
	const st = new grpc.Stream(client, "metronome.test.Greeter/Repeat", d);
	st.on("data", (m) => console.log("data", JSON.stringify(m)));
	st.write({ name: "r", count: 2 });
	st.end();
}`}, &jstest.Config{Env: map[string]string{"ADDR": s.Addr}})
	vu, rec := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v, want Completed\n%s", res.Outcome, r.Stderr)
	}
	out := r.Stderr.String()
	for want, n := range map[string]int{
		// A status is a Go value: k6 v2.2.0 writes its methods (corpus 475).
		"ok null { string: [object Function], unmarshalJSON: [object Function] } md done null": 1, "fail null { string: [object Function], unmarshalJSON: [object Function] } 5 no d": 1, "async null { string: [object Function], unmarshalJSON: [object Function] }": 1,
		"kept hello n": 1, "data {}": 2,
	} {
		if got := strings.Count(out, want); got != n {
			t.Errorf("%q printed %d times, want %d\n%s", want, got, n, out)
		}
	}
	got := jstest.Tally(rec, "status")
	for k, v := range map[string]float64{"grpc_req_duration{status=0}": 4, "grpc_req_duration{status=5}": 1, "grpc_streams_msgs_received": 2} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}
