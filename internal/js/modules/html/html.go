// Package html implements the "k6/html" module: parseHTML and the
// jQuery-like Selection over a parsed document, with DOM-like Element
// objects for single nodes. Parsing and selecting are goquery's (with
// cascadia for CSS selectors); this package maps them onto k6's API.
package html

import (
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
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
		jsmod.Throwf(rt, "parseHTML: %v", err)
	}
	return wrapSelection(rt, doc.Selection, url)
}
