package grpc_test

import (
	"strings"
	"testing"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/internal/testkit/grpctest"
	"github.com/metronome-load/metronome/js/jstest"
)

// client.close() called in one stream's end handler while the server
// still holds back the end of another stream of the same client, as k6
// v2.2.0 answers it (test/compat's 450-grpc-close-in-end): the held
// stream is cut off, reports k6's error (code 2, "canceled by client
// (k6)") and then its end, and keeps its grpc_req_duration, tagged
// status 1 (CANCELLED). The order is the server's and the script's: the
// quick stream opens only once the held one's reply came, so the server
// holds it by then; the server gives the held end up only when the client
// does. A stream the server fails keeps its duration too, with the
// server's status.
func TestCloseInAnotherStreamsEnd(t *testing.T) {
	s := startServer(t)
	r := jstest.Load(t, map[string]string{"protos/hello.proto": grpctest.Proto, "script.js": `
import grpc from "k6/net/grpc";
const client = new grpc.Client();
client.load(["protos"], "hello.proto");
export default function () {
	client.connect(__ENV.ADDR, { plaintext: true });
	const failed = new grpc.Stream(client, "metronome.test.Greeter/Chat", { tags: { kind: "failed" } });
	failed.on("error", (e) => console.log("failed error", Number(e.code), e.message));
	failed.write({ name: "fail" });
	failed.end();
	const held = new grpc.Stream(client, "metronome.test.Greeter/Chat", { tags: { kind: "held" } });
	held.on("data", () => {
		const quick = new grpc.Stream(client, "metronome.test.Greeter/Repeat", { tags: { kind: "quick" } });
		quick.on("end", () => { console.log("quick end"); client.close(); });
		quick.write({ name: "q", count: 1 });
		quick.end();
	});
	held.on("error", (e) => console.log("held error", Number(e.code), e.message));
	held.on("end", () => console.log("held end"));
	held.write({ name: "hold" });
	held.end();
}`}, &jstest.Config{Env: map[string]string{"ADDR": s.Addr}})
	vu, rec := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v, want Completed\n%s", res.Outcome, r.Stderr)
	}
	out := r.Stderr.String()
	if i := strings.Index(out, "quick end"); i < 0 || !strings.Contains(out[i:], "held error 2 canceled by client (k6)") ||
		!strings.Contains(out[strings.Index(out, "held error"):], "held end") {
		t.Errorf("want quick end, then the held stream's k6 error and end; got\n%s", out)
	}
	if !strings.Contains(out, "failed error 5 no fail") {
		t.Errorf("want the failed stream's error; got\n%s", out)
	}
	if got := s.Holding.Load(); got != 1 {
		t.Errorf("the server held %d streams, want 1", got)
	}
	got := jstest.Tally(rec, "kind", "status")
	for k, v := range map[string]float64{
		"grpc_req_duration{kind=quick,status=0}":  1,
		"grpc_req_duration{kind=held,status=1}":   1,
		"grpc_req_duration{kind=failed,status=5}": 1,
		"grpc_streams{kind=held}":                 1,
	} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}
