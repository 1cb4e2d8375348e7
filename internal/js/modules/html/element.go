package html

import (
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules/jsmod"
	gohtml "golang.org/x/net/html"
)

// Element is one node of a parsed document (an element, text, comment or
// the document itself) with a DOM-like API. As in k6, its properties are
// methods: el.nodeName(), el.textContent().
type Element struct {
	rt   *sobek.Runtime
	node *gohtml.Node
}

// Attribute is what attributes() and getAttributeNode() return; the
// owner is owner_element, as k6 names it.
type Attribute struct {
	OwnerElement sobek.Value `js:"owner_element"`
	Name         string      `js:"name"`
	Value        string      `js:"value"`
	LocalName    string      `js:"localName"`
	NamespaceURI string      `js:"namespaceURI"`
	Prefix       string      `js:"prefix"`
}

// wrapElement makes the JavaScript object of a node: an Element, or for
// the elements k6 gives more methods (a, input, form...) a type that
// embeds Element and adds them.
func wrapElement(rt *sobek.Runtime, n *gohtml.Node) sobek.Value {
	if n == nil {
		return sobek.Undefined()
	}
	return rt.ToValue(tagged(&Element{rt: rt, node: n}))
}

func (e *Element) wrap(n *gohtml.Node) sobek.Value { return wrapElement(e.rt, n) }

func (e *Element) sel() *goquery.Selection { return goquery.NewDocumentFromNode(e.node).Selection }

// elementOf returns the Element v holds, if it holds one.
func elementOf(v sobek.Value) (*Element, bool) {
	o, ok := v.(*sobek.Object)
	if !ok {
		return nil, false
	}
	e, ok := o.Export().(interface{ elem() *Element })
	if !ok {
		return nil, false
	}
	return e.elem(), true
}

func (e *Element) elem() *Element { return e }

// Selection is selection(): a Selection of this node alone.
func (e *Element) Selection() sobek.Value { return wrapSelection(e.rt, e.selection(), "") }

func (e *Element) selection() *goquery.Selection {
	return goquery.NewDocumentFromNode(root(e.node)).FindNodes(e.node)
}

func root(n *gohtml.Node) *gohtml.Node {
	for n.Parent != nil {
		n = n.Parent
	}
	return n
}

// NodeName is nodeName(): the tag name in lower case for an element,
// "#text", "#comment" or "#document" for the others.
func (e *Element) NodeName() string {
	switch e.node.Type {
	case gohtml.ElementNode:
		return e.node.Data
	case gohtml.TextNode:
		return "#text"
	case gohtml.CommentNode:
		return "#comment"
	case gohtml.DocumentNode:
		return "#document"
	case gohtml.DoctypeNode:
		return e.node.Data
	}
	return ""
}

// NodeType is nodeType(): the DOM's node type numbers.
func (e *Element) NodeType() sobek.Value {
	switch e.node.Type {
	case gohtml.ElementNode:
		return e.rt.ToValue(1)
	case gohtml.TextNode:
		return e.rt.ToValue(3)
	case gohtml.CommentNode:
		return e.rt.ToValue(8)
	case gohtml.DocumentNode:
		return e.rt.ToValue(9)
	case gohtml.DoctypeNode:
		return e.rt.ToValue(10)
	}
	return sobek.Undefined()
}

// NodeValue is nodeValue(): the text of a text or comment node,
// undefined for the others.
func (e *Element) NodeValue() sobek.Value {
	switch e.node.Type {
	case gohtml.TextNode, gohtml.CommentNode:
		return e.rt.ToValue(e.node.Data)
	}
	return sobek.Undefined()
}

// Id is id().
func (e *Element) Id() string { //nolint:revive // the JavaScript name is id
	v, _ := attr(e.node, "id")
	return v
}

// InnerHTML is innerHTML(): the markup of the node's content.
func (e *Element) InnerHTML() sobek.Value {
	h, err := e.sel().Html()
	if err != nil {
		jsmod.Throwf(e.rt, "innerHTML(): %v", err)
	}
	return e.rt.ToValue(h)
}

// TextContent is textContent(): the text of the node and its descendants.
func (e *Element) TextContent() string { return e.sel().Text() }

// OwnerDocument is ownerDocument(): the document node.
func (e *Element) OwnerDocument() sobek.Value { return e.wrap(root(e.node)) }

// Attributes is attributes(): an object of the node's attributes by name.
func (e *Element) Attributes() sobek.Value {
	o := e.rt.NewObject()
	for _, a := range e.node.Attr {
		_ = o.Set(a.Key, e.attribute(a))
	}
	return o
}

func (e *Element) attribute(a gohtml.Attribute) sobek.Value {
	return e.rt.ToValue(&Attribute{
		OwnerElement: e.rt.ToValue(e), Name: a.Key, LocalName: a.Key,
		NamespaceURI: a.Namespace, Value: a.Val,
	})
}

// FirstChild is firstChild().
func (e *Element) FirstChild() sobek.Value { return e.wrap(e.node.FirstChild) }

// LastChild is lastChild().
func (e *Element) LastChild() sobek.Value { return e.wrap(e.node.LastChild) }

// PreviousSibling is previousSibling().
func (e *Element) PreviousSibling() sobek.Value { return e.wrap(e.node.PrevSibling) }

// NextSibling is nextSibling().
func (e *Element) NextSibling() sobek.Value { return e.wrap(e.node.NextSibling) }

// ParentNode is parentNode().
func (e *Element) ParentNode() sobek.Value { return e.wrap(e.node.Parent) }

// ParentElement is parentElement(): the parent when it is an element.
func (e *Element) ParentElement() sobek.Value {
	if p := e.node.Parent; p != nil && p.Type == gohtml.ElementNode {
		return e.wrap(p)
	}
	return sobek.Undefined()
}

func sibling(n *gohtml.Node, next func(*gohtml.Node) *gohtml.Node) *gohtml.Node {
	for n = next(n); n != nil && n.Type != gohtml.ElementNode; n = next(n) {
	}
	return n
}

func nextOf(n *gohtml.Node) *gohtml.Node { return n.NextSibling }
func prevOf(n *gohtml.Node) *gohtml.Node { return n.PrevSibling }

// FirstElementChild is firstElementChild().
func (e *Element) FirstElementChild() sobek.Value {
	c := e.node.FirstChild
	if c != nil && c.Type != gohtml.ElementNode {
		c = sibling(c, nextOf)
	}
	return e.wrap(c)
}

// LastElementChild is lastElementChild().
func (e *Element) LastElementChild() sobek.Value {
	c := e.node.LastChild
	if c != nil && c.Type != gohtml.ElementNode {
		c = sibling(c, prevOf)
	}
	return e.wrap(c)
}

// NextElementSibling is nextElementSibling().
func (e *Element) NextElementSibling() sobek.Value { return e.wrap(sibling(e.node, nextOf)) }

// PreviousElementSibling is previousElementSibling().
func (e *Element) PreviousElementSibling() sobek.Value { return e.wrap(sibling(e.node, prevOf)) }

func (e *Element) childList(elementsOnly bool) []*gohtml.Node {
	var out []*gohtml.Node
	for c := e.node.FirstChild; c != nil; c = c.NextSibling {
		if !elementsOnly || c.Type == gohtml.ElementNode {
			out = append(out, c)
		}
	}
	return out
}

func (e *Element) array(nodes []*gohtml.Node) sobek.Value {
	out := make([]any, len(nodes))
	for i, n := range nodes {
		out[i] = e.wrap(n)
	}
	return e.rt.NewArray(out...)
}

// ChildElementCount is childElementCount().
func (e *Element) ChildElementCount() int { return len(e.childList(true)) }

// ChildNodes is childNodes(): every child node, text included.
func (e *Element) ChildNodes() sobek.Value { return e.array(e.childList(false)) }

// Children is children(): the child elements.
func (e *Element) Children() sobek.Value { return e.array(e.childList(true)) }

// ClassList is classList(): the class names.
func (e *Element) ClassList() sobek.Value {
	names := strings.Fields(e.ClassName())
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
	}
	return e.rt.NewArray(out...)
}

// ClassName is className(): the class attribute.
func (e *Element) ClassName() string {
	v, _ := attr(e.node, "class")
	return v
}

// Lang is lang(): the node's own lang attribute, undefined without one
// (k6 does not inherit it from ancestors).
func (e *Element) Lang() sobek.Value { return e.GetAttribute("lang") }

// ToString is toString(): "[object html.Node]" for an element, as k6
// prints it, "[object #text]" and the like for other nodes.
func (e *Element) ToString() string {
	switch e.node.Type {
	case gohtml.ElementNode:
		return "[object html.Node]"
	case gohtml.TextNode:
		return "[object #text]"
	case gohtml.DocumentNode:
		return "[object #document]"
	case gohtml.CommentNode:
		return "[object #comment]"
	}
	return "[object html.Node]"
}

// HasAttribute is hasAttribute(name).
func (e *Element) HasAttribute(name string) bool {
	_, ok := attr(e.node, name)
	return ok
}

// GetAttribute is getAttribute(name): the value, undefined when absent.
func (e *Element) GetAttribute(name string) sobek.Value {
	if v, ok := attr(e.node, name); ok {
		return e.rt.ToValue(v)
	}
	return sobek.Undefined()
}

// GetAttributeNode is getAttributeNode(name): an Attribute, undefined
// when absent.
func (e *Element) GetAttributeNode(name string) sobek.Value {
	for _, a := range e.node.Attr {
		if a.Namespace == "" && a.Key == name {
			return e.attribute(a)
		}
	}
	return sobek.Undefined()
}

// HasAttributes is hasAttributes().
func (e *Element) HasAttributes() bool { return len(e.node.Attr) > 0 }

// HasChildNodes is hasChildNodes().
func (e *Element) HasChildNodes() bool { return e.node.FirstChild != nil }

// IsSameNode is isSameNode(other).
func (e *Element) IsSameNode(other sobek.Value) bool {
	o, ok := elementOf(other)
	return ok && o.node == e.node
}

// IsEqualNode is isEqualNode(other): the same markup.
func (e *Element) IsEqualNode(other sobek.Value) bool {
	o, ok := elementOf(other)
	if !ok {
		return false
	}
	a, err1 := goquery.OuterHtml(e.sel())
	b, err2 := goquery.OuterHtml(o.sel())
	return err1 == nil && err2 == nil && a == b
}

// GetElementsByClassName is getElementsByClassName(name).
func (e *Element) GetElementsByClassName(name string) sobek.Value {
	var nodes []*gohtml.Node
	for _, n := range e.descendants() {
		for _, c := range strings.Fields(attrOr(n, "class")) {
			if c == name {
				nodes = append(nodes, n)
				break
			}
		}
	}
	return e.array(nodes)
}

// GetElementsByTagName is getElementsByTagName(name).
func (e *Element) GetElementsByTagName(name string) sobek.Value {
	var nodes []*gohtml.Node
	name = strings.ToLower(name)
	for _, n := range e.descendants() {
		if name == "*" || n.Data == name {
			nodes = append(nodes, n)
		}
	}
	return e.array(nodes)
}

func attrOr(n *gohtml.Node, name string) string {
	v, _ := attr(n, name)
	return v
}

// descendants are the element descendants in document order.
func (e *Element) descendants() []*gohtml.Node {
	var out []*gohtml.Node
	var walk func(*gohtml.Node)
	walk = func(n *gohtml.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == gohtml.ElementNode {
				out = append(out, c)
			}
			walk(c)
		}
	}
	walk(e.node)
	return out
}

// QuerySelector is querySelector(selector): the first matching
// descendant, undefined when none matches.
func (e *Element) QuerySelector(selector string) sobek.Value {
	found := e.sel().Find(selector)
	if len(found.Nodes) == 0 {
		return sobek.Undefined()
	}
	return e.wrap(found.Nodes[0])
}

// QuerySelectorAll is querySelectorAll(selector).
func (e *Element) QuerySelectorAll(selector string) sobek.Value {
	return e.array(e.sel().Find(selector).Nodes)
}

// Contains is contains(other): whether other is this node or inside it.
func (e *Element) Contains(other sobek.Value) bool {
	o, ok := elementOf(other)
	if !ok {
		return false
	}
	for n := o.node; n != nil; n = n.Parent {
		if n == e.node {
			return true
		}
	}
	return false
}

// Matches is matches(selector).
func (e *Element) Matches(selector string) bool { return e.selection().Is(selector) }

// NamespaceURI is namespaceURI().
func (e *Element) NamespaceURI() string {
	switch e.node.Namespace {
	case "svg":
		return "http://www.w3.org/2000/svg"
	case "math":
		return "http://www.w3.org/1998/Math/MathML"
	}
	return "http://www.w3.org/1999/xhtml"
}

// IsDefaultNamespace is isDefaultNamespace(uri).
func (e *Element) IsDefaultNamespace(uri string) bool { return uri == e.NamespaceURI() }
