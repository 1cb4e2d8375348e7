package http

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"reflect"
	"strings"
	"sync/atomic"
	"time"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/internal/httpclient"
	"github.com/metronome-load/metronome/js/modules/jsmod"
)

// CookieJar is the JavaScript face of a cookie jar, and what a Go module
// gets when it exports a jar object a script passed it (k6's
// k6/http.CookieJar, which xk6-sse reads from params.jar). jar is nil for
// the VU's own jar (http.cookieJar()), which is looked up at each use
// because the runtime replaces it between iterations.
type CookieJar struct {
	// Jar is the jar as net/http/cookiejar's, the one the object's
	// requests use: for the VU's jar, the jar of the iteration that made
	// the object. It is set only in a binary that has a k6 extension
	// built in (ExposeJars), so that other scripts pay nothing for it.
	Jar *cookiejar.Jar

	in  *instance
	jar http.CookieJar
}

// jsJar is the name the module's code uses for its jar objects.
type jsJar = CookieJar

var jsJarType = reflect.TypeOf((*jsJar)(nil))

func jarOf(v sobek.Value) (*jsJar, bool) {
	o, ok := v.(*sobek.Object)
	if !ok || o.ExportType() != jsJarType {
		return nil, false
	}
	return o.Export().(*jsJar), true
}

// exposeJars is set by ExposeJars.
var exposeJars atomic.Bool

// ExposeJars makes every jar object made from now on carry its jar as
// net/http/cookiejar's (CookieJar.Jar). metronome's layer of k6's
// extension API calls it when an extension registers.
func ExposeJars() { exposeJars.Store(true) }

// stdJar is a jar that can give its net/http/cookiejar jar: the VU's jar
// (State.Jar) and NewJar's.
type stdJar interface{ StdJar() *cookiejar.Jar }

// newJarObject is the object of jar (nil: the VU's own).
func (in *instance) newJarObject(jar http.CookieJar) *sobek.Object {
	j := &jsJar{in: in, jar: jar}
	if exposeJars.Load() {
		if s, ok := in.jarFor(j).(stdJar); ok {
			j.Jar = s.StdJar()
		}
	}
	return in.rt.NewDynamicObject(j)
}

// jarFor resolves j to the jar a request uses.
func (in *instance) jarFor(j *jsJar) http.CookieJar {
	if j.jar != nil {
		return j.jar
	}
	if st := in.vu.State(); st != nil {
		return st.Jar
	}
	return nil
}

// Get implements sobek.DynamicObject.
func (j *jsJar) Get(key string) sobek.Value {
	switch key {
	case "cookiesForURL":
		return j.in.lazyFn(&j.in.fnJarGet, j.in.jsJarCookiesForURL)
	case "set":
		return j.in.lazyFn(&j.in.fnJarSet, j.in.jsJarSet)
	case "clear":
		return j.in.lazyFn(&j.in.fnJarClear, j.in.jsJarClear)
	case "delete":
		return j.in.lazyFn(&j.in.fnJarDelete, j.in.jsJarDelete)
	}
	return nil
}

// Set implements sobek.DynamicObject; the object is read-only.
func (j *jsJar) Set(string, sobek.Value) bool { return false }

// Has implements sobek.DynamicObject.
func (j *jsJar) Has(key string) bool { return j.Get(key) != nil }

// Delete implements sobek.DynamicObject.
func (j *jsJar) Delete(string) bool { return false }

// Keys implements sobek.DynamicObject.
func (j *jsJar) Keys() []string { return nil }

// jsCookieJar is http.cookieJar(): the VU's own jar.
func (in *instance) jsCookieJar(sobek.FunctionCall) sobek.Value {
	if in.vu.State() == nil {
		jsmod.ThrowGoError(in.rt, "http.cookieJar() is not available in the init context")
	}
	return in.newJarObject(nil)
}

// jsNewCookieJar is new http.CookieJar(): an empty jar of its own.
func (in *instance) jsNewCookieJar(sobek.ConstructorCall) *sobek.Object {
	return in.newJarObject(httpclient.NewJar())
}

// jarCall resolves the receiver and the URL argument of a jar method.
func (in *instance) jarCall(c sobek.FunctionCall, method string) (http.CookieJar, *url.URL) {
	j, ok := jarOf(c.This)
	if !ok {
		jsmod.ThrowTypeError(in.rt, "%s must be called on a cookie jar", method)
	}
	jar := in.jarFor(j)
	if jar == nil {
		jsmod.ThrowGoError(in.rt, "this VU has no cookie jar")
	}
	raw := c.Argument(0)
	if sobek.IsUndefined(raw) || sobek.IsNull(raw) {
		jsmod.ThrowTypeError(in.rt, "%s: the URL is missing", method)
	}
	u, err := url.Parse(raw.String())
	if err != nil || u.Host == "" {
		jsmod.ThrowTypeError(in.rt, "%s: %q is not an absolute URL", method, raw.String())
	}
	return jar, u
}

// jsJarCookiesForURL is jar.cookiesForURL(url): {name: [value, ...]}.
func (in *instance) jsJarCookiesForURL(c sobek.FunctionCall) sobek.Value {
	jar, u := in.jarCall(c, "cookiesForURL")
	byName := map[string][]any{}
	var names []string
	for _, ck := range jar.Cookies(u) {
		if _, ok := byName[ck.Name]; !ok {
			names = append(names, ck.Name)
		}
		byName[ck.Name] = append(byName[ck.Name], ck.Value)
	}
	o := in.rt.NewObject()
	for _, n := range names {
		_ = o.Set(n, in.rt.NewArray(byName[n]...))
	}
	return o
}

// jsJarSet is jar.set(url, name, value, options?) with options domain,
// path, expires (an HTTP date or milliseconds since the epoch), max_age,
// secure and http_only.
func (in *instance) jsJarSet(c sobek.FunctionCall) sobek.Value {
	jar, u := in.jarCall(c, "set")
	name := c.Argument(1)
	if sobek.IsUndefined(name) || name.String() == "" {
		jsmod.ThrowTypeError(in.rt, "set: the cookie name is missing")
	}
	ck := &http.Cookie{Name: name.String(), Value: c.Argument(2).String()}
	if o, ok := c.Argument(3).(*sobek.Object); ok {
		if v := o.Get("domain"); v != nil && !sobek.IsUndefined(v) && !sobek.IsNull(v) {
			ck.Domain = v.String()
		}
		if v := o.Get("path"); v != nil && !sobek.IsUndefined(v) && !sobek.IsNull(v) {
			ck.Path = v.String()
		}
		if v := o.Get("expires"); v != nil && !sobek.IsUndefined(v) && !sobek.IsNull(v) {
			if ms, ok := integer(v); ok {
				ck.Expires = time.UnixMilli(int64(ms))
			} else {
				t, err := http.ParseTime(v.String())
				if err != nil {
					jsmod.ThrowTypeError(in.rt, "set: expires %q is neither an HTTP date nor a number of milliseconds", v.String())
				}
				ck.Expires = t
			}
		}
		if v, ok := integer(o.Get("max_age")); ok {
			ck.MaxAge = v
		}
		ck.Secure = o.Get("secure") != nil && o.Get("secure").ToBoolean()
		ck.HttpOnly = o.Get("http_only") != nil && o.Get("http_only").ToBoolean()
	}
	jar.SetCookies(u, []*http.Cookie{ck})
	return sobek.Undefined()
}

// jsJarClear is jar.clear(url): forget every cookie sent to url.
func (in *instance) jsJarClear(c sobek.FunctionCall) sobek.Value {
	jar, u := in.jarCall(c, "clear")
	for _, ck := range jar.Cookies(u) {
		expire(jar, u, ck.Name)
	}
	return sobek.Undefined()
}

// jsJarDelete is jar.delete(url, name).
func (in *instance) jsJarDelete(c sobek.FunctionCall) sobek.Value {
	jar, u := in.jarCall(c, "delete")
	expire(jar, u, c.Argument(1).String())
	return sobek.Undefined()
}

// expire removes the cookie name that the jar would send to u. A jar only
// reveals names and values, so the deletion is tried for every path that
// can match u, host-only and for u's domain.
func expire(jar http.CookieJar, u *url.URL, name string) {
	paths := []string{"/"}
	p := u.Path
	for p != "" && p != "/" {
		paths = append(paths, p)
		i := strings.LastIndexByte(p, '/')
		if i <= 0 {
			break
		}
		p = p[:i]
	}
	var cs []*http.Cookie
	for _, p := range paths {
		cs = append(cs,
			&http.Cookie{Name: name, Path: p, MaxAge: -1},
			&http.Cookie{Name: name, Path: p, Domain: u.Hostname(), MaxAge: -1})
	}
	jar.SetCookies(u, cs)
}
