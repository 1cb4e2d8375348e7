package websockets_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/internal/testkit/wstest"
	"github.com/metronome-load/metronome/js/jstest"
	"github.com/metronome-load/metronome/metrics"

	_ "github.com/metronome-load/metronome/internal/js/modules/websockets"
)

// Two sockets driven by the event loop: the iteration ends only when both
// are closed. Text, ArrayBuffer and Blob sends, both binary types,
// ping/pong, readyState and the close event are checked, and the counts
// against the server's and k6 v2.2.0's accounting (a ping and the close
// frame count as ws_msgs_sent in k6/websockets; the name tag is the URL).
func TestWebSocketIterationWaitsForClose(t *testing.T) {
	srv := wstest.Start(t)
	r := jstest.Load(t, map[string]string{"script.js": `
import { WebSocket, Blob } from "k6/experimental/websockets";
import * as ws2 from "k6/websockets";
const log = [];
export default function () {
	const a = new WebSocket(__ENV.URL + "/a", null, { tags: { my: "t" }, headers: { "X-Who": "a" } });
	log.push("rs0:" + a.readyState + ":" + a.binaryType + ":" + (WebSocket.OPEN === 1) + ":" + (typeof ws2.WebSocket));
	let got = 0;
	a.onopen = () => {
		log.push("open:" + a.readyState);
		a.send("hi");
		a.binaryType = "arraybuffer";
		a.send(new Uint8Array([7, 8]).buffer);
		a.ping();
	};
	a.addEventListener("pong", () => log.push("pong"));
	a.onmessage = (e) => {
		got++;
		log.push(e.type + ":" + (typeof e.data === "string" ? e.data : new Uint8Array(e.data).join("-")));
		if (got === 2) a.close();
	};
	a.onclose = (e) => { log.push("close-a:" + e.code + ":" + a.readyState); report(); };
	const b = new WebSocket(__ENV.URL + "/b", "chat");
	b.onopen = () => {
		log.push("b-proto:" + b.protocol);
		b.send(new Blob(["x", new Uint8Array([121]), "z"], { type: "text/plain" }));
	};
	b.onmessage = (e) => {
		e.data.text().then((txt) => log.push("b-blob:" + txt + ":" + e.data.size));
		b.close(4000, "done");
	};
	b.addEventListener("close", (e) => { log.push("close-b:" + e.code); report(); });
	let closes = 0;
	function report() {
		if (++closes < 2) return;
		log.sort();
		console.log(log.join(","));
	}
}
`}, &jstest.Config{Env: map[string]string{"URL": srv.URL}})
	v, rec := r.NewVU(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if res := v.Run(ctx, executor.Iteration{Scenario: jstest.DefaultScenario}); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr.String())
	}
	want := "b-blob:xyz:3,b-proto:chat,close-a:1000:3,close-b:4000,message:7-8,message:hi,open:1,pong,rs0:0:blob:true:function"
	if !strings.Contains(r.Stderr.String(), want) {
		t.Fatalf("want %q in:\n%s", want, r.Stderr.String())
	}
	// Server: 2 sessions, hi + 2 binaries, 1 ping, 2 closes.
	if s, m, p, c := srv.Sessions.Load(), srv.Text.Load()+srv.Binary.Load(), srv.Pings.Load(), srv.Closes.Load(); s != 2 || m != 3 || p != 1 || c != 2 {
		t.Fatalf("server counted %d sessions, %d messages, %d pings, %d closes; want 2, 3, 1, 2", s, m, p, c)
	}
	counts := map[string]int{"ws_sessions": 2, "ws_msgs_sent": 3 + 1 + 2, "ws_msgs_received": 3,
		"ws_connecting": 2, "ws_session_duration": 2, "ws_ping": 1}
	for name, n := range counts {
		m := r.Registry.Get(name)
		if m == nil {
			t.Fatalf("metric %s is not defined", name)
		}
		total := 0
		for _, s := range jstest.Samples(rec, m) {
			if m.Type == metrics.Counter {
				total += int(s.Value)
			} else {
				total++
			}
			tags := s.Tags.Map()
			if tags["url"] != tags["name"] || !strings.HasPrefix(tags["url"], srv.URL) || tags["status"] != "101" {
				t.Errorf("%s tags %v: want url = name = the socket's URL and status 101", name, tags)
			}
			if strings.HasSuffix(tags["url"], "/a") && tags["my"] != "t" {
				t.Errorf("%s tags %v lack the user's tag", name, tags)
			}
			if strings.HasSuffix(tags["url"], "/b") && tags["subproto"] != "chat" {
				t.Errorf("%s tags %v: want subproto chat", name, tags)
			}
		}
		if total != n {
			t.Errorf("%s: %d, want %d", name, total, n)
		}
	}
}

// A failed connection reports an error event and releases the loop.
func TestWebSocketRefused(t *testing.T) {
	r := jstest.Load(t, map[string]string{"script.js": `
import { WebSocket } from "k6/websockets";
export default function () {
	const w = new WebSocket("ws://127.0.0.1:1/");
	w.onerror = (e) => console.log("error:" + e.error.includes("refused") + ":" + w.readyState);
}`}, nil)
	v, _ := r.NewVU(t, 1)
	if res := jstest.Iterate(v); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr.String())
	}
	if want := "error:true:3"; !strings.Contains(r.Stderr.String(), want) {
		t.Fatalf("want %q in:\n%s", want, r.Stderr.String())
	}
}

// A URL that is not ws:// or wss:// (none, one without a scheme, another
// scheme, a fragment, one that does not parse) makes the constructor
// throw k6 v2.2.0's GoError, and no session is counted: it never was one.
func TestWebSocketBadURLThrows(t *testing.T) {
	r := jstest.Load(t, map[string]string{"script.js": `
import { WebSocket } from "k6/websockets";
export default function () {
	for (const u of [undefined, null, "127.0.0.1:1/ws", "localhost:1", "//127.0.0.1:1/", "http://127.0.0.1:1/", "ws://127.0.0.1:1/#f"]) {
		try {
			const w = new WebSocket(u);
			w.onerror = (e) => console.log("onerror:" + u + ":" + e.error);
		} catch (e) {
			console.log("threw:" + e);
		}
	}
}`}, nil)
	v, rec := r.NewVU(t, 1)
	if res := jstest.Iterate(v); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr.String())
	}
	out := r.Stderr.String()
	for _, want := range []string{
		`threw:GoError: WebSocket requires a url`,
		`threw:GoError: WebSocket requires valid url, but got "127.0.0.1:1/ws" which resulted in parse "127.0.0.1:1/ws": first path segment in URL cannot contain colon`,
		`threw:GoError: WebSocket requires url with scheme ws or wss, but got "localhost"`,
		`threw:GoError: WebSocket requires url with scheme ws or wss, but got ""`,
		`threw:GoError: WebSocket requires url with scheme ws or wss, but got "http"`,
		`threw:GoError: WebSocket requires no url fragment, but got "f"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want %s in:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "threw:"); n != 7 || strings.Contains(out, "onerror:") {
		t.Errorf("%d constructors threw, want all 7 and no error event:\n%s", n, out)
	}
	if m := r.Registry.Get("ws_sessions"); m != nil {
		if n := len(jstest.Samples(rec, m)); n != 0 {
			t.Errorf("%d ws_sessions counted for sockets that never were", n)
		}
	}
}
