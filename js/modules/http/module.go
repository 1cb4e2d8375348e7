// Package http is the "k6/http" JavaScript module: HTTP requests from VU
// code, measured hop by hop into k6's http_req_* metrics.
//
// The module only converts: a request is parsed from JavaScript values
// into an httpclient.Request on the VU goroutine, run by the HTTP engine
// (internal/httpclient, which touches no JavaScript, so batch and
// asyncRequest run it elsewhere), and its Result turned into samples and a
// response object on the VU goroutine. Each VU has its own client (see
// NewClient), so connections are reused within a VU only.
package http

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/internal/httpclient"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
	"github.com/metronome-load/metronome/metrics"
)

// DefaultUserAgent is sent when the userAgent option is not set.
const DefaultUserAgent = "metronome (k6-compatible load tester)"

// Defaults of the request options.
const (
	defaultTimeout      = 60 * time.Second
	defaultRedirects    = 10
	defaultBatch        = 20
	defaultBatchPerHost = 6
)

// maxTargets bounds the per-VU cache of parsed URLs.
const maxTargets = 512

// The module is instantiated on first use: its instance (some 4 KB: the
// exports, the URL cache, the request lane) is made only in VUs that run
// code reading it, and it does nothing the init context alone allows.
func init() {
	modules.Register("k6/http", modules.OnFirstUse(modules.ModuleFunc(instantiate)))
}

var errInit = errors.New("making HTTP requests in the init context is not supported: move the request into the default function, setup() or teardown()")

// instance is the module in one VU.
type instance struct {
	vu modules.VU
	rt *sobek.Runtime

	// callback is the VU-wide response callback; nil after
	// setResponseCallback(null).
	callback *expected
	targets  map[string]*target
	// own is the client used when the runtime put none into the State.
	own *http.Client
	d   defaults
	// lane carries the synchronous requests.
	lane *httpclient.Lane
	// spare is the call of the next synchronous request (see syncCall).
	spare *call

	jsonParse sobek.Callable
	// The methods of responses, url templates and cookie jars, made on
	// first use (see lazyFn) so that idle VUs do not hold them.
	fnJSON, fnHTML          sobek.Value
	fnJarGet, fnJarSet      sobek.Value
	fnJarClear, fnJarDelete sobek.Value
}

// defaults are what the options say about requests, derived once per State.
type defaults struct {
	state        *modules.State
	sys          sysTags
	header       http.Header
	timeout      time.Duration
	redirects    int
	respType     httpclient.ResponseType
	throw        bool
	debug        httpclient.DebugLevel
	batch        int
	batchPerHost int
}

func instantiate(vu modules.VU) (modules.Exports, error) {
	rt := vu.Runtime()
	in := &instance{vu: vu, rt: rt, callback: defaultExpected, targets: make(map[string]*target), lane: httpclient.NewLane()}

	// The exports are Go functions, not sobek values: the runtime converts
	// each on first use, so a VU that never calls, say, http.batch does
	// not pay for its function object.
	named := map[string]any{
		"request":             in.jsRequest,
		"get":                 in.verb(http.MethodGet, false),
		"head":                in.verb(http.MethodHead, false),
		"post":                in.verb(http.MethodPost, true),
		"put":                 in.verb(http.MethodPut, true),
		"patch":               in.verb(http.MethodPatch, true),
		"del":                 in.verb(http.MethodDelete, true),
		"options":             in.verb(http.MethodOptions, true),
		"batch":               in.jsBatch,
		"asyncRequest":        in.jsAsyncRequest,
		"expectedStatuses":    in.jsExpectedStatuses,
		"setResponseCallback": in.jsSetResponseCallback,
		"url":                 in.jsURL,
		"cookieJar":           in.jsCookieJar,
		"CookieJar":           in.jsNewCookieJar,
		"file":                in.jsFile,
		"TLS_1_0":             "tls1.0",
		"TLS_1_1":             "tls1.1",
		"TLS_1_2":             "tls1.2",
		"TLS_1_3":             "tls1.3",
	}
	// k6's names for the values of response.ocsp.status and
	// .revocation_reason.
	for _, v := range [...]string{"good", "revoked", "server_failed", "unknown"} {
		named["OCSP_STATUS_"+strings.ToUpper(v)] = v
	}
	for _, v := range [...]string{"unspecified", "key_compromise", "ca_compromise", "affiliation_changed", "superseded",
		"cessation_of_operation", "certificate_hold", "remove_from_crl", "privilege_withdrawn", "aa_compromise"} {
		named["OCSP_REASON_"+strings.ToUpper(v)] = v
	}
	return modules.Exports{Named: named}, nil
}

// verb is http.get and friends: (url, params) or (url, body, params).
func (in *instance) verb(method string, withBody bool) func(sobek.FunctionCall) sobek.Value {
	return func(c sobek.FunctionCall) sobek.Value {
		st := in.state()
		var body, params sobek.Value
		if withBody {
			body, params = c.Argument(1), c.Argument(2)
		} else {
			params = c.Argument(1)
		}
		return in.request(st, method, c.Argument(0), body, params)
	}
}

// jsRequest is http.request(method, url, body?, params?).
func (in *instance) jsRequest(c sobek.FunctionCall) sobek.Value {
	st := in.state()
	return in.request(st, in.method(c.Argument(0)), c.Argument(1), c.Argument(2), c.Argument(3))
}

func (in *instance) method(v sobek.Value) string {
	if sobek.IsUndefined(v) || sobek.IsNull(v) {
		jsmod.ThrowTypeError(in.rt, "http.request: the first argument must be the HTTP method")
	}
	m := v.String()
	for i := 0; i < len(m); i++ {
		if c := m[i]; c >= 'a' && c <= 'z' {
			return strings.ToUpper(m)
		}
	}
	return m
}

// state returns the VU's State, throwing in the init context.
func (in *instance) state() *modules.State {
	st := in.vu.State()
	if st == nil {
		jsmod.ThrowGoError(in.rt, "%v", errInit)
	}
	in.prepare(st)
	return st
}

// prepare derives the request defaults from st when st is new.
func (in *instance) prepare(st *modules.State) {
	if in.d.state == st {
		return
	}
	d := defaults{
		state:        st,
		sys:          sysTagsOf(st.SystemTags),
		timeout:      defaultTimeout,
		redirects:    defaultRedirects,
		batch:        defaultBatch,
		batchPerHost: defaultBatchPerHost,
	}
	ua := DefaultUserAgent
	if o := st.Options; o != nil {
		if o.UserAgent != nil {
			ua = *o.UserAgent
		}
		if o.MaxRedirects != nil {
			d.redirects = int(*o.MaxRedirects)
		}
		if o.DiscardResponseBodies != nil && *o.DiscardResponseBodies {
			d.respType = httpclient.ResponseNone
		}
		d.throw = o.Throw != nil && *o.Throw
		d.debug = parseDebug(o.HTTPDebug)
		if o.Batch != nil {
			d.batch = int(*o.Batch)
		}
		if o.BatchPerHost != nil {
			d.batchPerHost = int(*o.BatchPerHost)
		}
	}
	d.header = http.Header{"User-Agent": {ua}}
	in.d = d
}

// roundTripper is the transport of the VU's client.
func (in *instance) roundTripper(st *modules.State) http.RoundTripper {
	c := st.Client
	if c == nil {
		// The client is made on the VU's first request, so VUs of scripts
		// that send none do not carry a transport.
		if in.own == nil {
			in.own = newVUClient(st)
		}
		c = in.own
		st.Client = c
	}
	if c.Transport == nil {
		return http.DefaultTransport
	}
	return c.Transport
}

// syncCall returns the call for a synchronous request: the instance's
// spare one, or a new one while the spare is taken, since a getter of the
// params or a URL's toString may make a request of its own while the
// outer one is parsed. request gives it back.
func (in *instance) syncCall() *call {
	c := in.spare
	if c == nil {
		return new(call)
	}
	in.spare = nil
	return c
}

// request makes a synchronous request from its JavaScript arguments and
// returns its response object. It parses them into the instance's spare
// call (syncCall); no JavaScript runs from the request's start to the
// response's copy, so the call is the spare again, cleared, before the
// script resumes.
func (in *instance) request(st *modules.State, method string, urlV, bodyV, paramsV sobek.Value) sobek.Value {
	c := in.parse(st, in.syncCall(), method, urlV, bodyV, paramsV)
	httpclient.Do(in.vu.Context(), in.roundTripper(st), &c.req, in.lane)
	in.emit(st, c)
	var v sobek.Value
	failed := in.thrown(c)
	if failed == "" {
		v = in.newResponse(c)
	}
	// Cleared, the spare keeps no body or header alive while the VU idles.
	*c = call{}
	in.spare = c
	if failed != "" {
		jsmod.ThrowGoError(in.rt, "%s", failed)
	}
	return v
}

// thrown is the message of the exception c's request throws, or "" when
// it returns its response. As in k6, the throw option makes a URL that did
// not parse throw its error; the option or the throw param makes any
// other failure throw Go's client error (see httpclient.ThrowText).
func (in *instance) thrown(c *call) string {
	h := c.req.Result().Failure()
	switch {
	case h == nil:
		return ""
	case c.req.Refused != nil:
		if in.d.throw {
			return httpclient.ErrorText(c.req.Refused)
		}
		return ""
	case c.throw:
		return httpclient.ThrowText(c.req.Method, h)
	}
	return ""
}

// requestFailed writes k6's warning of a failed request: the message
// "Request Failed" with the error, Go's client error as k6 passes it on,
// in a field of its own.
func requestFailed(st *modules.State, text string) {
	if st.Run != nil && st.Run.Log != nil {
		st.Run.Log.Warn("Request Failed", "error", text)
		return
	}
	st.Logf("Request Failed: %s", text)
}

// debugLog is the logger of a request's --http-debug lines, made on the
// VU's goroutine when the request is made (concurrent requests log from
// their own): the fields k6 gives them, the VU's metadata, tags (the VU's
// and the request's, see debugTags), iter, source=http-debug and vu, the
// last three always k6's own and metadata hiding a tag of its name, as in
// k6. Without the run's log the lines go to st.Logf.
func debugLog(st *modules.State, tags *metrics.TagSet) *slog.Logger {
	attrs := make([]any, 0, 2*(tags.Len()+len(st.Metadata))+6)
	own := func(k string) bool { return k == "source" || k == "vu" || k == "iter" || k == "request_id" }
	for k, v := range st.Metadata {
		if !own(k) {
			attrs = append(attrs, k, v)
		}
	}
	tags.Range(func(k, v string) bool {
		if _, meta := st.Metadata[k]; !meta && !own(k) {
			attrs = append(attrs, k, v)
		}
		return true
	})
	attrs = append(attrs, "iter", st.Iteration, "source", "http-debug", "vu", st.VUID)
	if st.Run != nil && st.Run.Log != nil {
		return st.Run.Log.With(attrs...)
	}
	return slog.New(slog.NewTextHandler(logfWriter(st.Logf), nil)).With(attrs...)
}

// logfWriter writes each line it gets through a Logf.
type logfWriter func(format string, args ...any)

func (w logfWriter) Write(b []byte) (int, error) {
	if w != nil {
		w("%s", strings.TrimSuffix(string(b), "\n"))
	}
	return len(b), nil
}

// emit records the samples of every hop of c's result and logs what the
// user should know about it. A request that never reached the network (an
// invalid URL) emits nothing; a hop cut off by the end of the iteration
// emits only the bytes it moved, as in k6. An answered hop is recorded
// even after an interruption (jsmod.Measured): k6 pushes its samples when
// the answer comes, before the batch or redirect chain it is part of ends.
func (in *instance) emit(st *modules.State, c *call) {
	r := &c.req
	res := r.Result()
	logf := st.Logf
	if r.URL.URL == nil {
		// Under the throw option the error is thrown instead, as in k6.
		if logf != nil && !in.d.throw {
			requestFailed(st, httpclient.ErrorText(res.Hops[0].Err))
		}
		return
	}
	b, rec := st.Builtin, jsmod.Measured(st)
	for i := range res.Hops {
		h := &res.Hops[i]
		if b == nil || rec == nil {
			continue
		}
		// The VU emits the iteration's bytes when it ends (k6's
		// data_sent and data_received: one sample each per iteration).
		st.DataSent += h.Sent
		st.DataReceived += h.Received
		if h.Canceled {
			// The iteration was cut off while the hop waited: k6 emits
			// nothing for it, but its user is still waiting.
			jsmod.RecordInterrupted(st, in.requestTags(c, h), h.End.Add(-h.Timings.Total()), h.End)
			continue
		}
		if h.Err != nil && logf != nil && !c.throw {
			// A request that throws its error is not also logged, as in k6.
			requestFailed(st, httpclient.ThrowText(r.Method, h))
		}
		expected := int8(-1)
		if c.expect != nil {
			expected = 0
			if h.Challenge || c.expect.match(h.Status) {
				expected = 1
			}
		}
		tags := in.hopTags(c, h, expected)
		t := &h.Timings
		rec.Record(metrics.Sample{Metric: b.HTTPReqs, Tags: tags, Time: h.End, Value: 1})
		rec.Record(metrics.Sample{Metric: b.HTTPReqDuration, Tags: tags, Time: h.End, Value: metrics.Milliseconds(t.Duration())})
		rec.Record(metrics.Sample{Metric: b.HTTPReqBlocked, Tags: tags, Time: h.End, Value: metrics.Milliseconds(t.Blocked)})
		rec.Record(metrics.Sample{Metric: b.HTTPReqConnecting, Tags: tags, Time: h.End, Value: metrics.Milliseconds(t.Connecting)})
		rec.Record(metrics.Sample{Metric: b.HTTPReqTLSHandshaking, Tags: tags, Time: h.End, Value: metrics.Milliseconds(t.TLSHandshaking)})
		rec.Record(metrics.Sample{Metric: b.HTTPReqSending, Tags: tags, Time: h.End, Value: metrics.Milliseconds(t.Sending)})
		rec.Record(metrics.Sample{Metric: b.HTTPReqWaiting, Tags: tags, Time: h.End, Value: metrics.Milliseconds(t.Waiting)})
		rec.Record(metrics.Sample{Metric: b.HTTPReqReceiving, Tags: tags, Time: h.End, Value: metrics.Milliseconds(t.Receiving)})
		if expected >= 0 {
			rec.Record(metrics.Sample{Metric: b.HTTPReqFailed, Tags: tags, Time: h.End, Value: float64(1 - expected)})
		}
		jsmod.RecordLatency(st, tags, h.End, t.Total())
	}
	if res.RedirectsExhausted && logf != nil {
		logf("Stopped after %d redirects and returned the last redirect response; raise the limit with the redirects param or the maxRedirects option", r.Redirects)
	}
}

// requestTags are the tags of the request a hop made, before its outcome:
// the request's own, with a redirect hop's name and url.
func (in *instance) requestTags(c *call, h *httpclient.Hop) *metrics.TagSet {
	tags := c.tags
	sys := in.d.sys
	if h.URL != c.req.URL && !c.named {
		if sys&sysName != 0 {
			tags = tags.With("name", h.URL.Tag)
		}
		if sys&sysURL != 0 {
			tags = tags.With("url", h.URL.Tag)
		}
	}
	if h.Method != c.req.Method && sys&sysMethod != 0 {
		// A 301, 302 or 303 turned the request into a GET.
		tags = tags.With("method", h.Method)
	}
	return tags
}

// hopTags adds the hop's outcome to the request's tags. expected is the
// response callback's verdict: 1 expected, 0 not, -1 no callback.
func (in *instance) hopTags(c *call, h *httpclient.Hop, expected int8) *metrics.TagSet {
	sys := in.d.sys
	var m *hopMemo
	if h.Err == nil && (h.URL == c.req.URL || c.named) && h.Method == c.req.Method {
		m = &c.target.hopTags
		if m.base == c.tags && m.status == h.Status && m.proto == h.Proto && m.tls == h.TLSVersion &&
			m.expected == expected && m.sys == sys {
			return m.tags
		}
	}
	tags := in.requestTags(c, h)
	if sys&sysStatus != 0 {
		tags = tags.With("status", statusString(h.Status))
	}
	if sys&sysProto != 0 && h.Proto != "" {
		tags = tags.With("proto", h.Proto)
	}
	if sys&sysTLSVersion != 0 && h.IsTLS {
		tags = tags.With("tls_version", tlsVersionName(h.TLSVersion))
	}
	if h.Err != nil && sys&sysError != 0 {
		tags = tags.With("error", httpclient.ErrorText(h.Err))
	}
	if h.ErrCode != 0 && sys&sysErrorCode != 0 {
		tags = tags.With("error_code", strconv.Itoa(h.ErrCode))
	}
	if sys&sysIP != 0 && h.Remote != nil {
		if ip, _, ok := splitAddr(h.Remote); ok {
			tags = tags.With("ip", ip)
		}
		m = nil
	}
	if expected >= 0 && sys&sysExpected != 0 {
		v := "false"
		if expected == 1 {
			v = "true"
		}
		tags = tags.With("expected_response", v)
	}
	if m != nil {
		*m = hopMemo{base: c.tags, status: h.Status, proto: h.Proto, tls: h.TLSVersion, expected: expected, sys: sys, tags: tags}
	}
	return tags
}

// sysTags is the set of enabled HTTP system tags as bits.
type sysTags uint16

const (
	sysMethod sysTags = 1 << iota
	sysURL
	sysName
	sysStatus
	sysProto
	sysTLSVersion
	sysError
	sysErrorCode
	sysExpected
	sysIP
)

var sysTagNames = map[string]sysTags{
	"method": sysMethod, "url": sysURL, "name": sysName, "status": sysStatus,
	"proto": sysProto, "tls_version": sysTLSVersion, "error": sysError,
	"error_code": sysErrorCode, "expected_response": sysExpected, "ip": sysIP,
}

// sysTagsOf reads State.SystemTags; nil means k6's default set.
func sysTagsOf(m map[string]bool) sysTags {
	if m == nil {
		return sysMethod | sysURL | sysName | sysStatus | sysProto | sysTLSVersion | sysError | sysErrorCode | sysExpected
	}
	var s sysTags
	for k, on := range m {
		if on {
			s |= sysTagNames[k]
		}
	}
	return s
}

// statusStrings holds the tag values of the statuses 0 to 599 so that
// tagging a status allocates nothing.
var statusStrings = func() []string {
	s := make([]string, 600)
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

func statusString(code int) string {
	if code >= 0 && code < len(statusStrings) {
		return statusStrings[code]
	}
	return strconv.Itoa(code)
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

// lazyFn returns *slot, converting f into a function value the first time.
func (in *instance) lazyFn(slot *sobek.Value, f func(sobek.FunctionCall) sobek.Value) sobek.Value {
	if *slot == nil {
		*slot = in.rt.ToValue(f)
	}
	return *slot
}
