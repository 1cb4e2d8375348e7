package http

import (
	"fmt"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules/html"
)

// jsResponseHTML is res.html(selector?): the body parsed as an HTML
// document (k6/html's Selection, its url the response's), or what the
// selector finds in it.
func (in *instance) jsResponseHTML(c sobek.FunctionCall) sobek.Value {
	r, ok := thisResponse(c.This)
	if !ok {
		panic(in.rt.NewTypeError("html() must be called on a response"))
	}
	body, ok := r.text()
	if !ok {
		panic(in.rt.NewGoError(fmt.Errorf("the response of %s has no body to parse as HTML (the request failed or its responseType is \"none\")", r.res.last().url.clean)))
	}
	doc := html.Parse(in.rt, body, r.res.last().url.clean)
	sel := c.Argument(0)
	if sobek.IsUndefined(sel) || sobek.IsNull(sel) {
		return doc
	}
	find, _ := sobek.AssertFunction(doc.ToObject(in.rt).Get("find"))
	v, err := find(doc, sel)
	if err != nil {
		panic(err)
	}
	return v
}
