package grpc_test

import (
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/internal/testkit/grpctest"
	"github.com/metronome-load/metronome/js/jstest"
)

// debugMessages are the messages of the source=http-debug lines of
// stderr, sorted, with the Sent and Received times as TIME, grpc-go's
// version as V, the wire length of headers and trailers as N (it depends
// on the connection's header compression) and the metadata lines sorted:
// k6 writes them in a map's order too.
func debugMessages(stderr string) []string {
	times := regexp.MustCompile(`(Sent|Received) Time: .*`)
	headerLength := regexp.MustCompile(`^((?:In|Out) (?:Header|Trailer):\nWire Length: )\d+`)
	var out []string
	for _, e := range regexp.MustCompile(`(?m)^INFO\[\d+\] `).Split(stderr, -1) {
		msg, ok := strings.CutSuffix(e, " source=http-debug\n")
		if !ok {
			continue
		}
		msg = times.ReplaceAllString(msg, "$1 Time: TIME")
		msg = regexp.MustCompile(`grpc-go/[0-9.]+`).ReplaceAllString(msg, "grpc-go/V")
		msg = headerLength.ReplaceAllString(msg, "${1}N")
		lines := strings.Split(msg, "\n")
		var md []int
		for i, l := range lines {
			if i > 0 && !strings.Contains(lines[0], "Payload") && regexp.MustCompile(`^[a-z0-9-]+: `).MatchString(l) {
				md = append(md, i)
			}
		}
		sorted := make([]string, len(md))
		for i, j := range md {
			sorted[i] = lines[j]
		}
		sort.Strings(sorted)
		for i, j := range md {
			lines[j] = sorted[i]
		}
		out = append(out, strings.Join(lines, "\n"))
	}
	sort.Strings(out)
	return out
}

// TestHTTPDebug checks the lines --http-debug writes for a unary call, in
// the layout k6 v2.2.0 writes them (corpus 490 compares them with k6's,
// reflection included): the headers, the payloads as protobuf text with
// one space after a field's name whatever this binary's protobuf-go
// picks, the trailers, at level info with source=http-debug only;
// --http-debug alone leaves the payloads out, and without it nothing is
// written.
func TestHTTPDebug(t *testing.T) {
	s := startServer(t)
	const script = `import grpc from "k6/net/grpc";
const client = new grpc.Client();
client.load(["protos"], "hello.proto");
export default function () {
	client.connect(__ENV.ADDR, { plaintext: true });
	client.invoke("metronome.test.Greeter/SayHello", { name: "bob", count: 2 }, { metadata: { "x-name": "md" } });
	client.close();
}`
	headers := []string{
		"In Header:\nWire Length: N\ncontent-type: application/grpc\nx-echo: md\n\n",
		"In Trailer:\nWire Length: N\nx-trailer: done\n\n",
		"Out Header:\nFull Method: /metronome.test.Greeter/SayHello\nRemote Address: ADDR\nuser-agent: grpc-go/V\nx-name: md\n\n",
	}
	full := append([]string{
		"In Payload:\nWire Length: 18\nReceived Time: TIME\nmessage: \"hello bob\"\ncount: 3\n\n\n",
		"Out Payload:\nWire Length: 12\nSent Time: TIME\nname: \"bob\"\ncount: 2\n\n\n",
	}, headers...)
	sort.Strings(full)
	for _, c := range []struct {
		level string
		want  []string
	}{{"full", full}, {"headers", headers}, {"", nil}} {
		r := jstest.Load(t, map[string]string{"script.js": script, "protos/hello.proto": grpctest.Proto},
			&jstest.Config{Env: map[string]string{"ADDR": s.Addr}, Options: &config.Options{HTTPDebug: &c.level}})
		vu, _ := r.NewVU(t, 1)
		if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
			t.Fatalf("%q: %v\n%s", c.level, res.Outcome, r.Stderr)
		}
		got := debugMessages(strings.ReplaceAll(r.Stderr.String(), s.Addr, "ADDR"))
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("--http-debug=%s wrote:\n%q\nwant:\n%q", c.level, got, c.want)
		}
	}
}
