package grpc_test

import (
	"strings"
	"testing"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/js/jstest"
)

// connect's reflectMetadata goes with the reflection request, as in k6
// v2.2.0 (test/compat's 453-grpc-reflect-metadata): the server sees it,
// and a reflection the server refuses throws k6's GoError after three
// streams, each recorded in grpc_req_duration with the VU's tags and
// status 7, as k6's are; the reflection that succeeded records none.
func TestReflectMetadata(t *testing.T) {
	s := startServer(t)
	r := jstest.Load(t, map[string]string{"script.js": `
import grpc from "k6/net/grpc";
const good = new grpc.Client();
const bad = new grpc.Client();
export default function () {
	good.connect(__ENV.ADDR, { plaintext: true, reflect: true, reflectMetadata: { "X-Reflect-Token": "secret" } });
	console.log("good", good.invoke("metronome.test.Greeter/SayHello", { name: "r" }).message.message);
	try {
		bad.connect(__ENV.ADDR, { plaintext: true, reflect: true, reflectMetadata: { "x-reflect-token": "wrong" } });
		console.log("bad connected");
	} catch (e) {
		console.log("bad threw", e.name, e.message);
	}
}`}, &jstest.Config{Env: map[string]string{"ADDR": s.Addr}})
	vu, rec := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v, want Completed\n%s", res.Outcome, r.Stderr)
	}
	out := r.Stderr.String()
	for _, want := range []string{"good hello r",
		"bad threw GoError can't list services: rpc error: code = PermissionDenied desc = wrong x-reflect-token"} {
		if !strings.Contains(out, want) {
			t.Errorf("%q not printed\n%s", want, out)
		}
	}
	got := jstest.Tally(rec, "status", "name")
	for k, v := range map[string]float64{
		"grpc_req_duration{status=7}":                                       3,
		"grpc_req_duration{status=0,name=/metronome.test.Greeter/SayHello}": 1,
	} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	if n := len(jstest.Samples(rec, r.Registry.Get("grpc_req_duration"))); n != 4 {
		t.Errorf("%d grpc_req_duration samples, want 4 (all: %v)", n, got)
	}
	if tok := s.ReflectToken.Load(); tok == nil || *tok != "wrong" {
		t.Errorf("the server's last reflection token is %v, want the second connect's", tok)
	}
}
