// Package html implements the "k6/html" module: parseHTML and the
// jQuery-like Selection over a parsed document, with DOM-like Element
// objects for single nodes. Parsing and selecting are goquery's (with
// cascadia for CSS selectors); this package maps them onto k6's API.
package html

import (
	"fmt"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules"
)

func init() {
	modules.Register("k6/html", modules.ModuleFunc(New))
}

// New instantiates the module for one VU.
func New(vu modules.VU) (modules.Exports, error) {
	return modules.Exports{Named: map[string]any{
		"parseHTML": func(c sobek.FunctionCall) sobek.Value {
			rt := vu.Runtime()
			return Parse(rt, c.Argument(0).String(), "")
		},
	}}, nil
}

// Parse parses src as an HTML document and returns the Selection of the
// whole document, as parseHTML and res.html() do; url is the response's
// address (the Selection's url property). HTML parsing never fails on
// malformed markup: like a browser, it repairs it.
func Parse(rt *sobek.Runtime, src, url string) sobek.Value {
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(src))
	if err != nil {
		throw(rt, "parseHTML: %v", err)
	}
	return wrapSelection(rt, doc.Selection, url)
}

// throw throws a JavaScript Error from a Go function called by JavaScript.
func throw(rt *sobek.Runtime, format string, args ...any) {
	e, err := rt.New(rt.Get("Error"), rt.ToValue(fmt.Sprintf(format, args...)))
	if err != nil {
		panic(rt.NewGoError(fmt.Errorf(format, args...)))
	}
	panic(e)
}

// absent reports whether an optional argument was left out.
func absent(v sobek.Value) bool { return v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) }
