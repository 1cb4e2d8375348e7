package http

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/ratelimit"
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
	// clean is the URL without credentials, for messages and the Referer.
	clean string
	// full is the URL as the script wrote it, credentials included: the
	// response's url and its request's url, as in k6.
	full string
	// tag is the URL with its credentials masked as k6 masks them
	// (****:**** for a user and a password, **** for a user alone): the
	// url and name tags.
	tag string
	// auth is the Authorization header value built from credentials in
	// the URL, or "".
	auth string

	// Tag sets built last time for a request to this URL, so that
	// repeating a request repeats no tag work. Only the VU goroutine
	// touches them.
	reqTags tagMemo
	hopTags hopMemo
}

// tagMemo remembers the tags of a request: base (State and per-request
// tags) plus method, name and url.
type tagMemo struct {
	base   *metrics.TagSet
	method string
	name   string // the name the script chose, or ""
	url    string // the url and name tags' URL when unnamed
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
	var mask string
	if u.User != nil {
		user := u.User.Username()
		pass, hasPass := u.User.Password()
		t.auth = basicAuth(user, pass)
		mask = "****@"
		if hasPass {
			mask = "****:****@"
		}
		c := *u
		c.User = nil
		t.u = &c
	}
	t.clean = t.u.String()
	t.full, t.tag = u.String(), t.clean
	if mask != "" {
		t.tag = t.u.Scheme + "://" + mask + strings.TrimPrefix(t.clean, t.u.Scheme+"://")
	}
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
	tags      *metrics.TagSet
	timeout   time.Duration
	rps       *ratelimit.Limiter // the rps option's limit, nil for none
	redirects int
	expect    *expected // nil: no response callback
	cookies   []sentCookie
	jar       http.CookieJar

	// The small fields sit together, so that the request, allocated for
	// every call, stays in its size class.

	// named is set when the script chose the name tag.
	named    bool
	respType responseType
	throw    bool
	debug    debugLevel
	// digest and ntlm are params.auth "digest" and "ntlm" (see digest.go
	// and ntlm.go).
	digest, ntlm bool
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
	// hops emit no k6 samples, only an interrupted corrected_latency.
	canceled bool
	// challenge marks the 401 a digest or NTLM handshake answered first:
	// an expected response, as in k6.
	challenge bool
	t         timings
	end       time.Time
	// sent and received are the bytes the VU's connections moved since
	// the previous hop ended: exactly this hop's for sequential requests;
	// concurrent ones (batch, asyncRequest) share them out unevenly, but
	// the totals stay exact.
	sent     int64
	received int64
	// debug is the --http-debug dump of the hop.
	debug string
}

// timings are the phases of one hop.
type timings struct {
	blocked, connecting, tlsHandshaking, sending, waiting, receiving time.Duration
}

// duration is k6's http_req_duration: sending, waiting and receiving.
func (t *timings) duration() time.Duration { return t.sending + t.waiting + t.receiving }

// total is the hop's whole time, from when it asked for a connection to
// its end: what its user waited, getting a connection included (blocked
// holds a new connection's dial and handshake), and the time its
// corrected_latency starts from.
func (t *timings) total() time.Duration { return t.blocked + t.duration() }

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
