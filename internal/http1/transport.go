// Package http1 is metronome's HTTP/1.1 client engine: a RoundTripper
// for plain-HTTP requests that writes the request and reads the response
// on the calling goroutine, over connections it keeps per host. It knows
// nothing of JavaScript; the HTTP engine (internal/httpclient) drives it.
//
// net/http's Transport hands every request between the caller, a writer
// and a reader goroutine; doing the write and the read in place saves
// those hand-offs and most of the transport's allocations, which is a
// large share of a load generator's CPU. Requests it does not take
// (Handles reports false: TLS, CONNECT, Expect: 100-continue) belong to an
// http.Transport. Messages of unusual shape are parsed and written by
// net/http's own code (http.ReadResponse, Request.Write), so the engine's
// results are net/http's; the fuzz tests hold it to that.
package http1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/idna"
)

// Transport runs plain-HTTP/1.1 requests. The zero value is not usable;
// make one with New.
type Transport struct {
	dial        func(ctx context.Context, network, addr string) (net.Conn, error)
	maxIdle     int
	idleTimeout time.Duration

	mu   sync.Mutex
	idle map[string][]*conn // by URL host
}

// Config says how a Transport dials and how many idle connections it keeps.
type Config struct {
	// Dial opens a connection; nil means a net.Dialer's. When the
	// connection is a syscall.Conn, the Transport waits on that socket for
	// each answer before it reads (see conn.raw), so the connection must
	// not read ahead of what its Read returns.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxIdlePerHost bounds the idle connections kept per host; 0 means 100.
	MaxIdlePerHost int
	// IdleTimeout is how long an unused connection is kept; 0 means 90 s.
	IdleTimeout time.Duration
}

// New returns a Transport with no connections yet.
func New(cfg Config) *Transport {
	t := &Transport{dial: cfg.Dial, maxIdle: cfg.MaxIdlePerHost, idleTimeout: cfg.IdleTimeout, idle: make(map[string][]*conn)}
	if t.dial == nil {
		var d net.Dialer
		t.dial = d.DialContext
	}
	if t.maxIdle <= 0 {
		t.maxIdle = 100
	}
	if t.idleTimeout <= 0 {
		t.idleTimeout = 90 * time.Second
	}
	return t
}

// Watcher is a request context's own way of interrupting the connection a
// request uses when the context ends. A context whose Value(WatcherKey{})
// is a Watcher saves the Transport a context.AfterFunc per request.
type Watcher interface {
	// Attach makes c the connection the context's end interrupts. It
	// returns false when the context has already ended.
	Attach(c net.Conn) bool
	// Detach forgets the connection. It returns false when the context's
	// end interrupted it, so that it must not be reused.
	Detach() bool
}

// WatcherKey is the context key under which a Watcher is found.
type WatcherKey struct{}

// conn is one connection of the pool.
type conn struct {
	conn   net.Conn
	head   headLimit // under br
	br     *bufio.Reader
	out    sendWatch // under bw
	bw     *bufio.Writer
	host   string        // the URL's, the pool's key
	idleAt time.Duration // since epoch
	reused bool

	// What interrupts the connection's I/O while a request uses it.
	watcher   Watcher
	stop      func() bool
	interrupt func() // interruptConn, bound once

	// raw is the connection's socket when it has one. A request that fits
	// its write buffer is sent from inside a wait for the socket to become
	// readable (sendAndWait), so the first read finds the answer there:
	// reading right after the write, as net.Conn's Read does, costs one
	// more system call per request that only returns EAGAIN.
	raw      syscall.RawConn
	await    func(uintptr) bool // awaitAnswer, bound once
	trace    *httptrace.ClientTrace
	sent     bool  // sendAndWait has flushed the request
	writeErr error // and this came of it

	// What quiet needs to peek at the idle socket without allocating.
	peek  func(uintptr) // peekSocket, bound once
	still bool          // peekSocket found nothing to read
	one   [1]byte
}

// sendWatch is the writer under a connection's bufio.Writer. It records
// whether a write reached the connection, so that exchange knows whether a
// request went out in part before its end was flushed.
type sendWatch struct {
	w    io.Writer
	sent bool
}

func (s *sendWatch) Write(p []byte) (int, error) {
	s.sent = true
	return s.w.Write(p)
}

// probeAfter is how long a connection without a socket of its own (see
// quiet) may sit idle before it is checked for a close by the server
// before use. A connection on a socket is checked before every reuse.
const probeAfter = time.Second

// MaxHeadBytes bounds what a server may send before the body of its answer
// (status lines and headers, informational answers included): net/http's
// Transport default, which k6 keeps. A longer head fails the request rather
// than growing the client without bound.
const MaxHeadBytes = 10 << 20

// headLimit is the reader under a connection's bufio.Reader. While a
// response head is read it lets through at most left bytes, as net/http's
// persistConn does; for bodies left is unlimited.
type headLimit struct {
	r    io.Reader
	left int64
}

func (l *headLimit) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, fmt.Errorf("read limit of %d bytes exhausted", MaxHeadBytes)
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// errHeadTooLarge is net/http's error for a head over MaxHeadBytes.
var errHeadTooLarge = fmt.Errorf("net/http: server response headers exceeded %d bytes; aborted", MaxHeadBytes)

// Handles reports whether the Transport can run req: plain http, not
// CONNECT, no Expect header.
func (t *Transport) Handles(req *http.Request) bool {
	if req.URL.Scheme != "http" || req.Method == http.MethodConnect {
		return false
	}
	_, expect := req.Header["Expect"]
	return !expect
}

// aLongTimeAgo is a deadline in the past, to interrupt blocked I/O.
var aLongTimeAgo = time.Unix(1, 0)

// RoundTrip runs req, which Handles must accept. It refuses what
// net/http's Transport refuses (see checkRequest), with the same errors. A
// request that fails on a reused connection before the server answered
// anything is retried once on a new connection when it is safe to send it
// again, as net/http does.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := checkRequest(req); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	ctx := req.Context()
	trace := httptrace.ContextClientTrace(ctx)
	for attempt := 0; ; attempt++ {
		if trace != nil && trace.GetConn != nil {
			trace.GetConn(req.URL.Host)
		}
		c, err := t.get(ctx, req.URL, !replayable(req))
		if err != nil {
			return nil, err
		}
		if trace != nil && trace.GotConn != nil {
			trace.GotConn(httptrace.GotConnInfo{Conn: c.conn, Reused: c.reused})
		}
		resp, retry, err := t.exchange(ctx, c, req, trace)
		if err == nil {
			return resp, nil
		}
		if !retry || attempt > 0 || ctx.Err() != nil || !replayable(req) {
			return nil, err
		}
		if req.GetBody != nil && req.Body != nil && req.Body != http.NoBody {
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, err
			}
			r2 := *req
			r2.Body = body
			req = &r2
		}
	}
}

// checkRequest refuses, in the same order and with the same errors, what
// net/http's Transport refuses before it sends a request: header names
// that are not tokens, header values with control characters (CR and LF
// would let a value smuggle headers or a second request), a method that is
// not a token, a URL without a host. Request.Write, which writeRequest
// copies, checks none of these.
func checkRequest(req *http.Request) error {
	if req.URL == nil {
		return errors.New("http: nil Request.URL")
	}
	if req.Header == nil {
		return errors.New("http: nil Request.Header")
	}
	if what := badField(req.Header); what != "" {
		return errors.New("net/http: invalid header " + what)
	}
	if what := badField(req.Trailer); what != "" {
		return errors.New("net/http: invalid trailer " + what)
	}
	if req.URL.Scheme != "http" {
		return fmt.Errorf("unsupported protocol scheme %q", req.URL.Scheme)
	}
	if req.Method != "" && !httpguts.ValidHeaderFieldName(req.Method) {
		return fmt.Errorf("net/http: invalid method %q", req.Method)
	}
	if req.URL.Host == "" {
		return errors.New("http: no Host in request URL")
	}
	return nil
}

// badField names the first invalid name or value of h, or returns "".
// A value is not quoted: it may be a secret.
func badField(h http.Header) string {
	for k, vs := range h {
		if !httpguts.ValidHeaderFieldName(k) {
			return fmt.Sprintf("field name %q", k)
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return fmt.Sprintf("field value for %q", k)
			}
		}
	}
	return ""
}

// canonicalAddr is the host:port a request goes to, as net/http's
// Transport computes it: an international name in its ASCII form, port 80
// when the URL names none.
func canonicalAddr(u *url.URL) string {
	host := u.Hostname()
	if !ascii(host) {
		if v, err := idna.Lookup.ToASCII(host); err == nil {
			host = v
		}
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(host, port)
}

// exchange writes req on c and reads the response head. retry reports a
// failure on a reused connection before any response byte arrived.
func (t *Transport) exchange(ctx context.Context, c *conn, req *http.Request, trace *httptrace.ClientTrace) (*http.Response, bool, error) {
	if !c.watch(ctx) {
		_ = c.conn.Close()
		return nil, false, ctx.Err()
	}
	c.out.sent = false
	handled, err := writeRequest(c.bw, req)
	if !handled {
		err = req.Write(c.bw)
	}
	sent := false
	if err == nil && c.raw != nil && !c.out.sent {
		sent, err = c.sendAndWait(trace)
	}
	if !sent {
		if err == nil {
			err = c.bw.Flush()
		}
		if trace != nil && trace.WroteRequest != nil {
			trace.WroteRequest(httptrace.WroteRequestInfo{Err: err})
		}
	}
	if err != nil {
		return c.fail(ctx, err, true)
	}
	c.head.left = MaxHeadBytes
	if _, err := c.br.Peek(1); err != nil {
		return c.fail(ctx, err, errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET))
	}
	if trace != nil && trace.GotFirstResponseByte != nil {
		trace.GotFirstResponseByte()
	}
	resp, b, err := readResponse(c.br, req)
	if err != nil {
		if c.head.left <= 0 {
			err = errHeadTooLarge
		}
		return c.fail(ctx, err, false)
	}
	c.head.left = math.MaxInt64
	reuse := !resp.Close && !req.Close && !closeRequested(req.Header) && resp.StatusCode != http.StatusSwitchingProtocols
	if resp.Body == http.NoBody {
		t.release(c, reuse)
		return resp, false, nil
	}
	if b == nil {
		b = &bodyReader{rc: resp.Body}
	} else {
		b.left = resp.ContentLength
	}
	b.ctx, b.c, b.t, b.reuse = ctx, c, t, reuse
	resp.Body = b
	return resp, false, nil
}

// readResponse reads the response to req from br: its head by readHead
// when it can, else by http.ReadResponse, skipping informational answers
// as net/http's Transport does: any number of them, bounded only by
// MaxHeadBytes over all the heads (the caller's headLimit), as Go 1.26's
// net/http bounds them by size rather than count. When readHead parsed
// the head, fast is the body reader allocated with the response, to be
// set up for the body's ContentLength bytes still in br; else it is nil.
func readResponse(br *bufio.Reader, req *http.Request) (resp *http.Response, fast *bodyReader, err error) {
	if fr, ok := readHead(br, req); ok {
		return &fr.Response, &fr.body, nil
	}
	for {
		resp, err = http.ReadResponse(br, req)
		if err != nil {
			return nil, nil, err
		}
		// 101 switches protocols and ends HTTP on this connection.
		if resp.StatusCode < 100 || resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, nil, nil
		}
	}
}

// sendAndWait flushes the buffered request from inside a wait on the
// socket, then waits until the socket is readable: the poller's readiness
// is reset before the request goes out, so an answer that arrives at once
// is not missed, and the read that follows finds it. sent reports whether
// the request was flushed (with err the flush's error); when it was not,
// because the wait failed at once (a deadline, a closed socket), the
// caller flushes as usual. A failed wait is not reported: the read that
// follows meets the same deadline or closed socket and fails as it would
// have. The wait ends on any answer, close or reset. Whatever arrived
// before the wait began would not end it, which is why get checks a
// kept connection's socket (quiet) just before it is used.
func (c *conn) sendAndWait(trace *httptrace.ClientTrace) (sent bool, err error) {
	c.trace, c.sent, c.writeErr = trace, false, nil
	_ = c.raw.Read(c.await)
	c.trace = nil
	return c.sent, c.writeErr
}

// awaitAnswer is sendAndWait's step: first flush the request, then (once
// the socket is readable) stop waiting. A failed flush ends the wait.
func (c *conn) awaitAnswer(uintptr) bool {
	if c.sent {
		return true
	}
	c.sent = true
	c.writeErr = c.bw.Flush()
	if c.trace != nil && c.trace.WroteRequest != nil {
		c.trace.WroteRequest(httptrace.WroteRequestInfo{Err: c.writeErr})
	}
	return c.writeErr != nil
}

// watch arranges for the end of ctx to interrupt c's I/O: through the
// context's Watcher when it has one, else a context.AfterFunc. It returns
// false when ctx already ended.
func (c *conn) watch(ctx context.Context) bool {
	if w, ok := ctx.Value(WatcherKey{}).(Watcher); ok {
		c.watcher = w
		return w.Attach(c.conn)
	}
	if ctx.Done() == nil {
		return true
	}
	c.stop = context.AfterFunc(ctx, c.interrupt)
	return ctx.Err() == nil
}

// unwatch ends watch. It returns false when the context interrupted the
// connection, which then cannot be reused.
func (c *conn) unwatch() bool {
	ok := true
	if c.watcher != nil {
		ok = c.watcher.Detach()
		c.watcher = nil
	}
	if c.stop != nil {
		ok = c.stop()
		c.stop = nil
	}
	return ok
}

func (c *conn) interruptConn() { _ = c.conn.SetDeadline(aLongTimeAgo) }

// fail closes c after a failed exchange and reports the error: the
// context's when it ended, so that a timeout reads as one.
func (c *conn) fail(ctx context.Context, err error, retry bool) (*http.Response, bool, error) {
	c.unwatch()
	_ = c.conn.Close()
	if ctx.Err() != nil {
		return nil, false, ctx.Err()
	}
	return nil, retry && c.reused, err
}

// release hands c back to the pool once its response was read, unless the
// connection may not be reused, its context interrupted it, or the server
// sent bytes beyond the response (net/http drops such a connection too:
// they cannot be the answer to a request not yet sent).
func (t *Transport) release(c *conn, reuse bool) {
	if !c.unwatch() || !reuse || c.br.Buffered() > 0 {
		_ = c.conn.Close()
		return
	}
	c.idleAt = sinceEpoch()
	t.mu.Lock()
	list := t.idle[c.host]
	if len(list) >= t.maxIdle {
		t.mu.Unlock()
		_ = c.conn.Close()
		return
	}
	t.idle[c.host] = append(list, c)
	t.mu.Unlock()
}

// get returns an idle connection to u's host, or dials one. An idle
// connection on which anything arrived since its last answer (bytes, a
// close) is closed and the next one tried, as net/http's Transport drops
// it (see quiet); probe asks for the check on connections without a
// socket of their own too (for requests that cannot be retried if the
// connection turns out dead).
func (t *Transport) get(ctx context.Context, u *url.URL, probe bool) (*conn, error) {
	for {
		t.mu.Lock()
		list := t.idle[u.Host]
		if len(list) == 0 {
			t.mu.Unlock()
			break
		}
		c := list[len(list)-1]
		list[len(list)-1] = nil
		t.idle[u.Host] = list[:len(list)-1]
		t.mu.Unlock()
		idle := sinceEpoch() - c.idleAt
		if idle > t.idleTimeout || !c.quiet(probe || idle > probeAfter) {
			_ = c.conn.Close()
			continue
		}
		c.reused = true
		return c, nil
	}
	nc, err := t.dial(ctx, "tcp", canonicalAddr(u))
	if err != nil {
		return nil, err
	}
	c := &conn{conn: nc, head: headLimit{r: nc}, out: sendWatch{w: nc}, host: u.Host}
	c.br = bufio.NewReaderSize(&c.head, 4<<10)
	c.bw = bufio.NewWriterSize(&c.out, 4<<10)
	c.interrupt = c.interruptConn
	if sc, ok := nc.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			c.raw, c.await = raw, c.awaitAnswer
		}
	}
	return c, nil
}

// alive checks an idle connection's socket as peekAlive can: a server
// that closed it has left an EOF to read, a live one has left nothing. A
// connection that wraps another (NetConn, as tls.Conn has) is checked on
// the socket under it.
func alive(c *conn) bool {
	raw := c.conn
	if w, ok := raw.(interface{ NetConn() net.Conn }); ok {
		raw = w.NetConn()
	}
	return peekAlive(raw)
}

// CloseIdleConnections closes every idle connection.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = make(map[string][]*conn)
	t.mu.Unlock()
	for _, list := range idle {
		for _, c := range list {
			_ = c.conn.Close()
		}
	}
}

// idleConns counts the idle connections to host.
func (t *Transport) idleConns(host string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.idle[host])
}

// replayable reports whether req may be sent again after a connection
// failed under it (net/http's rule).
func replayable(req *http.Request) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, a := req.Header["Idempotency-Key"]
	_, b := req.Header["X-Idempotency-Key"]
	return a || b
}

// closeRequested reports whether a Connection header asks to close.
func closeRequested(h http.Header) bool {
	for _, v := range h["Connection"] {
		for _, tok := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), "close") {
				return true
			}
		}
	}
	return false
}

// bodyReader is a response body of the Transport. Reading it to the end gives
// the connection back; closing it earlier closes the connection, since
// what is left of the body would have to be read first. A body whose head
// readHead parsed is read here (left bytes); others through net/http's
// body reader rc.
type bodyReader struct {
	rc    io.ReadCloser
	left  int64
	ctx   context.Context
	c     *conn
	t     *Transport
	reuse bool
	done  bool
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	var n int
	var err error
	if b.rc != nil {
		n, err = b.rc.Read(p)
	} else {
		n, err = b.readFixed(p)
	}
	if err != nil {
		b.done = true
		b.t.release(b.c, b.reuse && err == io.EOF)
		if err != io.EOF && b.ctx.Err() != nil {
			err = b.ctx.Err()
		}
	}
	return n, err
}

// readFixed reads the rest of a body of known length, returning io.EOF
// with its last bytes, and io.ErrUnexpectedEOF when the connection ends
// before them (net/http's error for a body cut short).
func (b *bodyReader) readFixed(p []byte) (int, error) {
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.c.br.Read(p)
	b.left -= int64(n)
	if b.left == 0 {
		return n, io.EOF
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (b *bodyReader) Close() error {
	if !b.done {
		b.done = true
		b.t.release(b.c, false)
	}
	return nil
}

// epoch is the origin of the monotonic idle times.
var epoch = time.Now()

func sinceEpoch() time.Duration { return time.Since(epoch) }
