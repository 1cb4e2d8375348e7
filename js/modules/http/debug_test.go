package http

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/internal/logsink"
	"github.com/metronome-load/metronome/internal/testkit/logtest"
)

// The --http-debug lines k6 v2.2.0 wrote (logfmt, time= stripped,
// request_id as UUID) for debugScript against debugServer on
// 127.0.0.1:18481, run as `k6 run --http-debug=full` and
// `--http-debug=headers`. Its dump comes from a transport of its own,
// which adds "Accept-Encoding: gzip" that k6 never sends (k6 asks for no
// compression on the wire): metronome's dump shows what it sent, and the
// test drops that header from k6's lines.
const (
	k6DebugFull = `level=info msg="Request:\nGET / HTTP/1.1\nHost: 127.0.0.1:18481\nUser-Agent: Grafana k6/2.2.0\nAccept-Encoding: gzip\n\n\n" group= iter=0 request_id=UUID scenario=default source=http-debug vu=1
level=info msg="Response:\nHTTP/1.1 200 OK\nContent-Length: 3\nContent-Type: text/plain\n\nok\n\n" group= iter=0 request_id=UUID scenario=default source=http-debug vu=1
level=info msg="Request:\nPOST /raw HTTP/1.1\nHost: 127.0.0.1:18481\nUser-Agent: Grafana k6/2.2.0\nContent-Length: 9\nA-First: a\nX-Zed: z\nAccept-Encoding: gzip\n\na=1&b=two\n" group= iter=0 mytag=v request_id=UUID scenario=default source=http-debug vu=1
level=info msg="Response:\nHTTP/1.1 200 OK\nContent-Length: 9\nContent-Type: text/plain\n\na=1&b=two\n" group= iter=0 mytag=v request_id=UUID scenario=default source=http-debug vu=1
level=info msg="Request:\nGET /redirect/1 HTTP/1.1\nHost: 127.0.0.1:18481\nUser-Agent: Grafana k6/2.2.0\nAccept-Encoding: gzip\n\n\n" group= iter=0 request_id=UUID scenario=default source=http-debug vu=1
level=info msg="Response:\nHTTP/1.1 302 Found\nContent-Length: 34\nContent-Type: text/html; charset=utf-8\nLocation: /redirect/0\n\n<a href=\"/redirect/0\">Found</a>.\n\n\n" group= iter=0 request_id=UUID scenario=default source=http-debug vu=1
level=info msg="Request:\nGET /redirect/0 HTTP/1.1\nHost: 127.0.0.1:18481\nUser-Agent: Grafana k6/2.2.0\nReferer: http://127.0.0.1:18481/redirect/1\nAccept-Encoding: gzip\n\n\n" group= iter=0 request_id=UUID scenario=default source=http-debug vu=1
level=info msg="Response:\nHTTP/1.1 200 OK\nContent-Length: 11\nContent-Type: text/plain; charset=utf-8\n\nredirected\n\n" group= iter=0 request_id=UUID scenario=default source=http-debug vu=1
level=info msg="Request:\nGET /gzip HTTP/1.1\nHost: 127.0.0.1:18481\nUser-Agent: Grafana k6/2.2.0\nAccept-Encoding: gzip\n\n\n" group="::g1" iter=0 request_id=UUID scenario=default source=http-debug vu=1
level=info msg="Response:\nHTTP/1.1 200 OK\nContent-Length: 35\nContent-Encoding: gzip\nContent-Type: text/plain\n\n\x1f\x8b\b\x00\x00\x00\x00\x00\x00\xff\xcaH\xcd\xc9\xc9WH\xaf\xca,\xe0\x02\x04\x00\x00\xff\xff9|cV\v\x00\x00\x00\n" group="::g1" iter=0 request_id=UUID scenario=default source=http-debug vu=1
level=info msg="Request:\nGET /refused HTTP/1.1\nHost: 127.0.0.1:1\nUser-Agent: Grafana k6/2.2.0\nAccept-Encoding: gzip\n\n\n" group= iter=0 request_id=UUID scenario=default source=http-debug vu=1
level=warning msg="Request Failed" error="Get \"http://127.0.0.1:1/refused\": dial tcp 127.0.0.1:1: connect: connection refused"
level=info msg="Request:\nPOST /raw HTTP/1.1\nHost: 127.0.0.1:18481\nUser-Agent: Grafana k6/2.2.0\nContent-Length: 9\nAccept-Encoding: gzip\n\nbatchbody\n" group= iter=0 request_id=UUID scenario=default source=http-debug vu=1
level=info msg="Response:\nHTTP/1.1 200 OK\nContent-Length: 9\nContent-Type: text/plain\n\nbatchbody\n" group= iter=0 request_id=UUID scenario=default source=http-debug vu=1
`
	k6DebugHeaders = `level=info msg="Request:\nGET / HTTP/1.1\nHost: 127.0.0.1:18481\nUser-Agent: Grafana k6/2.2.0\nAccept-Encoding: gzip\n\n\n" group= iter=0 request_id=UUID scenario=default source=http-debug vu=1
level=info msg="Response:\nHTTP/1.1 200 OK\nContent-Length: 3\nContent-Type: text/plain\n\n\n" group= iter=0 request_id=UUID scenario=default source=http-debug vu=1
level=info msg="Request:\nPOST /raw HTTP/1.1\nHost: 127.0.0.1:18481\nUser-Agent: Grafana k6/2.2.0\nContent-Length: 9\nA-First: a\nX-Zed: z\nAccept-Encoding: gzip\n\n\n" group= iter=0 mytag=v request_id=UUID scenario=default source=http-debug vu=1
level=info msg="Response:\nHTTP/1.1 200 OK\nContent-Length: 9\nContent-Type: text/plain\n\n\n" group= iter=0 mytag=v request_id=UUID scenario=default source=http-debug vu=1
level=info msg="Request:\nGET /redirect/1 HTTP/1.1\nHost: 127.0.0.1:18481\nUser-Agent: Grafana k6/2.2.0\nAccept-Encoding: gzip\n\n\n" group= iter=0 request_id=UUID scenario=default source=http-debug vu=1
level=info msg="Response:\nHTTP/1.1 302 Found\nContent-Length: 34\nContent-Type: text/html; charset=utf-8\nLocation: /redirect/0\n\n\n" group= iter=0 request_id=UUID scenario=default source=http-debug vu=1
level=info msg="Request:\nGET /redirect/0 HTTP/1.1\nHost: 127.0.0.1:18481\nUser-Agent: Grafana k6/2.2.0\nReferer: http://127.0.0.1:18481/redirect/1\nAccept-Encoding: gzip\n\n\n" group= iter=0 request_id=UUID scenario=default source=http-debug vu=1
level=info msg="Response:\nHTTP/1.1 200 OK\nContent-Length: 11\nContent-Type: text/plain; charset=utf-8\n\n\n" group= iter=0 request_id=UUID scenario=default source=http-debug vu=1
level=info msg="Request:\nGET /gzip HTTP/1.1\nHost: 127.0.0.1:18481\nUser-Agent: Grafana k6/2.2.0\nAccept-Encoding: gzip\n\n\n" group="::g1" iter=0 request_id=UUID scenario=default source=http-debug vu=1
level=info msg="Response:\nHTTP/1.1 200 OK\nContent-Length: 35\nContent-Encoding: gzip\nContent-Type: text/plain\n\n\n" group="::g1" iter=0 request_id=UUID scenario=default source=http-debug vu=1
level=info msg="Request:\nGET /refused HTTP/1.1\nHost: 127.0.0.1:1\nUser-Agent: Grafana k6/2.2.0\nAccept-Encoding: gzip\n\n\n" group= iter=0 request_id=UUID scenario=default source=http-debug vu=1
level=warning msg="Request Failed" error="Get \"http://127.0.0.1:1/refused\": dial tcp 127.0.0.1:1: connect: connection refused"
level=info msg="Request:\nPOST /raw HTTP/1.1\nHost: 127.0.0.1:18481\nUser-Agent: Grafana k6/2.2.0\nContent-Length: 9\nAccept-Encoding: gzip\n\n\n" group= iter=0 request_id=UUID scenario=default source=http-debug vu=1
level=info msg="Response:\nHTTP/1.1 200 OK\nContent-Length: 9\nContent-Type: text/plain\n\n\n" group= iter=0 request_id=UUID scenario=default source=http-debug vu=1
`
)

// debugScript is what k6 ran, B the server's URL and CLOSED a refused
// address; the group "::g1" is set from Go around the gzip request, as
// group('g1', …) sets it in k6.
var debugScript = []string{
	`http.get(B + '/');
http.post(B + '/raw', 'a=1&b=two', { headers: { 'X-Zed': 'z', 'A-First': 'a' }, tags: { mytag: 'v' } });
http.get(B + '/redirect/1');`,
	`http.get(B + '/gzip');`,
	`http.get(CLOSED + '/refused');
http.batch([['POST', B + '/raw', 'batchbody']]);`,
}

// debugServer answers as the server k6 ran against: no Date header, the
// redirects of net/http, a gzip body as compress/gzip writes it.
func debugServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("/raw", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.Copy(w, r.Body)
	})
	mux.HandleFunc("/redirect/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		if n <= 0 {
			io.WriteString(w, "redirected\n")
			return
		}
		http.Redirect(w, r, "/redirect/"+strconv.Itoa(n-1), http.StatusFound)
	})
	mux.HandleFunc("/gzip", func(w http.ResponseWriter, _ *http.Request) {
		var b bytes.Buffer
		z := gzip.NewWriter(&b)
		z.Write([]byte("hello gzip\n"))
		z.Close()
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "text/plain")
		w.Write(b.Bytes())
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// sinkLog sends e's structured log to a logsink in k6's logfmt layout,
// as a run does, and sets the VU's number to k6's first, 1.
func sinkLog(t *testing.T, e *env) *logtest.Buffer {
	out := &logtest.Buffer{}
	sink, err := logsink.New(logsink.Output{Kind: logsink.Stderr, Level: logsink.Info}, logsink.Text, nil, out, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.st.Run.Log = sink.Slog(slog.LevelDebug)
	e.st.VUID = 1
	return out
}

// logLines are the lines of out less their time, request ids as UUID.
func logLines(out *logtest.Buffer) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		_, l, _ = strings.Cut(l, `" `) // time="…"
		lines = append(lines, uuidV4.ReplaceAllString(l, "request_id=UUID"))
	}
	return lines
}

var uuidV4 = regexp.MustCompile(`request_id=[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`)

// TestHTTPDebugAsK6 checks that --http-debug writes k6's lines: at level
// info a "Request:" and a "Response:" line per hop (a redirect's too),
// none of the latter for a refused request, the bodies at full level only
// and the response's as it came (gzip), with the VU's and the request's
// tags, iter, vu, one request_id per hop and source=http-debug as fields.
func TestHTTPDebugAsK6(t *testing.T) {
	srv := debugServer(t)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, c := range []struct{ level, k6 string }{{"full", k6DebugFull}, {"headers", k6DebugHeaders}} {
		t.Run(c.level, func(t *testing.T) {
			e := newEnv(t, &config.Options{HTTPDebug: ptr(c.level)})
			out := sinkLog(t, e)
			e.run(fmt.Sprintf("var B = %q, CLOSED = %q;", srv.URL, "http://"+closedAddr))
			plain := e.st.Tags
			for i, src := range debugScript {
				e.st.Tags = plain
				if i == 1 {
					e.st.Tags = plain.With("group", "::g1")
				}
				e.run(src)
			}

			var got []string
			for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
				_, l, _ = strings.Cut(l, `" `) // time="…"
				got = append(got, l)
			}
			ids := map[string]int{}
			for i, l := range got {
				if id := uuidV4.FindString(l); id != "" {
					ids[id]++
					got[i] = strings.Replace(l, id, "request_id=UUID", 1)
				}
			}
			alone := 0
			for id, n := range ids {
				switch n {
				case 1:
					alone++ // the refused request's, which has no response
				case 2:
				default:
					t.Errorf("%s on %d lines", id, n)
				}
			}
			if len(ids) != 7 || alone != 1 {
				t.Errorf("%d request_ids, %d of them on one line; want one for each of the 7 hops, on two lines but the refused one's", len(ids), alone)
			}
			want := strings.NewReplacer("127.0.0.1:18481", host, "127.0.0.1:1", closedAddr,
				"Grafana k6/2.2.0", DefaultUserAgent, `\nAccept-Encoding: gzip`, "").Replace(c.k6)
			if g := strings.Join(got, "\n") + "\n"; g != want {
				t.Errorf("got:\n%s\nwant (k6's):\n%s", g, want)
			}
		})
	}
}

// TestHTTPDebugDigest checks that the 401 a digest handshake answers has
// its pair of lines, as in k6, whose debug transport sits under its digest
// one: k6 v2.2.0 wrote the Response line below for a server that
// challenged with these parameters (its Authorization header, with a
// random cnonce, differs from run to run and in its parameters' order).
func TestHTTPDebugDigest(t *testing.T) {
	const k6Challenge = `level=info msg="Response:\nHTTP/1.1 401 Unauthorized\nWww-Authenticate: Digest realm=\"r\", nonce=\"abc\", qop=\"auth\", algorithm=MD5, opaque=\"op\"\nContent-Length: 0\n\n\n" group= iter=0 request_id=UUID scenario=default source=http-debug vu=1`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil
		if strings.HasPrefix(r.Header.Get("Authorization"), "Digest ") {
			io.WriteString(w, "authed\n")
			return
		}
		w.Header().Set("WWW-Authenticate", `Digest realm="r", nonce="abc", qop="auth", algorithm=MD5, opaque="op"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	e := newEnv(t, &config.Options{HTTPDebug: ptr("full")})
	out := sinkLog(t, e)
	e.run(fmt.Sprintf("http.get(%q, { auth: 'digest' })", strings.Replace(srv.URL, "://", "://u:p@", 1)))
	lines := logLines(out)
	if len(lines) != 4 || lines[1] != k6Challenge || !strings.Contains(lines[2], `Authorization: Digest `) ||
		!strings.Contains(lines[3], `msg="Response:\nHTTP/1.1 200 OK\n`) {
		t.Errorf("got:\n%s\nwant a Request line, k6's challenge line:\n%s\nthe Request with the digest answer and the Response", strings.Join(lines, "\n"), k6Challenge)
	}
}

// TestHTTPDebugCutBody checks a body cut short at full level: k6's dump
// reads the body itself, fails, and k6 v2.2.0 wrote these lines for a
// server that announced 10 bytes and sent 5.
func TestHTTPDebugCutBody(t *testing.T) {
	const k6Lines = `level=error msg="unexpected EOF" group= iter=0 scenario=default source=http-debug vu=1
level=info msg="Response:\n\n" group= iter=0 request_id=UUID scenario=default source=http-debug vu=1`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello")
		buf.Flush()
		conn.Close()
	}))
	defer srv.Close()
	e := newEnv(t, &config.Options{HTTPDebug: ptr("full")})
	out := sinkLog(t, e)
	e.run(fmt.Sprintf("http.get(%q)", srv.URL))
	var lines []string
	for _, l := range logLines(out) {
		if !strings.Contains(l, "Request") {
			lines = append(lines, l)
		}
	}
	if got := strings.Join(lines, "\n"); got != k6Lines {
		t.Errorf("got:\n%s\nwant (k6's):\n%s", got, k6Lines)
	}
}

// TestHTTPDebugRequestFirst checks that a hop's "Request:" line is
// written when the request is sent, as k6 writes it, not when the answer
// comes: the server answers only once it finds the line in the log.
func TestHTTPDebugRequestFirst(t *testing.T) {
	var out *logtest.Buffer
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(out.String(), `msg="Request:\nGET /slow HTTP/1.1`) {
			if time.Now().After(deadline) {
				io.WriteString(w, "not logged")
				return
			}
			time.Sleep(time.Millisecond)
		}
		io.WriteString(w, "logged")
	}))
	defer srv.Close()
	e := newEnv(t, &config.Options{HTTPDebug: ptr("full")})
	out = sinkLog(t, e)
	if body := e.run(fmt.Sprintf("http.get(%q).body", srv.URL+"/slow")).String(); body != "logged" {
		t.Errorf("the server saw no Request line in the log while it held the answer (%q)\n%s", body, out.String())
	}
}
