package http

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/internal/testkit/faultserver"
	"github.com/metronome-load/metronome/internal/testkit/memstat"
)

// The tests of this file hold metronome to k6 v2.2.0 where a script or a
// target is hostile (issue 23). Every expected answer was read from real
// k6 running the same request against a loopback server.

// rawEcho answers /echo with the request as the server read it, headers
// sorted (Request.Write's form), /status/{code} with that status, and
// /redir?to=URL&code=N with a redirect. It counts the requests it read by
// their request line.
type rawEcho struct {
	mu    sync.Mutex
	lines []string
}

func (s *rawEcho) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.lines = append(s.lines, r.Method+" "+r.URL.RequestURI())
	s.mu.Unlock()
	switch {
	case r.URL.Path == "/echo":
		var b bytes.Buffer
		_ = r.Write(&b)
		_, _ = w.Write(b.Bytes())
	case strings.HasPrefix(r.URL.Path, "/status/"):
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/status/"))
		w.WriteHeader(code)
	case r.URL.Path == "/redir":
		code := http.StatusFound
		if c := r.URL.Query().Get("code"); c != "" {
			code, _ = strconv.Atoi(c)
		}
		w.Header().Set("Location", r.URL.Query().Get("to"))
		w.WriteHeader(code)
	default:
		http.NotFound(w, r)
	}
}

func (s *rawEcho) requestLines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines...)
}

// TestSmuggledMethodIsRefused is the probe's smuggling case: a method
// holding CR/LF used to put a second request on the wire, whose answer a
// later request on the pooled connection then took for its own. k6 refuses
// the request (net/http: invalid method) and sends nothing.
func TestSmuggledMethodIsRefused(t *testing.T) {
	echo := &rawEcho{}
	srv := httptest.NewServer(echo)
	defer srv.Close()
	e := newEnv(t, nil)
	const smuggle = "GET /SMUGGLED HTTP/1.1\r\nHOST: X\r\n\r\nGET"
	v := e.run(fmt.Sprintf(`var out = [];
		for (var i = 0; i < 20; i++) {
			var a = http.request(%q, %q);
			var b = http.get(%q);
			out.push([a.status, a.error, a.error_code, b.status].join("|"));
		}
		var bt = http.batch([[%q, %q], ["GET", %q]]);
		out.push([bt[0].status, bt[0].error, bt[0].error_code, bt[1].status].join("|"));
		JSON.stringify(out)`, smuggle, srv.URL+"/status/200", srv.URL+"/status/201", "GET /X", srv.URL+"/status/201", srv.URL+"/status/202"))
	var out []string
	if err := json.Unmarshal([]byte(v.String()), &out); err != nil {
		t.Fatal(err)
	}
	want := "0|" + `net/http: invalid method "GET /SMUGGLED HTTP/1.1\r\nHOST: X\r\n\r\nGET"` + "|1000|201"
	for i, o := range out[:20] {
		if o != want {
			t.Fatalf("round %d: %q, k6 %q", i, o, want)
		}
	}
	if want := `0|net/http: invalid method "GET /X"|1000|202`; out[20] != want {
		t.Errorf("batch: %q, k6 %q", out[20], want)
	}
	for _, l := range echo.requestLines() {
		if l != "GET /status/201" && l != "GET /status/202" {
			t.Errorf("the server read %q", l)
		}
	}
	if n := len(echo.requestLines()); n != 21 {
		t.Errorf("the server read %d requests, want the 21 valid ones", n)
	}
	// Refused requests are failed requests, as in k6: counted, tagged.
	if n := len(e.samples("http_reqs")); n != 42 {
		t.Errorf("%d http_reqs samples, want 42 (k6 counts refused requests)", n)
	}
}

// TestBadHeadersAreRefused checks header names and values net/http
// refuses: the request fails (status 0, error_code 1000) with k6's error
// instead of going out altered (CR/LF turned to spaces, NUL sent raw, a
// bad name dropped, an empty Host sent).
func TestBadHeadersAreRefused(t *testing.T) {
	srv := httptest.NewServer(&rawEcho{})
	defer srv.Close()
	e := newEnv(t, nil)
	cases := []struct{ headers, want string }{
		{`{"X-A": "v\r\nInjected-Val: 1"}`, `net/http: invalid header field value for "X-A"`},
		{`{"X-A": "v\u0000after"}`, `net/http: invalid header field value for "X-A"`},
		{`{"X-A": "v\u007f"}`, `net/http: invalid header field value for "X-A"`},
		{`{"X-A": "v\n"}`, `net/http: invalid header field value for "X-A"`},
		{`{"User-Agent": "a\nb"}`, `net/http: invalid header field value for "User-Agent"`},
		{`{"Host": "h\r\nx"}`, `net/http: invalid header field value for "Host"`},
		{`{"X-A\r\nInjected-Name: 1\r\nX-B": "v"}`, `net/http: invalid header field name "X-A\r\nInjected-Name: 1\r\nX-B"`},
		{`{"X A": "v"}`, `net/http: invalid header field name "X A"`},
		{`{"": "v"}`, `net/http: invalid header field name ""`},
		{`{"X-É": "v"}`, `net/http: invalid header field name "X-É"`},
	}
	for _, c := range cases {
		v := e.run(fmt.Sprintf(`var r = http.get(%q, {headers: %s}); JSON.stringify([r.status, r.error, r.error_code, r.body])`,
			srv.URL+"/echo", c.headers))
		want, _ := json.Marshal([]any{0, c.want, 1000, nil})
		if v.String() != string(want) {
			t.Errorf("headers %s: %s, k6 %s", c.headers, v, want)
		}
	}
	// What net/http accepts goes out as k6 sends it: obs-text kept, white
	// space around a value trimmed, a tab inside kept.
	for _, c := range []struct{ headers, line string }{
		{`{"X-A": "é"}`, "X-A: é\r\n"},
		{`{"X-A": " lead"}`, "X-A: lead\r\n"},
		{`{"X-A": "v\tw"}`, "X-A: v\tw\r\n"},
	} {
		v := e.run(fmt.Sprintf(`var r = http.get(%q, {headers: %s}); r.status + "|" + r.body`, srv.URL+"/echo", c.headers))
		if !strings.HasPrefix(v.String(), "200|") || !strings.Contains(v.String(), c.line) {
			t.Errorf("headers %s: %q, want 200 and %q", c.headers, v, c.line)
		}
	}
}

// TestRedirectHeadersAsK6 follows redirects with credentials, cookies, a
// Host override and body headers, and checks what each final hop carried
// against what k6 sent in the same cases. Go's client, which k6 uses,
// drops Authorization, Www-Authenticate, Cookie, Cookie2,
// Proxy-Authorization and Proxy-Authenticate once a redirect leaves the
// original host for one that is not its subdomain (ports aside), keeps a
// Host override only through relative redirects, drops the body's headers
// with the body, and sends a Referer. k6 also never repeats a Cookie
// header the script set.
func TestRedirectHeadersAsK6(t *testing.T) {
	a := httptest.NewServer(&rawEcho{})
	defer a.Close()
	b := httptest.NewServer(&rawEcho{})
	defer b.Close()
	aHost := strings.TrimPrefix(a.URL, "http://")
	bHost := strings.TrimPrefix(b.URL, "http://")
	localA := "localhost:" + aHost[strings.LastIndexByte(aHost, ':')+1:]
	creds := `{Authorization: "Bearer SECRET-AUTH", "Proxy-Authorization": "Basic SECRET-PROXY", Cookie2: "SECRET-C2",
		"Proxy-Authenticate": "PA", "Www-Authenticate": "WA", Cookie: "c=1", "X-Keep": "k"}`
	all := map[string]string{"Authorization": "Bearer SECRET-AUTH", "Proxy-Authorization": "Basic SECRET-PROXY",
		"Cookie2": "SECRET-C2", "Proxy-Authenticate": "PA", "Www-Authenticate": "WA", "Cookie": "", "X-Keep": "k"}
	none := map[string]string{"Authorization": "", "Proxy-Authorization": "", "Cookie2": "", "Proxy-Authenticate": "",
		"Www-Authenticate": "", "Cookie": "", "X-Keep": "k"}
	redir := func(from, to string, code int) string {
		return from + "/redir?code=" + strconv.Itoa(code) + "&to=" + urlEscape(to)
	}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	cases := []struct {
		name, url, params string
		want              map[string]string // header: value, "" for absent
	}{
		{"another host", redir(a.URL, "http://"+localA+"/echo?r=1", 302), `{headers: ` + creds + `}`,
			with(none, "Host", localA)},
		{"another port", redir(a.URL, b.URL+"/echo?r=2", 302), `{headers: ` + creds + `}`,
			with(all, "Host", bHost)},
		{"the same host", redir(a.URL, a.URL+"/echo?r=3", 302), `{headers: ` + creds + `}`,
			with(all, "Host", aHost)},
		{"Host, absolute to another host", redir(a.URL, b.URL+"/echo?r=4", 302), `{headers: {Host: "custom.example"}}`,
			map[string]string{"Host": bHost}},
		{"Host, absolute to the same host", redir(a.URL, a.URL+"/echo?r=5", 302), `{headers: {Host: "custom.example"}}`,
			map[string]string{"Host": aHost}},
		{"Host, relative", redir(a.URL, "/echo?r=6", 302), `{headers: {Host: "custom.example"}}`,
			map[string]string{"Host": "custom.example"}},
		{"Host, scheme-relative", redir(a.URL, "//"+bHost+"/echo?r=7", 302), `{headers: {Host: "custom.example"}}`,
			map[string]string{"Host": "custom.example"}},
		{"Host, absolute then relative", redir(a.URL, b.URL+"/redir?to=%2Fecho%3Fr%3D8", 302), `{headers: {Host: "custom.example"}}`,
			map[string]string{"Host": bHost}},
		{"away and back", redir(a.URL, "http://"+localA+"/redir?to="+urlEscape(a.URL+"/echo?r=9"), 302), `{headers: ` + creds + `}`,
			with(none, "Host", aHost)},
		{"307 keeps the body's headers", redir(a.URL, "http://"+localA+"/echo?r=10", 307), `{headers: {"Content-Type": "text/plain"}}`,
			map[string]string{"Content-Type": "text/plain"}},
		{"credentials in the URL", strings.Replace(redir(a.URL, "http://"+localA+"/echo?r=12", 302), "http://", "http://u:p@", 1), `{}`,
			map[string]string{"Authorization": "", "Host": localA}},
	}
	e := newEnv(t, nil)
	for _, c := range cases {
		v := e.run(fmt.Sprintf(`var r = http.get(%q, %s); r.status + "|" + r.body`, c.url, c.params))
		checkEchoed(t, c.name, v.String(), c.want)
		if !strings.Contains(v.String(), "\r\nReferer: http://") {
			t.Errorf("%s: no Referer; k6 sends the previous URL: %q", c.name, v)
		}
	}
	// A 302 turns a POST into a GET without its body or the body's headers.
	v := e.run(fmt.Sprintf(`var r = http.post(%q, "body", {headers: {"Content-Type": "text/plain", "Content-Language": "en"}}); r.status + "|" + r.body`,
		redir(a.URL, "/echo?r=11", 302)))
	checkEchoed(t, "302 after POST", v.String(), map[string]string{"Content-Type": "", "Content-Language": "", "Content-Length": ""})
	if !strings.HasPrefix(strings.SplitN(v.String(), "|", 2)[1], "GET /echo?r=11 ") {
		t.Errorf("302 after POST: %q", v)
	}
	// A Referer the script set is kept on every hop.
	v = e.run(fmt.Sprintf(`http.get(%q, {headers: {Referer: "mine"}}).body`, redir(a.URL, "/echo", 302)))
	if !strings.Contains(v.String(), "\r\nReferer: mine\r\n") {
		t.Errorf("own Referer: %q", v)
	}
}

// checkEchoed checks the headers of a request rawEcho echoed ("200|"
// then the request) against want (header: value, "" for absent).
func checkEchoed(t *testing.T, name, got string, want map[string]string) {
	t.Helper()
	status, req, _ := strings.Cut(got, "|")
	if status != "200" {
		t.Errorf("%s: status %s", name, status)
		return
	}
	head, _, _ := strings.Cut(req, "\r\n\r\n")
	lines := strings.Split(head, "\r\n")[1:]
	have := map[string]string{}
	for _, l := range lines {
		k, v, _ := strings.Cut(l, ": ")
		have[k] = v
	}
	for k, v := range want {
		if have[k] != v {
			t.Errorf("%s: %s is %q, k6 sent %q (request %q)", name, k, have[k], v, req)
		}
	}
}

func urlEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// encoded answers with body encoded as enc says.
func encoded(enc string, body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Encoding", enc)
		_, _ = w.Write(body)
	})
}

func brotliOf(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := brotli.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gzipOf(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestContentEncodings checks the decoding k6 does: br (which metronome
// used to hand over still compressed), a list of codings decoded last to
// first, and k6's errors for a body that does not decode.
func TestContentEncodings(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/br", encoded("br", brotliOf(t, "hello brotli")))
	mux.Handle("/br-bad", encoded("br", []byte("not brotli at all, really not")))
	mux.Handle("/br-gzip", encoded("br, gzip", gzipOf(t, brotliOf(t, "hello brotli"))))
	mux.Handle("/gzip-bad", encoded("gzip", []byte("not gzip")))
	mux.Handle("/gzip-header", encoded("gzip", []byte("this is not gzip at all")))
	mux.Handle("/gzip-cut", encoded("gzip", []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 0xf2}))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	e := newEnv(t, nil)
	for _, c := range []struct{ path, want string }{
		{"/br", `[200,"",0,"hello brotli"]`},
		{"/br-gzip", `[200,"",0,"hello brotli"]`},
		{"/br-bad", `[0,"error decompressing response body (brotli: PADDING_2)",1701,""]`},
		{"/gzip-bad", `[0,"error decompressing response body (unexpected EOF)",1701,null]`},
		// k6 wraps a bad gzip header twice, and leaves a stream that ends
		// early as it is (k6 v2.2.0, checked against a loopback server).
		{"/gzip-header", `[0,"error decompressing response body (error decompressing response body (gzip: invalid header))",1701,null]`},
		{"/gzip-cut", `[0,"unexpected EOF",1000,""]`},
	} {
		v := e.run(fmt.Sprintf(`var r = http.get(%q); JSON.stringify([r.status, r.error, r.error_code, r.body])`, srv.URL+c.path))
		if v.String() != c.want {
			t.Errorf("%s: %s, k6 %s", c.path, v, c.want)
		}
	}
}

// TestDiscardedBodiesAreNotDecoded checks that with discardResponseBodies
// (and responseType "none") a compressed body is not inflated, as in k6: a
// body that would not decode is no error, and a gzip bomb costs only its
// compressed bytes.
func TestDiscardedBodiesAreNotDecoded(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/gzip-bad", encoded("gzip", []byte("not gzip")))
	mux.Handle("/gzip-header", encoded("gzip", []byte("this is not gzip at all")))
	mux.Handle("/gzip-cut", encoded("gzip", []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 0xf2}))
	mux.Handle("/br-bad", encoded("br", []byte("not brotli at all, really not")))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	e := newEnv(t, &config.Options{DiscardResponseBodies: ptr(true)})
	for _, path := range []string{"/gzip-bad", "/br-bad"} {
		v := e.run(fmt.Sprintf(`var r = http.get(%q); JSON.stringify([r.status, r.error, r.error_code, r.body])`, srv.URL+path))
		if v.String() != `[200,"",0,null]` {
			t.Errorf("%s discarded: %s, k6 [200,\"\",0,null]", path, v)
		}
		v = newEnv(t, nil).run(fmt.Sprintf(`var r = http.get(%q, {responseType: "none"}); [r.status, r.error_code].join()`, srv.URL+path))
		if v.String() != "200,0" {
			t.Errorf("%s with responseType none: %s, want 200,0", path, v)
		}
	}
}

// TestHugeHeadAsK6 sends response heads just under and just over 10 MiB:
// k6 (net/http) reads the first and fails the second with its error,
// where metronome used to accept any head (a 300 MB header line cost it
// 1 GB).
func TestHugeHeadAsK6(t *testing.T) {
	e := newEnv(t, nil)
	for _, c := range []struct {
		size int64
		want string
	}{
		{9 << 20, `[200,"",0,"ok"]`},
		{11 << 20, `[0,"net/http: server response headers exceeded 10485760 bytes; aborted",1000,null]`},
	} {
		s := &faultserver.Server{Mode: faultserver.HugeHead, Size: c.size}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		v := e.run(fmt.Sprintf(`var r = http.get(%q); JSON.stringify([r.status, r.error, r.error_code, r.body])`, s.URL()))
		s.Close()
		if v.String() != c.want {
			t.Errorf("a %d-byte header line: %s, k6 %s", c.size, v, c.want)
		}
	}
}

// TestAnnouncedSizesCostNothing is the probe's exhaustion case: 50 VUs
// against servers that announce a 64 MiB body, a 1 GiB chunk or a 1 GiB
// brotli body whose first bytes claim a 16 MiB window, send a few bytes
// and stall until the requests time out. Metronome used to allocate the
// announced 64 MiB per VU before a byte arrived (5.35 GB in the probe;
// k6 51 MB). The live heap, sampled while the VUs wait, must stay within
// what each VU's connection and buffers need, and the process's resident
// memory within tens of MB of where it started.
func TestAnnouncedSizesCostNothing(t *testing.T) {
	const vus = 50
	servers := []*faultserver.Server{
		{Mode: faultserver.StallLength, Size: 64 << 20},
		{Mode: faultserver.StallChunk, Size: 1 << 30},
		{Mode: faultserver.StallBrotli, Size: 1 << 30},
	}
	for _, s := range servers {
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
	}
	envs := make([]*env, vus)
	for i := range envs {
		envs[i] = newEnv(t, nil)
	}
	baseHeap, baseRSS := memstat.LiveHeap(), rss(t)

	// Sample the live heap while the VUs wait for their bodies.
	stop := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		var peakHeap uint64
		tick := time.NewTicker(25 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				peak <- peakHeap
				return
			case <-tick.C:
				peakHeap = max(peakHeap, memstat.LiveHeap())
			}
		}
	}()
	var wg sync.WaitGroup
	results := make([]string, vus)
	for i, e := range envs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var urls []string
			for _, s := range servers {
				urls = append(urls, s.URL())
			}
			list, _ := json.Marshal(urls)
			v, err := e.try(fmt.Sprintf(`var codes = [];
				%s.forEach(function (u) {
					for (var i = 0; i < 2; i++) codes.push(http.get(u, {timeout: "400ms"}).error_code);
				});
				codes.join()`, list))
			if err != nil {
				results[i] = err.Error()
				return
			}
			results[i] = v.String()
		}()
	}
	wg.Wait()
	close(stop)
	maxHeap := <-peak
	rssGrowth := rss(t) - baseRSS
	for i, r := range results {
		if r != "1050,1050,1050,1050,1050,1050" {
			t.Errorf("VU %d: error codes %s, want six request timeouts (1050)", i, r)
		}
	}
	// What a waiting VU may hold: its connection's 4 KiB read and write
	// buffers, the request and response objects, a body buffer grown to
	// the few bytes that came: 128 KiB is several times that. The fixed
	// part covers the sampler, the servers' goroutines and GC metadata.
	const perVU, fixed = 128 << 10, 16 << 20
	if limit := uint64(vus*perVU + fixed); maxHeap > baseHeap+limit {
		t.Errorf("the live heap peaked at %d MiB over its %d MiB start, more than the %d MiB %d waiting VUs may hold",
			(maxHeap-baseHeap)>>20, baseHeap>>20, limit>>20, vus)
	}
	if rssGrowth > 64<<20 {
		t.Errorf("resident memory grew by %d MiB, more than 64 MiB", rssGrowth>>20)
	}
	t.Logf("live heap peak %+d KiB over %d MiB; resident memory %+d KiB", int64(maxHeap-baseHeap)>>10, baseHeap>>20, rssGrowth>>10)
}

// rss is the process's resident memory.
func rss(t *testing.T) int64 {
	t.Helper()
	n, err := memstat.RSS()
	if err != nil {
		t.Skipf("resident memory: %v", err)
	}
	return n
}
