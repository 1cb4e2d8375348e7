package http

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/internal/httpclient"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/metrics"
)

// This file is k6/http's engine for Go code: a module that sends HTTP
// requests of its own (k6's lib/netext/httpext.MakeRequest, which
// xk6-loki drives) sends them as a script's are sent, through the VU's
// client and recorded into the same http_req_* and corrected_latency
// samples.

// BodyType says what a Go request keeps of its response's body.
type BodyType uint8

// The body types, as params.responseType "text", "binary" and "none".
const (
	BodyText BodyType = iota
	BodyBinary
	BodyNone
)

// Request is a request a Go module sends through the VU's HTTP engine.
type Request struct {
	// Context bounds the request; nil is the current iteration's
	// (VU.Context). A module's own should derive from that one.
	Context context.Context

	Method string
	URL    string
	// Name is the name tag, which the url tag then takes too (as a
	// script's params.tags.name); "" tags the request with its URL.
	Name string
	// Header is sent as it is: no User-Agent is added. A Host entry sets
	// the request's host.
	Header http.Header
	Body   []byte
	// HasBody sends Body even when it is empty.
	HasBody bool
	// Compression compresses the body as params.compression does: "gzip",
	// "deflate", "br", "zstd" or a comma-separated list of them, applied
	// in order; "" sends it as it is. An unknown name fails the request
	// before it is sent, with k6's error and error_code 0.
	Compression string
	// Timeout bounds each hop; 0 is k6/http's 60 seconds.
	Timeout time.Duration
	// Redirects is how many redirects are followed.
	Redirects int
	BodyType  BodyType
	// Jar stores and sends cookies; nil keeps none.
	Jar     http.CookieJar
	Cookies []Cookie
	// Tags are the request's tags before the HTTP system tags are added;
	// nil is the VU's current tags.
	Tags *metrics.TagSet
	// Expected is the response callback: whether a status is an expected
	// one (the expected_response tag and http_req_failed); nil records
	// neither, as k6 without a callback.
	Expected func(status int) bool
	// Auth is "digest" or "ntlm" for those handshakes with the URL's
	// credentials; anything else sends the credentials as basic auth.
	Auth string
	// Throw makes a failed request return an error instead of a
	// Response.
	Throw bool
}

// Cookie is a cookie a request sends besides the jar's; with Replace it
// takes the place of the jar's of the same name.
type Cookie struct {
	Name, Value string
	Replace     bool
}

// Response is what a Go request got, as k6's response fields.
type Response struct {
	Status     int
	StatusText string
	Proto      string
	// URL is the final URL, after redirects.
	URL string
	// Header is the final response's header; nil without a response.
	Header http.Header
	// Body is the body for BodyText, Bin the body for BodyBinary.
	Body string
	Bin  []byte
	// Timings are the final hop's phases.
	Timings Timings
	// Error and ErrorCode are k6's error and error_code ("" and 0
	// without an error).
	Error     string
	ErrorCode int
	// RemoteIP and RemotePort are the server's address.
	RemoteIP   string
	RemotePort int
	// TLSVersion and TLSCipherSuite are k6's names, "" without TLS.
	TLSVersion, TLSCipherSuite string
	// SentHeader and SentCookies are what the first hop sent.
	SentHeader  http.Header
	SentCookies []Cookie
}

// Timings are the phases of a hop.
type Timings struct {
	Duration, Blocked, Connecting, TLSHandshaking, Sending, Waiting, Receiving time.Duration
}

// Requester sends a VU's Go requests. Make one per VU, with NewRequester,
// and call Do on the VU's goroutine.
type Requester struct {
	in *instance
}

// NewRequester returns the requester of vu. It shares the VU's client
// (connection pool, dialer, TLS configuration) with the VU's k6/http.
func NewRequester(vu modules.VU) *Requester {
	return &Requester{in: &instance{vu: vu, rt: vu.Runtime(), targets: make(map[string]*target), lane: httpclient.NewLane()}}
}

// Do sends r, records its samples
// as a script's request (http_reqs, http_req_*, corrected_latency, data
// counts, --http-debug) and returns the response. It returns an error,
// and no response, outside setup, an iteration or teardown, and when
// r.Throw is set and the request failed.
func (q *Requester) Do(r *Request) (*Response, error) {
	in := q.in
	st := in.vu.State()
	if st == nil {
		return nil, errInit
	}
	in.prepare(st)
	c := &call{
		req: httpclient.Request{
			Method:       r.Method,
			Header:       r.Header,
			Timeout:      r.Timeout,
			RPS:          st.RPS,
			Redirects:    r.Redirects,
			ResponseType: httpclient.ResponseType(r.BodyType),
			Jar:          r.Jar,
			Debug:        in.d.debug,
			Digest:       r.Auth == "digest",
			NTLM:         r.Auth == "ntlm",
		},
		throw: r.Throw,
	}
	if c.req.Header == nil {
		c.req.Header = http.Header{}
	}
	if c.req.Timeout <= 0 {
		c.req.Timeout = defaultTimeout
	}
	if r.Expected != nil {
		c.expect = &expected{fn: r.Expected}
	}
	if h := r.Header["Host"]; len(h) > 0 {
		c.req.Host = h[0]
	}
	if r.Body != nil || r.HasBody {
		c.req.Body, c.req.HasBody = string(r.Body), true
	}
	for _, ck := range r.Cookies {
		c.req.Cookies = append(c.req.Cookies, httpclient.Cookie(ck))
	}
	c.target, c.req.Refused = in.target(r.URL)
	c.req.URL = &c.target.Target
	if c.req.Refused == nil && r.Compression != "" {
		var err error
		if c.compress, err = httpclient.ParseCompressions(r.Compression); err != nil {
			c.target = &target{}
			c.req.URL, c.req.Refused = &c.target.Target, err
		} else if c.compress != nil && c.req.HasBody {
			if err := in.compressBody(st, c, false); err != nil {
				return nil, err
			}
		}
	}
	if c.req.Refused == nil {
		tags := r.Tags
		if tags == nil {
			tags = st.Tags
		}
		if tags == nil {
			tags = metrics.EmptyTags
		}
		c.tags = in.goTags(c, tags, r.Name)
		if in.d.debug != httpclient.DebugOff {
			c.req.DebugLog = debugLog(st, debugTags(tags, in.d.sys, r.Name, "", ""))
		}
	}

	ctx := r.Context
	if ctx == nil {
		ctx = in.vu.Context()
	}
	httpclient.Do(ctx, in.roundTripper(st), &c.req, in.lane)
	in.emit(st, c)
	if h := c.req.Result().Failure(); h != nil && r.Throw {
		if c.req.Refused != nil {
			return nil, c.req.Refused
		}
		return nil, errors.New(httpclient.ThrowText(c.req.Method, h))
	}
	return goResponse(c), nil
}

// goTags are the tags of a Go request: tags with the method, name and url
// system tags, named as parse names a script's request.
func (in *instance) goTags(c *call, tags *metrics.TagSet, name string) *metrics.TagSet {
	c.named = name != ""
	return requestTags(tags, in.d.sys, c.req.Method, name, tagURL(&c.req))
}

// goResponse copies what c's request got into a Response.
func goResponse(c *call) *Response {
	res := c.req.Result()
	h := res.Last()
	out := &Response{
		Status:      h.Status,
		StatusText:  res.StatusText,
		Proto:       h.Proto,
		URL:         h.URL.Full,
		Header:      res.Header,
		ErrorCode:   h.ErrCode,
		SentHeader:  res.SentHeader,
		SentCookies: make([]Cookie, len(res.SentCookies)),
		Timings: Timings{
			Duration: h.Timings.Duration(), Blocked: h.Timings.Blocked, Connecting: h.Timings.Connecting,
			TLSHandshaking: h.Timings.TLSHandshaking, Sending: h.Timings.Sending,
			Waiting: h.Timings.Waiting, Receiving: h.Timings.Receiving,
		},
	}
	for i, ck := range res.SentCookies {
		out.SentCookies[i] = Cookie(ck)
	}
	if h.Err != nil {
		out.Error = httpclient.ErrorText(h.Err)
		if h.URL == c.req.URL {
			// k6 keeps the URL as written until a response or a
			// redirect gives it Go's form.
			out.URL = c.req.URL.Raw
		}
	}
	out.RemoteIP, out.RemotePort, _ = splitAddr(h.Remote)
	if h.IsTLS {
		out.TLSVersion = tlsVersionName(h.TLSVersion)
		out.TLSCipherSuite = config.CipherSuiteName(h.TLSCipher)
	}
	if res.Header != nil && h.Status != 204 && h.Status != 304 {
		switch c.req.ResponseType {
		case httpclient.ResponseText:
			out.Body = res.Body
		case httpclient.ResponseBinary:
			out.Bin = res.Bin
			if out.Bin == nil {
				out.Bin = []byte{}
			}
		}
	}
	return out
}
