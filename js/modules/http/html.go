package http

import (
	"net/url"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/internal/js/modules/html"
	"github.com/metronome-load/metronome/js/modules/jsmod"
)

// responseText is the body of the response c is called on, for the HTML
// helpers.
func (in *instance) responseText(c sobek.FunctionCall, fn string) (*response, string) {
	r, ok := thisResponse(c.This)
	if !ok {
		jsmod.ThrowTypeError(in.rt, "%s() must be called on a response", fn)
	}
	body, ok := r.text()
	if !ok {
		jsmod.ThrowGoError(in.rt, "the response of %s has no body to parse as HTML (the request failed or its responseType is \"none\")", r.hop.URL.Clean)
	}
	return r, body
}

// jsResponseHTML is res.html(selector?): the body parsed as an HTML
// document (k6/html's Selection, its url the response's), or what the
// selector finds in it.
func (in *instance) jsResponseHTML(c sobek.FunctionCall) sobek.Value {
	r, body := in.responseText(c, "html")
	doc := html.Parse(in.rt, body, r.hop.URL.Clean)
	sel := c.Argument(0)
	if sobek.IsUndefined(sel) || sobek.IsNull(sel) {
		return doc
	}
	find, _ := sobek.AssertFunction(doc.ToObject(in.rt).Get("find"))
	v, err := find(doc, sel)
	if err != nil {
		jsmod.Throw(in.rt, err)
	}
	return v
}

// helperArgs reads the options object of clickLink and submitForm.
func (in *instance) helperArgs(c sobek.FunctionCall) *sobek.Object {
	if o, ok := c.Argument(0).(*sobek.Object); ok {
		return o
	}
	return in.rt.NewObject()
}

func optString(o *sobek.Object, key, def string) string {
	if v := o.Get(key); v != nil && !sobek.IsUndefined(v) && !sobek.IsNull(v) {
		return v.String()
	}
	return def
}

// parseDocument parses the response body with goquery.
func (in *instance) parseDocument(body string) *goquery.Document {
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		jsmod.Throw(in.rt, jsmod.Errorf(jsmod.GoError, "%v", err))
	}
	return doc
}

// resolve makes ref absolute against the response's URL.
func (in *instance) resolve(r *response, ref string) string {
	base := r.hop.URL.URL
	u, err := base.Parse(ref)
	if err != nil {
		jsmod.ThrowGoError(in.rt, "the link %q in response '%s' is not a valid URL: %v", ref, r.hop.URL.Clean, err)
	}
	return u.String()
}

// jsClickLink is res.clickLink({selector, params}): a GET of the href of
// the first element the selector (default "a[href]") finds, resolved
// against the response's URL.
func (in *instance) jsClickLink(c sobek.FunctionCall) sobek.Value {
	st := in.state()
	r, body := in.responseText(c, "clickLink")
	o := in.helperArgs(c)
	selector := optString(o, "selector", "a[href]")
	where := r.hop.URL.Clean
	el := in.parseDocument(body).Find(selector).First()
	if el.Length() == 0 {
		jsmod.ThrowGoError(in.rt, "no element found for selector '%s' in response '%s'", selector, where)
	}
	href, ok := el.Attr("href")
	if !ok || href == "" {
		jsmod.ThrowGoError(in.rt, "no valid href attribute value found on element '%s' in response '%s'", selector, where)
	}
	return in.request(st, "GET", in.rt.ToValue(in.resolve(r, href)), nil, o.Get("params"))
}

// jsSubmitForm is res.submitForm({formSelector, fields, submitSelector,
// params}): the form (default "form") sent as a browser would, with k6's
// rules: the values of every control the form selector matched (as
// serialize() gives them), the name and value of the first submit control
// (default [type="submit"]), then fields over them; to the form's action
// resolved against the response's URL (the response's URL without one),
// with its method (GET puts the values in the query string).
func (in *instance) jsSubmitForm(c sobek.FunctionCall) sobek.Value {
	st := in.state()
	r, body := in.responseText(c, "submitForm")
	o := in.helperArgs(c)
	formSel := optString(o, "formSelector", "form")
	submitSel := optString(o, "submitSelector", `[type="submit"]`)
	where := r.hop.URL.Clean
	form := in.parseDocument(body).Find(formSel)
	if form.Length() == 0 {
		jsmod.ThrowGoError(in.rt, "no form found for selector '%s' in response '%s'", formSel, where)
	}
	vals := html.FormValues(form)
	if btn := form.Find(submitSel).First(); btn.Length() > 0 {
		if name, ok := btn.Attr("name"); ok && name != "" {
			vals.Set(name, btn.AttrOr("value", ""))
		}
	}
	if f, ok := o.Get("fields").(*sobek.Object); ok {
		for _, k := range f.Keys() {
			vals.Set(k, f.Get(k).String())
		}
	}
	method := strings.ToUpper(form.AttrOr("method", "GET"))
	target := where
	if action, ok := form.Attr("action"); ok {
		target = in.resolve(r, action)
	}
	if method == "GET" {
		u, err := url.Parse(target)
		if err != nil {
			jsmod.Throw(in.rt, jsmod.Errorf(jsmod.GoError, "%v", err))
		}
		u.RawQuery = vals.Encode()
		return in.request(st, method, in.rt.ToValue(u.String()), nil, o.Get("params"))
	}
	fields := in.rt.NewObject()
	for k, vs := range vals {
		if len(vs) == 1 {
			_ = fields.Set(k, vs[0])
			continue
		}
		items := make([]any, len(vs))
		for i, v := range vs {
			items[i] = v
		}
		_ = fields.Set(k, in.rt.NewArray(items...))
	}
	return in.request(st, method, in.rt.ToValue(target), fields, o.Get("params"))
}
