package http

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"time"
)

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
	var auth handshake
	for n := 0; ; n++ {
		res.hops = append(res.hops, hop{url: u, method: method})
		h := &res.hops[len(res.hops)-1]
		hu := u
		if r.ntlm {
			hu = withoutCredentials(u)
		}
		sendHeader, cookies := r.headerFor(header, hu, n == 0 || sameHost(u, r.url))
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
				h.failBody(res)
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

		if (r.digest || r.ntlm) && !redirect && resp.StatusCode == http.StatusUnauthorized {
			authz, again := auth.answer(r, h, resp, u, method, body)
			if again {
				_, err := io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				finishHop(h, tr, start, cnt, l)
				if err != nil {
					h.fail(err, parent, timedOut())
					return res
				}
				// The answered 401 is still a 4xx response: k6 tags it
				// error_code 1401 though it counts as expected.
				h.errCode = 1000 + h.status
				header = withAuthorization(header, authz)
				start = h.end.Sub(epoch)
				continue
			}
		}

		res.header = resp.Header
		res.statusText = resp.Status
		res.body, res.bin, err = readBody(resp, r.respType)
		_ = resp.Body.Close()
		finishHop(h, tr, start, cnt, l)
		if r.debug != debugOff {
			h.debug += dumpResponse(resp, res.body, r.debug)
		}
		switch {
		case err != nil:
			h.failBody(res)
			h.fail(err, parent, timedOut())
		case parent.Err() != nil || timedOut():
			// The iteration ended or the deadline passed while the
			// response arrived (an HTTP/2 server may even answer because
			// the cancelled stream ended its handler): the request did not
			// finish in time.
			h.failBody(res)
			h.fail(context.DeadlineExceeded, parent, timedOut())
		case h.status >= 400:
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

// failBody marks a hop whose response body could not be read to its end
// (cut short, badly framed, timed out) as a failed request: status 0, no
// protocol, no headers, but the part of the body that arrived, as k6
// reports it. Without this a truncated answer would count as a success.
func (h *hop) failBody(res *result) {
	h.status = 0
	h.proto = ""
	res.header = http.Header{}
	res.statusText = ""
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
