package http

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/metronome-load/metronome/metrics"
)

// responseType says what happens to a response body.
type responseType uint8

const (
	respText responseType = iota
	respBinary
	respNone
)

// target is a parsed request URL, cached per VU by its source string.
type target struct {
	u *url.URL // without user info
	// clean is the URL without credentials: the url and name tags and the
	// response's url field.
	clean string
	// auth is the Authorization header value built from credentials in
	// the URL, or "".
	auth string

	// Tag sets built last time for a request to this URL, so that
	// repeating a request repeats no tag work. Only the VU goroutine
	// touches them.
	reqTags tagMemo
	hopTags hopMemo
}

// tagMemo remembers the request tags of an unnamed request: base (State
// and per-request tags) plus method, name and url.
type tagMemo struct {
	base   *metrics.TagSet
	method string
	sys    sysTags
	tags   *metrics.TagSet
}

// hopMemo remembers the tags of a hop without a transport error.
type hopMemo struct {
	base     *metrics.TagSet
	status   int
	proto    string
	tls      uint16
	expected int8
	sys      sysTags
	tags     *metrics.TagSet
}

func parseTarget(raw string) (*target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		if u.Scheme == "" {
			return nil, &url.Error{Op: "parse", URL: raw, Err: errors.New("the URL has no scheme; it must start with http:// or https://")}
		}
		return nil, &url.Error{Op: "parse", URL: raw, Err: errors.New("unsupported scheme " + u.Scheme)}
	}
	if u.Host == "" {
		return nil, &url.Error{Op: "parse", URL: raw, Err: errors.New("the URL has no host")}
	}
	return targetOf(u), nil
}

func targetOf(u *url.URL) *target {
	t := &target{u: u}
	if u.User != nil {
		user := u.User.Username()
		pass, _ := u.User.Password()
		t.auth = basicAuth(user, pass)
		c := *u
		c.User = nil
		t.u = &c
	}
	t.clean = t.u.String()
	return t
}

// sentCookie is a cookie a request carries, from the jar or from params.
type sentCookie struct {
	name, value string
	replace     bool
}

// request is a request as the script described it, parsed on the VU
// goroutine into plain Go so that it can run on any goroutine. It holds
// its result and its response object too, so one request costs one
// allocation for all three.
type request struct {
	res  result
	resp response

	method string
	url    *target
	// badURL is why the URL did not parse; url.u is nil then.
	badURL error
	// header is what every hop sends before cookies and credentials are
	// added. It is shared and never modified.
	header  http.Header
	host    string
	body    string
	hasBody bool

	// tags are State.Tags, the per-request tags and the method, url and
	// name system tags.
	tags *metrics.TagSet
	// named is set when the script chose the name tag.
	named     bool
	timeout   time.Duration
	redirects int
	respType  responseType
	expect    *expected // nil: no response callback
	cookies   []sentCookie
	jar       http.CookieJar
	throw     bool
	debug     debugLevel
}

// hop is one request on the wire: the original one or one redirect.
type hop struct {
	url        *target
	method     string
	status     int
	proto      string
	tlsVersion uint16
	tlsCipher  uint16
	isTLS      bool
	remote     net.Addr
	err        error
	errCode    int
	// canceled is set when the VU's context ended during the hop: such
	// hops emit no samples.
	canceled bool
	t        timings
	end      time.Time
	sent     int64
	received int64
	debug    string
}

// timings are the phases of one hop.
type timings struct {
	blocked, connecting, tlsHandshaking, sending, waiting, receiving time.Duration
}

func (t *timings) duration() time.Duration { return t.sending + t.waiting + t.receiving }

// result is what a request produced: its hops and the final response.
type result struct {
	req    *request
	hops   []hop
	inline [1]hop

	header     http.Header // of the final response
	statusText string
	body       string
	bin        []byte
	// sentHeader and sentCookies are what the last hop sent.
	sentHeader  http.Header
	sentCookies []sentCookie
	sentURL     *target
	sentMethod  string

	redirectsExhausted bool
}

func (r *result) last() *hop { return &r.hops[len(r.hops)-1] }

// failure returns the error of the request, if any hop failed.
func (r *result) failure() *hop {
	if h := r.last(); h.err != nil {
		return h
	}
	return nil
}

// tracer collects the moments of one hop from net/http/httptrace. The
// callbacks may run on the transport's goroutines, so every field is
// atomic. Tracers are pooled; a tracer is only reused once all of its
// callbacks have fired.
type tracer struct {
	getConn, gotConn, wrote, firstByte atomic.Int64
	reused                             atomic.Bool
	conn                               atomic.Pointer[countingConn]
	trace                              httptrace.ClientTrace
}

var tracers = sync.Pool{New: func() any { return newTracer() }}

func newTracer() *tracer {
	t := &tracer{}
	t.trace = httptrace.ClientTrace{
		GetConn:              t.onGetConn,
		GotConn:              t.onGotConn,
		WroteRequest:         t.onWrote,
		GotFirstResponseByte: t.onFirstByte,
	}
	return t
}

func (t *tracer) onGetConn(string) { t.getConn.Store(int64(sinceEpoch())) }

func (t *tracer) onGotConn(info httptrace.GotConnInfo) {
	t.reused.Store(info.Reused)
	t.conn.Store(connOf(info.Conn))
	t.gotConn.Store(int64(sinceEpoch()))
}

func (t *tracer) onWrote(httptrace.WroteRequestInfo) { t.wrote.Store(int64(sinceEpoch())) }

func (t *tracer) onFirstByte() { t.firstByte.Store(int64(sinceEpoch())) }

func (t *tracer) reset() {
	t.getConn.Store(0)
	t.gotConn.Store(0)
	t.wrote.Store(0)
	t.firstByte.Store(0)
	t.reused.Store(false)
	t.conn.Store(nil)
}

// done reports whether every callback fired, so no late one can come.
func (t *tracer) done() bool {
	return t.getConn.Load() != 0 && t.gotConn.Load() != 0 && t.wrote.Load() != 0 && t.firstByte.Load() != 0
}

// timings turns the moments into phases. Missing moments (a failed hop)
// are filled with the end, so the time up to the failure lands in the
// phase that was running, as k6 does with waiting.
func (t *tracer) timings(start, end time.Duration) timings {
	var r timings
	get := time.Duration(t.getConn.Load())
	if get == 0 {
		get = start
	}
	got := time.Duration(t.gotConn.Load())
	if got == 0 {
		r.blocked = end - get
		return r.clamp()
	}
	wait := got - get
	if c := t.conn.Load(); c != nil && !t.reused.Load() {
		r.connecting = c.dialEnd - c.dialStart
		if c.tlsEnd != 0 {
			r.tlsHandshaking = c.tlsEnd - c.tlsStart
		}
		wait -= r.connecting + r.tlsHandshaking
	}
	r.blocked = wait
	wrote := time.Duration(t.wrote.Load())
	if wrote == 0 {
		r.sending = end - got
		return r.clamp()
	}
	r.sending = wrote - got
	first := time.Duration(t.firstByte.Load())
	if first == 0 {
		r.waiting = end - wrote
		return r.clamp()
	}
	r.waiting = first - wrote
	r.receiving = end - first
	return r.clamp()
}

func (r timings) clamp() timings {
	r.blocked = max(r.blocked, 0)
	r.connecting = max(r.connecting, 0)
	r.tlsHandshaking = max(r.tlsHandshaking, 0)
	r.sending = max(r.sending, 0)
	r.waiting = max(r.waiting, 0)
	r.receiving = max(r.receiving, 0)
	return r
}

// counter is what do needs of a transport to attribute bytes.
type counter interface{ take() (sent, received int64) }

// do runs r through rt, following redirects, and returns what happened.
// It touches no JavaScript and no VU state, so batch and asyncRequest run
// it on other goroutines. parent is the VU's context. l is the VU's lane
// for synchronous requests, nil for concurrent ones.
func do(parent context.Context, rt http.RoundTripper, r *request, l *lane) *result {
	res := &r.res
	res.req = r
	res.hops = res.inline[:0]
	start := sinceEpoch()
	var ctx context.Context
	if l != nil && l.arm(parent, r.timeout, start) {
		defer l.disarm()
		ctx = l.ctx
	} else {
		l = nil
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(parent, r.timeout)
		defer cancel()
	}
	timedOut := func() bool {
		if l != nil {
			return l.err() == errTimeout
		}
		return ctx.Err() == context.DeadlineExceeded
	}
	cnt, _ := rt.(counter)

	u, method := r.url, r.method
	body, hasBody := r.body, r.hasBody
	header := r.header
	for n := 0; ; n++ {
		res.hops = append(res.hops, hop{url: u, method: method})
		h := &res.hops[len(res.hops)-1]
		sendHeader, cookies := r.headerFor(header, u, n == 0 || sameHost(u, r.url))
		res.sentHeader, res.sentCookies, res.sentURL, res.sentMethod = sendHeader, cookies, u, method

		var tr *tracer
		var req *http.Request
		if l != nil {
			tr = l.tracer()
			req = l.request()
		} else {
			tr = tracers.Get().(*tracer)
			tr.reset()
			req = (&http.Request{}).WithContext(httptrace.WithClientTrace(ctx, &tr.trace))
		}
		req.Method = method
		req.URL = u.u
		req.Proto, req.ProtoMajor, req.ProtoMinor = "HTTP/1.1", 1, 1
		req.Header = sendHeader
		req.Host = r.host
		if hasBody {
			b := body
			req.Body = io.NopCloser(strings.NewReader(b))
			req.ContentLength = int64(len(b))
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(b)), nil }
			if len(b) == 0 {
				req.Body = http.NoBody
			}
		}
		if r.debug != debugOff {
			h.debug = dumpRequest(req, body, r.debug)
		}

		resp, err := rt.RoundTrip(req)
		if err != nil {
			finishHop(h, tr, start, cnt, l)
			h.fail(err, parent, timedOut())
			return res
		}
		h.status = resp.StatusCode
		h.proto = resp.Proto
		if resp.TLS != nil {
			h.isTLS = true
			h.tlsVersion = resp.TLS.Version
			h.tlsCipher = resp.TLS.CipherSuite
		}
		if c := tr.conn.Load(); c != nil {
			h.remote = c.RemoteAddr()
		}
		if r.jar != nil {
			if cs := resp.Cookies(); len(cs) > 0 {
				r.jar.SetCookies(u.u, cs)
			}
		}

		next, redirect := redirectTarget(resp, u)
		if redirect && n >= r.redirects {
			redirect = false
			res.redirectsExhausted = r.redirects > 0
		}
		if redirect {
			_, err := io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			finishHop(h, tr, start, cnt, l)
			if r.debug != debugOff {
				h.debug += dumpResponse(resp, "", r.debug)
			}
			if err != nil {
				h.fail(err, parent, timedOut())
				return res
			}
			method, hasBody = redirectMethod(resp.StatusCode, method, hasBody)
			if !hasBody {
				body = ""
			}
			if !sameHost(next, u) {
				header = stripSensitive(header)
			}
			u = next
			start = h.end.Sub(epoch)
			continue
		}

		res.header = resp.Header
		res.statusText = resp.Status
		res.body, res.bin, err = readBody(resp, r.respType)
		_ = resp.Body.Close()
		finishHop(h, tr, start, cnt, l)
		if r.debug != debugOff {
			h.debug += dumpResponse(resp, res.body, r.debug)
		}
		if err != nil {
			h.fail(err, parent, timedOut())
		} else if h.status >= 400 {
			h.errCode = 1000 + h.status
		}
		return res
	}
}

// finishHop stamps the hop's end, computes its timings and takes its
// bytes. The tracer goes back to the lane or the pool unless a callback
// may still arrive for it.
func finishHop(h *hop, tr *tracer, start time.Duration, cnt counter, l *lane) {
	h.end = time.Now()
	end := h.end.Sub(epoch)
	h.t = tr.timings(start, end)
	if cnt != nil {
		h.sent, h.received = cnt.take()
	}
	switch {
	case l != nil:
		l.release(tr)
	case tr.done():
		tracers.Put(tr)
	}
}

// fail records err on the hop. A hop cut off because the VU's context
// ended is marked canceled; one cut off by the request's own timeout gets
// k6's request-timeout code.
func (h *hop) fail(err error, parent context.Context, timedOut bool) {
	switch {
	case parent.Err() != nil:
		h.canceled = true
		h.err = parent.Err()
		h.errCode = codeGeneric
	case timedOut:
		h.err = errTimeout
		h.errCode = codeRequestTimeout
	default:
		h.err = err
		h.errCode = errorCode(err)
	}
}

var errTimeout = errors.New("request timeout")

// headerFor returns the header one hop sends: base plus credentials from
// the URL and cookies from the jar and params (params cookies only go to
// the host the request was made for). base itself is never modified.
func (r *request) headerFor(base http.Header, u *target, origin bool) (http.Header, []sentCookie) {
	var jarCookies []*http.Cookie
	if r.jar != nil {
		jarCookies = r.jar.Cookies(u.u)
	}
	params := r.cookies
	if !origin {
		params = nil
	}
	if u.auth == "" && len(jarCookies) == 0 && len(params) == 0 {
		return base, nil
	}
	h := base.Clone()
	if h == nil {
		h = make(http.Header, 2)
	}
	if u.auth != "" {
		if _, set := h["Authorization"]; !set {
			h["Authorization"] = []string{u.auth}
		}
	}
	if len(jarCookies) == 0 && len(params) == 0 {
		return h, nil
	}
	sent := make([]sentCookie, 0, len(jarCookies)+len(params))
	for _, c := range params {
		sent = append(sent, c)
	}
	for _, c := range jarCookies {
		replaced := false
		for _, p := range params {
			if p.replace && p.name == c.Name {
				replaced = true
				break
			}
		}
		if !replaced {
			sent = append(sent, sentCookie{name: c.Name, value: c.Value})
		}
	}
	var b strings.Builder
	if v := h.Get("Cookie"); v != "" {
		b.WriteString(v)
	}
	for _, c := range sent {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString((&http.Cookie{Name: c.name, Value: c.value}).String())
	}
	h["Cookie"] = []string{b.String()}
	return h, sent
}

// redirectTarget reports whether resp is a redirect to follow, and where.
func redirectTarget(resp *http.Response, from *target) (*target, bool) {
	switch resp.StatusCode {
	case 301, 302, 303, 307, 308:
	default:
		return nil, false
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		return nil, false
	}
	u, err := from.u.Parse(loc)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, false
	}
	return targetOf(u), true
}

// redirectMethod is the method and body a redirect is followed with:
// 307 and 308 keep both, the others turn into a body-less GET (HEAD stays
// HEAD).
func redirectMethod(status int, method string, hasBody bool) (string, bool) {
	if status == 307 || status == 308 {
		return method, hasBody
	}
	if method == http.MethodHead {
		return method, false
	}
	return http.MethodGet, false
}

func sameHost(a, b *target) bool { return strings.EqualFold(a.u.Host, b.u.Host) }

// stripSensitive drops the headers a redirect must not carry to another
// host.
func stripSensitive(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	_, a := h["Authorization"]
	_, c := h["Cookie"]
	_, w := h["Www-Authenticate"]
	if !a && !c && !w {
		return h
	}
	h = h.Clone()
	delete(h, "Authorization")
	delete(h, "Cookie")
	delete(h, "Www-Authenticate")
	return h
}

// maxExactBody is the largest declared Content-Length read straight into
// a buffer of its own size.
const maxExactBody = 64 << 20

var bodyBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readBody reads the whole body: into a string for text, a byte slice for
// binary, nowhere for none. A body of known length is read into one
// allocation of exactly that size; others go through a pooled buffer.
func readBody(resp *http.Response, kind responseType) (string, []byte, error) {
	var rd io.Reader = resp.Body
	plain := true
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && !resp.Uncompressed {
		d, err := decompressor(enc, resp.Body)
		if err != nil {
			return "", nil, err
		}
		if d != nil {
			rd, plain = d, false
		}
	}
	if kind == respNone {
		_, err := io.Copy(io.Discard, rd)
		return "", nil, wrapDecompress(err, plain)
	}
	if n := resp.ContentLength; plain && n >= 0 && n <= maxExactBody {
		if n == 0 {
			_, err := io.Copy(io.Discard, rd)
			return "", nil, err
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return "", nil, err
		}
		// Reach EOF so the connection goes back to the pool.
		if _, err := io.Copy(io.Discard, rd); err != nil {
			return "", nil, err
		}
		if kind == respBinary {
			return "", buf, nil
		}
		return unsafe.String(unsafe.SliceData(buf), len(buf)), nil, nil
	}
	b := bodyBufs.Get().(*bytes.Buffer)
	defer func() {
		if b.Cap() <= 1<<20 {
			b.Reset()
			bodyBufs.Put(b)
		}
	}()
	if _, err := b.ReadFrom(rd); err != nil {
		return "", nil, wrapDecompress(err, plain)
	}
	if kind == respBinary {
		return "", bytes.Clone(b.Bytes()), nil
	}
	return b.String(), nil, nil
}

// decompressor returns a reader decoding the body's Content-Encoding, or
// nil for encodings it leaves alone.
func decompressor(enc string, body io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(enc)) {
	case "gzip", "x-gzip":
		z, err := gzip.NewReader(body)
		if err != nil {
			return nil, &decompressError{err}
		}
		return z, nil
	case "deflate":
		br := bufio.NewReader(body)
		if hdr, err := br.Peek(2); err == nil && (uint16(hdr[0])<<8|uint16(hdr[1]))%31 == 0 && hdr[0]&0x0f == 8 {
			z, err := zlib.NewReader(br)
			if err != nil {
				return nil, &decompressError{err}
			}
			return z, nil
		}
		return flate.NewReader(br), nil
	}
	return nil, nil
}

type decompressError struct{ err error }

func (e *decompressError) Error() string { return "decompressing the response body: " + e.err.Error() }
func (e *decompressError) Unwrap() error { return e.err }

func wrapDecompress(err error, plain bool) error {
	if err == nil || plain {
		return err
	}
	var de *decompressError
	if errors.As(err, &de) {
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return err
	}
	return &decompressError{err}
}

// tlsVersionName is k6's name of a TLS version.
func tlsVersionName(v uint16) string {
	switch v {
	case tls.VersionTLS10:
		return "tls1.0"
	case tls.VersionTLS11:
		return "tls1.1"
	case tls.VersionTLS12:
		return "tls1.2"
	case tls.VersionTLS13:
		return "tls1.3"
	}
	return ""
}
