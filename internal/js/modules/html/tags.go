package html

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/grafana/sobek"
	gohtml "golang.org/x/net/html"
)

// tagged returns the object for e: for the elements k6 gives more methods
// a type embedding Element with them, else e itself.
func tagged(e *Element) any {
	if e.node.Type != gohtml.ElementNode {
		return e
	}
	switch e.node.Data {
	case "a", "area":
		return &AnchorElement{e}
	case "input":
		return &InputElement{e}
	case "button":
		return &ButtonElement{e}
	case "form":
		return &FormElement{e}
	case "select":
		return &SelectElement{e}
	case "option":
		return &OptionElement{e}
	case "textarea":
		return &TextAreaElement{e}
	case "label":
		return &LabelElement{e}
	case "link":
		return &LinkElement{e}
	case "script":
		return &ScriptElement{e}
	case "img":
		return &ImageElement{e}
	}
	return e
}

func (e *Element) str(name string) string { return attrOr(e.node, name) }

func (e *Element) flag(name string) bool {
	_, ok := attr(e.node, name)
	return ok
}

func (e *Element) strOr(name, def string) string {
	if v, ok := attr(e.node, name); ok {
		return v
	}
	return def
}

func (e *Element) num(name string, def int) int {
	if v, err := strconv.Atoi(e.str(name)); err == nil {
		return v
	}
	return def
}

func (e *Element) words(name string) sobek.Value {
	ws := strings.Fields(e.str(name))
	out := make([]any, len(ws))
	for i, w := range ws {
		out[i] = w
	}
	return e.rt.NewArray(out...)
}

// form is the nearest enclosing form, undefined outside of one.
func (e *Element) form() sobek.Value {
	for n := e.node.Parent; n != nil; n = n.Parent {
		if n.Type == gohtml.ElementNode && n.Data == "form" {
			return e.wrap(n)
		}
	}
	return sobek.Undefined()
}

// AnchorElement is an a or area element: its href and the parts of it.
type AnchorElement struct{ *Element }

func (a *AnchorElement) url() *url.URL {
	u, err := url.Parse(a.str("href"))
	if err != nil {
		return &url.URL{}
	}
	return u
}

// Href is href().
func (a *AnchorElement) Href() string { return a.str("href") }

// Hash is hash(): "#fragment" or "".
func (a *AnchorElement) Hash() string {
	if f := a.url().EscapedFragment(); f != "" {
		return "#" + f
	}
	return ""
}

// Host is host(): host and port.
func (a *AnchorElement) Host() string { return a.url().Host }

// Hostname is hostname().
func (a *AnchorElement) Hostname() string { return a.url().Hostname() }

// Port is port().
func (a *AnchorElement) Port() string { return a.url().Port() }

// Username is username().
func (a *AnchorElement) Username() string { return a.url().User.Username() }

// Password is password().
func (a *AnchorElement) Password() string {
	p, _ := a.url().User.Password()
	return p
}

// Origin is origin(): scheme://host, "" for a relative href.
func (a *AnchorElement) Origin() string {
	u := a.url()
	if u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// Pathname is pathname(): the path, always starting with "/" when there
// is an href.
func (a *AnchorElement) Pathname() string {
	if a.str("href") == "" {
		return ""
	}
	p := a.url().EscapedPath()
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p
}

// Protocol is protocol(): the scheme as k6 reports it ("http"), ":" for
// a relative href.
func (a *AnchorElement) Protocol() string {
	if s := a.url().Scheme; s != "" {
		return s
	}
	return ":"
}

// Search is search(): "?query" or "".
func (a *AnchorElement) Search() string {
	if q := a.url().RawQuery; q != "" {
		return "?" + q
	}
	return ""
}

// Text is text(): the link's text.
func (a *AnchorElement) Text() string { return a.TextContent() }

// Target is target().
func (a *AnchorElement) Target() string { return a.str("target") }

// Rel is rel().
func (a *AnchorElement) Rel() string { return a.str("rel") }

// RelList is relList().
func (a *AnchorElement) RelList() sobek.Value { return a.words("rel") }

// Download is download().
func (a *AnchorElement) Download() string { return a.str("download") }

// Type is type().
func (a *AnchorElement) Type() string { return a.str("type") }

// Hreflang is hreflang().
func (a *AnchorElement) Hreflang() string { return a.str("hreflang") }

// Media is media().
func (a *AnchorElement) Media() string { return a.str("media") }

// ToString is toString(): the href, as for a DOM anchor.
func (a *AnchorElement) ToString() string { return a.str("href") }

// InputElement is an input element.
type InputElement struct{ *Element }

// Value is value(): the value attribute ("on" for a checkbox or radio
// without one).
func (i *InputElement) Value() string { return inputValue(i.node) }

// DefaultValue is defaultValue().
func (i *InputElement) DefaultValue() string { return i.str("value") }

// Name is name().
func (i *InputElement) Name() string { return i.str("name") }

// Type is type(), "text" by default.
func (i *InputElement) Type() string { return strings.ToLower(i.strOr("type", "text")) }

// Checked is checked(): whether the checked attribute is present.
func (i *InputElement) Checked() bool { return i.flag("checked") }

// DefaultChecked is defaultChecked().
func (i *InputElement) DefaultChecked() bool { return i.flag("checked") }

// Disabled is disabled().
func (i *InputElement) Disabled() bool { return i.flag("disabled") }

// Form is form(): the enclosing form.
func (i *InputElement) Form() sobek.Value { return i.form() }

// Required is required().
func (i *InputElement) Required() bool { return i.flag("required") }

// Multiple is multiple().
func (i *InputElement) Multiple() bool { return i.flag("multiple") }

// Autofocus is autofocus().
func (i *InputElement) Autofocus() bool { return i.flag("autofocus") }

// Placeholder is placeholder().
func (i *InputElement) Placeholder() string { return i.str("placeholder") }

// Min is min().
func (i *InputElement) Min() string { return i.str("min") }

// Max is max().
func (i *InputElement) Max() string { return i.str("max") }

// Step is step().
func (i *InputElement) Step() string { return i.str("step") }

// Pattern is pattern().
func (i *InputElement) Pattern() string { return i.str("pattern") }

// Size is size().
func (i *InputElement) Size() int { return i.num("size", 0) }

// MaxLength is maxLength(), -1 when unset.
func (i *InputElement) MaxLength() int { return i.num("maxlength", -1) }

// Accept is accept().
func (i *InputElement) Accept() string { return i.str("accept") }

// Alt is alt().
func (i *InputElement) Alt() string { return i.str("alt") }

// Src is src().
func (i *InputElement) Src() string { return i.str("src") }

// Autocomplete is autocomplete(), "on" by default.
func (i *InputElement) Autocomplete() string { return i.strOr("autocomplete", "on") }

// ButtonElement is a button element.
type ButtonElement struct{ *Element }

// Value is value().
func (b *ButtonElement) Value() string { return b.str("value") }

// Name is name().
func (b *ButtonElement) Name() string { return b.str("name") }

// Type is type(), "submit" by default.
func (b *ButtonElement) Type() string { return strings.ToLower(b.strOr("type", "submit")) }

// Form is form().
func (b *ButtonElement) Form() sobek.Value { return b.form() }

// Disabled is disabled().
func (b *ButtonElement) Disabled() bool { return b.flag("disabled") }

// Autofocus is autofocus().
func (b *ButtonElement) Autofocus() bool { return b.flag("autofocus") }

// FormElement is a form element.
type FormElement struct{ *Element }

// Action is action().
func (f *FormElement) Action() string { return f.str("action") }

// Method is method(), "get" by default.
func (f *FormElement) Method() string { return strings.ToLower(f.strOr("method", "get")) }

// Enctype is enctype().
func (f *FormElement) Enctype() string {
	return f.strOr("enctype", "application/x-www-form-urlencoded")
}

// Target is target().
func (f *FormElement) Target() string { return f.str("target") }

// Name is name().
func (f *FormElement) Name() string { return f.str("name") }

func (f *FormElement) controls() []*gohtml.Node {
	return f.sel().Find("input,select,textarea,button,fieldset,output,object").Nodes
}

// Elements is elements(): the form's controls.
func (f *FormElement) Elements() sobek.Value { return f.array(f.controls()) }

// Length is length(): the number of controls.
func (f *FormElement) Length() int { return len(f.controls()) }

// SelectElement is a select element.
type SelectElement struct{ *Element }

// Value is value(): the first selected option's value, "" when none is
// marked selected.
func (s *SelectElement) Value() string {
	if vals := selected(s.node); len(vals) > 0 {
		return vals[0]
	}
	return ""
}

// Name is name().
func (s *SelectElement) Name() string { return s.str("name") }

// Options is options().
func (s *SelectElement) Options() sobek.Value { return s.array(options(s.node)) }

// SelectedOptions is selectedOptions().
func (s *SelectElement) SelectedOptions() sobek.Value {
	var sel []*gohtml.Node
	for _, o := range options(s.node) {
		if _, ok := attr(o, "selected"); ok {
			sel = append(sel, o)
		}
	}
	return s.array(sel)
}

// SelectedIndex is selectedIndex(): -1 when no option is marked selected.
func (s *SelectElement) SelectedIndex() int {
	for i, o := range options(s.node) {
		if _, ok := attr(o, "selected"); ok {
			return i
		}
	}
	return -1
}

// Multiple is multiple().
func (s *SelectElement) Multiple() bool { return s.flag("multiple") }

// Length is length(): the number of options.
func (s *SelectElement) Length() int { return len(options(s.node)) }

// Form is form().
func (s *SelectElement) Form() sobek.Value { return s.form() }

// Type is type(): "select-multiple" or "select" as k6 reports it.
func (s *SelectElement) Type() string {
	if s.flag("multiple") {
		return "select-multiple"
	}
	return "select"
}

// Disabled is disabled().
func (s *SelectElement) Disabled() bool { return s.flag("disabled") }

// Required is required().
func (s *SelectElement) Required() bool { return s.flag("required") }

// OptionElement is an option element.
type OptionElement struct{ *Element }

// Value is value(): the value attribute, else the text.
func (o *OptionElement) Value() string { return optionValue(o.node) }

// Text is text().
func (o *OptionElement) Text() string { return o.TextContent() }

// Label is label(): the label attribute, else the text.
func (o *OptionElement) Label() string { return o.strOr("label", o.TextContent()) }

// Selected is selected().
func (o *OptionElement) Selected() bool { return o.flag("selected") }

// Disabled is disabled().
func (o *OptionElement) Disabled() bool { return o.flag("disabled") }

// Index is index(): the position among its select's options.
func (o *OptionElement) Index() int {
	for n := o.node.Parent; n != nil; n = n.Parent {
		if n.Type == gohtml.ElementNode && n.Data == "select" {
			for i, opt := range options(n) {
				if opt == o.node {
					return i
				}
			}
		}
	}
	return 0
}

// TextAreaElement is a textarea element.
type TextAreaElement struct{ *Element }

// Value is value(): the text.
func (t *TextAreaElement) Value() string { return t.TextContent() }

// Type is type().
func (t *TextAreaElement) Type() string { return "textarea" }

// Rows is rows().
func (t *TextAreaElement) Rows() int { return t.num("rows", 0) }

// Cols is cols().
func (t *TextAreaElement) Cols() int { return t.num("cols", 0) }

// Form is form().
func (t *TextAreaElement) Form() sobek.Value { return t.form() }

// Placeholder is placeholder().
func (t *TextAreaElement) Placeholder() string { return t.str("placeholder") }

// MaxLength is maxLength(), 0 when unset as k6 reports it.
func (t *TextAreaElement) MaxLength() int { return t.num("maxlength", 0) }

// Required is required().
func (t *TextAreaElement) Required() bool { return t.flag("required") }

// Wrap is wrap(), "soft" by default.
func (t *TextAreaElement) Wrap() string { return t.strOr("wrap", "soft") }

// LabelElement is a label element.
type LabelElement struct{ *Element }

// HtmlFor is htmlFor().
func (l *LabelElement) HtmlFor() string { return l.str("for") } //nolint:revive // JavaScript name

// LinkElement is a link element.
type LinkElement struct{ *Element }

// Href is href().
func (l *LinkElement) Href() string { return l.str("href") }

// Rel is rel().
func (l *LinkElement) Rel() string { return l.str("rel") }

// RelList is relList().
func (l *LinkElement) RelList() sobek.Value { return l.words("rel") }

// Media is media().
func (l *LinkElement) Media() string { return l.str("media") }

// Hreflang is hreflang().
func (l *LinkElement) Hreflang() string { return l.str("hreflang") }

// Type is type().
func (l *LinkElement) Type() string { return l.str("type") }

// ScriptElement is a script element.
type ScriptElement struct{ *Element }

// Src is src().
func (s *ScriptElement) Src() string { return s.str("src") }

// Type is type().
func (s *ScriptElement) Type() string { return s.str("type") }

// Text is text(): the script's source.
func (s *ScriptElement) Text() string { return s.TextContent() }

// Async is async().
func (s *ScriptElement) Async() bool { return s.flag("async") }

// Defer is defer().
func (s *ScriptElement) Defer() bool { return s.flag("defer") }

// Charset is charset().
func (s *ScriptElement) Charset() string { return s.str("charset") }

// NoModule is noModule().
func (s *ScriptElement) NoModule() bool { return s.flag("nomodule") }

// ImageElement is an img element.
type ImageElement struct{ *Element }

// Src is src().
func (i *ImageElement) Src() string { return i.str("src") }

// Alt is alt().
func (i *ImageElement) Alt() string { return i.str("alt") }
