package http

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"strconv"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/internal/httpclient"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
	"github.com/metronome-load/metronome/metrics"
)

var arrayBufferType = reflect.TypeOf(sobek.ArrayBuffer{})

// parse turns the JavaScript arguments of a request into c, overwriting
// all of it, and returns c. Script mistakes (a params value of the wrong
// kind) throw a TypeError; an URL that does not parse is a failed request,
// as in k6, which then looks at neither the body nor the params.
func (in *instance) parse(st *modules.State, c *call, method string, urlV, bodyV, paramsV sobek.Value) *call {
	d := &in.d
	*c = call{
		req: httpclient.Request{
			Method:       method,
			Header:       d.header,
			Timeout:      d.timeout,
			RPS:          st.RPS,
			Redirects:    d.redirects,
			ResponseType: d.respType,
			Jar:          st.Jar,
			Debug:        d.debug,
		},
		expect: in.callback,
		throw:  d.throw,
	}
	r := &c.req
	raw, urlName, ok := in.urlOf(urlV)
	name := urlName
	if ok {
		c.target, r.Refused = in.target(raw)
	} else {
		c.target, r.Refused = &target{}, notAURL(urlV)
	}
	r.URL = &c.target.Target
	if r.Refused != nil {
		return c
	}

	tags := st.Tags
	if tags == nil {
		tags = metrics.EmptyTags
	}
	ownHeader := false
	if paramsV != nil && !sobek.IsUndefined(paramsV) && !sobek.IsNull(paramsV) {
		tags, name, ownHeader = in.parseParams(c, paramsV, tags, name)
		if r.Refused != nil {
			return c // an unknown params.compression
		}
	}
	if bodyV != nil && !sobek.IsUndefined(bodyV) && !sobek.IsNull(bodyV) {
		if in.parseBody(r, bodyV) {
			if _, set := r.Header["Content-Type"]; !set {
				if !ownHeader {
					r.Header = r.Header.Clone()
					ownHeader = true
				}
				r.Header["Content-Type"] = []string{"application/x-www-form-urlencoded"}
			}
		}
	}
	if c.compress != nil && r.HasBody {
		if err := in.compressBody(st, c, ownHeader); err != nil {
			jsmod.ThrowGoError(in.rt, "%s", err)
		}
	}
	if ownHeader {
		if cl, set := r.Header["Content-Length"]; set {
			ownLength(st, r, cl)
		}
	}

	sys := d.sys
	if d.debug != httpclient.DebugOff {
		r.DebugLog = debugLog(st, debugTags(tags, sys, name, urlName, r.URL.Clean))
	}
	c.named = name != ""
	urlTag := tagURL(r)
	m := &c.target.reqTags
	if m.base == tags && m.method == method && m.name == name && m.sys == sys && m.url == urlTag {
		c.tags = m.tags
		return c
	}
	base := tags
	tags = requestTags(tags, sys, method, name, urlTag)
	*m = tagMemo{base: base, method: method, name: name, url: urlTag, sys: sys, tags: tags}
	c.tags = tags
	return c
}

// urlOf reads a URL argument: a string, or the result of the http.url
// template tag (which also names the request). Anything else is not a
// URL (ok false): k6 v2.2.0 fails the request, with no call to the
// value's toString, and so does metronome (see notAURL).
func (in *instance) urlOf(v sobek.Value) (raw, name string, ok bool) {
	if o, isObj := v.(*sobek.Object); isObj && o.ExportType() == taggedURLType {
		t := o.Export().(*taggedURL)
		return t.url, t.name, true
	}
	if s, isStr := v.(sobek.String); isStr {
		return s.String(), "", true
	}
	return "", "", false
}

// notAURL is the error of a request whose URL argument is not a string,
// in k6's words: "invalid URL: '#123'", "invalid URL: '#<nil>'" for
// undefined and null, the exported object for an object. The request
// fails with error_code 1020, its url empty, and records nothing.
func notAURL(v sobek.Value) error {
	var exported any
	if v != nil {
		exported = v.Export()
	}
	return fmt.Errorf("invalid URL: '#%v'", exported)
}

// target returns the parsed form of raw from the VU's cache.
func (in *instance) target(raw string) (*target, error) {
	if t, ok := in.targets[raw]; ok {
		return t, nil
	}
	parsed, err := httpclient.ParseTarget(raw)
	if err != nil {
		return &target{Target: httpclient.Target{Clean: raw}}, fmt.Errorf("invalid URL: %w", err)
	}
	if len(in.targets) >= maxTargets {
		clear(in.targets)
	}
	t := &target{Target: *parsed}
	in.targets[raw] = t
	return t, nil
}

// parseParams applies a params object to c. It returns the tags with the
// per-request tags added, the name the request is tagged with (if the
// script chose one) and whether c.req.Header is c's own copy.
func (in *instance) parseParams(c *call, v sobek.Value, tags *metrics.TagSet, name string) (*metrics.TagSet, string, bool) {
	o, ok := v.(*sobek.Object)
	if !ok {
		jsmod.ThrowTypeError(in.rt, "the request params must be an object, not %s", jsmod.Describe(v))
	}
	r := &c.req
	ownHeader := false
	for _, k := range o.Keys() {
		pv := o.Get(k)
		if sobek.IsUndefined(pv) && k != "compression" {
			continue
		}
		switch k {
		case "headers":
			ownHeader = in.parseHeaders(r, pv)
		case "tags":
			to, ok := pv.(*sobek.Object)
			if !ok {
				if sobek.IsNull(pv) {
					continue
				}
				jsmod.ThrowTypeError(in.rt, "params.tags must be an object, not %s", jsmod.Describe(pv))
			}
			for _, tk := range to.Keys() {
				tv := to.Get(tk)
				if sobek.IsUndefined(tv) || sobek.IsNull(tv) {
					continue
				}
				if tk == "name" {
					name = tv.String()
					continue
				}
				tags = tags.With(tk, tv.String())
			}
		case "timeout":
			t, err := duration.ParseValue(pv.Export())
			if err != nil || t <= 0 {
				msg := "it must be positive"
				if err != nil {
					msg = err.Error()
				}
				jsmod.ThrowTypeError(in.rt, "params.timeout: %s (use a duration like \"30s\" or a number of milliseconds)", msg)
			}
			r.Timeout = t
		case "redirects":
			r.Redirects = int(jsmod.Int(in.rt, pv, "params.redirects", 0, math.MaxInt32))
		case "responseType":
			switch pv.String() {
			case "text":
				r.ResponseType = httpclient.ResponseText
			case "binary":
				r.ResponseType = httpclient.ResponseBinary
			case "none":
				r.ResponseType = httpclient.ResponseNone
			default:
				jsmod.ThrowTypeError(in.rt, "params.responseType must be \"text\", \"binary\" or \"none\", not %q", pv.String())
			}
		case "responseCallback":
			e, msg := in.callbackOf(pv)
			if msg != "" {
				jsmod.ThrowTypeError(in.rt, "params.responseCallback: %s", msg)
			}
			c.expect = e
		case "cookies":
			r.Cookies = in.parseCookies(pv)
		case "jar":
			if sobek.IsNull(pv) {
				r.Jar = nil
				continue
			}
			j, ok := jarOf(pv)
			if !ok {
				jsmod.ThrowTypeError(in.rt, "params.jar must be a cookie jar from http.cookieJar() or new http.CookieJar(), not %s", jsmod.Describe(pv))
			}
			r.Jar = in.jarFor(j)
		case "auth":
			switch a := pv.String(); a {
			case "basic", "":
			case "digest":
				r.Digest = true
			case "ntlm":
				r.NTLM = true
			default:
				jsmod.ThrowTypeError(in.rt, "params.auth %q is not supported: use \"basic\", \"digest\" or \"ntlm\" with the credentials in the URL", a)
			}
		case "throw":
			c.throw = pv.ToBoolean()
		case "compression":
			// As in k6, any value is read as a string ("undefined" and
			// "null" too), and a name it does not know fails the request
			// before it is sent, leaving the other params unread.
			cs, err := httpclient.ParseCompressions(pv.String())
			if err != nil {
				c.target = &target{}
				r.URL, r.Refused = &c.target.Target, err
				return tags, name, ownHeader
			}
			c.compress = cs
		}
	}
	return tags, name, ownHeader
}

// compressBody encodes c's body with params.compression, as k6 does:
// the response's request keeps the body as the script gave it, and a
// Content-Encoding header of the script's own is sent as it is, with
// k6's warning when it differs from the compression. ownHeader says
// whether c.req.Header is c's own to change.
func (in *instance) compressBody(st *modules.State, c *call, ownHeader bool) error {
	r := &c.req
	b, enc, err := httpclient.Compress(c.compress, []byte(r.Body))
	if err != nil {
		return fmt.Errorf("compressing the request body: %w", err)
	}
	c.plain, r.Body = r.Body, string(b)
	cur := r.Header.Get("Content-Encoding")
	switch {
	case cur == "":
		if !ownHeader {
			r.Header = r.Header.Clone()
		}
		r.Header["Content-Encoding"] = []string{enc}
	case cur != enc && st.Logf != nil:
		st.Logf("There's a mismatch between the desired `compression` the manually set `Content-Encoding` header in the %s request for '%s', "+
			"the custom header has precedence and won't be overwritten. This may result in invalid data being sent to the server.", r.Method, r.URL.Full)
	}
	return nil
}

// ownLength drops a Content-Length header of the script's own, which the
// body's length replaces, with k6's warning when the two differ (a body
// compressed by params.compression always differs).
func ownLength(st *modules.State, r *httpclient.Request, cl []string) {
	delete(r.Header, "Content-Length")
	if len(cl) == 0 || cl[0] == "" || st.Logf == nil {
		return
	}
	n := len(r.Body)
	if !r.HasBody {
		n = 0
	}
	if v, err := strconv.Atoi(cl[0]); err != nil || v != n {
		st.Logf("The specified Content-Length header %q in the %s request for %s doesn't match the actual request body length of %d, so it will be ignored!",
			cl[0], r.Method, r.URL.Full, n)
	}
}

// parseHeaders gives r its own header: the default User-Agent and the
// script's headers. A Host header sets the request's host instead. It
// reports whether r got a header of its own.
func (in *instance) parseHeaders(r *httpclient.Request, v sobek.Value) bool {
	if sobek.IsNull(v) {
		return false
	}
	o, ok := v.(*sobek.Object)
	if !ok {
		jsmod.ThrowTypeError(in.rt, "params.headers must be an object, not %s", jsmod.Describe(v))
	}
	keys := o.Keys()
	h := make(http.Header, len(keys)+1)
	if ua := in.d.header["User-Agent"]; ua != nil {
		h["User-Agent"] = ua
	}
	for _, k := range keys {
		hv := o.Get(k)
		if sobek.IsUndefined(hv) || sobek.IsNull(hv) {
			continue
		}
		ck := http.CanonicalHeaderKey(k)
		if ck == "Host" {
			r.Host = hv.String()
			continue
		}
		h[ck] = []string{hv.String()}
	}
	r.Header = h
	return true
}

// parseCookies reads params.cookies: {name: value} or
// {name: {value, replace}}.
func (in *instance) parseCookies(v sobek.Value) []httpclient.Cookie {
	if sobek.IsNull(v) {
		return nil
	}
	o, ok := v.(*sobek.Object)
	if !ok {
		jsmod.ThrowTypeError(in.rt, "params.cookies must be an object, not %s", jsmod.Describe(v))
	}
	keys := o.Keys()
	cs := make([]httpclient.Cookie, 0, len(keys))
	for _, k := range keys {
		cv := o.Get(k)
		if sobek.IsUndefined(cv) || sobek.IsNull(cv) {
			continue
		}
		c := httpclient.Cookie{Name: k}
		if co, ok := cv.(*sobek.Object); ok {
			c.Value = co.Get("value").String()
			c.Replace = co.Get("replace").ToBoolean()
		} else {
			c.Value = cv.String()
		}
		cs = append(cs, c)
	}
	return cs
}

// parseBody sets r's body from a string, an ArrayBuffer, a typed array or
// DataView, or an object (form fields; multipart when it holds a file from
// http.file()). It reports whether the body is a URL-encoded form.
func (in *instance) parseBody(r *httpclient.Request, v sobek.Value) (form bool) {
	o, ok := v.(*sobek.Object)
	if !ok {
		r.Body, r.HasBody = v.String(), true
		return false
	}
	if o.ExportType() == arrayBufferType {
		r.Body, r.HasBody = string(o.Export().(sobek.ArrayBuffer).Bytes()), true
		return false
	}
	if buf, ok := o.Get("buffer").(*sobek.Object); ok && buf.ExportType() == arrayBufferType {
		b := buf.Export().(sobek.ArrayBuffer).Bytes()
		off := o.Get("byteOffset").ToInteger()
		n := o.Get("byteLength").ToInteger()
		if off < 0 || n < 0 || off+n > int64(len(b)) {
			jsmod.ThrowTypeError(in.rt, "the request body is a view outside its buffer")
		}
		r.Body, r.HasBody = string(b[off:off+n]), true
		return false
	}
	if in.multipartBody(r, o) {
		return false
	}
	vals := url.Values{}
	for _, k := range o.Keys() {
		fv := o.Get(k)
		if sobek.IsUndefined(fv) {
			continue
		}
		if fo, ok := fv.(*sobek.Object); ok && fo.ClassName() == "Array" {
			n := fo.Get("length").ToInteger()
			for i := int64(0); i < n; i++ {
				vals.Add(k, fo.Get(itoa(i)).String())
			}
			continue
		}
		vals.Add(k, fv.String())
	}
	r.Body, r.HasBody = vals.Encode(), true
	return true
}

// tagURL is the url tag of r: its URL with credentials masked, but k6
// leaves those that digest or NTLM authentication uses out of it.
func tagURL(r *httpclient.Request) string {
	if r.Digest || r.NTLM {
		return r.URL.Clean
	}
	return r.URL.Tag
}

// debugTags are the tags of a request's --http-debug lines, as in k6:
// tags (the VU's and params.tags', no system tag of the request's) and the
// name a script chose in params.tags, or the one http.url gave (urlName)
// when the name system tag is on and the name is not the URL itself.
func debugTags(tags *metrics.TagSet, sys sysTags, name, urlName, clean string) *metrics.TagSet {
	if name != "" && (name != urlName || sys&sysName != 0 && name != clean) {
		return tags.With("name", name)
	}
	return tags
}

// requestTags adds the method, name and url system tags that sys enables
// to tags: a request named by its params (name != "") gets the name tag
// always and url set to the name, one without gets its URL in both, as
// k6 tags them.
func requestTags(tags *metrics.TagSet, sys sysTags, method, name, urlTag string) *metrics.TagSet {
	if sys&sysMethod != 0 {
		tags = tags.With("method", method)
	}
	if name != "" {
		tags = tags.With("name", name)
		if sys&sysURL != 0 {
			tags = tags.With("url", name)
		}
		return tags
	}
	if sys&sysName != 0 {
		tags = tags.With("name", urlTag)
	}
	if sys&sysURL != 0 {
		tags = tags.With("url", urlTag)
	}
	return tags
}
