package grpc_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	grpcmod "github.com/metronome-load/metronome/internal/js/modules/grpc"
	"github.com/metronome-load/metronome/internal/testkit/grpctest"
	"github.com/metronome-load/metronome/js/jstest"
	"github.com/metronome-load/metronome/metrics"

	_ "github.com/metronome-load/metronome/js/modules/k6"
)

func startServer(t *testing.T) *grpctest.Server {
	t.Helper()
	s, err := grpctest.Start(t.Cleanup)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const unaryScript = `import grpc from "k6/net/grpc";
const client = new grpc.Client();
const methods = client.load(["protos"], "hello.proto");
const reflected = new grpc.Client();
export default async function () {
	if (__ITER === 0) {
		console.log("methods", methods.map((m) => m.full_method + ":" + m.is_client_stream + ":" + m.is_server_stream).join(","));
		client.connect(__ENV.ADDR, { plaintext: true, timeout: "5s" });
		reflected.connect(__ENV.ADDR, { plaintext: true, reflect: true, maxReceiveSize: 1 << 20, maxSendSize: 1 << 20 });
	}
	const r = client.invoke("metronome.test.Greeter/SayHello", { name: "bob", count: 2 },
		{ metadata: { "x-name": "md" }, tags: { mine: "x" }, timeout: 5000 });
	console.log("ok", r.status === grpc.StatusOK, r.message.message, r.message.count, r.headers["x-echo"][0], r.trailers["x-trailer"][0], r.error);
	const f = client.invoke("/metronome.test.Greeter/Fail", { name: "zed" });
	console.log("fail", f.status === grpc.StatusNotFound, String(f.status), f.error.code, f.error.message, JSON.stringify(f.message));
	const a = await reflected.asyncInvoke("metronome.test.Greeter/SayHello", { name: "async" });
	console.log("async", a.status, a.message.message, JSON.stringify(a.message));
}`

// Unary calls of every kind, through loaded protos and through reflection:
// the responses, the server's count and one grpc_req_duration per call
// with the tags real k6 v2.2.0 gave the same calls.
func TestUnary(t *testing.T) {
	s := startServer(t)
	r := jstest.Load(t, map[string]string{"script.js": unaryScript, "protos/hello.proto": grpctest.Proto},
		&jstest.Config{Env: map[string]string{"ADDR": s.Addr}})
	vu, rec := r.NewVU(t, 1)
	const iterations = 3
	for i := 0; i < iterations; i++ {
		if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
			t.Fatalf("iteration %d: %v\n%s", i, res.Outcome, r.Stderr)
		}
	}
	out := r.Stderr.String()
	for _, want := range []string{
		"methods /metronome.test.Greeter/SayHello:false:false,/metronome.test.Greeter/Stall:false:false,/metronome.test.Greeter/Fail:false:false," +
			"/metronome.test.Greeter/Chat:true:true,/metronome.test.Greeter/Count:true:false,/metronome.test.Greeter/Repeat:false:true",
		"ok true hello bob 3 md done null",
		`fail true NotFound 5 no zed {"message":"","count":0,"flag":false,"at":null}`,
		// A status is a Go value: k6 v2.2.0 writes its methods (corpus 475).
		`async { string: [object Function], unmarshalJSON: [object Function] } hello async {"message":"hello async","count":1,"flag":false,"at":null}`,
	} {
		if n := strings.Count(out, want); n != iterations && !strings.HasPrefix(want, "methods") {
			t.Errorf("%q printed %d times, want %d\n%s", want, n, iterations, out)
		} else if n == 0 {
			t.Errorf("%q not printed\n%s", want, out)
		}
	}
	if got := s.Calls("SayHello"); got != 2*iterations {
		t.Errorf("server answered %d SayHello, want %d", got, 2*iterations)
	}
	if got := s.Calls("Fail"); got != iterations {
		t.Errorf("server answered %d Fail, want %d", got, iterations)
	}
	// Every iteration moved bytes both ways; a gRPC call's frames alone
	// are over 20 bytes each way (k6 v2.2.0 counted ~105 B sent and
	// received per SayHello call of the same kind).
	for _, dm := range []*metrics.Metric{r.Builtin.DataSent, r.Builtin.DataReceived} {
		ds := jstest.Samples(rec, dm)
		if len(ds) != iterations {
			t.Fatalf("%d %s samples, want %d", len(ds), dm.Name, iterations)
		}
		for i, d := range ds {
			if d.Value < 3*20 {
				t.Errorf("iteration %d: %s = %v bytes for 3 calls", i, dm.Name, d.Value)
			}
		}
	}
	m := r.Registry.Get(grpcmod.ReqDurationName)
	if m == nil || m.Type != metrics.Trend || m.Contains != metrics.Time {
		t.Fatalf("grpc_req_duration is %+v, want a time trend", m)
	}
	samples := jstest.Samples(rec, m)
	if len(samples) != int(s.Calls("SayHello")+s.Calls("Fail")) {
		t.Fatalf("%d grpc_req_duration samples, want one per answered call: %d", len(samples), s.Calls("SayHello")+s.Calls("Fail"))
	}
	// The tags k6 v2.2.0 gave these calls (-o json, recorded
	// 2026-12-01), besides scenario and group.
	url := s.Addr + "/metronome.test.Greeter/"
	want := []map[string]string{
		{"method": "SayHello", "mine": "x", "name": "/metronome.test.Greeter/SayHello", "service": "metronome.test.Greeter", "status": "0", "url": url + "SayHello"},
		{"method": "Fail", "name": "/metronome.test.Greeter/Fail", "service": "metronome.test.Greeter", "status": "5", "url": url + "Fail"},
		{"method": "SayHello", "name": "/metronome.test.Greeter/SayHello", "service": "metronome.test.Greeter", "status": "0", "url": url + "SayHello"},
	}
	for i, smp := range samples {
		got := smp.Tags.Map()
		delete(got, "scenario")
		delete(got, "group")
		w := want[i%3]
		if len(got) != len(w) {
			t.Errorf("sample %d tags %v, want %v", i, got, w)
			continue
		}
		for k, v := range w {
			if got[k] != v {
				t.Errorf("sample %d tag %s = %q, want %q", i, k, got[k], v)
			}
		}
		if smp.Value <= 0 || smp.Value > 5000 {
			t.Errorf("sample %d duration %v ms", i, smp.Value)
		}
	}
	// The closed-model iterations above record no corrected_latency; an
	// open-model one records one sample per call, with the call's
	// grpc_req_duration tags and duration plus the iteration's lag.
	if n := len(jstest.Samples(rec, r.Builtin.CorrectedLatency)); n != 0 {
		t.Fatalf("%d corrected_latency samples from closed-model iterations", n)
	}
	before := len(samples)
	const lag = 25 * time.Millisecond
	if res := vu.Run(t.Context(), executor.Iteration{Scenario: jstest.DefaultScenario, Intended: time.Now().Add(-lag)}); res.Outcome != executor.Completed {
		t.Fatalf("open-model iteration: %v\n%s", res.Outcome, r.Stderr)
	}
	calls, cor := jstest.Samples(rec, m)[before:], jstest.Samples(rec, r.Builtin.CorrectedLatency)
	if len(calls) != 3 || len(cor) != len(calls) {
		t.Fatalf("%d calls, %d corrected_latency samples; want 3 each", len(calls), len(cor))
	}
	for i, c := range cor {
		if c.Tags != calls[i].Tags || c.Value < calls[i].Value+metrics.Milliseconds(lag) || c.Value > calls[i].Value+metrics.Milliseconds(lag)+50 {
			t.Errorf("call %d: corrected %v ms %v, grpc_req_duration %v ms %v; want the same tags and its duration plus the lag", i, c.Value, c.Tags, calls[i].Value, calls[i].Tags)
		}
	}
}

// A protoset (a FileDescriptorSet with its imports) describes the service
// as well as the .proto does.
func TestLoadProtoset(t *testing.T) {
	s := startServer(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.proto"), []byte(grpctest.Proto), 0o644); err != nil {
		t.Fatal(err)
	}
	comp := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: []string{dir}})}
	res, err := comp.Compile(t.Context(), "hello.proto")
	if err != nil {
		t.Fatal(err)
	}
	set := &descriptorpb.FileDescriptorSet{}
	var add func(fd protoreflect.FileDescriptor)
	seen := map[string]bool{}
	add = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		for i := 0; i < fd.Imports().Len(); i++ {
			add(fd.Imports().Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
	}
	add(res[0])
	b, err := proto.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	r := jstest.Load(t, map[string]string{
		"script.js": `import grpc from "k6/net/grpc";
const client = new grpc.Client();
const methods = client.loadProtoset("hello.protoset");
export default function () {
	client.connect(__ENV.ADDR, { plaintext: true });
	const r = client.invoke("metronome.test.Greeter/SayHello", { name: "set", count: 41 });
	console.log("protoset", methods.length, r.message.message, r.message.count);
	client.close();
}`,
		"hello.protoset": string(b),
	}, &jstest.Config{Env: map[string]string{"ADDR": s.Addr}})
	vu, _ := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("%v\n%s", res.Outcome, r.Stderr)
	}
	if !strings.Contains(r.Stderr.String(), "protoset 6 hello set 42") {
		t.Fatalf("got %s", r.Stderr)
	}
	if s.Calls("SayHello") != 1 {
		t.Fatalf("server answered %d calls, want 1", s.Calls("SayHello"))
	}
}

// Mistakes get one sentence that names the problem; none reaches the
// server.
func TestMistakes(t *testing.T) {
	s := startServer(t)
	r := jstest.Load(t, map[string]string{
		"script.js": `import grpc from "k6/net/grpc";
const client = new grpc.Client();
client.load([], "hello.proto");
let initErr;
try { client.connect(__ENV.ADDR, { plaintext: true }); } catch (e) { initErr = e.message; }
function caught(f) { try { f(); return "no error"; } catch (e) { return e.message; } }
export default function () {
	console.log("E1", initErr);
	console.log("E2", caught(() => client.invoke("metronome.test.Greeter/SayHello", {})));
	console.log("E3", caught(() => client.load([], "hello.proto")));
	client.connect(__ENV.ADDR, { plaintext: true });
	console.log("E4", caught(() => client.invoke("nope.Svc/X", {})));
	console.log("E5", caught(() => client.invoke("metronome.test.Greeter/SayHello", { bogus: 1 })));
	console.log("E6", caught(() => client.connect(__ENV.ADDR, { plaintext: true, bogus: 1 })));
	console.log("E7", caught(() => client.invoke("metronome.test.Greeter/Chat", {})));
	const t0 = Date.now();
	console.log("E8", caught(() => new grpc.Client().connect("127.0.0.1:1", { plaintext: true, timeout: "5s" })), Date.now() - t0 < 5000);
}`,
		"hello.proto": grpctest.Proto,
	}, &jstest.Config{Env: map[string]string{"ADDR": s.Addr}})
	vu, _ := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("%v\n%s", res.Outcome, r.Stderr)
	}
	out := r.Stderr.String()
	for _, want := range []string{
		"E1 client.connect is not supported in the init context",
		"E2 no gRPC connection, you must call connect first",
		"E3 client.load must be called in the init context",
		`E4 method "/nope.Svc/X" not found in file descriptors`,
		// protojson's own text varies its spaces on purpose.
		"E5 the request does not fit metronome.test.HelloRequest: proto:", `unknown field "bogus"`,
		`E6 client.connect: unknown param "bogus"`,
		"E7 method /metronome.test.Greeter/Chat is a streaming method",
		// k6 v2.2.0 fails a connect to a closed port at once, in these
		// words, rather than retrying until the timeout (issue 25).
		`E8 connection error: desc = "transport: error while dialing: dial tcp 127.0.0.1:1: connect: connection refused" true`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if n := s.Calls("SayHello"); n != 0 {
		t.Errorf("server answered %d calls", n)
	}
}

// Streams of the three kinds: the events the script saw, the messages the
// server counted and k6 v2.2.0's metric counts for the same script (4
// streams, 5 messages sent, 6 received, 3 grpc_req_duration: a stream
// that fails emits none).
func TestStreams(t *testing.T) {
	s := startServer(t)
	r := jstest.Load(t, map[string]string{
		"script.js": `import grpc from "k6/net/grpc";
const client = new grpc.Client();
client.load([], "hello.proto");
export default function () {
	client.connect(__ENV.ADDR, { plaintext: true });
	const log = [];
	const s = new grpc.Stream(client, "metronome.test.Greeter/Chat", { tags: { t: "chat" } });
	s.on("data", (m) => log.push("chat " + m.message + " " + m.count));
	s.on("end", () => { log.push("chat end"); console.log("LOG", log.join("|")); });
	s.write({ name: "a" }); s.write({ name: "b" }); s.end();
	const r = new grpc.Stream(client, "metronome.test.Greeter/Repeat");
	const reps = [];
	r.on("data", (m) => reps.push(m.message));
	r.on("end", () => console.log("REPEAT", reps.join(",")));
	r.write({ name: "x", count: 3 }); r.end();
	const c = new grpc.Stream(client, "/metronome.test.Greeter/Count");
	c.on("data", (m) => console.log("COUNT", m.count));
	c.write({ name: "x" }); c.write({ name: "y" }); c.end();
	const f = new grpc.Stream(client, "metronome.test.Greeter/Chat", { timeout: "100ms" });
	f.on("error", (e) => console.log("FAILED", e.code === grpc.StatusDeadlineExceeded, e.message));
	f.on("end", () => console.log("FAILED end"));
}`,
		"hello.proto": grpctest.Proto,
	}, &jstest.Config{Env: map[string]string{"ADDR": s.Addr}})
	vu, rec := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("%v\n%s", res.Outcome, r.Stderr)
	}
	out := r.Stderr.String()
	for _, want := range []string{"LOG chat hello a 1|chat hello b 2|chat end", "REPEAT x 0,x 1,x 2", "COUNT 2",
		"FAILED true context deadline exceeded", "FAILED end"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if got := s.Received.Load(); got != 4 {
		t.Errorf("the server received %d streamed messages, want 4", got)
	}
	for _, m := range []string{"Chat", "Count", "Repeat"} {
		if got := s.Calls(m); got < 1 {
			t.Errorf("the server finished %d %s streams", got, m)
		}
	}
	for name, want := range map[string]int{grpcmod.StreamsName: 4, grpcmod.StreamsMsgsSentName: 5,
		grpcmod.StreamsMsgsReceivedName: 6, grpcmod.ReqDurationName: 3} {
		if got := len(jstest.Samples(rec, r.Registry.Get(name))); got != want {
			t.Errorf("%d %s samples, want %d as k6 v2.2.0 recorded", got, name, want)
		}
	}
	for _, smp := range jstest.Samples(rec, r.Registry.Get(grpcmod.StreamsMsgsReceivedName)) {
		if v, ok := smp.Tags.Get("status"); ok {
			t.Errorf("a received message is tagged status=%q; k6 v2.2.0 tags none (test/compat/corpus/195)", v)
		}
	}
}

// The network options fence gRPC connections too, as in k6: a connection
// to a blacklisted address fails, and the server sees no call.
func TestNetworkFence(t *testing.T) {
	s := startServer(t)
	r := jstest.Load(t, map[string]string{
		"script.js": `import grpc from "k6/net/grpc";
const client = new grpc.Client();
client.load([], "hello.proto");
export default function () {
	try { client.connect(__ENV.ADDR, { plaintext: true, timeout: "2s" }); console.log("connected"); }
	catch (e) { console.log("refused", e.message); }
}`,
		"hello.proto": grpctest.Proto,
	}, &jstest.Config{Env: map[string]string{"ADDR": s.Addr}, Options: &config.Options{BlacklistIPs: []string{"127.0.0.0/8"}}})
	vu, _ := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("%v\n%s", res.Outcome, r.Stderr)
	}
	if out := r.Stderr.String(); !strings.Contains(out, "refused") || strings.Contains(out, "connected") {
		t.Errorf("a connection to a blacklisted address was not refused:\n%s", out)
	}
}
