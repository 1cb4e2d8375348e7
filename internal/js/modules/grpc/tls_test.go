package grpc_test

import (
	"crypto/tls"
	"encoding/json"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	grpcmod "github.com/metronome-load/metronome/internal/js/modules/grpc"
	"github.com/metronome-load/metronome/internal/testkit/tlstest"
	"github.com/metronome-load/metronome/js/jstest"
)

// mtlsHealth serves grpc.health.v1 over TLS on loopback to clients with a
// certificate of ca: the server and "up" SERVING, "down" NOT_SERVING.
func mtlsHealth(t *testing.T, ca *tlstest.CA) string {
	t.Helper()
	creds := credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{ca.Issue(t, tlstest.Spec{CommonName: "server"}).TLS},
		ClientAuth:   tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool(),
	})
	s := grpc.NewServer(grpc.Creds(creds))
	hs := health.NewServer()
	hs.SetServingStatus("up", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("down", healthpb.HealthCheckResponse_NOT_SERVING)
	healthpb.RegisterHealthServer(s, hs)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(s.Stop)
	return ln.Addr().String()
}

// connect's tls param carries a client certificate, its key (encrypted
// with a password) and the authority to trust; without the param the
// options' TLS applies, tlsAuth's certificates included. healthCheck()
// answers {status} with k6's constants, throws a failed check, and
// records grpc_req_duration with the VU's tags and the status only.
func TestTLSAndHealthCheck(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	a := ca.Issue(t, tlstest.Spec{CommonName: "client-a", Client: true})
	addr := mtlsHealth(t, ca)
	yes := true
	opts := &config.Options{InsecureSkipTLSVerify: &yes, TLSAuth: []config.TLSAuth{{Cert: a.CertPEM, Key: a.KeyPEM}}}
	env := map[string]string{"ADDR": addr, "CA": ca.PEM, "CERT": a.CertPEM, "KEY": a.KeyPEM, "ENC": a.EncryptedKeyPEM(t, "pw", "no")}
	r := jstest.Load(t, map[string]string{"script.js": `import grpc from "k6/net/grpc";
const client = new grpc.Client();
function attempt(what, params) {
	try {
		client.connect(__ENV.ADDR, Object.assign({ timeout: "2s" }, params));
		const h = client.healthCheck("up");
		console.log(what, "ok", JSON.stringify(h), h.status === grpc.HealthCheckServing);
		client.close();
	} catch (e) {
		console.log(what, "error", String(e));
	}
}
export default function () {
	attempt("options", {});
	attempt("options, empty tls", { tls: {} });
	attempt("param", { tls: { cacerts: __ENV.CA, cert: __ENV.CERT, key: __ENV.KEY } });
	attempt("param encrypted", { tls: { cacerts: [__ENV.CA], cert: __ENV.CERT, key: __ENV.ENC, password: "pw" } });
	attempt("wrong password", { tls: { cacerts: __ENV.CA, cert: __ENV.CERT, key: __ENV.ENC, password: "no" } });
	attempt("bad cacerts", { tls: { cacerts: ["x"], cert: __ENV.CERT, key: __ENV.KEY } });
	attempt("cacerts type", { tls: { cacerts: 5 } });
	attempt("cert type", { tls: { cert: 5 } });
	attempt("tls type", { tls: "x" });
	client.connect(__ENV.ADDR, {});
	const all = client.healthCheck(), down = client.healthCheck("down");
	console.log("statuses", String(all.status), String(down.status), down.status === grpc.HealthCheckNotServing,
		[grpc.HealthCheckUnknown, grpc.HealthCheckServing, grpc.HealthCheckNotServing, grpc.HealthCheckServiceUnkown].map(Number).join(","));
	try { client.healthCheck("nope"); } catch (e) { console.log("unknown", String(e)); }
}`}, &jstest.Config{Env: env, Options: opts})
	vu, rec := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("%v\n%s", res.Outcome, r.Stderr)
	}
	out := r.Stderr.String()
	for _, want := range []string{
		`options ok {"status":1} true`,
		`options, empty tls ok {"status":1} true`,
		`param ok {"status":1} true`,
		`param encrypted ok {"status":1} true`,
		`wrong password error Error: client.connect ` + addr + `: x509: decryption password incorrect`,
		`bad cacerts error Error: client.connect ` + addr + `: failed to append ca certificate [0] from PEM`,
		`cacerts type error TypeError: client.connect's tls.cacerts must be a PEM string or an array of them, not a number`,
		`cert type error TypeError: client.connect's tls.cert must be a PEM string, not a number`,
		`tls type error TypeError: client.connect's tls param must be an object`,
		`statuses SERVING NOT_SERVING true 0,1,2,3`,
		`unknown GoError: rpc error: code = NotFound desc = unknown service`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	m := r.Registry.Get(grpcmod.ReqDurationName)
	samples := jstest.Samples(rec, m)
	// Four successful connects and three checks at the end, each check a
	// call: 4 + 3.
	if len(samples) != 7 {
		t.Fatalf("%d grpc_req_duration samples, want 7", len(samples))
	}
	for i, s := range samples {
		got := s.Tags.Map()
		delete(got, "scenario")
		delete(got, "group")
		want := "0"
		if i == 6 {
			want = "5"
		}
		if b, _ := json.Marshal(got); string(b) != `{"status":"`+want+`"}` {
			t.Errorf("sample %d tags %s, want only status %s (k6's)", i, b, want)
		}
	}
}

// Without a certificate the server takes, connect fails with the
// handshake's error, as k6's does, and the options' TLS settings apply to
// the param's config: an unknown authority without cacerts.
func TestTLSConnectFailures(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	a := ca.Issue(t, tlstest.Spec{CommonName: "client-a", Client: true})
	addr := mtlsHealth(t, ca)
	r := jstest.Load(t, map[string]string{"script.js": `import grpc from "k6/net/grpc";
const client = new grpc.Client();
export default function () {
	for (const [what, tls] of [["no authority", { cert: __ENV.CERT, key: __ENV.KEY }], ["no certificate", { cacerts: __ENV.CA }]]) {
		try {
			client.connect(__ENV.ADDR, { tls, timeout: "1s" });
			console.log(what, "connected");
		} catch (e) {
			console.log(what, String(e));
		}
	}
}`}, &jstest.Config{Env: map[string]string{"ADDR": addr, "CA": ca.PEM, "CERT": a.CertPEM, "KEY": a.KeyPEM}})
	vu, _ := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("%v\n%s", res.Outcome, r.Stderr)
	}
	out := r.Stderr.String()
	if !strings.Contains(out, "no authority GoError: context deadline exceeded: connection error: desc = \"transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate signed by unknown authority\"") {
		t.Errorf("without the authority:\n%s", out)
	}
	// TLS 1.3: the client finishes the handshake before the server
	// refuses it, so the refusal arrives as the alert or as the closed
	// connection that follows it.
	if !strings.Contains(out, "no certificate GoError: context deadline exceeded: ") || strings.Contains(out, "no certificate connected") {
		t.Errorf("without a certificate:\n%s", out)
	}
}
