package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// keptServer is a loopback server that, after each answer, leaves
// something on the kept-alive connection, as servers and proxies do: the
// answer to the request numbered N (its X-Req header) is 200 "answer N".
// What follows an answer goes out once the script has read it and asked
// for it (go_), so that it meets an idle connection.
type keptServer struct {
	ln       net.Listener
	mode     string
	accepted atomic.Int64
	wg       sync.WaitGroup

	mu    sync.Mutex
	gates map[string]*gate // by X-Req
}

// gate holds back what follows the answer to one request.
type gate struct {
	open chan struct{} // closed by go_
	done chan struct{} // closed by finish once it was sent
	once sync.Once
}

func (g *gate) finish() { g.once.Do(func() { close(g.done) }) }

func (s *keptServer) gate(id string) *gate {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gates[id]
	if g == nil {
		g = &gate{open: make(chan struct{}), done: make(chan struct{})}
		s.gates[id] = g
	}
	return g
}

// go_ lets what follows the answer to request id go out and waits until
// it has (or a minute, a bound). A request the server never read (the
// gate is made when it is) has nothing to follow.
func (s *keptServer) go_(id string) {
	s.mu.Lock()
	g := s.gates[id]
	if g == nil {
		s.mu.Unlock()
		return
	}
	select {
	case <-g.open:
	default:
		close(g.open)
	}
	s.mu.Unlock()
	select {
	case <-g.done:
	case <-time.After(time.Minute):
	}
}

// keptModes are what the servers do after each answer (or before it).
var keptModes = map[string]string{
	"408":         "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", // then close
	"stray":       "garbage",
	"unsolicited": "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstray",
	"halfclose":   "", // shut the write side, keep reading
	"close":       "",
	"midclose":    "", // answer the first request of a connection, close under the second
	"hints":       "", // six 103 Early Hints before each answer, nothing after
}

func startKept(t *testing.T, mode string) *keptServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &keptServer{ln: ln, mode: mode, gates: map[string]*gate{}}
	var mu sync.Mutex
	var conns []net.Conn
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepted.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				s.serve(c.(*net.TCPConn))
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *keptServer) serve(c *net.TCPConn) {
	br := bufio.NewReader(c)
	for k := 0; ; k++ {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		id := req.Header.Get("X-Req")
		g := s.gate(id)
		if s.mode == "midclose" && k > 0 {
			g.finish()
			return
		}
		var head strings.Builder
		if s.mode == "hints" {
			for range 6 {
				head.WriteString("HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n")
			}
		}
		body := "answer " + id
		fmt.Fprintf(&head, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		if !s.after(c, id, head.String()) {
			return
		}
	}
}

// after sends answer to request id, does what follows it once go_ allows
// it, and reports whether the connection is still to be read.
func (s *keptServer) after(c *net.TCPConn, id, answer string) bool {
	g := s.gate(id)
	defer g.finish()
	if _, err := io.WriteString(c, answer); err != nil {
		return false
	}
	select {
	case <-g.open:
	case <-time.After(time.Minute):
		return false
	}
	if after := keptModes[s.mode]; after != "" {
		if _, err := io.WriteString(c, after); err != nil {
			return false
		}
	}
	switch s.mode {
	case "408", "close":
		return false
	case "halfclose":
		_ = c.CloseWrite()
	}
	return true
}

// k6Kept is what k6 v2.2.0 showed for every one of the ten requests of
// testdata/lifecycle/kept.js against each server (run on loopback with
// K6_BINARY=/work/peers/k6): the server's own answer, status 200, no
// error; and how many connections each server accepted for the ten. k6
// drops a kept connection on which anything came while it was idle (a
// 408 it takes for the server closing it), so every request after such a
// server's answer goes out on a new connection; a GET whose kept
// connection is closed under it goes again on a new one.
var k6Kept = map[string]int64{"408": 10, "stray": 10, "unsolicited": 10, "halfclose": 10, "close": 10, "midclose": 10, "hints": 1}

// TestKeptConnectionAnswers runs ten requests in a row through k6/http to
// servers that leave a 408 and a close, stray bytes, an unsolicited
// answer, a half-close or a close on the kept-alive connection after each
// answer, close it under the next request, or send six informational
// answers before each answer: every request must get its own answer, as
// in k6 (issue 38: a 408 or stray bytes used to be read as the next
// request's answer).
func TestKeptConnectionAnswers(t *testing.T) {
	t.Parallel()
	eachRunner(t, func(t *testing.T, rn runner) {
		servers := map[string]*keptServer{}
		var targets []string
		for mode := range keptModes {
			servers[mode] = startKept(t, mode)
			targets = append(targets, mode+"=http://"+servers[mode].ln.Addr().String())
		}
		sort.Strings(targets)
		// The script asks here, on a connection of its own, for what
		// follows each answer: GET /MODE/N.
		control := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mode, id, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
			if s := servers[mode]; s != nil {
				s.go_(id)
			}
			w.WriteHeader(http.StatusNoContent)
		}))
		defer control.Close()
		r := rn.run(t, runSpec{args: []string{"run", "-q", "-e", "TARGETS=" + strings.Join(targets, ","),
			"-e", "CONTROL=" + control.URL, script("lifecycle/kept.js")}})
		if r.code != 0 {
			t.Fatalf("%s exited %d\nstderr:\n%s", rn.name, r.code, r.stderr)
		}
		line := regexp.MustCompile(`lifecycle (\w+) (\d+) status=(\d+) code=(\d+) body=(\S*) error=([^"]*?)(?:"| source=|$)`)
		seen := map[string]int{}
		for _, l := range strings.Split(r.stderr, "\n") {
			m := line.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			mode, i := m[1], m[2]
			seen[mode]++
			if m[3] != "200" || m[4] != "0" || m[5] != "answer_"+i || strings.TrimSpace(m[6]) != "" {
				t.Errorf("%s, server %q, request %s: status %s, error_code %s, body %q, error %q; want 200 and its own answer",
					rn.name, mode, i, m[3], m[4], m[5], m[6])
			}
		}
		for mode, s := range servers {
			if seen[mode] != 10 {
				t.Errorf("%s, server %q: %d requests reported, want 10\nstderr:\n%s", rn.name, mode, seen[mode], r.stderr)
			}
			if n := s.accepted.Load(); n != k6Kept[mode] {
				t.Errorf("%s, server %q: %d connections for 10 requests, k6 %d", rn.name, mode, n, k6Kept[mode])
			}
		}
	})
}
