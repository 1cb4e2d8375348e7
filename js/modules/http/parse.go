package http

import (
	"math"
	"net/http"
	"net/url"
	"reflect"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
	"github.com/metronome-load/metronome/metrics"
)

var arrayBufferType = reflect.TypeOf(sobek.ArrayBuffer{})

// parse turns the JavaScript arguments of a request into a request. Script
// mistakes (a params value of the wrong kind) throw a TypeError; an URL that
// does not parse is a failed request, as in k6.
func (in *instance) parse(st *modules.State, method string, urlV, bodyV, paramsV sobek.Value) *request {
	d := &in.d
	r := &request{
		method:    method,
		header:    d.header,
		timeout:   d.timeout,
		rps:       st.RPS,
		redirects: d.redirects,
		respType:  d.respType,
		expect:    in.callback,
		jar:       st.Jar,
		throw:     d.throw,
		debug:     d.debug,
	}
	raw, name := in.urlOf(urlV)
	r.url, r.badURL = in.target(raw)

	tags := st.Tags
	if tags == nil {
		tags = metrics.EmptyTags
	}
	ownHeader := false
	if paramsV != nil && !sobek.IsUndefined(paramsV) && !sobek.IsNull(paramsV) {
		tags, name, ownHeader = in.parseParams(r, paramsV, tags, name)
	}
	if bodyV != nil && !sobek.IsUndefined(bodyV) && !sobek.IsNull(bodyV) {
		if in.parseBody(r, bodyV) {
			if _, set := r.header["Content-Type"]; !set {
				if !ownHeader {
					r.header = r.header.Clone()
				}
				r.header["Content-Type"] = []string{"application/x-www-form-urlencoded"}
			}
		}
	}

	sys := d.sys
	r.named = name != ""
	// The url tag masks credentials, but k6 leaves those that digest or
	// NTLM authentication uses out of it.
	urlTag := r.url.tag
	if r.digest || r.ntlm {
		urlTag = r.url.clean
	}
	m := &r.url.reqTags
	if m.base == tags && m.method == method && m.name == name && m.sys == sys && m.url == urlTag {
		r.tags = m.tags
		return r
	}
	base := tags
	if sys&sysMethod != 0 {
		tags = tags.With("method", method)
	}
	switch {
	case r.named:
		tags = tags.With("name", name)
		if sys&sysURL != 0 {
			tags = tags.With("url", name)
		}
	default:
		if sys&sysName != 0 {
			tags = tags.With("name", urlTag)
		}
		if sys&sysURL != 0 {
			tags = tags.With("url", urlTag)
		}
	}
	*m = tagMemo{base: base, method: method, name: name, url: urlTag, sys: sys, tags: tags}
	r.tags = tags
	return r
}

// urlOf reads a URL argument: a string, anything with a string form, or
// the result of the http.url template tag (which also names the request).
func (in *instance) urlOf(v sobek.Value) (raw, name string) {
	if o, ok := v.(*sobek.Object); ok {
		if o.ExportType() == taggedURLType {
			t := o.Export().(*taggedURL)
			return t.url, t.name
		}
	}
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		jsmod.ThrowTypeError(in.rt, "the request URL is missing")
	}
	return v.String(), ""
}

// target returns the parsed form of raw from the VU's cache.
func (in *instance) target(raw string) (*target, error) {
	if t, ok := in.targets[raw]; ok {
		return t, nil
	}
	t, err := parseTarget(raw)
	if err != nil {
		return &target{clean: raw, full: raw, tag: raw}, err
	}
	if len(in.targets) >= maxTargets {
		clear(in.targets)
	}
	in.targets[raw] = t
	return t, nil
}

// parseParams applies a params object to r. It returns the tags with the
// per-request tags added, the name the request is tagged with (if the
// script chose one) and whether r.header is r's own copy.
func (in *instance) parseParams(r *request, v sobek.Value, tags *metrics.TagSet, name string) (*metrics.TagSet, string, bool) {
	o, ok := v.(*sobek.Object)
	if !ok {
		jsmod.ThrowTypeError(in.rt, "the request params must be an object, not %s", jsmod.Describe(v))
	}
	ownHeader := false
	for _, k := range o.Keys() {
		pv := o.Get(k)
		if sobek.IsUndefined(pv) {
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
			r.timeout = t
		case "redirects":
			r.redirects = int(jsmod.Int(in.rt, pv, "params.redirects", 0, math.MaxInt32))
		case "responseType":
			switch pv.String() {
			case "text":
				r.respType = respText
			case "binary":
				r.respType = respBinary
			case "none":
				r.respType = respNone
			default:
				jsmod.ThrowTypeError(in.rt, "params.responseType must be \"text\", \"binary\" or \"none\", not %q", pv.String())
			}
		case "responseCallback":
			e, msg := in.callbackOf(pv)
			if msg != "" {
				jsmod.ThrowTypeError(in.rt, "params.responseCallback: %s", msg)
			}
			r.expect = e
		case "cookies":
			r.cookies = in.parseCookies(pv)
		case "jar":
			if sobek.IsNull(pv) {
				r.jar = nil
				continue
			}
			j, ok := jarOf(pv)
			if !ok {
				jsmod.ThrowTypeError(in.rt, "params.jar must be a cookie jar from http.cookieJar() or new http.CookieJar(), not %s", jsmod.Describe(pv))
			}
			r.jar = in.jarFor(j)
		case "auth":
			switch a := pv.String(); a {
			case "basic", "":
			case "digest":
				r.digest = true
			case "ntlm":
				r.ntlm = true
			default:
				jsmod.ThrowTypeError(in.rt, "params.auth %q is not supported: use \"basic\", \"digest\" or \"ntlm\" with the credentials in the URL", a)
			}
		case "throw":
			r.throw = pv.ToBoolean()
		case "compression":
			if s := pv.String(); s != "" {
				jsmod.ThrowTypeError(in.rt, "params.compression is not supported")
			}
		}
	}
	return tags, name, ownHeader
}

// parseHeaders gives r its own header: the default User-Agent and the
// script's headers. A Host header sets the request's host instead. It
// reports whether r got a header of its own.
func (in *instance) parseHeaders(r *request, v sobek.Value) bool {
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
			r.host = hv.String()
			continue
		}
		h[ck] = []string{hv.String()}
	}
	r.header = h
	return true
}

// parseCookies reads params.cookies: {name: value} or
// {name: {value, replace}}.
func (in *instance) parseCookies(v sobek.Value) []sentCookie {
	if sobek.IsNull(v) {
		return nil
	}
	o, ok := v.(*sobek.Object)
	if !ok {
		jsmod.ThrowTypeError(in.rt, "params.cookies must be an object, not %s", jsmod.Describe(v))
	}
	keys := o.Keys()
	cs := make([]sentCookie, 0, len(keys))
	for _, k := range keys {
		cv := o.Get(k)
		if sobek.IsUndefined(cv) || sobek.IsNull(cv) {
			continue
		}
		c := sentCookie{name: k}
		if co, ok := cv.(*sobek.Object); ok {
			c.value = co.Get("value").String()
			c.replace = co.Get("replace").ToBoolean()
		} else {
			c.value = cv.String()
		}
		cs = append(cs, c)
	}
	return cs
}

// parseBody sets r's body from a string, an ArrayBuffer, a typed array or
// DataView, or an object (form fields; multipart when it holds a file from
// http.file()). It reports whether the body is a URL-encoded form.
func (in *instance) parseBody(r *request, v sobek.Value) (form bool) {
	o, ok := v.(*sobek.Object)
	if !ok {
		r.body, r.hasBody = v.String(), true
		return false
	}
	if o.ExportType() == arrayBufferType {
		r.body, r.hasBody = string(o.Export().(sobek.ArrayBuffer).Bytes()), true
		return false
	}
	if buf, ok := o.Get("buffer").(*sobek.Object); ok && buf.ExportType() == arrayBufferType {
		b := buf.Export().(sobek.ArrayBuffer).Bytes()
		off := o.Get("byteOffset").ToInteger()
		n := o.Get("byteLength").ToInteger()
		if off < 0 || n < 0 || off+n > int64(len(b)) {
			jsmod.ThrowTypeError(in.rt, "the request body is a view outside its buffer")
		}
		r.body, r.hasBody = string(b[off:off+n]), true
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
	r.body, r.hasBody = vals.Encode(), true
	return true
}
