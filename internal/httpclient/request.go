package httpclient

import (
	"encoding/base64"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/metronome-load/metronome/ratelimit"
)

// ResponseType says what happens to a response body.
type ResponseType uint8

const (
	// ResponseText keeps the body as a string.
	ResponseText ResponseType = iota
	// ResponseBinary keeps the body as bytes.
	ResponseBinary
	// ResponseNone reads the body to its end and keeps nothing.
	ResponseNone
)

// Target is a parsed request URL. Callers may cache it by its source
// string: nothing in it changes once made.
type Target struct {
	URL *url.URL // without user info; nil when the URL did not parse
	// Clean is the URL without credentials, for messages and the Referer.
	Clean string
	// Full is the URL with its credentials, in Go's form: the response's
	// url and its request's url, as in k6.
	Full string
	// Raw is the URL as the script wrote it (empty for a redirect's): the
	// response's url when the request failed before any redirect, as in k6.
	Raw string
	// Tag is the URL with its credentials masked as k6 masks them
	// (****:**** for a user and a password, **** for a user alone): the
	// url and name tags.
	Tag string
	// Auth is the Authorization header value built from credentials in
	// the URL, or "".
	Auth string
}

// ParseTarget parses raw. Only what url.Parse refuses is refused here, as
// in k6: a URL without a scheme or a host, or of a scheme other than http
// and https, is a request that fails when it is sent (see Do).
func ParseTarget(raw string) (*Target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	t := targetOf(u)
	t.Raw = raw
	return t, nil
}

func targetOf(u *url.URL) *Target {
	t := &Target{URL: u}
	var mask string
	if u.User != nil {
		user := u.User.Username()
		pass, hasPass := u.User.Password()
		t.Auth = basicAuth(user, pass)
		mask = "****@"
		if hasPass {
			mask = "****:****@"
		}
		c := *u
		c.User = nil
		t.URL = &c
	}
	t.Clean = t.URL.String()
	t.Full, t.Tag = u.String(), t.Clean
	if mask != "" {
		t.Tag = t.URL.Scheme + "://" + mask + strings.TrimPrefix(t.Clean, t.URL.Scheme+"://")
	}
	return t
}

func basicAuth(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// Cookie is a cookie a request carries, from the jar or from params.
type Cookie struct {
	Name, Value string
	// Replace is params.cookies' replace: the cookie takes the place of
	// the jar's of the same name.
	Replace bool
}

// Request is a request in plain Go, made on the VU goroutine so that it
// can run on any goroutine. It holds its Result too, so that a caller
// that embeds it pays one allocation for both, or none when it reuses it
// (k6/http does for a VU's synchronous requests, copying the Outcome out).
type Request struct {
	res Result

	Method string
	URL    *Target
	// Refused is why the request fails before it is sent: its URL did
	// not parse, or (a *CompressionError) its params.compression names an
	// unknown algorithm. URL.URL is nil then.
	Refused error
	// Header is what every hop sends before cookies and credentials are
	// added. It is shared and never modified.
	Header  http.Header
	Host    string
	Body    string
	HasBody bool

	Timeout   time.Duration
	RPS       *ratelimit.Limiter // the rps option's limit, nil for none
	Redirects int
	Cookies   []Cookie
	Jar       http.CookieJar
	// DebugLog writes the request's --http-debug lines as k6 does, at
	// level info, with their fields; nil when the flag is off. Debug says
	// whether the dumps hold the bodies.
	DebugLog *slog.Logger

	// The small fields sit together, so that a caller's struct holding
	// the request, allocated for every call, stays in its size class.

	ResponseType ResponseType
	Debug        DebugLevel
	// Digest and NTLM are params.auth "digest" and "ntlm" (see digest.go
	// and ntlm.go).
	Digest, NTLM bool
}

// Result is what r produced, once Do returned it.
func (r *Request) Result() *Result { return &r.res }

// Hop is one request on the wire: the original one or one redirect.
type Hop struct {
	URL        *Target
	Method     string
	Status     int
	Proto      string
	TLSVersion uint16
	TLSCipher  uint16
	IsTLS      bool
	Remote     net.Addr
	Err        error
	// ErrCode is k6's error_code of the hop, 0 for none.
	ErrCode int
	// Canceled is set when the VU's context ended during the hop: such
	// hops emit no k6 samples, only an interrupted corrected_latency.
	Canceled bool
	// Challenge marks the 401 a digest or NTLM handshake answered first:
	// an expected response, as in k6.
	Challenge bool
	// InBody marks an Err met while reading the final response's body,
	// which k6 reads itself after Go's client returned: its messages are
	// the cause alone, without the client's `Get "URL": `.
	InBody  bool
	Timings Timings
	End     time.Time
	// Sent and Received are the bytes the VU's connections moved since
	// the previous hop ended: exactly this hop's for sequential requests;
	// concurrent ones (batch, asyncRequest) share them out unevenly, but
	// the totals stay exact.
	Sent     int64
	Received int64
}

// Timings are the phases of one hop.
type Timings struct {
	Blocked, Connecting, TLSHandshaking, Sending, Waiting, Receiving time.Duration
}

// Duration is k6's http_req_duration: sending, waiting and receiving.
func (t *Timings) Duration() time.Duration { return t.Sending + t.Waiting + t.Receiving }

// Total is the hop's whole time, from when it asked for a connection to
// its end: what its user waited, getting a connection included (Blocked
// holds a new connection's dial and handshake), and the time its
// corrected_latency starts from.
func (t *Timings) Total() time.Duration { return t.Blocked + t.Duration() }

// Result is what a request produced: its hops and the final response.
type Result struct {
	Hops   []Hop
	inline [1]Hop

	Outcome

	// RedirectsExhausted is set when the last hop is a redirect that the
	// request's Redirects did not let it follow.
	RedirectsExhausted bool
}

// Outcome is the part of a Result that outlives the request in a
// response object: the final response and what the request sent. It
// holds no pointer into the Result, so a caller may copy it out and reuse
// the Request.
type Outcome struct {
	Header     http.Header // of the final response; nil without one, or when its body did not decode at all
	StatusText string
	Body       string // the body for ResponseText
	Bin        []byte // the body for ResponseBinary
	// SentHeader and SentCookies are what the first hop sent: the request
	// the script made, as k6's response.request (its URL and method are
	// the Request's).
	SentHeader  http.Header
	SentCookies []Cookie
}

// Last is the final hop.
func (r *Result) Last() *Hop { return &r.Hops[len(r.Hops)-1] }

// Failure returns the hop that failed the request, or nil.
func (r *Result) Failure() *Hop {
	if h := r.Last(); h.Err != nil {
		return h
	}
	return nil
}
