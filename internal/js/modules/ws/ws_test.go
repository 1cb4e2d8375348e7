package ws_test

import (
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/internal/testkit/tlstest"
	"github.com/metronome-load/metronome/internal/testkit/wstest"
	"github.com/metronome-load/metronome/js/jstest"
	"github.com/metronome-load/metronome/metrics"

	_ "github.com/metronome-load/metronome/internal/js/modules/ws"
	_ "github.com/metronome-load/metronome/js/modules/k6"
)

// A session as k6's documentation writes it: handlers, text and binary
// echoes, a ping and its pong, a server ping, the socket's own timers, and
// the close. The counts are checked against what the server counted, the
// tags against what k6 v2.2.0 put on the same session (url, status,
// subproto, the user's tags, group and scenario).
func TestConnectSession(t *testing.T) {
	srv := wstest.Start(t)
	r := jstest.Load(t, map[string]string{"script.js": `
import ws from "k6/ws";
export default function () {
	const log = [];
	const res = ws.connect(__ENV.URL + "/chat?x=1", { headers: { "X-Who": "vu" }, tags: { my: "tag" } }, function (socket) {
		socket.on("open", () => {
			log.push("open");
			socket.send("hello");
			socket.sendBinary(new Uint8Array([1, 2, 3]).buffer);
			socket.ping();
		});
		socket.on("message", (m) => { log.push("msg:" + m); if (m === "hello") socket.send("ping-me"); });
		socket.on("binary", (b) => log.push("bin:" + new Uint8Array(b).join("-")));
		socket.on("pong", () => log.push("pong"));
		socket.on("ping", () => log.push("ping"));
		let ticks = 0;
		socket.setInterval(() => { ticks++; }, 5);
		socket.setTimeout(() => { log.push("ticks>0:" + (ticks > 0)); socket.close(4002); }, 150);
		socket.on("close", (code) => log.push("close:" + code));
	});
	log.sort();
	console.log(log.join(","), res.status, res.url, res.headers["X-Echo"], res.body === "", res.error === "");
}`}, &jstest.Config{Env: map[string]string{"URL": srv.URL}})
	v, rec := r.NewVU(t, 1)
	if res := jstest.Iterate(v); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr.String())
	}
	want := "bin:1-2-3,close:4002,msg:hello,open,ping,pong,ticks>0:true 101 " + srv.URL + "/chat?x=1 yes true true"
	if !strings.Contains(r.Stderr.String(), want) {
		t.Fatalf("want %q in:\n%s", want, r.Stderr.String())
	}
	if got := srv.Headers.Get("X-Who"); got != "vu" {
		t.Errorf("server saw X-Who %q, want vu", got)
	}
	// Sent: hello, the binary, ping-me (k6 counts neither pings nor the
	// close); received: the two echoes.
	sent, recv := int(srv.Text.Load()+srv.Binary.Load()), 2
	counts := map[string]int{"ws_sessions": int(srv.Sessions.Load()), "ws_msgs_sent": sent, "ws_msgs_received": recv,
		"ws_connecting": 1, "ws_session_duration": 1, "ws_ping": 1}
	for name, n := range counts {
		m := r.Registry.Get(name)
		if m == nil {
			t.Fatalf("metric %s is not defined", name)
		}
		ss := jstest.Samples(rec, m)
		total := 0
		for _, s := range ss {
			if m.Type == metrics.Counter {
				total += int(s.Value)
			} else {
				total++
			}
			tags := s.Tags.Map()
			for k, v := range map[string]string{"url": srv.URL + "/chat?x=1", "status": "101", "subproto": "", "my": "tag", "scenario": "default", "group": ""} {
				if tags[k] != v {
					t.Errorf("%s tag %s = %q, want %q (tags %v)", name, k, tags[k], v, tags)
				}
			}
		}
		if total != n {
			t.Errorf("%s: %d, want %d", name, total, n)
		}
	}
	if sent != 3 {
		t.Errorf("the server received %d messages, want 3", sent)
	}
	if n := srv.Pings.Load(); n != 1 {
		t.Errorf("the server saw %d pings, want 1", n)
	}
	var bytes float64
	for _, s := range jstest.Samples(rec, r.Builtin.DataReceived) {
		bytes += s.Value
	}
	if bytes < 100 {
		t.Errorf("data_received = %v bytes, want at least the handshake's answer", bytes)
	}
	// The connect is the session's one request: in an open-model
	// iteration it records corrected_latency with ws_connecting's tags
	// and value plus the lag; the session's messages record none.
	if n := len(jstest.Samples(rec, r.Builtin.CorrectedLatency)); n != 0 {
		t.Fatalf("%d corrected_latency samples from a closed-model iteration", n)
	}
	const lag = 20 * time.Millisecond
	if res := v.Run(t.Context(), executor.Iteration{Scenario: jstest.DefaultScenario, Intended: time.Now().Add(-lag)}); res.Outcome != executor.Completed {
		t.Fatalf("open-model iteration: %v", res.Outcome)
	}
	conn, cor := jstest.Samples(rec, r.Registry.Get("ws_connecting")), jstest.Samples(rec, r.Builtin.CorrectedLatency)
	if len(conn) != 2 || len(cor) != 1 {
		t.Fatalf("%d ws_connecting and %d corrected_latency samples; want 2 and 1", len(conn), len(cor))
	}
	if c, w := cor[0], conn[1]; c.Tags != w.Tags || c.Value < w.Value+metrics.Milliseconds(lag) || c.Value > w.Value+metrics.Milliseconds(lag)+50 {
		t.Errorf("corrected %v ms %v; want ws_connecting's tags %v and %v ms plus the lag", c.Value, c.Tags, w.Tags, w.Value)
	}
}

// A server's close reaches the close handler with its code and ends the
// session; an unreachable server gives, as in k6, a response of status 0
// whose error says why, and the session is still counted.
func TestServerCloseAndFailure(t *testing.T) {
	srv := wstest.Start(t)
	r := jstest.Load(t, map[string]string{"script.js": `
import ws from "k6/ws";
export default function () {
	let code = 0;
	ws.connect(__ENV.URL, (socket) => {
		socket.on("open", () => socket.send("close-me:4001"));
		socket.on("close", (c) => { code = c; });
	});
	const res = ws.connect("ws://127.0.0.1:1/", () => {});
	console.log("code=" + code, "refused=" + (res.status === 0 && res.url === "" && res.error.includes("connection refused")));
}`}, &jstest.Config{Env: map[string]string{"URL": srv.URL}})
	v, rec := r.NewVU(t, 1)
	if res := jstest.Iterate(v); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr.String())
	}
	if want := "code=4001 refused=true"; !strings.Contains(r.Stderr.String(), want) {
		t.Fatalf("want %q in:\n%s", want, r.Stderr.String())
	}
	if n := len(jstest.Samples(rec, r.Registry.Get("ws_sessions"))); n != 2 {
		t.Errorf("%d ws_sessions samples; want 2, the refused session counted as k6 counts it", n)
	}
}

// The network options fence WebSocket connections too, as in k6, which
// dials them with the same dialer as HTTP requests; with the throw option
// the refusal is thrown.
func TestNetworkFence(t *testing.T) {
	srv := wstest.Start(t)
	throw := true
	r := jstest.Load(t, map[string]string{"script.js": `
import ws from "k6/ws";
export default function () {
	let err = "";
	try { ws.connect(__ENV.URL, () => {}); } catch (e) { err = String(e); }
	console.log("refused=" + err.includes("IP (127.0.0.1) is in a blacklisted range (127.0.0.0/8)"));
}`}, &jstest.Config{Env: map[string]string{"URL": srv.URL}, Options: &config.Options{BlacklistIPs: []string{"127.0.0.0/8"}, Throw: &throw}})
	v, _ := r.NewVU(t, 1)
	if res := jstest.Iterate(v); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr.String())
	}
	if !strings.Contains(r.Stderr.String(), "refused=true") {
		t.Fatalf("the blacklisted connection was not refused:\n%s", r.Stderr.String())
	}
	if n := srv.Sessions.Load(); n != 0 {
		t.Errorf("%d sessions reached the blacklisted server", n)
	}
}

// The options' TLS applies to wss:// handshakes, as in k6: tlsAuth's
// certificate is offered to a server that demands one, and without it the
// server's refusal fails the call (TLS 1.2 here, where the refusal is
// always the server's alert).
func TestClientCertificate(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	a := ca.Issue(t, tlstest.Spec{CommonName: "client-a", Client: true})
	up := websocket.Upgrader{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		_ = c.WriteMessage(websocket.TextMessage, []byte("hello "+r.TLS.PeerCertificates[0].Subject.CommonName))
		_, _, _ = c.ReadMessage()
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{ca.Issue(t, tlstest.Spec{CommonName: "server"}).TLS},
		ClientAuth:   tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool(), MaxVersion: tls.VersionTLS12,
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	script := map[string]string{"script.js": `
import ws from "k6/ws";
export default function () {
	const res = ws.connect(__ENV.URL, (socket) => {
		socket.on("message", (m) => { console.log("got", m); socket.close(); });
	});
	if (res.error) console.log("failed", res.error);
}`}
	url := strings.Replace(srv.URL, "https://", "wss://", 1)
	yes := true
	for _, c := range []struct {
		opts *config.Options
		want string
	}{
		{&config.Options{InsecureSkipTLSVerify: &yes, TLSAuth: []config.TLSAuth{{Cert: a.CertPEM, Key: a.KeyPEM}}}, "got hello client-a"},
		{&config.Options{InsecureSkipTLSVerify: &yes}, "failed remote error: tls: handshake failure"},
		{&config.Options{TLSAuth: []config.TLSAuth{{Cert: a.CertPEM, Key: a.KeyPEM}}}, "failed tls: failed to verify certificate: x509: certificate signed by unknown authority"},
	} {
		r := jstest.Load(t, script, &jstest.Config{Env: map[string]string{"URL": url}, Options: c.opts})
		v, _ := r.NewVU(t, 1)
		if res := jstest.Iterate(v); res.Outcome != executor.Completed {
			t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr.String())
		}
		if !strings.Contains(r.Stderr.String(), c.want) {
			t.Errorf("want %q in:\n%s", c.want, r.Stderr.String())
		}
	}
}
