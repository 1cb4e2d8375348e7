package httpclient

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/testkit/tlstest"
)

// mtlsServer starts a loopback HTTPS server that demands a client
// certificate of ca, up to TLS version max (0: 1.3), and answers with the
// common name of the one it got.
func mtlsServer(t *testing.T, ca *tlstest.CA, max uint16) *httptest.Server {
	t.Helper()
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.TLS.PeerCertificates[0].Subject.CommonName)
	}))
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.EnableHTTP2 = true
	s.TLS = &tls.Config{
		Certificates: []tls.Certificate{ca.Issue(t, tlstest.Spec{CommonName: "server"}).TLS},
		ClientAuth:   tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool(), MaxVersion: max,
	}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// get requests raw with client and returns the result's last hop and
// body.
func get(t *testing.T, client *http.Client, raw string) (*Hop, string) {
	t.Helper()
	target, err := ParseTarget(raw)
	if err != nil {
		t.Fatal(err)
	}
	res := Do(context.Background(), client.Transport, &Request{Method: http.MethodGet, URL: target, Header: http.Header{}, Timeout: 10 * time.Second}, nil)
	return res.Last(), res.Body
}

// The client offers the options' certificates as Go picks among them —
// the first whose issuer the server names — over HTTP/2 and TLS 1.2 alike,
// and times the handshake of a new connection only.
func TestClientCertificates(t *testing.T) {
	ca, other := tlstest.NewCA(t, "ca"), tlstest.NewCA(t, "other")
	cfg := &tls.Config{
		RootCAs: ca.Pool(),
		Certificates: []tls.Certificate{
			other.Issue(t, tlstest.Spec{CommonName: "client-b", Client: true, RSA: true}).TLS,
			ca.Issue(t, tlstest.Spec{CommonName: "client-a", Client: true}).TLS,
		},
	}
	client := NewClient(Options{TLS: cfg})
	defer client.CloseIdleConnections()
	for _, c := range []struct {
		max   uint16
		proto string
		tls   uint16
	}{{0, "HTTP/2.0", tls.VersionTLS13}, {tls.VersionTLS12, "HTTP/2.0", tls.VersionTLS12}} {
		s := mtlsServer(t, ca, c.max)
		first, body := get(t, client, s.URL)
		again, _ := get(t, client, s.URL)
		if first.Err != nil || first.Status != 200 || body != "client-a" || first.Proto != c.proto || first.TLSVersion != c.tls {
			t.Errorf("max %x: %v %d %q %s %x", c.max, first.Err, first.Status, body, first.Proto, first.TLSVersion)
		}
		if first.Timings.TLSHandshaking <= 0 || again.Timings.TLSHandshaking != 0 || again.Status != 200 {
			t.Errorf("max %x: handshakes timed %v then %v", c.max, first.Timings.TLSHandshaking, again.Timings.TLSHandshaking)
		}
	}
	if cfg.NextProtos != nil {
		t.Error("the client changed the options' TLS config")
	}
}

// A server that demands a certificate the client does not have refuses
// it. Over TLS 1.2 it does so within the handshake, so the client always
// reads the server's alert (k6's 1010), and no handshake is timed. Over
// TLS 1.3 the client has finished its side of the handshake before the
// server has read the empty certificate; the server's alert then races
// the close that follows it, so a request may instead fail on a reset or
// closed connection while writing or reading, or while HTTP/2 sets the
// connection up. Every outcome must be one of those, each with k6's code.
func TestNoClientCertificate(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	client := NewClient(Options{TLS: &tls.Config{RootCAs: ca.Pool()}, NoConnectionReuse: true})
	defer client.CloseIdleConnections()

	s12 := mtlsServer(t, ca, tls.VersionTLS12)
	for i := 0; i < 5; i++ {
		h, _ := get(t, client, s12.URL)
		if h.ErrCode != 1010 || ErrorText(h.Err) != "remote error: tls: handshake failure" || h.Status != 0 || h.Timings.TLSHandshaking != 0 {
			t.Errorf("TLS 1.2: %d %q status %d handshake %v", h.ErrCode, ErrorText(h.Err), h.Status, h.Timings.TLSHandshaking)
		}
	}

	allowed := map[string]int{
		"remote error: tls: certificate required":     1010,
		"read: connection reset by peer":              1220,
		"write: connection reset by peer":             1220,
		"write: broken pipe":                          1201,
		"EOF":                                         1000,
		"unexpected EOF":                              1000,
		"http2: client conn could not be established": 1000,
	}
	s13 := mtlsServer(t, ca, 0)
	seen := map[string]int{}
	for i := 0; i < 20; i++ {
		h, _ := get(t, client, s13.URL)
		text := ErrorText(h.Err)
		seen[text]++
		if code, ok := allowed[text]; !ok || h.ErrCode != code || h.Status != 0 {
			t.Errorf("TLS 1.3: %d %q status %d is not an outcome TLS 1.3 allows", h.ErrCode, text, h.Status)
		}
	}
	t.Logf("TLS 1.3 outcomes: %v", seen)
}

// Through a proxy, a host name blockHostnames blocks and a URL whose host
// is a blacklisted IP address fail as they do directly (1111, 1110),
// before the proxy hears of them; other requests reach the proxy, whose
// own address the options still govern: blacklisted, it fails every
// request as k6 reports it, "proxyconnect tcp: …" (1200).
func TestProxyFence(t *testing.T) {
	asked := make(chan string, 10)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked <- r.Host
		io.WriteString(w, "proxied")
	}))
	defer proxy.Close()
	proxyURL, _ := url.Parse(proxy.URL)
	through := func(o Options) *http.Client {
		c := NewClient(o)
		tr := c.Transport.(*transport)
		tr.Transport.Proxy = tr.dialer.Proxy(http.ProxyURL(proxyURL))
		tr.fast = nil // as when HTTP_PROXY is set
		return c
	}
	c := through(Options{BlockHostnames: []string{"*.blocked.test"}, BlacklistIPs: []string{"10.0.0.0/8"}, Hosts: map[string]string{"pinned.test": "10.0.0.1"}})
	for _, tc := range []struct {
		url, text string
		code      int
	}{
		{"http://a.blocked.test/", "hostname is blocked", 1111},
		{"http://10.2.3.4:8080/", "ip is blacklisted", 1110},
		{"http://allowed.test/", "", 0},
		{"http://pinned.test/", "", 0},
	} {
		h, body := get(t, c, tc.url)
		if h.Err != nil && ErrorText(h.Err) != tc.text || h.ErrCode != tc.code || tc.code == 0 && body != "proxied" {
			t.Errorf("%s: %d %v %q", tc.url, h.ErrCode, h.Err, body)
		}
	}
	close(asked)
	var hosts []string
	for h := range asked {
		hosts = append(hosts, h)
	}
	if strings.Join(hosts, ",") != "allowed.test,pinned.test" {
		t.Errorf("the proxy was asked for %q", hosts)
	}

	blocked := through(Options{BlacklistIPs: []string{"127.0.0.0/8"}})
	h, _ := get(t, blocked, "http://allowed.test/")
	const want = "proxyconnect tcp: IP (127.0.0.1) is in a blacklisted range (127.0.0.0/8)"
	if h.ErrCode != 1200 || ErrorText(h.Err) != want {
		t.Errorf("a blacklisted proxy: %d %q, want 1200 %q", h.ErrCode, ErrorText(h.Err), want)
	}
}
