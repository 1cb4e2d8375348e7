package html

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules/jsmod"
	gohtml "golang.org/x/net/html"
)

// attr returns a node's attribute.
func attr(n *gohtml.Node, name string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == name {
			return a.Val, true
		}
	}
	return "", false
}

// Val is val(): the current value of the first form control: an input's
// value ("on" for a checkbox or radio without one), a textarea's text, the
// value of a select's selected option ("" when none is marked selected; an
// array of them for select multiple).
func (s *Selection) Val() sobek.Value {
	if len(s.sel.Nodes) == 0 {
		return sobek.Undefined()
	}
	n := s.sel.Nodes[0]
	if n.Type != gohtml.ElementNode {
		return sobek.Undefined()
	}
	switch n.Data {
	case "select":
		return s.rt.ToValue(selectValue(s.rt, n))
	case "textarea":
		return s.rt.ToValue(textOf(n))
	case "option":
		return s.rt.ToValue(optionValue(n))
	case "input":
		return s.rt.ToValue(inputValue(n))
	case "button":
		v, _ := attr(n, "value")
		return s.rt.ToValue(v)
	}
	return sobek.Undefined()
}

func textOf(n *gohtml.Node) string { return goquery.NewDocumentFromNode(n).Text() }

func inputValue(n *gohtml.Node) string {
	if v, ok := attr(n, "value"); ok {
		return v
	}
	switch t, _ := attr(n, "type"); strings.ToLower(t) {
	case "checkbox", "radio":
		return "on"
	}
	return ""
}

// selectValue is a select's value: its selected option's, "" when none is
// marked selected, or every selected value for select multiple.
func selectValue(rt *sobek.Runtime, n *gohtml.Node) any {
	vals := selected(n)
	if _, multi := attr(n, "multiple"); multi {
		out := make([]any, len(vals))
		for i, v := range vals {
			out[i] = v
		}
		return rt.NewArray(out...)
	}
	if len(vals) == 0 {
		return ""
	}
	return vals[0]
}

// optionValue is an option's value attribute, else its text.
func optionValue(n *gohtml.Node) string {
	if v, ok := attr(n, "value"); ok {
		return v
	}
	return strings.TrimSpace(textOf(n))
}

func options(n *gohtml.Node) []*gohtml.Node {
	return goquery.NewDocumentFromNode(n).Find("option").Nodes
}

// selected lists the values of a select's options marked selected.
func selected(n *gohtml.Node) []string {
	var vals []string
	for _, o := range options(n) {
		if _, ok := attr(o, "selected"); ok {
			vals = append(vals, optionValue(o))
		}
	}
	return vals
}

// field is one form control's name and value (values for select
// multiple).
type field struct {
	name   string
	value  string
	values []string
	multi  bool
}

// fields are the controls of the selection that k6 submits, in document
// order: those inside each node, and the nodes themselves. Like k6, and
// unlike a browser, it keeps disabled controls and counts a checkbox or
// radio as checked only when its checked attribute says "checked"; it
// leaves out buttons and submit, image, reset and file inputs.
func (s *Selection) fields() []field {
	controls := s.sel.Find("input,select,textarea").AddSelection(s.sel.Filter("input,select,textarea"))
	var out []field
	for _, n := range controls.Nodes {
		name, ok := attr(n, "name")
		if !ok || name == "" {
			continue
		}
		switch n.Data {
		case "select":
			f := field{name: name}
			if _, f.multi = attr(n, "multiple"); f.multi {
				f.values = selected(n)
			} else if vals := selected(n); len(vals) > 0 {
				f.value = vals[0]
			}
			out = append(out, f)
		case "textarea":
			out = append(out, field{name: name, value: textOf(n)})
		case "input":
			t, _ := attr(n, "type")
			switch strings.ToLower(t) {
			case "submit", "button", "image", "reset", "file":
				continue
			case "checkbox", "radio":
				if c, _ := attr(n, "checked"); c != "checked" {
					continue
				}
			}
			out = append(out, field{name: name, value: inputValue(n)})
		}
	}
	return out
}

// Serialize is serialize(): the fields URL-encoded, sorted by name as k6
// does.
func (s *Selection) Serialize() string { return FormValues(s.sel).Encode() }

// FormValues are the values serialize() encodes: those of the controls in
// sel (forms or controls), by the same rules. res.submitForm() sends them.
func FormValues(sel *goquery.Selection) url.Values {
	vals := url.Values{}
	for _, f := range (&Selection{sel: sel}).fields() {
		if f.multi {
			vals[f.name] = append(vals[f.name], f.values...)
			continue
		}
		vals.Add(f.name, f.value)
	}
	return vals
}

func (s *Selection) fieldValue(f field) any {
	if !f.multi {
		return f.value
	}
	out := make([]any, len(f.values))
	for i, v := range f.values {
		out[i] = v
	}
	return s.rt.NewArray(out...)
}

// SerializeArray is serializeArray(): [{name, value}, ...]; the value of
// a select multiple is an array.
func (s *Selection) SerializeArray() sobek.Value {
	fs := s.fields()
	out := make([]any, len(fs))
	for i, f := range fs {
		o := s.rt.NewObject()
		_ = o.Set("name", f.name)
		_ = o.Set("value", s.fieldValue(f))
		out[i] = o
	}
	return s.rt.NewArray(out...)
}

// SerializeObject is serializeObject(): {name: value}; for a name given
// more than once the last control wins, as in k6.
func (s *Selection) SerializeObject() sobek.Value {
	o := s.rt.NewObject()
	for _, f := range s.fields() {
		_ = o.Set(f.name, s.fieldValue(f))
	}
	return o
}

// Data is data(key?): the first node's data-* attributes, converted as
// jQuery does ("true"/"false", "null", numbers and JSON objects and
// arrays become values). With a key (camelCase or dashed) it is that
// attribute; without, an object of all of them under camelCase names.
func (s *Selection) Data(c sobek.FunctionCall) sobek.Value {
	if len(s.sel.Nodes) == 0 {
		return sobek.Undefined()
	}
	n := s.sel.Nodes[0]
	if !jsmod.Absent(c.Argument(0)) {
		key := c.Argument(0).String()
		for _, a := range n.Attr {
			name, ok := strings.CutPrefix(a.Key, "data-")
			if ok && a.Namespace == "" && (name == key || camel(name) == key || camel(name) == camel(dashed(key))) {
				return s.dataValue(a.Val)
			}
		}
		return sobek.Undefined()
	}
	var o *sobek.Object
	for _, a := range n.Attr {
		if name, ok := strings.CutPrefix(a.Key, "data-"); ok && a.Namespace == "" {
			if o == nil {
				o = s.rt.NewObject()
			}
			_ = o.Set(camel(name), s.dataValue(a.Val))
		}
	}
	if o == nil {
		return sobek.Undefined() // as in k6, for a node without data attributes
	}
	return o
}

func (s *Selection) dataValue(v string) sobek.Value {
	switch v {
	case "true":
		return s.rt.ToValue(true)
	case "false":
		return s.rt.ToValue(false)
	case "null":
		return sobek.Null()
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && strconv.FormatFloat(f, 'f', -1, 64) == v {
		return s.rt.ToValue(f)
	}
	if strings.HasPrefix(v, "{") || strings.HasPrefix(v, "[") {
		if json.Valid([]byte(v)) {
			parse, _ := sobek.AssertFunction(s.rt.Get("JSON").ToObject(s.rt).Get("parse"))
			if x, err := parse(sobek.Undefined(), s.rt.ToValue(v)); err == nil {
				return x
			}
		}
	}
	return s.rt.ToValue(v)
}

// camel turns "user-id" into "userID" and "api-key" into "apiKey": the
// words after the first are capitalised, and common initialisms (as Go's
// naming convention lists them) are written in capitals, as k6 does.
func camel(s string) string {
	parts := strings.Split(s, "-")
	for i := 1; i < len(parts); i++ {
		p := parts[i]
		switch {
		case p == "":
		case initialisms[strings.ToUpper(p)]:
			parts[i] = strings.ToUpper(p)
		default:
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, "")
}

var initialisms = map[string]bool{}

func init() {
	for _, w := range strings.Fields("ACL API ASCII CPU CSS DNS EOF GUID HTML HTTP HTTPS ID IP JSON LHS QPS RAM RHS RPC SLA SMTP SQL SSH TCP TLS TTL UDP UI UID UUID URI URL UTF8 VM XML XMPP XSRF XSS") {
		initialisms[w] = true
	}
}

// dashed turns "userId" into "user-id".
func dashed(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('-')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
