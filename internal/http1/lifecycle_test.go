//go:build unix

package http1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The lifecycle test holds the engine to net/http's Transport at the level
// of the connection's state, where the fuzz tests hold it to net/http's
// parser: a scripted server on loopback plays one sequence (what it does
// with each request it reads on a connection, and after its answer) to
// both transports, ten requests in a row, and what a caller sees must be
// the same from both: status, the answer's own tag and body, the error,
// whether the request went out on a new connection, and how many times
// the server read it. Each sequence also says what that must be, so the
// two cannot agree on a wrong answer.
//
// net/http notices what comes on an idle connection on its reader
// goroutine, whenever that runs; the engine notices at the next request.
// So that net/http's outcome does not depend on the scheduler, the driver
// waits, before the next request, until net/http has closed the
// connection the server acted on, and for the engine only until what the
// server sent is on the client's socket (nothing of the engine's runs in
// between). Bytes sent "after" the answer go out once the caller has read
// the answer (the driver tells the server), so that they meet an idle
// connection and not a response still being read; the delays are the
// server's own, from there to what it sends; nothing is timed.

// action is what the server does with one request it has read.
type action struct {
	hints    int           // 103 Early Hints answers before the answer
	hintPad  int           // bytes added to each one's Link header
	noAnswer bool          // close without answering
	cut      bool          // send part of a head, then close
	extra    string        // bytes sent in the same write as the answer
	delay    time.Duration // wait once the client has read the answer, before after
	after    string        // bytes sent after the client has read the answer
	then     string        // after that: "close" or "halfclose" (shut the write side, keep reading)
}

// touches reports whether the action leaves anything on a kept connection
// after its answer.
func (a action) touches() bool { return a.extra != "" || a.after != "" || a.then != "" }

const (
	hint         = "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"
	stray        = "garbage"
	unsolicited  = "HTTP/1.1 200 OK\r\nX-Seq: unsolicited\r\nContent-Length: 5\r\n\r\nstray"
	timeout408   = "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
	answerPrefix = "HTTP/1.1 200 OK\r\nContent-Le"
)

// lifecycle is one sequence: act says what the server does with the k-th
// request it reads on a connection (k from 0); want, what a caller must
// see of the i-th request (i from 0) sent with method: "200" or the error.
// requests is how many are sent in a row.
type lifecycle struct {
	name     string
	act      func(k int) action
	want     func(method string, i int) string
	methods  []string
	requests int
}

func always(a action) func(int) action { return func(int) action { return a } }

// firstOnly answers the first request on a connection and does a with the
// others.
func firstOnly(a action) func(int) action {
	return func(k int) action {
		if k == 0 {
			return action{}
		}
		return a
	}
}

func all200(string, int) string { return "200" }

var bothMethods = []string{http.MethodGet, http.MethodPost}

var lifecycles = []lifecycle{
	{"keep-alive", always(action{}), all200, bothMethods, 10},
	{"answer then close", always(action{then: "close"}), all200, bothMethods, 10},
	{"answer then half-close", always(action{then: "halfclose"}), all200, bothMethods, 10},
	{"stray bytes with the answer", always(action{extra: stray}), all200, bothMethods, 10},
	{"stray bytes after 0 ms", always(action{after: stray}), all200, bothMethods, 10},
	{"stray bytes after 50 ms", always(action{delay: 50 * time.Millisecond, after: stray}), all200, []string{http.MethodGet}, 10},
	{"stray bytes after 200 ms", always(action{delay: 200 * time.Millisecond, after: stray}), all200, []string{http.MethodGet}, 10},
	{"stray bytes after 800 ms", always(action{delay: 800 * time.Millisecond, after: stray}), all200, []string{http.MethodGet}, 10},
	{"unsolicited 200", always(action{after: unsolicited}), all200, bothMethods, 10},
	{"408 then close", always(action{after: timeout408, then: "close"}), all200, bothMethods, 10},
	{"408 then close, after 50 ms", always(action{delay: 50 * time.Millisecond, after: timeout408, then: "close"}), all200, []string{http.MethodGet}, 10},
	{"1 informational answer", always(action{hints: 1}), all200, bothMethods, 10},
	{"6 informational answers", always(action{hints: 6}), all200, bothMethods, 10},
	{"20 informational answers", always(action{hints: 20}), all200, bothMethods, 10},
	{"1000 informational answers", always(action{hints: 1000}), all200, []string{http.MethodGet}, 10},
	// 5.5 MB of heads: two requests, on a new connection and a kept one.
	{"100000 informational answers", always(action{hints: 100000}), all200, []string{http.MethodGet}, 2},
	// Over 10 MiB of heads: net/http bounds informational answers by size.
	{"6000 informational answers of 2 KB", always(action{hints: 6000, hintPad: 2000}), func(string, int) string {
		return "net/http: server response headers exceeded 10485760 bytes; aborted"
	}, []string{http.MethodGet}, 2},
	// A kept connection closed under the next request before its answer:
	// a GET goes again on a new one, a POST cannot.
	{"close mid-pipeline", firstOnly(action{noAnswer: true}), func(m string, i int) string {
		if m == http.MethodPost && i%2 == 1 {
			return "EOF"
		}
		return "200"
	}, bothMethods, 10},
	// Part of the head came: no request is sent again.
	{"cut mid-answer", firstOnly(action{cut: true}), func(_ string, i int) string {
		if i%2 == 1 {
			return `malformed MIME header: missing colon: "Content-Le"`
		}
		return "200"
	}, bothMethods, 10},
}

// TestLifecycleMatchesNetHTTP plays every sequence to the engine and to
// net/http's Transport and compares what the caller sees.
func TestLifecycleMatchesNetHTTP(t *testing.T) {
	// net/http logs each unsolicited answer on the standard logger.
	prev := log.Writer()
	log.SetOutput(io.Discard)
	t.Cleanup(func() { log.SetOutput(prev) })
	for _, lc := range lifecycles {
		for _, method := range lc.methods {
			t.Run(lc.name+"/"+method, func(t *testing.T) {
				t.Parallel()
				var engine, reference []outcome
				var wg sync.WaitGroup
				wg.Add(2)
				go func() {
					defer wg.Done()
					engine = playLifecycle(t, lc, method, false)
				}()
				go func() {
					defer wg.Done()
					reference = playLifecycle(t, lc, method, true)
				}()
				wg.Wait()
				if t.Failed() {
					return
				}
				for i := range engine {
					if engine[i] != reference[i] {
						t.Errorf("request %d: engine %+v, net/http %+v", i, engine[i], reference[i])
					}
					got, want := engine[i].seen(), lc.want(method, i)
					if got != want {
						t.Errorf("request %d: the caller saw %q, want %q (%+v)", i, got, want, engine[i])
					}
					if engine[i].status != 0 && (engine[i].seq != fmt.Sprint(i) || engine[i].body != "answer "+fmt.Sprint(i)) {
						t.Errorf("request %d was handed another answer: %+v", i, engine[i])
					}
				}
			})
		}
	}
}

// lifecycleBound bounds every wait of the test; none is a measure (the
// 100,000 informational answers take seconds under -race on a loaded
// machine).
const lifecycleBound = time.Minute

// outcome is what a caller sees of one request.
type outcome struct {
	status   int
	seq      string // the answer's X-Seq: the number of the request it answers
	body     string
	err      string // as k6 reports it (k6Error)
	errType  string // the type of the error k6 classifies (its error_code follows from it and err)
	dialed   bool   // a connection was dialled for it
	attempts int    // times the server read it
}

// k6Error is the error as k6 reports it and the type its error_code is
// chosen by: k6 unwraps an error to the innermost one, stopping at a
// network error, which it shows as its operation and cause. net/http's
// Transport wraps a failed read of an answer on a connection it then
// closes ("net/http: HTTP/1.x transport connection broken: …"), which the
// engine does not, so it is the innermost error that must agree.
func k6Error(err error) (text, typ string) {
	for {
		if op, ok := err.(*net.OpError); ok {
			cause := op.Err
			if se, ok := cause.(*os.SyscallError); ok {
				cause = se.Err
			}
			return op.Op + ": " + cause.Error(), fmt.Sprintf("%T %T", op, cause)
		}
		inner := errors.Unwrap(err)
		if inner == nil {
			return err.Error(), fmt.Sprintf("%T", err)
		}
		err = inner
	}
}

// seen is the status, or the error when there is one.
func (o outcome) seen() string {
	if o.err != "" {
		return o.err
	}
	return fmt.Sprint(o.status)
}

// playLifecycle runs the requests of lc with method against a server of
// its own, through net/http's Transport when reference is set, else
// through the engine, and returns what each gave. It runs on a goroutine
// of its own, so it reports failures with t.Errorf.
func playLifecycle(t *testing.T, lc lifecycle, method string, reference bool) []outcome {
	srv, err := startScripted(t, lc.act)
	if err != nil {
		t.Error(err)
		return nil
	}
	d := &dialLog{conns: map[string]*trackedConn{}}
	var rt http.RoundTripper
	var settle func(*trackedConn) error
	who := "engine"
	if reference {
		who = "net/http"
		tr := &http.Transport{DialContext: d.dial, DisableCompression: true, MaxIdleConnsPerHost: 100}
		defer tr.CloseIdleConnections()
		rt, settle = tr, waitClosed
	} else {
		tr := New(Config{Dial: d.dial})
		defer tr.CloseIdleConnections()
		rt, settle = tr, waitReadable
	}
	out := make([]outcome, lc.requests)
	for i := range out {
		before := d.count()
		ctx, cancel := context.WithTimeout(context.Background(), lifecycleBound)
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader("x")
		}
		req, err := http.NewRequestWithContext(ctx, method, fmt.Sprintf("http://%s/%d", srv.ln.Addr(), i), body)
		if err != nil {
			cancel()
			t.Error(err)
			return out
		}
		req.Header.Set("X-Req", fmt.Sprint(i))
		o := &out[i]
		resp, err := rt.RoundTrip(req)
		if err == nil {
			b, berr := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			o.status, o.seq, o.body = resp.StatusCode, resp.Header.Get("X-Seq"), string(b)
			err = berr
		}
		cancel()
		srv.ack(fmt.Sprint(i))
		if err != nil {
			o.err, o.errType = k6Error(err)
		}
		o.dialed = d.count() > before
		// Every attempt the server read was read before the answer or
		// the failure: wait until the server is done with each, and then
		// until the transport has seen what the last left behind.
		o.attempts = srv.attempts(fmt.Sprint(i))
		var last served
		for range o.attempts {
			select {
			case last = <-srv.done:
			case <-time.After(lifecycleBound):
				t.Errorf("request %d: the server did not finish its part in %v", i, lifecycleBound)
				return out
			}
		}
		if last.touched {
			if c := d.conn(last.client); c != nil {
				if err := settle(c); err != nil {
					t.Errorf("request %d, %s: %v", i, who, err)
					return out
				}
			}
		}
	}
	return out
}

// waitClosed waits until net/http has closed c, which its reader does when
// anything arrives on an idle connection.
func waitClosed(c *trackedConn) error {
	select {
	case <-c.closed:
		return nil
	case <-time.After(lifecycleBound):
		return fmt.Errorf("net/http kept the connection %v after the server's bytes or close", lifecycleBound)
	}
}

// waitReadable waits until something is there to read on c's socket (a
// byte or the end), consuming nothing, or c is closed.
func waitReadable(c *trackedConn) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	select {
	case <-c.closed:
		return nil
	default:
	}
	_ = c.SetReadDeadline(time.Now().Add(lifecycleBound))
	defer c.SetReadDeadline(time.Time{})
	var b [1]byte
	err = raw.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return err != syscall.EAGAIN
	})
	select {
	case <-c.closed:
		return nil
	default:
	}
	return err
}

// dialLog dials loopback connections and keeps them by local address.
type dialLog struct {
	mu    sync.Mutex
	n     int
	conns map[string]*trackedConn
}

func (d *dialLog) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{TCPConn: c.(*net.TCPConn), closed: make(chan struct{})}
	d.mu.Lock()
	d.n++
	d.conns[c.LocalAddr().String()] = tc
	d.mu.Unlock()
	return tc, nil
}

func (d *dialLog) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

func (d *dialLog) conn(local string) *trackedConn {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.conns[local]
}

// trackedConn is a client connection that says when it was closed.
type trackedConn struct {
	*net.TCPConn
	once   sync.Once
	closed chan struct{}
}

func (c *trackedConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.TCPConn.Close()
}

// scripted is the server of a lifecycle test.
type scripted struct {
	ln   net.Listener
	act  func(k int) action
	done chan served // one per request read, once the server is done with it

	mu    sync.Mutex
	reads map[string]int           // by X-Req
	acks  map[string]chan struct{} // by X-Req: closed once the caller is done with the request
}

// served says the server is done with a request it read on the connection
// from client; touched, that it left something on it after the answer.
type served struct {
	client  string
	touched bool
}

func startScripted(t *testing.T, act func(k int) action) (*scripted, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &scripted{ln: ln, act: act, done: make(chan served, 64), reads: map[string]int{}, acks: map[string]chan struct{}{}}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range open {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			open = append(open, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				s.serve(c.(*net.TCPConn))
			}()
		}
	}()
	return s, nil
}

func (s *scripted) attempts(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads[id]
}

// acked returns the channel ack closes for the request numbered id.
func (s *scripted) acked(id string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.acks[id]
	if ch == nil {
		ch = make(chan struct{})
		s.acks[id] = ch
	}
	return ch
}

// ack tells the server the caller is done with the request numbered id.
func (s *scripted) ack(id string) {
	ch := s.acked(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// serve plays the script on one connection until either side closes it.
func (s *scripted) serve(c *net.TCPConn) {
	br := bufio.NewReader(c)
	for k := 0; ; k++ {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		id := req.Header.Get("X-Req")
		s.mu.Lock()
		s.reads[id]++
		s.mu.Unlock()
		a := s.act(k)
		open := s.play(c, a, id)
		s.done <- served{client: c.RemoteAddr().String(), touched: a.touches()}
		if !open {
			return
		}
	}
}

// play carries out a for the request numbered id and reports whether the
// connection is still open for reading.
func (s *scripted) play(c *net.TCPConn, a action, id string) bool {
	switch {
	case a.noAnswer:
		return false
	case a.cut:
		_, _ = io.WriteString(c, answerPrefix)
		return false
	}
	bw := bufio.NewWriterSize(c, 64<<10)
	padded := hint
	if a.hintPad > 0 {
		padded = strings.Replace(hint, "</a.css>", "</"+strings.Repeat("a", a.hintPad)+".css>", 1)
	}
	for range a.hints {
		_, _ = bw.WriteString(padded)
	}
	body := "answer " + id
	fmt.Fprintf(bw, "HTTP/1.1 200 OK\r\nX-Seq: %s\r\nContent-Length: %d\r\n\r\n%s%s", id, len(body), body, a.extra)
	if bw.Flush() != nil {
		return false
	}
	if a.after != "" {
		select {
		case <-s.acked(id):
		case <-time.After(lifecycleBound):
			return false
		}
		time.Sleep(a.delay)
		if _, err := io.WriteString(c, a.after); err != nil {
			return false
		}
	}
	switch a.then {
	case "close":
		return false
	case "halfclose":
		_ = c.CloseWrite()
	}
	return true
}
