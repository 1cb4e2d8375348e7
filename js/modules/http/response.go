package http

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/grafana/sobek"
	"github.com/tidwall/gjson"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/internal/httpclient"
	"github.com/metronome-load/metronome/js/modules/jsmod"
	"github.com/metronome-load/metronome/metrics"
)

// field is a data property of a response object.
type field uint8

const (
	fStatus field = iota
	fStatusText
	fProto
	fURL
	fHeaders
	fCookies
	fBody
	fTimings
	fError
	fErrorCode
	fRequest
	fTLSVersion
	fTLSCipher
	fOCSP
	fRemoteIP
	fRemotePort
	nFields
)

// keyOrder lists the fields in the order k6 v2.2.0 enumerates a
// response's keys (Object.keys, for…in, JSON.stringify, console.log).
var keyOrder = [nFields]field{
	fRemoteIP, fRemotePort, fURL, fStatus, fStatusText, fProto, fHeaders, fCookies, fBody, fTimings,
	fTLSVersion, fTLSCipher, fOCSP, fError, fErrorCode, fRequest,
}

var fieldNames = [nFields]string{
	"status", "status_text", "proto", "url", "headers", "cookies", "body", "timings",
	"error", "error_code", "request", "tls_version", "tls_cipher_suite", "ocsp",
	"remote_ip", "remote_port",
}

// methodNames are the response's methods, which k6 enumerates after its
// fields.
var methodNames = []string{"clickLink", "html", "json", "submitForm"}

func fieldOf(key string) (field, bool) {
	switch key {
	case "status":
		return fStatus, true
	case "status_text":
		return fStatusText, true
	case "proto":
		return fProto, true
	case "url":
		return fURL, true
	case "headers":
		return fHeaders, true
	case "cookies":
		return fCookies, true
	case "body":
		return fBody, true
	case "timings":
		return fTimings, true
	case "error":
		return fError, true
	case "error_code":
		return fErrorCode, true
	case "request":
		return fRequest, true
	case "tls_version":
		return fTLSVersion, true
	case "tls_cipher_suite":
		return fTLSCipher, true
	case "ocsp":
		return fOCSP, true
	case "remote_ip":
		return fRemoteIP, true
	case "remote_port":
		return fRemotePort, true
	}
	return 0, false
}

// response is the JavaScript response object. It is a dynamic object: a
// property's JavaScript value is built when the script reads it, so a
// script that only checks res.status pays for nothing else. Object-valued
// properties are built once and kept, so they keep their identity.
type response struct {
	in *instance
	// What the request produced and sent, copied from its call.
	hop httpclient.Hop // the final one
	out httpclient.Outcome
	// first is the URL of the request the script made; its URL is nil
	// when it did not parse, and the request sent nothing. sentMethod and
	// sentBody are what the first hop sent ("" then).
	first                *httpclient.Target
	sentMethod, sentBody string
	respType             httpclient.ResponseType

	objs    [nSlots]sobek.Value
	deleted uint32
	// extra holds what the script assigned, over the built values.
	extra map[string]sobek.Value
	json  sobek.Value
}

// slots of the object-valued fields in response.objs.
const (
	slotHeaders = iota
	slotCookies
	slotBody
	slotTimings
	slotRequest
	slotOCSP
	nSlots
)

func slotOf(f field) int {
	switch f {
	case fHeaders:
		return slotHeaders
	case fCookies:
		return slotCookies
	case fBody:
		return slotBody
	case fTimings:
		return slotTimings
	case fRequest:
		return slotRequest
	case fOCSP:
		return slotOCSP
	}
	return -1
}

// newResponse returns the response object of c, which it copies what it
// shows from, so that c may be reused.
func (in *instance) newResponse(c *call) sobek.Value {
	res := c.req.Result()
	r := &response{in: in, hop: *res.Last(), out: res.Outcome, respType: c.req.ResponseType, first: c.req.URL}
	if c.req.URL.URL != nil {
		r.sentMethod = c.req.Method
		if c.req.HasBody {
			r.sentBody = c.req.Body
			if c.compress != nil {
				r.sentBody = c.plain
			}
		}
	}
	return in.rt.NewDynamicObject(r)
}

// Get implements sobek.DynamicObject.
func (r *response) Get(key string) sobek.Value {
	if r.extra != nil {
		if v, ok := r.extra[key]; ok {
			return v
		}
	}
	f, ok := fieldOf(key)
	if !ok {
		switch key {
		case "json":
			return r.in.lazyFn(&r.in.fnJSON, r.in.jsJSON)
		case "html":
			return r.in.lazyFn(&r.in.fnHTML, r.in.jsResponseHTML)
		case "clickLink":
			return r.in.rt.ToValue(r.in.jsClickLink)
		case "submitForm":
			return r.in.rt.ToValue(r.in.jsSubmitForm)
		}
		return nil
	}
	if r.deleted&(1<<f) != 0 {
		return nil
	}
	slot := slotOf(f)
	if slot < 0 {
		return r.build(f)
	}
	if v := r.objs[slot]; v != nil {
		return v
	}
	v := r.build(f)
	r.objs[slot] = v
	return v
}

// Set implements sobek.DynamicObject.
func (r *response) Set(key string, v sobek.Value) bool {
	if f, ok := fieldOf(key); ok {
		r.deleted &^= 1 << f
	}
	if r.extra == nil {
		r.extra = make(map[string]sobek.Value, 1)
	}
	r.extra[key] = v
	return true
}

// Has implements sobek.DynamicObject.
func (r *response) Has(key string) bool {
	if _, ok := r.extra[key]; ok {
		return true
	}
	if f, ok := fieldOf(key); ok {
		return r.deleted&(1<<f) == 0
	}
	switch key {
	case "json", "html", "clickLink", "submitForm":
		return true
	}
	return false
}

// Delete implements sobek.DynamicObject.
func (r *response) Delete(key string) bool {
	if f, ok := fieldOf(key); ok {
		r.deleted |= 1 << f
	}
	delete(r.extra, key)
	return true
}

// Keys implements sobek.DynamicObject.
func (r *response) Keys() []string {
	keys := make([]string, 0, int(nFields)+len(methodNames)+len(r.extra))
	for _, f := range keyOrder {
		if r.deleted&(1<<f) == 0 {
			keys = append(keys, fieldNames[f])
		}
	}
	keys = append(keys, methodNames...)
	for k := range r.extra {
		if _, ok := fieldOf(k); !ok && !slices.Contains(methodNames, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

func (r *response) build(f field) sobek.Value {
	rt := r.in.rt
	res, h := &r.out, &r.hop
	switch f {
	case fStatus:
		return rt.ToValue(h.Status)
	case fStatusText:
		return rt.ToValue(res.StatusText)
	case fProto:
		return rt.ToValue(h.Proto)
	case fURL:
		switch {
		case r.first.URL == nil:
			return rt.ToValue("")
		case h.Err != nil && h.URL == r.first:
			// k6 keeps the URL as written until a response or a redirect
			// gives it Go's form.
			return rt.ToValue(r.first.Raw)
		}
		return rt.ToValue(h.URL.Full)
	case fHeaders:
		o := rt.NewObject()
		for k, vs := range res.Header {
			_ = o.Set(k, strings.Join(vs, ", "))
		}
		return o
	case fCookies:
		return r.cookies()
	case fBody:
		switch {
		case r.first.URL == nil:
			// k6's response to a URL that did not parse has an empty
			// array for its body.
			return rt.NewArray()
		case res.Header == nil || r.respType == httpclient.ResponseNone || h.Status == 204 || h.Status == 304:
			// 204 and 304 have no body at all: k6 gives null, not "".
			return sobek.Null()
		case r.respType == httpclient.ResponseBinary:
			b := res.Bin
			if b == nil {
				b = []byte{}
			}
			return rt.ToValue(rt.NewArrayBuffer(b))
		}
		return rt.ToValue(res.Body)
	case fTimings:
		t := &h.Timings
		o := rt.NewObject()
		_ = o.Set("duration", ms(t.Duration()))
		_ = o.Set("blocked", ms(t.Blocked))
		_ = o.Set("looking_up", 0)
		_ = o.Set("connecting", ms(t.Connecting))
		_ = o.Set("tls_handshaking", ms(t.TLSHandshaking))
		_ = o.Set("sending", ms(t.Sending))
		_ = o.Set("waiting", ms(t.Waiting))
		_ = o.Set("receiving", ms(t.Receiving))
		return o
	case fError:
		if h.Err == nil {
			return rt.ToValue("")
		}
		return rt.ToValue(httpclient.ErrorText(h.Err))
	case fErrorCode:
		return rt.ToValue(h.ErrCode)
	case fRequest:
		if r.first.URL == nil {
			return sobek.Null()
		}
		return r.request()
	case fTLSVersion:
		if !h.IsTLS {
			return rt.ToValue("")
		}
		return rt.ToValue(tlsVersionName(h.TLSVersion))
	case fTLSCipher:
		if !h.IsTLS {
			return rt.ToValue("")
		}
		// k6's names: Go's but for the ECDHE CHACHA20_POLY1305 suites.
		return rt.ToValue(config.CipherSuiteName(h.TLSCipher))
	case fOCSP:
		o := rt.NewObject()
		_ = o.Set("produced_at", 0)
		_ = o.Set("this_update", 0)
		_ = o.Set("next_update", 0)
		_ = o.Set("revoked_at", 0)
		_ = o.Set("revocation_reason", "")
		// No stapled answer is "unknown" over TLS; without TLS k6
		// leaves the status empty.
		status := ""
		if h.IsTLS {
			status = "unknown"
		}
		_ = o.Set("status", status)
		return o
	case fRemoteIP:
		ip, _, _ := splitAddr(h.Remote)
		return rt.ToValue(ip)
	case fRemotePort:
		_, port, _ := splitAddr(h.Remote)
		return rt.ToValue(port)
	}
	return sobek.Undefined()
}

// cookies is the response's Set-Cookie headers as {name: [cookie, ...]}.
func (r *response) cookies() sobek.Value {
	rt := r.in.rt
	o := rt.NewObject()
	header := r.out.Header
	if len(header["Set-Cookie"]) == 0 {
		return o
	}
	byName := map[string][]any{}
	var names []string
	for _, c := range (&http.Response{Header: header}).Cookies() {
		co := rt.NewObject()
		_ = co.Set("name", c.Name)
		_ = co.Set("value", c.Value)
		_ = co.Set("domain", c.Domain)
		_ = co.Set("path", c.Path)
		_ = co.Set("http_only", c.HttpOnly)
		_ = co.Set("secure", c.Secure)
		_ = co.Set("max_age", c.MaxAge)
		var exp int64
		if !c.Expires.IsZero() {
			exp = c.Expires.UnixMilli()
		}
		_ = co.Set("expires", exp)
		if _, ok := byName[c.Name]; !ok {
			names = append(names, c.Name)
		}
		byName[c.Name] = append(byName[c.Name], co)
	}
	for _, n := range names {
		_ = o.Set(n, rt.NewArray(byName[n]...))
	}
	return o
}

// request is the response's request field: what the first hop sent.
func (r *response) request() sobek.Value {
	rt := r.in.rt
	res := &r.out
	o := rt.NewObject()
	_ = o.Set("method", r.sentMethod)
	_ = o.Set("url", r.first.Full)
	ho := rt.NewObject()
	keys := make([]string, 0, len(res.SentHeader))
	for k := range res.SentHeader {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		vs := make([]any, len(res.SentHeader[k]))
		for i, v := range res.SentHeader[k] {
			vs[i] = v
		}
		_ = ho.Set(k, rt.NewArray(vs...))
	}
	_ = o.Set("headers", ho)
	_ = o.Set("body", r.sentBody)
	co := rt.NewObject()
	byName := map[string][]any{}
	var names []string
	for _, c := range res.SentCookies {
		entry := rt.NewObject()
		_ = entry.Set("name", c.Name)
		_ = entry.Set("value", c.Value)
		_ = entry.Set("replace", c.Replace)
		if _, ok := byName[c.Name]; !ok {
			names = append(names, c.Name)
		}
		byName[c.Name] = append(byName[c.Name], entry)
	}
	for _, n := range names {
		_ = co.Set(n, rt.NewArray(byName[n]...))
	}
	_ = o.Set("cookies", co)
	return o
}

// text is the body as text for json(); ok is false when there is none
// (k6's null body). The response to a URL that did not parse has an empty
// one.
func (r *response) text() (string, bool) {
	res := &r.out
	switch {
	case r.first.URL == nil:
		return "", true
	case res.Header == nil:
		return "", false
	}
	switch r.respType {
	case httpclient.ResponseBinary:
		return string(res.Bin), true
	case httpclient.ResponseNone:
		return "", false
	}
	return res.Body, true
}

// errNullBody is k6's exception for json() on a response without a body.
const errNullBody = "the body is null so we can't transform it to JSON - this likely was because of a request error getting the response"

// jsJSON is res.json(selector?): the body parsed as JSON, or the value a
// gjson path selects from it. As in k6, any argument is a selector (json()
// and json(undefined) differ), and a selector finds nothing (undefined)
// in a body that is not JSON; without one such a body throws.
func (in *instance) jsJSON(c sobek.FunctionCall) sobek.Value {
	r, ok := thisResponse(c.This)
	if !ok {
		jsmod.ThrowTypeError(in.rt, "json() must be called on a response")
	}
	body, ok := r.text()
	if !ok {
		jsmod.ThrowGoError(in.rt, errNullBody)
	}
	if len(c.Arguments) == 0 {
		if r.json == nil {
			r.json = in.parseJSON(body)
		}
		return r.json
	}
	if !gjson.Valid(body) {
		return sobek.Undefined()
	}
	v := gjson.Get(body, c.Argument(0).String())
	switch v.Type {
	case gjson.Null:
		if !v.Exists() {
			return sobek.Undefined()
		}
		return sobek.Null()
	case gjson.False:
		return in.rt.ToValue(false)
	case gjson.True:
		return in.rt.ToValue(true)
	case gjson.Number:
		return in.rt.ToValue(v.Num)
	case gjson.String:
		return in.rt.ToValue(v.Str)
	}
	return in.parseJSON(v.Raw)
}

func (in *instance) parseJSON(text string) sobek.Value {
	if in.jsonParse == nil {
		j := in.rt.Get("JSON").ToObject(in.rt)
		f, ok := sobek.AssertFunction(j.Get("parse"))
		if !ok {
			jsmod.ThrowTypeError(in.rt, "JSON.parse is not available")
		}
		in.jsonParse = f
	}
	v, err := in.jsonParse(sobek.Undefined(), in.rt.ToValue(text))
	if err != nil {
		msg := err.Error()
		if ex, ok := err.(*sobek.Exception); ok {
			msg = ex.Value().String()
		}
		if k6 := jsonErrorText(text); k6 != "" {
			msg = k6
		}
		jsmod.ThrowGoError(in.rt, "%s", msg)
	}
	return v
}

// jsonErrorText is k6's message for a body that is not JSON, which
// encoding/json finds: "cannot parse json due to an error at line L,
// character C , error: …", or "" when encoding/json accepts the text.
func jsonErrorText(text string) string {
	var v any
	err := json.Unmarshal([]byte(text), &v)
	if err == nil {
		return ""
	}
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err.Error()
	}
	line, char := jsonErrorPosition(text, se.Offset)
	return fmt.Sprintf("cannot parse json due to an error at line %d, character %d , error: %v", line, char, err)
}

// jsonErrorPosition is where k6 places a syntax error that encoding/json
// reports after reading offset bytes: the 1-based line, and the position
// on it, in characters, of the byte read last (1 for a newline; past the
// end of the text, the length of its last line).
func jsonErrorPosition(text string, offset int64) (line, char int) {
	last := max(offset-1, 0)
	line = 1
	for i, c := range text {
		if c == '\n' {
			line++
			char = 0
			if int64(i) >= last {
				return line, 1
			}
			continue
		}
		char++
		if int64(i) >= last {
			return line, char
		}
	}
	return line, char
}

func thisResponse(v sobek.Value) (*response, bool) {
	o, ok := v.(*sobek.Object)
	if !ok || o.ExportType() != responseObjType {
		return nil, false
	}
	r, ok := o.Export().(*response)
	return r, ok
}

var (
	responseObjType = reflect.TypeOf((*response)(nil))
	taggedURLType   = reflect.TypeOf((*taggedURL)(nil))
)

// taggedURL is what the http.url template tag returns: the URL and the
// template with ${} placeholders, which becomes the name tag.
type taggedURL struct {
	in        *instance
	url, name string
}

// Get implements sobek.DynamicObject: url, name, and clean_url, the URL
// with credentials masked as the url tag masks them (k6's fields; like
// k6's, the object has no string form of its own).
func (t *taggedURL) Get(key string) sobek.Value {
	switch key {
	case "url":
		return t.in.rt.ToValue(t.url)
	case "name":
		return t.in.rt.ToValue(t.name)
	case "clean_url":
		if tg, err := httpclient.ParseTarget(t.url); err == nil {
			return t.in.rt.ToValue(tg.Tag)
		}
		return t.in.rt.ToValue(t.url)
	}
	return nil
}

// Set implements sobek.DynamicObject; the object is read-only.
func (t *taggedURL) Set(string, sobek.Value) bool { return false }

// Has implements sobek.DynamicObject.
func (t *taggedURL) Has(key string) bool {
	return key == "url" || key == "name" || key == "clean_url"
}

// Delete implements sobek.DynamicObject.
func (t *taggedURL) Delete(string) bool { return false }

// Keys implements sobek.DynamicObject.
func (t *taggedURL) Keys() []string { return []string{"url", "name", "clean_url"} }

// jsURL is the http.url template tag.
func (in *instance) jsURL(c sobek.FunctionCall) sobek.Value {
	strs, ok := c.Argument(0).(*sobek.Object)
	if !ok {
		jsmod.ThrowTypeError(in.rt, "http.url is a template tag: write http.url`https://host/items/${id}`")
	}
	n := strs.Get("length").ToInteger()
	var u, name strings.Builder
	for i := int64(0); i < n; i++ {
		part := strs.Get(itoa(i)).String()
		u.WriteString(part)
		name.WriteString(part)
		if i+1 < n {
			u.WriteString(c.Argument(int(i + 1)).String())
			name.WriteString("${}")
		}
	}
	raw := u.String()
	// As in k6, a URL that does not parse throws here, not at the request.
	if _, err := in.target(raw); err != nil {
		jsmod.ThrowGoError(in.rt, "%v", err)
	}
	return in.rt.NewDynamicObject(&taggedURL{in: in, url: raw, name: name.String()})
}

func ms(d time.Duration) float64 { return metrics.Milliseconds(d) }

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

// splitAddr returns the IP and port of a remote address.
func splitAddr(a net.Addr) (string, int, bool) {
	switch x := a.(type) {
	case *net.TCPAddr:
		return x.IP.String(), x.Port, true
	case nil:
		return "", 0, false
	}
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "", 0, false
	}
	p, _ := strconv.Atoi(port)
	return host, p, true
}
