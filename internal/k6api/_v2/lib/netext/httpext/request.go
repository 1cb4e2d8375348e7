// Package httpext is k6's HTTP engine as Go code reaches it (xk6-loki
// sends its pushes and queries with MakeRequest). metronome runs each
// request through the VU's own engine, that of k6/http: the VU's client
// (connection pool, dialer, TLS configuration, rps limit), and records
// http_reqs, the http_req_* trends, data_sent and data_received and
// corrected_latency as for a script's request.
package httpext

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strconv"
	"strings"
	"time"

	"gopkg.in/guregu/null.v3"

	mhttp "github.com/metronome-load/metronome/js/modules/http"
	mm "github.com/metronome-load/metronome/metrics"

	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/metrics"
)

// HTTPRequestCookie is a cookie a request sends besides its jar's; with
// Replace it takes the place of the jar's cookie of the same name.
type HTTPRequestCookie struct {
	Name, Value string
	Replace     bool
}

// Request is what a request sent, as a Response tells it.
type Request struct {
	Method  string                          `json:"method"`
	URL     string                          `json:"url"`
	Headers map[string][]string             `json:"headers"`
	Body    string                          `json:"body"`
	Cookies map[string][]*HTTPRequestCookie `json:"cookies"`
}

// CompressionType is an encoding a request body is compressed with.
type CompressionType uint

// The compressions, as k6 numbers them; MakeRequest sends them through
// the engine's one compressor, that of params.compression.
const (
	CompressionTypeGzip CompressionType = iota
	CompressionTypeDeflate
	CompressionTypeZstd
	CompressionTypeBr
)

// String is the compression's Content-Encoding name.
func (c CompressionType) String() string {
	switch c {
	case CompressionTypeGzip:
		return "gzip"
	case CompressionTypeDeflate:
		return "deflate"
	case CompressionTypeZstd:
		return "zstd"
	case CompressionTypeBr:
		return "br"
	}
	return "CompressionType(" + strconv.Itoa(int(c)) + ")"
}

// ParsedHTTPRequest is a request ready to send.
type ParsedHTTPRequest struct {
	// URL names the request (its Name is the name tag when it differs
	// from the clean URL); Req is what is sent, its URL included.
	URL  *URL
	Body *bytes.Buffer
	Req  *http.Request
	// Timeout bounds each hop; 0 is metronome's default, 60 seconds.
	Timeout time.Duration
	// Auth is "digest" or "ntlm" for those handshakes with the URL's
	// credentials.
	Auth         string
	Throw        bool
	ResponseType ResponseType
	// ResponseCallback says which statuses are expected (the
	// expected_response tag and http_req_failed); nil records neither.
	ResponseCallback func(int) bool
	Compressions     []CompressionType
	Redirects        null.Int
	ActiveJar        *cookiejar.Jar
	Cookies          map[string]*HTTPRequestCookie
	// TagsAndMeta are the request's tags, to which the HTTP system tags
	// are added.
	TagsAndMeta metrics.TagsAndMeta
}

// MakeRequest sends preq through the VU's engine under ctx (the VU's
// context, or one derived from it), records its samples and returns its
// response. A failed request returns a response with Error and
// ErrorCode, or, with Throw, the error. Call it on the VU's goroutine
// (from the module's exported functions), with the State the VU gave the
// module.
func MakeRequest(ctx context.Context, state *lib.State, preq *ParsedHTTPRequest) (*Response, error) {
	if preq == nil || preq.Req == nil || preq.Req.URL == nil {
		return nil, errors.New("httpext.MakeRequest: the request has no http.Request with a URL")
	}
	q := lib.MetronomeRequester(state)
	if q == nil {
		return nil, errors.New("httpext.MakeRequest: the State is not one metronome gave a VU")
	}
	req := preq.Req
	header := req.Header.Clone()
	if header == nil {
		header = http.Header{}
	}
	var body []byte
	switch {
	case preq.Body != nil:
		body = preq.Body.Bytes()
	case req.Body != nil && req.Body != http.NoBody:
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	sentBody := string(body)
	names := make([]string, len(preq.Compressions))
	for i, c := range preq.Compressions {
		if c > CompressionTypeBr {
			return nil, fmt.Errorf("unknown compressionType %s", c)
		}
		names[i] = c.String()
	}
	// Go sets the length from the body.
	header.Del("Content-Length")
	if req.Host != "" && req.Host != req.URL.Host {
		header.Set("Host", req.Host)
	}

	r := &mhttp.Request{
		Context: ctx,
		Method:  req.Method,
		URL:     req.URL.String(),
		Header:  header,
		Body:    body,
		HasBody: body != nil,
		// The engine compresses the body, sets Content-Encoding unless
		// the header has one, and warns when that one differs.
		Compression: strings.Join(names, ","),
		Timeout:     preq.Timeout,
		Redirects:   int(preq.Redirects.Int64),
		BodyType:    mhttp.BodyType(preq.ResponseType),
		Expected:    preq.ResponseCallback,
		Auth:        preq.Auth,
		Throw:       preq.Throw,
	}
	if preq.ActiveJar != nil {
		r.Jar = preq.ActiveJar
	}
	for name, c := range preq.Cookies {
		r.Cookies = append(r.Cookies, mhttp.Cookie{Name: name, Value: c.Value, Replace: c.Replace})
	}
	if t := preq.TagsAndMeta.Tags; t != nil {
		r.Tags = (*mm.TagSet)(t)
		if name, ok := t.Get("name"); ok {
			r.Name = name
		}
	}
	if r.Name == "" && preq.URL != nil && preq.URL.Name != "" && preq.URL.Name != preq.URL.Clean() {
		r.Name = preq.URL.Name
	}

	res, err := q.Do(r)
	if err != nil {
		return nil, err
	}
	return response(preq, res, sentBody), nil
}

// response is k6's Response of what the engine got.
func response(preq *ParsedHTTPRequest, res *mhttp.Response, sentBody string) *Response {
	req := preq.Req
	out := &Response{
		URL:            res.URL,
		Status:         res.Status,
		StatusText:     res.StatusText,
		Proto:          res.Proto,
		Headers:        make(map[string]string, len(res.Header)),
		Cookies:        map[string][]*HTTPCookie{},
		RemoteIP:       res.RemoteIP,
		RemotePort:     res.RemotePort,
		TLSVersion:     res.TLSVersion,
		TLSCipherSuite: res.TLSCipherSuite,
		Error:          res.Error,
		ErrorCode:      res.ErrorCode,
		Timings: ResponseTimings{
			Duration: ms(res.Timings.Duration), Blocked: ms(res.Timings.Blocked),
			Connecting: ms(res.Timings.Connecting), TLSHandshaking: ms(res.Timings.TLSHandshaking),
			Sending: ms(res.Timings.Sending), Waiting: ms(res.Timings.Waiting), Receiving: ms(res.Timings.Receiving),
		},
		Request: &Request{
			Method:  req.Method,
			URL:     req.URL.String(),
			Headers: requestHeaders(req.Header, res.SentHeader),
			Body:    sentBody,
			Cookies: map[string][]*HTTPRequestCookie{},
		},
	}
	for _, c := range req.Cookies() {
		out.Request.Cookies[c.Name] = append(out.Request.Cookies[c.Name], &HTTPRequestCookie{Name: c.Name, Value: c.Value})
	}
	for k, vs := range res.Header {
		out.Headers[k] = strings.Join(vs, ", ")
	}
	for _, c := range (&http.Response{Header: res.Header}).Cookies() {
		var exp int64
		if !c.Expires.IsZero() {
			exp = c.Expires.UnixMilli()
		}
		out.Cookies[c.Name] = append(out.Cookies[c.Name], &HTTPCookie{
			Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path,
			HTTPOnly: c.HttpOnly, Secure: c.Secure, MaxAge: c.MaxAge, Expires: exp,
		})
	}
	if res.Error == "" {
		switch preq.ResponseType {
		case ResponseTypeText:
			out.Body = res.Body
		case ResponseTypeBinary:
			out.Body = res.Bin
		}
	}
	return out
}

// requestHeaders is the header k6's Response.Request shows: the
// request's own with the Content-Encoding its compression set, and
// without a Content-Length, which the body's length replaced.
func requestHeaders(h, sent http.Header) http.Header {
	ce := sent.Get("Content-Encoding")
	if (ce == "" || h.Get("Content-Encoding") != "") && h.Get("Content-Length") == "" {
		return h
	}
	h = h.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Del("Content-Length")
	if ce != "" && h.Get("Content-Encoding") == "" {
		h.Set("Content-Encoding", ce)
	}
	return h
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
