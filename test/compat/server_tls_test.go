package compat

import (
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/internal/testkit/tlstest"
)

// tlsEndpoints starts the servers of the TLS option scripts, with
// certificates made here by one authority (CA_PEM), and hands the scripts
// the client certificates as PEM:
//
//	MTLS           TLS 1.3, demands a client certificate of CA_PEM; HTTP/2,
//	               the WebSocket echo, the Greeter and Health gRPC services
//	MTLS12         the same with TLS 1.2 at most, where a refused client
//	               certificate fails the handshake itself, so that the
//	               error is always the server's alert
//	MTLS_STRANGER  TLS 1.2, demands a certificate of an authority no
//	               client certificate here comes from
//	TLS13          TLS 1.3 only
//	TLS12_CIPHERS  TLS 1.2 only, HTTP/1.1, an RSA certificate and two
//	               suites: TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256, which Go
//	               clients offer only when told to, and
//	               TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256
//	PROXY          a forward proxy (see newProxy) in front of base and
//	               tlsBase
//
//	CLIENT_CERT, CLIENT_KEY    client-a, a certificate of CA_PEM
//	CLIENT_KEY_ENC             its key encrypted with the password "secret"
//	OTHER_CERT, OTHER_KEY      client-b, of another authority, RSA
//
// Every /tls-client answers "client=<the client certificate's common
// name>" (or none).
func tlsEndpoints(t *testing.T, base, tlsBase string) []endpoint {
	ca, other, stranger := tlstest.NewCA(t, "compat CA"), tlstest.NewCA(t, "other CA"), tlstest.NewCA(t, "stranger CA")
	server := ca.Issue(t, tlstest.Spec{CommonName: "compat server"}).TLS
	serverRSA := ca.Issue(t, tlstest.Spec{CommonName: "compat server", RSA: true}).TLS
	a := ca.Issue(t, tlstest.Spec{CommonName: "client-a", Client: true})
	b := other.Issue(t, tlstest.Spec{CommonName: "client-b", Client: true, RSA: true})
	mtls := func(cas *tlstest.CA, maxVersion uint16) *tls.Config {
		return &tls.Config{Certificates: []tls.Certificate{server}, ClientAuth: tls.RequireAndVerifyClientCert,
			ClientCAs: cas.Pool(), MaxVersion: maxVersion}
	}
	servers := []struct {
		name  string
		cfg   *tls.Config
		proto bool // the WebSocket and gRPC endpoints too
		http2 bool
	}{
		{"MTLS", mtls(ca, 0), true, true},
		{"MTLS12", mtls(ca, tls.VersionTLS12), true, true},
		{"MTLS_STRANGER", mtls(stranger, tls.VersionTLS12), false, true},
		{"TLS13", &tls.Config{Certificates: []tls.Certificate{server}, MinVersion: tls.VersionTLS13}, false, true},
		{"TLS12_CIPHERS", &tls.Config{Certificates: []tls.Certificate{serverRSA}, MaxVersion: tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256, tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256}}, false, false},
	}
	var eps []endpoint
	for _, sv := range servers {
		var h http.Handler = corpusMux()
		if sv.proto {
			h = protoHandler(corpusMux())
		}
		s := httptest.NewUnstartedServer(h)
		// The failed handshakes these servers exist for would fill the
		// test's log.
		s.Config.ErrorLog = log.New(io.Discard, "", 0)
		s.TLS, s.EnableHTTP2 = sv.cfg, sv.http2
		s.StartTLS()
		t.Cleanup(s.Close)
		eps = append(eps, endpoint{name: sv.name, url: s.URL})
	}
	p := newProxy(base, tlsBase)
	t.Cleanup(p.Close)
	return append(eps,
		endpoint{name: "PROXY", url: p.URL},
		endpoint{name: "CA_PEM", url: ca.PEM, value: true},
		endpoint{name: "CLIENT_CERT", url: a.CertPEM, value: true},
		endpoint{name: "CLIENT_KEY", url: a.KeyPEM, value: true},
		endpoint{name: "CLIENT_KEY_ENC", url: a.EncryptedKeyPEM(t, "secret", "wrong"), value: true},
		endpoint{name: "OTHER_CERT", url: b.CertPEM, value: true},
		endpoint{name: "OTHER_KEY", url: b.KeyPEM, value: true},
	)
}

// tlsClient answers which client certificate the connection presented.
func tlsClient(w http.ResponseWriter, r *http.Request) {
	cn := "none"
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		cn = r.TLS.PeerCertificates[0].Subject.CommonName
	}
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprintf(w, "client=%s", cn)
}

// newProxy starts a forward proxy on loopback that never resolves or
// dials the host a request names, so that the proxy scripts can ask for
// any name and nothing leaves the machine: a request in absolute form
// goes to base (an http:// URL) with the host it asked for in
// X-Proxied-Host, and a CONNECT tunnel goes to tlsBase's address for port
// 443 and to base's for any other.
func newProxy(base, tlsBase string) *httptest.Server {
	baseURL, _ := url.Parse(base)
	tlsURL, _ := url.Parse(tlsBase)
	// The proxy's own requests never go through a proxy the machine may
	// name in its environment.
	direct := &http.Transport{Proxy: nil}
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodConnect {
			to := baseURL.Host
			if strings.HasSuffix(r.Host, ":443") {
				to = tlsURL.Host
			}
			tunnel(w, to)
			return
		}
		if !r.URL.IsAbs() {
			http.Error(w, "not a proxy request", http.StatusBadRequest)
			return
		}
		req, err := http.NewRequestWithContext(r.Context(), r.Method, base+r.URL.RequestURI(), r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req.Header = r.Header.Clone()
		req.Header.Set("X-Proxied-Host", r.Host)
		resp, err := direct.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.Start()
	return s
}

// tunnel joins a CONNECT request's connection to a new one to addr.
func tunnel(w http.ResponseWriter, addr string) {
	back, err := net.Dial("tcp", addr)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer back.Close()
	c, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	defer c.Close()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		io.Copy(back, buf.Reader) // what the client sent after CONNECT, then the rest
		back.(*net.TCPConn).CloseWrite()
		close(done)
	}()
	io.Copy(c, back)
	c.Close()
	<-done
}
