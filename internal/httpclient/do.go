package httpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/idna"
)

// counter is what Do needs of a transport to attribute bytes.
type counter interface{ take() (sent, received int64) }

// Do runs r through rt, following redirects, and returns what happened
// (r.Result()). It touches no JavaScript and no VU state, so concurrent
// requests run it on goroutines of their own. parent is the VU's context.
// l is the VU's lane for synchronous requests, nil for concurrent ones.
// A request whose URL did not parse fails at once, with k6's invalid-URL
// code and no hop on the wire; so does one whose params.compression k6
// refuses, with code 0.
func Do(parent context.Context, rt http.RoundTripper, r *Request, l *Lane) *Result {
	res := &r.res
	if r.URL.URL == nil {
		code := codeInvalidURL
		var ce *CompressionError
		if errors.As(r.Refused, &ce) {
			code = 0 // k6 gives a refused params.compression no code
		}
		res.Hops = append(res.inline[:0], Hop{URL: r.URL, Method: r.Method, Err: r.Refused, ErrCode: code, End: time.Now()})
		return res
	}
	if r.RPS != nil {
		holdBack(parent, r.RPS, l)
	}
	res.Hops = res.inline[:0]
	start := sinceEpoch()
	var ctx context.Context
	if l != nil && l.arm(parent, r.Timeout, start) {
		defer l.disarm()
		ctx = l.ctx
	} else {
		l = nil
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(parent, r.Timeout)
		defer cancel()
	}
	timedOut := func() bool {
		if l != nil {
			return l.err() == errTimeout
		}
		return ctx.Err() == context.DeadlineExceeded
	}
	cnt, _ := rt.(counter)

	u, method := r.URL, r.Method
	body, hasBody := r.Body, r.HasBody
	header, host := r.Header, r.Host
	// stripped is set once a redirect left the original host for one that
	// is not its subdomain: from then on no hop carries credentials.
	stripped := false
	var auth handshake
	for n := 0; ; n++ {
		res.Hops = append(res.Hops, Hop{URL: u, Method: method})
		h := &res.Hops[len(res.Hops)-1]
		hu := u
		if r.NTLM {
			hu = withoutCredentials(u)
		}
		sendHeader, cookies := r.headerFor(header, hu, !stripped)
		if n == 0 {
			// response.request is the request the script made, as in k6:
			// its first hop, whatever redirects followed.
			res.SentHeader, res.SentCookies = sendHeader, cookies
		}
		if err := unsendable(u.URL); err != nil {
			// Go's client, which k6 sends through, refuses the hop before
			// it looks for a connection: a failed request that took no time.
			if r.DebugLog != nil {
				r.debugRequest(nil, "", err)
			}
			h.End = time.Now()
			h.fail(err, parent, false)
			return res
		}

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
		req.URL = u.URL
		req.Proto, req.ProtoMajor, req.ProtoMinor = "HTTP/1.1", 1, 1
		req.Header = sendHeader
		req.Host = host
		if hasBody {
			b := body
			req.Body = io.NopCloser(strings.NewReader(b))
			req.ContentLength = int64(len(b))
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(b)), nil }
			if len(b) == 0 {
				req.Body = http.NoBody
			}
		} else {
			req.Body, req.ContentLength, req.GetBody = nil, 0, nil // the lane's request may carry the last hop's
		}
		var resp *http.Response
		var err error
		if host != "" && !httpguts.ValidHeaderFieldValue(host) {
			// net/http checks the Host header of k6's requests with the others.
			err = errInvalidHost
		}
		var debugID string
		if r.DebugLog != nil {
			debugID = r.debugRequest(req, body, err)
		}
		if err == nil {
			resp, err = rt.RoundTrip(req)
		}
		if err != nil {
			finishHop(h, tr, start, cnt, l)
			h.fail(err, parent, timedOut())
			return res
		}
		h.Status = resp.StatusCode
		h.Proto = resp.Proto
		if resp.TLS != nil {
			h.IsTLS = true
			h.TLSVersion = resp.TLS.Version
			h.TLSCipher = resp.TLS.CipherSuite
		}
		if c := tr.conn.Load(); c != nil {
			h.Remote = c.RemoteAddr()
		}
		if r.Jar != nil {
			if cs := resp.Cookies(); len(cs) > 0 {
				r.Jar.SetCookies(u.URL, cs)
			}
		}

		var kept *debugBody
		if r.DebugLog != nil && r.Debug == DebugFull {
			kept = keepBody(resp)
		}
		next, absolute, redirect, err := redirectTarget(resp, u)
		if err != nil {
			// A Location that does not parse fails the redirect itself, as
			// in Go's client, whatever the redirects limit.
			if kept != nil {
				_, _ = io.Copy(io.Discard, resp.Body) // k6's dump reads it
			}
			_ = resp.Body.Close()
			finishHop(h, tr, start, cnt, l)
			if r.DebugLog != nil {
				r.debugResponse(resp, kept, debugID)
			}
			h.failBody(res)
			res.Header = nil
			h.fail(err, parent, timedOut())
			return res
		}
		if redirect && n >= r.Redirects {
			redirect = false
			res.RedirectsExhausted = r.Redirects > 0
		}
		if redirect {
			_, err := io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			finishHop(h, tr, start, cnt, l)
			if r.DebugLog != nil {
				r.debugResponse(resp, kept, debugID)
			}
			if err != nil {
				h.failBody(res)
				h.fail(err, parent, timedOut())
				return res
			}
			bodyless := resp.StatusCode != http.StatusTemporaryRedirect && resp.StatusCode != http.StatusPermanentRedirect
			method, hasBody = redirectMethod(resp.StatusCode, method, hasBody)
			if !hasBody {
				body = ""
			}
			// As Go's client, which k6 uses: a Host override survives only
			// a relative redirect, and credentials only redirects within
			// the original host and its subdomains.
			if absolute || host == u.URL.Host {
				host = ""
			}
			if !stripped && next.URL.Host != r.URL.URL.Host && !sameDomain(next.URL, r.URL.URL) {
				stripped = true
			}
			header = redirectHeader(header, r.Header, stripped, bodyless, u, next)
			u = next
			start = h.End.Sub(epoch)
			continue
		}

		if (r.Digest || r.NTLM) && !redirect && resp.StatusCode == http.StatusUnauthorized {
			authz, again := auth.answer(r, h, resp, u, method, body)
			if again {
				_, err := io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				finishHop(h, tr, start, cnt, l)
				if r.DebugLog != nil {
					r.debugResponse(resp, kept, debugID)
				}
				if err != nil {
					h.fail(err, parent, timedOut())
					return res
				}
				// The answered 401 is still a 4xx response: k6 tags it
				// error_code 1401 though it counts as expected.
				h.ErrCode = 1000 + h.Status
				header = withAuthorization(header, authz)
				start = h.End.Sub(epoch)
				continue
			}
		}

		res.Header = resp.Header
		res.StatusText = resp.Status
		res.Body, res.Bin, err = readBody(resp, r.ResponseType)
		_ = resp.Body.Close()
		finishHop(h, tr, start, cnt, l)
		if r.DebugLog != nil {
			r.debugResponse(resp, kept, debugID)
		}
		switch {
		case err != nil:
			h.failBody(res)
			if de := (*decompressError)(nil); errors.As(err, &de) && de.noBody {
				res.Header = nil
			}
			h.fail(err, parent, timedOut())
			h.InBody = true
		case parent.Err() != nil || timedOut():
			// The iteration ended or the deadline passed while the
			// response arrived (an HTTP/2 server may even answer because
			// the cancelled stream ended its handler): the request did not
			// finish in time.
			h.failBody(res)
			h.fail(context.DeadlineExceeded, parent, timedOut())
		case h.Status >= 400:
			h.ErrCode = 1000 + h.Status
		}
		return res
	}
}

// finishHop stamps the hop's end, computes its timings and takes its
// bytes. The tracer goes back to the lane or the pool unless a callback
// may still arrive for it.
func finishHop(h *Hop, tr *tracer, start time.Duration, cnt counter, l *Lane) {
	h.End = time.Now()
	end := h.End.Sub(epoch)
	h.Timings = tr.timings(start, end)
	if cnt != nil {
		h.Sent, h.Received = cnt.take()
	}
	switch {
	case l != nil:
		l.release(tr)
	case tr.done():
		tracers.Put(tr)
	}
}

// failBody marks a hop whose response body could not be read to its end
// (cut short, badly framed, timed out) as a failed request: status 0, no
// protocol, no headers, but the part of the body that arrived, as k6
// reports it. Without this a truncated answer would count as a success.
func (h *Hop) failBody(res *Result) {
	h.Status = 0
	h.Proto = ""
	res.Header = http.Header{}
	res.StatusText = ""
}

// fail records err on the hop. A hop cut off because the VU's context
// ended is marked canceled; one cut off by the request's own timeout gets
// k6's request-timeout code.
func (h *Hop) fail(err error, parent context.Context, timedOut bool) {
	switch {
	case parent.Err() != nil:
		h.Canceled = true
		h.Err = parent.Err()
		h.ErrCode = codeGeneric
	case timedOut:
		h.Err = errTimeout
		h.ErrCode = codeRequestTimeout
	default:
		h.Err = err
		h.ErrCode = errorCode(err)
	}
}

var errTimeout = errors.New("request timeout")

// errInvalidHost is net/http's refusal of a Host header that would put
// control characters on the wire.
var errInvalidHost = errors.New(`net/http: invalid header field value for "Host"`)

// headerFor returns the header one hop sends: base plus credentials from
// the URL and cookies from the jar and params (params cookies only go to
// the host the request was made for). base itself is never modified.
func (r *Request) headerFor(base http.Header, u *Target, origin bool) (http.Header, []Cookie) {
	var jarCookies []*http.Cookie
	if r.Jar != nil {
		jarCookies = r.Jar.Cookies(u.URL)
	}
	params := r.Cookies
	if !origin {
		params = nil
	}
	if u.Auth == "" && len(jarCookies) == 0 && len(params) == 0 {
		return base, nil
	}
	h := base.Clone()
	if h == nil {
		h = make(http.Header, 2)
	}
	if u.Auth != "" {
		if _, set := h["Authorization"]; !set {
			h["Authorization"] = []string{u.Auth}
		}
	}
	if len(jarCookies) == 0 && len(params) == 0 {
		return h, nil
	}
	sent := make([]Cookie, 0, len(jarCookies)+len(params))
	for _, c := range params {
		sent = append(sent, c)
	}
	for _, c := range jarCookies {
		replaced := false
		for _, p := range params {
			if p.Replace && p.Name == c.Name {
				replaced = true
				break
			}
		}
		if !replaced {
			sent = append(sent, Cookie{Name: c.Name, Value: c.Value})
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
		b.WriteString((&http.Cookie{Name: c.Name, Value: c.Value}).String())
	}
	h["Cookie"] = []string{b.String()}
	return h, sent
}

// redirectTarget reports whether resp is a redirect to follow, where, and
// whether its Location is an absolute URL. As in Go's client, a Location
// of any scheme is followed (the next hop fails unless it is http or
// https) and one that does not parse is an error.
func redirectTarget(resp *http.Response, from *Target) (to *Target, absolute, ok bool, err error) {
	switch resp.StatusCode {
	case 301, 302, 303, 307, 308:
	default:
		return nil, false, false, nil
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		return nil, false, false, nil
	}
	ref, err := url.Parse(loc)
	if err != nil {
		return nil, false, false, refusal(fmt.Sprintf("failed to parse Location header %q: %v", loc, err))
	}
	return targetOf(from.URL.ResolveReference(ref)), ref.IsAbs(), true, nil
}

// unsendable is why Go's client would not send a request to u, or nil:
// its transport takes http and https URLs with a host only.
func unsendable(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return refusal(fmt.Sprintf("unsupported protocol scheme %q", u.Scheme))
	}
	if u.Host == "" {
		return errNoHost
	}
	return nil
}

// refusal is an error of Go's client that is not about the network: k6
// gives it error_code 1000, whatever its text says.
type refusal string

func (e refusal) Error() string { return string(e) }

var errNoHost = refusal("http: no Host in request URL")

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

// sameDomain reports whether u's host is base's or one of its subdomains,
// ports aside: Go's client (and so k6) keeps credentials on a redirect
// there.
func sameDomain(u, base *url.URL) bool {
	sub, parent := asciiHostname(u), asciiHostname(base)
	if sub == parent {
		return true
	}
	// An IPv6 address, or a zone, is nobody's subdomain.
	if strings.ContainsAny(sub, ":%") {
		return false
	}
	return strings.HasSuffix(sub, parent) && len(sub) > len(parent) && sub[len(sub)-len(parent)-1] == '.'
}

// asciiHostname is u's host name without port, international names in
// their ASCII form.
func asciiHostname(u *url.URL) string {
	h := u.Hostname()
	for i := 0; i < len(h); i++ {
		if h[i] >= 0x80 {
			if a, err := idna.Lookup.ToASCII(h); err == nil {
				return a
			}
			break
		}
	}
	return h
}

// The headers a redirect drops, as Go's client does: credentials when
// the redirect goes to another domain, and the headers describing a body
// the redirect dropped.
var (
	credentialHeaders = []string{"Authorization", "Www-Authenticate", "Cookie", "Cookie2", "Proxy-Authorization", "Proxy-Authenticate"}
	bodyHeaders       = []string{"Content-Encoding", "Content-Language", "Content-Location", "Content-Type"}
)

// redirectHeader is the header of the hop that follows a redirect from
// from to to: h without credentials when strip is set and without body
// headers when bodyless is, and with a Referer naming from, unless the
// script set one (initial is the request's own header) or from is https
// and to is not. As in k6, a Cookie header the script set is not sent
// again: a redirect's cookies are the jar's and params.cookies' (see
// headerFor). h is not modified.
func redirectHeader(h, initial http.Header, strip, bodyless bool, from, to *Target) http.Header {
	h = h.Clone()
	if h == nil {
		h = make(http.Header, 1)
	}
	delete(h, "Cookie")
	if strip {
		for _, k := range credentialHeaders {
			delete(h, k)
		}
	}
	if bodyless {
		for _, k := range bodyHeaders {
			delete(h, k)
		}
	}
	if _, own := initial["Referer"]; !own {
		if from.URL.Scheme == "https" && to.URL.Scheme == "http" {
			delete(h, "Referer")
		} else {
			h["Referer"] = []string{from.Clean}
		}
	}
	return h
}
