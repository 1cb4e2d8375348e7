package compat

import (
	"bytes"
	"compress/gzip"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/md5"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/testkit/encodingtest"
)

// newServer starts the one loopback server every corpus script talks to.
// Its answers depend only on the request, so k6 and metronome see the same
// bodies; the scripts reach it through __ENV.BASE.
func newServer() *httptest.Server { return startProto(corpusMux()) }

// corpusMux is what the corpus server answers over HTTP.
func corpusMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("/loki/{mode}/{key}/push", serveLoki)
	mux.HandleFunc("/json", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, map[string]any{
			"name":   "metronome",
			"count":  3,
			"items":  []any{map[string]any{"id": 1, "tag": "a"}, map[string]any{"id": 2, "tag": "b"}, map[string]any{"id": 3, "tag": "c"}},
			"nested": map[string]any{"flag": true, "ratio": 0.25},
		})
	})
	mux.HandleFunc("/echo", echo)
	mux.HandleFunc("/page", func(w http.ResponseWriter, _ *http.Request) {
		// A page for the k6/browser scripts (360–399): a form and a link.
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<!doctype html><html><head><title>Corpus page</title></head><body>
<h1 id="h">Hello</h1>
<label for="name">Your name</label><input id="name" placeholder="Name here">
<input type="checkbox" id="agree" aria-label="Agree">
<button id="go" onclick="document.getElementById('h').textContent = 'Hi ' + document.getElementById('name').value">Greet</button>
<ul><li>one</li><li>two</li><li>three</li></ul>
<a href="/page2">Next page</a>
</body></html>`)
	})
	mux.HandleFunc("/page2", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<!doctype html><html><head><title>Second</title></head><body><p id="p">second page</p></body></html>`)
	})
	mux.HandleFunc("/raw", func(w http.ResponseWriter, r *http.Request) {
		// The request's body as the response's, for bodies that are not
		// JSON.
		w.Header().Set("Content-Type", "text/plain")
		io.Copy(w, io.LimitReader(r.Body, 1<<20))
	})
	mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, err := strconv.Atoi(r.PathValue("code"))
		if err != nil || code < 100 || code > 599 {
			code = 400
		}
		w.WriteHeader(code)
		fmt.Fprintf(w, "status %d\n", code)
	})
	mux.HandleFunc("/redirect/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		if n <= 0 {
			io.WriteString(w, "redirected\n")
			return
		}
		http.Redirect(w, r, "/redirect/"+strconv.Itoa(n-1), http.StatusFound)
	})
	mux.HandleFunc("/redirect-to", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("url"), http.StatusFound)
	})
	mux.HandleFunc("/cookies/set", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		names := make([]string, 0, len(q))
		for k := range q {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			http.SetCookie(w, &http.Cookie{Name: k, Value: q.Get(k), Path: "/"})
		}
		if r.URL.Query().Has("redirect") {
			http.Redirect(w, r, "/cookies", http.StatusFound)
			return
		}
		writeJSON(w, 200, map[string]any{"set": names})
	})
	mux.HandleFunc("/cookies", func(w http.ResponseWriter, r *http.Request) {
		got := map[string]string{}
		for _, c := range r.Cookies() {
			got[c.Name] = c.Value
		}
		writeJSON(w, 200, map[string]any{"cookies": got})
	})
	mux.HandleFunc("/html", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, htmlPage)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		ms, _ := strconv.Atoi(r.URL.Query().Get("ms"))
		ms = min(max(ms, 0), 5000)
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "slow\n")
	})
	mux.HandleFunc("/basic-auth/{user}/{pass}", func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || u != r.PathValue("user") || p != r.PathValue("pass") {
			w.Header().Set("WWW-Authenticate", `Basic realm="compat"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		writeJSON(w, 200, map[string]any{"authenticated": true, "user": u})
	})
	digest := newDigest()
	mux.HandleFunc("/digest-auth/{user}/{pass}", digest.serve)
	mux.HandleFunc("/multipart", multipartEcho)
	mux.HandleFunc("/bytes/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		n = min(max(n, 0), 1<<20)
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i % 251)
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(b)
	})
	mux.Handle("/secret/", secretServer())
	mux.HandleFunc("/headers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Compat", "yes")
		w.Header().Add("X-Multi", "one")
		w.Header().Add("X-Multi", "two")
		writeJSON(w, 200, map[string]any{"headers": flatHeaders(r.Header)})
	})
	mux.HandleFunc("/gzip", func(w http.ResponseWriter, _ *http.Request) {
		// A gzip body whatever the request asked for, as compress/gzip
		// writes it: the same bytes on every run.
		var b bytes.Buffer
		z := gzip.NewWriter(&b)
		io.WriteString(z, "hello gzip\n")
		z.Close()
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "text/plain")
		w.Write(b.Bytes())
	})
	mux.HandleFunc("/tls-client", tlsClient)
	mux.HandleFunc("/decode", decodeEcho)
	mux.HandleFunc("/cut-body", cutBody)
	mux.HandleFunc("/gzip-bad", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		io.WriteString(w, "this is not gzip")
	})
	return mux
}

// cutBody promises a body of 100 bytes and closes the connection after 10;
// with ?stall it first waits, for up to 5 s or until the client hangs up,
// so that a request's timeout ends it while it reads the body.
func cutBody(w http.ResponseWriter, r *http.Request) {
	c, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	defer c.Close()
	io.WriteString(buf, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nContent-Type: text/plain\r\n\r\n0123456789")
	if buf.Flush() != nil || !r.URL.Query().Has("stall") {
		return
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	io.Copy(io.Discard, c) // returns when the client closes, or at the deadline
}

// endpoint is a loopback server a corpus script reaches through
// __ENV[name], or with value set, another value the script gets there
// (a certificate in PEM) and that no observation shows.
type endpoint struct {
	name, url string
	value     bool
}

// startEndpoints starts the servers of the corpus, closed when t ends:
// BASE (newServer), TLS_BASE (a certificate of an unknown authority) and
// TLS servers that fail a client's verification or handshake in other
// ways, with certificates made here:
//
//	TLS_EXPIRED     a certificate that expired yesterday
//	TLS_NOT_YET     one valid from tomorrow
//	TLS_WRONG_HOST  one for other.test only (no IP address)
//	TLS_OLD         a server of TLS 1.0 only
//
// and those of the TLS option scripts (tlsEndpoints).
func startEndpoints(t *testing.T) []endpoint {
	now := time.Now()
	loopback := []net.IP{net.IPv4(127, 0, 0, 1)}
	valid := selfSigned(t, now.Add(-time.Hour), now.Add(24*time.Hour), nil, loopback)
	tlsSrvs := []struct {
		name string
		cfg  *tls.Config
	}{
		{"TLS_EXPIRED", &tls.Config{Certificates: []tls.Certificate{selfSigned(t, now.Add(-48*time.Hour), now.Add(-24*time.Hour), nil, loopback)}}},
		{"TLS_NOT_YET", &tls.Config{Certificates: []tls.Certificate{selfSigned(t, now.Add(24*time.Hour), now.Add(48*time.Hour), nil, loopback)}}},
		{"TLS_WRONG_HOST", &tls.Config{Certificates: []tls.Certificate{selfSigned(t, now.Add(-time.Hour), now.Add(24*time.Hour), []string{"other.test"}, nil)}}},
		{"TLS_OLD", &tls.Config{Certificates: []tls.Certificate{valid}, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS10}},
	}
	srv, tlsSrv := newServer(), newTLSServer()
	t.Cleanup(srv.Close)
	t.Cleanup(tlsSrv.Close)
	eps := []endpoint{{name: "BASE", url: srv.URL}, {name: "TLS_BASE", url: tlsSrv.URL}}
	for _, ts := range tlsSrvs {
		s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, "secure\n")
		}))
		// The handshake errors these servers exist for would fill the
		// test's log.
		s.Config.ErrorLog = log.New(io.Discard, "", 0)
		s.TLS = ts.cfg
		s.StartTLS()
		t.Cleanup(s.Close)
		eps = append(eps, endpoint{name: ts.name, url: s.URL})
	}
	eps = append(eps, tlsEndpoints(t, srv.URL, tlsSrv.URL)...)
	return append(eps, startNamed(t)...)
}

// selfSigned makes a self-signed server certificate valid from notBefore
// to notAfter for the names and addresses given.
func selfSigned(t *testing.T, notBefore, notAfter time.Time, names []string, ips []net.IP) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "metronome compat"},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		DNSNames:     names,
		IPAddresses:  ips,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// newTLSServer starts the loopback HTTPS server of the TLS scripts
// (__ENV.TLS_BASE); its certificate is self-signed, so only a run with
// insecureSkipTLSVerify reaches it.
func newTLSServer() *httptest.Server {
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "secure\n")
	}))
	// Scripts that do not trust its certificate fail the handshake.
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.StartTLS()
	return s
}

// htmlPage is what /html serves: enough structure for k6/html's Selection
// API (lists, attributes, forms, nesting).
const htmlPage = `<!DOCTYPE html>
<html><head><title>Compat page</title><meta name="description" content="a test page"></head>
<body>
<h1 id="top" class="title big">Hello, k6</h1>
<ul id="list">
  <li class="item" data-id="1">one</li>
  <li class="item" data-id="2">two</li>
  <li class="item odd" data-id="3">three</li>
</ul>
<a href="/json" class="link">json</a><a href="/html" class="link">self</a>
<form id="f" action="/echo" method="post">
  <input type="text" name="user" value="alice">
  <input type="hidden" name="csrf" value="tok123">
  <select name="color"><option value="r">red</option><option value="g" selected>green</option></select>
  <textarea name="note">hi there</textarea>
</form>
<div id="outer"><p>first <b>bold</b></p><p>second</p></div>
</body></html>
`

// echo answers with what it received: method, path, query, the headers a
// script may set, body and form.
func echo(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	out := map[string]any{
		"method":       r.Method,
		"path":         r.URL.Path,
		"query":        flatValues(r.URL.Query()),
		"headers":      flatHeaders(r.Header),
		"body":         string(body),
		"content_type": r.Header.Get("Content-Type"),
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		if err := r.ParseForm(); err == nil {
			out["form"] = flatValues(r.PostForm)
		}
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var v any
		if json.Unmarshal(body, &v) == nil {
			out["json"] = v
		}
	}
	writeJSON(w, 200, out)
}

// decodeEcho answers with what a request's body was on the wire (its
// length and bytes in hex) and what it decodes to through its
// Content-Encoding, undone last name first, for the params.compression
// scripts (440–444).
func decodeEcho(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	ce := r.Header.Get("Content-Encoding")
	out := map[string]any{"ce": ce, "content_length": r.ContentLength, "wire": len(raw), "hex": hex.EncodeToString(raw),
		"content_type": r.Header.Get("Content-Type")}
	b, err := encodingtest.Decode(ce, raw)
	if err != nil {
		out["error"] = err.Error()
		writeJSON(w, 200, out)
		return
	}
	out["body"] = string(b)
	writeJSON(w, 200, out)
}

// multipartEcho parses a multipart/form-data body and answers with its
// fields and, per file, the file name, size and content type.
func multipartEcho(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		writeJSON(w, 400, map[string]any{"error": "not multipart"})
		return
	}
	files := map[string]any{}
	for name, fhs := range r.MultipartForm.File {
		fh := fhs[0]
		f, err := fh.Open()
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(f)
		f.Close()
		files[name] = map[string]any{"filename": fh.Filename, "size": len(b), "content_type": fh.Header.Get("Content-Type"), "content": string(b)}
	}
	writeJSON(w, 200, map[string]any{"fields": flatValues(r.MultipartForm.Value), "files": files})
}

// digestAuth serves RFC 2617 digest authentication with qop=auth and MD5,
// the scheme k6's auth: 'digest' speaks.
type digestAuth struct {
	mu     sync.Mutex
	nonces map[string]bool
}

func newDigest() *digestAuth { return &digestAuth{nonces: map[string]bool{}} }

func (d *digestAuth) serve(w http.ResponseWriter, r *http.Request) {
	user, pass := r.PathValue("user"), r.PathValue("pass")
	if d.valid(r, user, pass) {
		writeJSON(w, 200, map[string]any{"authenticated": true, "user": user})
		return
	}
	b := make([]byte, 16)
	rand.Read(b)
	nonce := hex.EncodeToString(b)
	d.mu.Lock()
	d.nonces[nonce] = true
	d.mu.Unlock()
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Digest realm="compat@metronome", qop="auth", nonce="%s", opaque="0a1b2c", algorithm=MD5`, nonce))
	w.WriteHeader(http.StatusUnauthorized)
}

func (d *digestAuth) valid(r *http.Request, user, pass string) bool {
	h := r.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(h, "Digest ")
	if !ok {
		return false
	}
	p := map[string]string{}
	for _, part := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if ok {
			p[k] = strings.Trim(v, `"`)
		}
	}
	d.mu.Lock()
	known := d.nonces[p["nonce"]]
	d.mu.Unlock()
	if !known || p["username"] != user {
		return false
	}
	md5hex := func(s string) string { s2 := md5.Sum([]byte(s)); return hex.EncodeToString(s2[:]) }
	ha1 := md5hex(user + ":compat@metronome:" + pass)
	ha2 := md5hex(r.Method + ":" + p["uri"])
	want := md5hex(strings.Join([]string{ha1, p["nonce"], p["nc"], p["cnonce"], p["qop"], ha2}, ":"))
	return p["response"] == want
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func flatValues(v map[string][]string) map[string]string {
	out := make(map[string]string, len(v))
	for k, vs := range v {
		out[k] = strings.Join(vs, ",")
	}
	return out
}

// flatHeaders keeps the headers a script may have set; the transport's
// own headers (encoding, connection, length) are left out.
func flatHeaders(h http.Header) map[string]string {
	out := map[string]string{}
	for k, vs := range h {
		switch k {
		case "Accept-Encoding", "Connection", "Content-Length":
			continue
		}
		out[k] = strings.Join(vs, ",")
	}
	return out
}
