package http

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/metronome-load/metronome/config"
)

// rawServer serves each accepted loopback connection with serve, so tests
// control exactly what goes over the wire. It returns the base URL and
// the number of connections accepted so far.
func rawServer(t *testing.T, serve func(c net.Conn, br *bufio.Reader)) (string, *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				serve(c, bufio.NewReader(c))
			}()
		}
	}()
	return "http://" + l.Addr().String(), &n
}

// readRequest reads one request and its body from br.
func readRequest(br *bufio.Reader) (*http.Request, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, req.Body)
	return req, nil
}

func TestFastPathStaleConnection(t *testing.T) {
	closed := make(chan struct{}, 16)
	// Every connection answers one request as if keep-alive went on, then
	// the server drops it without saying so.
	u, conns := rawServer(t, func(c net.Conn, br *bufio.Reader) {
		if _, err := readRequest(br); err != nil {
			return
		}
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		_ = c.Close()
		closed <- struct{}{}
	})
	e := newEnv(t, nil)
	for i, src := range []string{`http.get(%q)`, `http.get(%q)`, `http.post(%q, "x")`, `http.post(%q, "y")`} {
		v := e.run(fmt.Sprintf(`var r = %s; r.status + "|" + r.body + "|" + r.error`, fmt.Sprintf(src, u)))
		if v.String() != "200|ok|" {
			t.Errorf("request %d on a server that drops connections: %q", i, v.String())
		}
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			t.Fatal("the server did not close")
		}
	}
	if n := conns.Load(); n < 4 {
		t.Errorf("%d connections for 4 requests on one-shot connections", n)
	}
	if n := len(e.samples("http_reqs")); n != 4 {
		t.Errorf("%d http_reqs samples, want one per request (retries are not hops)", n)
	}
}

func TestFastPathConnectionClose(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/close" {
			w.Header().Set("Connection", "close")
		}
		_, _ = w.Write([]byte("ok"))
	}))
	var conns atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	e := newEnv(t, nil)
	e.run(fmt.Sprintf(`for (var i = 0; i < 3; i++) { if (http.get(%q).body !== "ok") throw "bad body" }`, srv.URL+"/close"))
	if n := conns.Load(); n != 3 {
		t.Errorf("server Connection: close: %d connections for 3 requests", n)
	}
	conns.Store(0)
	e.run(fmt.Sprintf(`for (var i = 0; i < 3; i++) http.get(%q, {headers: {Connection: "close"}})`, srv.URL+"/"))
	if n := conns.Load(); n != 3 {
		t.Errorf("client Connection: close: %d connections for 3 requests", n)
	}
	conns.Store(0)
	e.run(fmt.Sprintf(`for (var i = 0; i < 3; i++) http.get(%q)`, srv.URL+"/"))
	if n := conns.Load(); n != 1 {
		t.Errorf("keep-alive: %d connections for 3 requests", n)
	}
}

func TestFastPathWireFormats(t *testing.T) {
	// An informational answer before the real one, then a body delimited
	// by the end of the connection.
	u, conns := rawServer(t, func(c net.Conn, br *bufio.Reader) {
		req, err := readRequest(br)
		if err != nil {
			return
		}
		switch req.URL.Path {
		case "/early":
			_, _ = io.WriteString(c, "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfinal")
		case "/eof":
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\n\r\nuntil the end")
			return
		case "/garbage":
			_, _ = io.WriteString(c, "this is not HTTP\r\n\r\n")
			return
		}
		if _, err := readRequest(br); err == nil {
			_, _ = io.WriteString(c, "HTTP/1.1 204 No Content\r\n\r\n")
		}
	})
	e := newEnv(t, nil)
	v := e.run(fmt.Sprintf(`var r = http.get(%q); [r.status, r.body, http.get(%q).status].join("|")`, u+"/early", u+"/after"))
	if v.String() != "200|final|204" {
		t.Errorf("1xx then 200 on a kept connection: %q", v.String())
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, the first should have been reused", n)
	}
	v = e.run(fmt.Sprintf(`var r = http.get(%q); [r.status, r.body, r.error].join("|")`, u+"/eof"))
	if v.String() != "200|until the end|" {
		t.Errorf("close-delimited body: %q", v.String())
	}
	v = e.run(fmt.Sprintf(`var r = http.get(%q); [r.status, r.error_code].join("|") + "|" + r.error`, u+"/garbage"))
	if !strings.HasPrefix(v.String(), "0|1000|") || !strings.Contains(v.String(), "malformed") {
		t.Errorf("garbage answer: %q", v.String())
	}
}

func TestInterruptedRequestEmitsNoHTTPSamples(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	go func() {
		time.Sleep(50 * time.Millisecond)
		e.cancel()
	}()
	start := time.Now()
	v := e.run(fmt.Sprintf(`http.get(%q).error_code`, srv.URL+"/slow"))
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("the VU's context did not cut the request: %v", took)
	}
	for _, s := range e.rec.samples {
		if strings.HasPrefix(s.Metric.Name, "http_") {
			t.Errorf("an interrupted request emitted %s", s.Metric.Name)
		}
	}
	if v.String() == "0" {
		t.Error("an interrupted request reports no error")
	}
}

func TestLaneFollowsVUContext(t *testing.T) {
	srv := newServer(t)
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-r.Context().Done()
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(tls.Close)
	e := newEnv(t, &config.Options{InsecureSkipTLSVerify: ptr(true)})
	for _, base := range []string{srv.URL, tls.URL} {
		// Each iteration brings a new VU context; ending the previous one
		// must not touch the next iteration's requests.
		for i := 0; i < 3; i++ {
			ctx, cancel := context.WithCancel(context.Background())
			e.vu.ctx = ctx
			v := e.run(fmt.Sprintf(`var r = http.get(%q); r.status + "|" + r.error`, base+"/echo"))
			cancel()
			if v.String() != "200|" {
				t.Fatalf("%s iteration %d: %q", base, i, v.String())
			}
		}
		// A timeout, then the lane recovers.
		e.vu.ctx = context.Background()
		v := e.run(fmt.Sprintf(`[http.get(%q, {timeout: "50ms"}).error_code, http.get(%q).status].join()`, base+"/slow", base+"/echo"))
		if v.String() != "1050,200" {
			t.Errorf("%s: timeout then a request: %s", base, v)
		}
		// Ending the VU context interrupts a request in flight.
		ctx, cancel := context.WithCancel(context.Background())
		e.vu.ctx = ctx
		e.reset()
		time.AfterFunc(50*time.Millisecond, cancel)
		v = e.run(fmt.Sprintf(`http.get(%q).error_code`, base+"/slow"))
		if v.String() == "0" || v.String() == "1050" || len(e.samples("http_reqs")) != 0 {
			t.Errorf("%s: interrupted request: code %s, %d samples", base, v, len(e.samples("http_reqs")))
		}
		e.vu.ctx = context.Background()
		if v := e.run(fmt.Sprintf(`http.get(%q).status`, base+"/echo")); v.String() != "200" {
			t.Errorf("%s: after an interruption: %s", base, v)
		}
	}
}

// TestManyVUs runs VUs side by side, each on its own goroutine and
// runtime, mixing every way of making requests, and checks that every
// request is accounted for.
func TestManyVUs(t *testing.T) {
	srv := newServer(t)
	const vus, iterations = 6, 40
	counts := make([]int, vus)
	errs := make(chan error, vus)
	for i := 0; i < vus; i++ {
		e := newEnv(t, nil)
		go func() {
			for it := 0; it < iterations; it++ {
				ctx, cancel := context.WithCancel(context.Background())
				e.vu.ctx = ctx
				_, err := e.try(fmt.Sprintf(`
					http.get(%[1]q);
					http.post(%[1]q, "x");
					http.batch([%[1]q, %[1]q]);
					http.asyncRequest("GET", %[1]q).then(function(r) { if (r.status !== 200) throw new Error("async " + r.status) });
					if (http.get(%[2]q).status !== 404) throw new Error("404 expected");`, srv.URL+"/echo", srv.URL+"/status/404"))
				cancel()
				if err != nil {
					errs <- err
					return
				}
			}
			counts[i] = len(e.samples("http_reqs"))
			errs <- nil
		}()
	}
	for i := 0; i < vus; i++ {
		select {
		case err := <-errs:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("VUs did not finish")
		}
	}
	for i, n := range counts {
		if n != iterations*6 {
			t.Errorf("VU %d: %d http_reqs samples, want %d", i, n, iterations*6)
		}
	}
}
