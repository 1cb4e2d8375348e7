package http

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"syscall"
	"time"
)

// fastPool runs plain-HTTP/1.1 requests on the calling goroutine over
// connections it keeps per host. net/http's Transport hands every request
// between the caller, a writer and a reader goroutine; doing the write
// and the read in place saves those hand-offs and most of the transport's
// allocations, which is a large share of a load generator's CPU. Anything
// it does not handle (TLS, proxies, Expect: 100-continue, disabled
// keep-alive) goes to the http.Transport instead.
type fastPool struct {
	t           *transport
	maxIdle     int
	idleTimeout time.Duration

	mu   sync.Mutex
	idle map[string][]*fastConn // by URL host
}

// fastConn is one connection of the pool.
type fastConn struct {
	conn   net.Conn
	br     *bufio.Reader
	bw     *bufio.Writer
	host   string
	idleAt time.Duration // since epoch
	reused bool

	// What interrupts the connection's I/O while a request uses it.
	lctx      *laneCtx
	stop      func() bool
	interrupt func() // interruptConn, bound once
}

// probeAfter is how long a connection may sit idle before it is checked
// for a close by the server before use. Servers close idle connections
// after seconds, not milliseconds; the check costs a system call.
const probeAfter = time.Second

func newFastPool(t *transport, maxIdle int, idleTimeout time.Duration) *fastPool {
	return &fastPool{t: t, maxIdle: maxIdle, idleTimeout: idleTimeout, idle: make(map[string][]*fastConn)}
}

// handles reports whether the pool can run req.
func (p *fastPool) handles(req *http.Request) bool {
	if req.URL.Scheme != "http" || req.Method == http.MethodConnect {
		return false
	}
	_, expect := req.Header["Expect"]
	return !expect
}

// aLongTimeAgo is a deadline in the past, to interrupt blocked I/O.
var aLongTimeAgo = time.Unix(1, 0)

// roundTrip runs req. A request that fails on a reused connection before
// the server answered anything is retried once on a new connection when
// it is safe to send it again, as net/http does.
func (p *fastPool) roundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	trace := httptrace.ContextClientTrace(ctx)
	for attempt := 0; ; attempt++ {
		if trace != nil && trace.GetConn != nil {
			trace.GetConn(req.URL.Host)
		}
		c, err := p.get(ctx, req.URL.Host, !replayable(req))
		if err != nil {
			return nil, err
		}
		if trace != nil && trace.GotConn != nil {
			trace.GotConn(httptrace.GotConnInfo{Conn: c.conn, Reused: c.reused})
		}
		resp, retry, err := p.exchange(ctx, c, req, trace)
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

// exchange writes req on c and reads the response head. retry reports a
// failure on a reused connection before any response byte arrived.
func (p *fastPool) exchange(ctx context.Context, c *fastConn, req *http.Request, trace *httptrace.ClientTrace) (*http.Response, bool, error) {
	if !c.watch(ctx) {
		_ = c.conn.Close()
		return nil, false, ctx.Err()
	}
	handled, err := writeRequest(c.bw, req)
	if !handled {
		err = req.Write(c.bw)
	}
	if err == nil {
		err = c.bw.Flush()
	}
	if trace != nil && trace.WroteRequest != nil {
		trace.WroteRequest(httptrace.WroteRequestInfo{Err: err})
	}
	if err != nil {
		return c.fail(ctx, err, true)
	}
	if _, err := c.br.Peek(1); err != nil {
		return c.fail(ctx, err, errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET))
	}
	if trace != nil && trace.GotFirstResponseByte != nil {
		trace.GotFirstResponseByte()
	}
	resp, fast := readHead(c.br, req)
	for !fast {
		resp, err = http.ReadResponse(c.br, req)
		if err != nil {
			return c.fail(ctx, err, false)
		}
		// Skip informational answers; 101 switches protocols and ends
		// HTTP on this connection.
		if resp.StatusCode < 100 || resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
	}
	reuse := !resp.Close && !req.Close && !closeRequested(req.Header) && resp.StatusCode != http.StatusSwitchingProtocols
	if resp.Body == http.NoBody {
		p.release(c, reuse)
		return resp, false, nil
	}
	b := &fastBody{ctx: ctx, c: c, p: p, reuse: reuse}
	if fast {
		b.left = resp.ContentLength
	} else {
		b.rc = resp.Body
	}
	resp.Body = b
	return resp, false, nil
}

// watch arranges for the end of ctx to interrupt c's I/O. Under a lane's
// context the lane does it; otherwise a context.AfterFunc. It returns
// false when ctx already ended.
func (c *fastConn) watch(ctx context.Context) bool {
	if lc, ok := ctx.Value(laneKey{}).(*laneCtx); ok {
		c.lctx = lc
		return lc.l.attach(lc, c.conn)
	}
	if ctx.Done() == nil {
		return true
	}
	c.stop = context.AfterFunc(ctx, c.interrupt)
	return ctx.Err() == nil
}

// unwatch ends watch. It returns false when the context interrupted the
// connection, which then cannot be reused.
func (c *fastConn) unwatch() bool {
	ok := true
	if c.lctx != nil {
		ok = c.lctx.l.detach(c.lctx)
		c.lctx = nil
	}
	if c.stop != nil {
		ok = c.stop()
		c.stop = nil
	}
	return ok
}

func (c *fastConn) interruptConn() { _ = c.conn.SetDeadline(aLongTimeAgo) }

// fail closes c after a failed exchange and reports the error: the
// context's when it ended, so that a timeout reads as one.
func (c *fastConn) fail(ctx context.Context, err error, retry bool) (*http.Response, bool, error) {
	c.unwatch()
	_ = c.conn.Close()
	if ctx.Err() != nil {
		return nil, false, ctx.Err()
	}
	return nil, retry && c.reused, err
}

// release hands c back to the pool once its response was read, unless the
// connection may not be reused or its context interrupted it.
func (p *fastPool) release(c *fastConn, reuse bool) {
	if !c.unwatch() || !reuse {
		_ = c.conn.Close()
		return
	}
	c.idleAt = sinceEpoch()
	p.mu.Lock()
	list := p.idle[c.host]
	if len(list) >= p.maxIdle {
		p.mu.Unlock()
		_ = c.conn.Close()
		return
	}
	p.idle[c.host] = append(list, c)
	p.mu.Unlock()
}

// get returns an idle connection to host, or dials one. An idle
// connection is checked for a close by the server when it sat idle for a
// while, or always when probe is set (for requests that cannot be retried
// if the connection turns out dead).
func (p *fastPool) get(ctx context.Context, host string, probe bool) (*fastConn, error) {
	for {
		p.mu.Lock()
		list := p.idle[host]
		if len(list) == 0 {
			p.mu.Unlock()
			break
		}
		c := list[len(list)-1]
		list[len(list)-1] = nil
		p.idle[host] = list[:len(list)-1]
		p.mu.Unlock()
		idle := sinceEpoch() - c.idleAt
		if idle > p.idleTimeout || ((probe || idle > probeAfter) && !alive(c)) {
			_ = c.conn.Close()
			continue
		}
		c.reused = true
		return c, nil
	}
	conn, err := p.t.dial(ctx, "tcp", dialAddr(host))
	if err != nil {
		return nil, err
	}
	c := &fastConn{
		conn: conn,
		br:   bufio.NewReaderSize(conn, 4<<10),
		bw:   bufio.NewWriterSize(conn, 4<<10),
		host: host,
	}
	c.interrupt = c.interruptConn
	return c, nil
}

// alive checks an idle connection without blocking: a server that closed
// it has left an EOF to read, a live one has left nothing.
func alive(c *fastConn) bool {
	if c.br.Buffered() > 0 {
		return false
	}
	raw := c.conn
	if cc, ok := raw.(*countingConn); ok {
		raw = cc.Conn
	}
	return peekAlive(raw)
}

// closeIdle closes every idle connection.
func (p *fastPool) closeIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle = make(map[string][]*fastConn)
	p.mu.Unlock()
	for _, list := range idle {
		for _, c := range list {
			_ = c.conn.Close()
		}
	}
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

// dialAddr adds the default port to a URL host.
func dialAddr(host string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	if len(host) > 1 && host[0] == '[' && host[len(host)-1] == ']' {
		return host + ":80"
	}
	return net.JoinHostPort(host, "80")
}

// fastBody is a response body of the pool. Reading it to the end gives
// the connection back; closing it earlier closes the connection, since
// what is left of the body would have to be read first. A body whose head
// readHead parsed is read here (left bytes); others through net/http's
// body reader rc.
type fastBody struct {
	rc    io.ReadCloser
	left  int64
	ctx   context.Context
	c     *fastConn
	p     *fastPool
	reuse bool
	done  bool
}

func (b *fastBody) Read(p []byte) (int, error) {
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
		b.p.release(b.c, b.reuse && err == io.EOF)
		if err != io.EOF && b.ctx.Err() != nil {
			err = b.ctx.Err()
		}
	}
	return n, err
}

// readFixed reads the rest of a body of known length, returning io.EOF
// with its last bytes.
func (b *fastBody) readFixed(p []byte) (int, error) {
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

func (b *fastBody) Close() error {
	if !b.done {
		b.done = true
		b.p.release(b.c, false)
	}
	return nil
}
