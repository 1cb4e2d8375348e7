package html

import (
	"errors"

	"github.com/PuerkitoBio/goquery"
	"github.com/grafana/sobek"
	gohtml "golang.org/x/net/html"

	"github.com/metronome-load/metronome/js/modules/jsmod"
)

// Selection is the JavaScript Selection: an ordered set of nodes of one
// document. Every method returns a new Selection (or a plain value) and
// leaves the receiver as it was, as in jQuery. The runtime's field-name
// mapper exposes each method under its lower-camel-case name.
type Selection struct {
	rt  *sobek.Runtime
	sel *goquery.Selection
	// URL is the address of the response the document came from ("" for
	// parseHTML), carried to every Selection derived from it.
	URL string `js:"url"`
}

func wrapSelection(rt *sobek.Runtime, sel *goquery.Selection, url string) sobek.Value {
	return rt.ToValue(&Selection{rt: rt, sel: sel, URL: url})
}

func (s *Selection) wrap(sel *goquery.Selection) sobek.Value { return wrapSelection(s.rt, sel, s.URL) }

// selectionOf returns the Selection v holds, if it holds one.
func selectionOf(v sobek.Value) (*Selection, bool) {
	o, ok := v.(*sobek.Object)
	if !ok {
		return nil, false
	}
	s, ok := o.Export().(*Selection)
	return s, ok
}

// predicate turns fn(index, selection) into a goquery filter function;
// as in k6, the callbacks of filter, not and is get a one-node Selection.
func (s *Selection) predicate(fn sobek.Callable) func(int, *goquery.Selection) bool {
	return func(i int, one *goquery.Selection) bool {
		r, err := fn(sobek.Undefined(), s.rt.ToValue(i), s.wrap(one))
		if err != nil {
			jsmod.Throw(s.rt, err)
		}
		return r.ToBoolean()
	}
}

func (s *Selection) element(n *gohtml.Node) sobek.Value { return wrapElement(s.rt, n) }

// filterBy narrows the selection by a selector string, a function of
// (index, selection) or another Selection; keep is false for not().
func (s *Selection) filterBy(name string, arg sobek.Value, keep bool) *goquery.Selection {
	if fn, ok := sobek.AssertFunction(arg); ok {
		if keep {
			return s.sel.FilterFunction(s.predicate(fn))
		}
		return s.sel.NotFunction(s.predicate(fn))
	}
	if other, ok := selectionOf(arg); ok {
		if keep {
			return s.sel.FilterSelection(other.sel)
		}
		return s.sel.NotSelection(other.sel)
	}
	if jsmod.Absent(arg) {
		jsmod.Throwf(s.rt, "%s() needs a selector, a function or a Selection", name)
	}
	if keep {
		return s.sel.Filter(arg.String())
	}
	return s.sel.Not(arg.String())
}

// Add is add(selector|Selection): the union of this selection and the
// nodes the selector matches in the whole document, or the other
// selection's nodes.
func (s *Selection) Add(c sobek.FunctionCall) sobek.Value {
	if other, ok := selectionOf(c.Argument(0)); ok {
		return s.wrap(s.sel.AddSelection(other.sel))
	}
	return s.wrap(s.sel.Add(c.Argument(0).String()))
}

// Attr is attr(name, default?): the attribute of the first node, else
// the default (undefined when none is given).
func (s *Selection) Attr(c sobek.FunctionCall) sobek.Value {
	if v, ok := s.sel.Attr(c.Argument(0).String()); ok {
		return s.rt.ToValue(v)
	}
	return c.Argument(1)
}

// Children is children(selector?).
func (s *Selection) Children(c sobek.FunctionCall) sobek.Value {
	return s.axis(c, s.sel.Children, s.sel.ChildrenFiltered)
}

// Closest is closest(selector): for each node, itself or its nearest
// ancestor that matches.
func (s *Selection) Closest(c sobek.FunctionCall) sobek.Value {
	if other, ok := selectionOf(c.Argument(0)); ok {
		return s.wrap(s.sel.ClosestSelection(other.sel))
	}
	return s.wrap(s.sel.Closest(c.Argument(0).String()))
}

// Contents is contents(): the children including text and comment nodes.
func (s *Selection) Contents() sobek.Value { return s.wrap(s.sel.Contents()) }

// Each is each(fn): fn(index, element) for every node, in order.
func (s *Selection) Each(c sobek.FunctionCall) sobek.Value {
	fn, ok := sobek.AssertFunction(c.Argument(0))
	if !ok {
		jsmod.Throwf(s.rt, "each() needs a function of (index, element)")
	}
	for i, n := range s.sel.Nodes {
		if _, err := fn(sobek.Undefined(), s.rt.ToValue(i), s.element(n)); err != nil {
			jsmod.Throw(s.rt, err)
		}
	}
	return s.rt.ToValue(s)
}

// End is end(): the selection this one was derived from.
func (s *Selection) End() sobek.Value { return s.wrap(s.sel.End()) }

// Eq is eq(index); a negative index counts from the end.
func (s *Selection) Eq(c sobek.FunctionCall) sobek.Value {
	return s.wrap(s.sel.Eq(int(c.Argument(0).ToInteger())))
}

// Filter is filter(selector|fn|Selection).
func (s *Selection) Filter(c sobek.FunctionCall) sobek.Value {
	return s.wrap(s.filterBy("filter", c.Argument(0), true))
}

// Find is find(selector|Selection): the matching descendants.
func (s *Selection) Find(c sobek.FunctionCall) sobek.Value {
	if other, ok := selectionOf(c.Argument(0)); ok {
		return s.wrap(s.sel.FindSelection(other.sel))
	}
	return s.wrap(s.sel.Find(c.Argument(0).String()))
}

// First is first().
func (s *Selection) First() sobek.Value { return s.wrap(s.sel.First()) }

// Last is last().
func (s *Selection) Last() sobek.Value { return s.wrap(s.sel.Last()) }

// Get is get(index?): the Element at index (negative counts from the
// end; undefined when out of range), or every Element as an array.
func (s *Selection) Get(c sobek.FunctionCall) sobek.Value {
	if jsmod.Absent(c.Argument(0)) {
		return s.elements(s.sel.Nodes)
	}
	i := int(c.Argument(0).ToInteger())
	if i < 0 {
		i += len(s.sel.Nodes)
	}
	if i < 0 || i >= len(s.sel.Nodes) {
		return sobek.Undefined()
	}
	return s.element(s.sel.Nodes[i])
}

func (s *Selection) elements(nodes []*gohtml.Node) sobek.Value {
	out := make([]any, len(nodes))
	for i, n := range nodes {
		out[i] = s.element(n)
	}
	return s.rt.NewArray(out...)
}

// Has is has(selector|Selection): the nodes with a matching descendant.
func (s *Selection) Has(c sobek.FunctionCall) sobek.Value {
	if other, ok := selectionOf(c.Argument(0)); ok {
		return s.wrap(s.sel.HasSelection(other.sel))
	}
	return s.wrap(s.sel.Has(c.Argument(0).String()))
}

// Html is html(): the inner HTML of the first node, "" when the
// selection is empty.
func (s *Selection) Html() sobek.Value {
	h, err := s.sel.Html()
	if err != nil {
		jsmod.Throwf(s.rt, "html(): %v", err)
	}
	return s.rt.ToValue(h)
}

// Is is is(selector|fn|Selection): whether any node matches.
func (s *Selection) Is(c sobek.FunctionCall) sobek.Value {
	arg := c.Argument(0)
	if fn, ok := sobek.AssertFunction(arg); ok {
		return s.rt.ToValue(s.sel.IsFunction(s.predicate(fn)))
	}
	if other, ok := selectionOf(arg); ok {
		return s.rt.ToValue(s.sel.IsSelection(other.sel))
	}
	return s.rt.ToValue(s.sel.Is(arg.String()))
}

// Map is map(fn): the values fn(index, selection) returns, in an array,
// each as it is (k6 neither drops null nor flattens arrays, unlike
// jQuery). The callback gets a one-node Selection, as in k6. A node whose
// callback throws is left out of the array, as k6 v2.2.0 does, rather
// than failing the iteration; only an interrupted VU stops the loop.
func (s *Selection) Map(c sobek.FunctionCall) sobek.Value {
	fn, ok := sobek.AssertFunction(c.Argument(0))
	if !ok {
		jsmod.Throwf(s.rt, "map() needs a function of (index, selection)")
	}
	out := make([]any, 0, len(s.sel.Nodes))
	for i := range s.sel.Nodes {
		v, err := fn(sobek.Undefined(), s.rt.ToValue(i), s.wrap(s.sel.Eq(i)))
		if err != nil {
			var interrupted *sobek.InterruptedError
			if errors.As(err, &interrupted) {
				panic(err)
			}
			continue
		}
		out = append(out, v)
	}
	return s.rt.NewArray(out...)
}

// Index is index(selector|Selection?): without an argument, the first
// node's position among its element siblings; with a selector, the first
// node's position among the nodes the selector matches; with a Selection,
// that selection's first node's position in this one. -1 when not found.
func (s *Selection) Index(c sobek.FunctionCall) sobek.Value {
	arg := c.Argument(0)
	switch other, ok := selectionOf(arg); {
	case ok:
		return s.rt.ToValue(s.sel.IndexOfSelection(other.sel))
	case jsmod.Absent(arg):
		return s.rt.ToValue(s.sel.Index())
	}
	return s.rt.ToValue(s.sel.IndexSelector(arg.String()))
}

// Siblings is siblings(selector?).
func (s *Selection) Siblings(c sobek.FunctionCall) sobek.Value {
	return s.axis(c, s.sel.Siblings, s.sel.SiblingsFiltered)
}

// Next is next(selector?): each node's next element sibling.
func (s *Selection) Next(c sobek.FunctionCall) sobek.Value {
	return s.axis(c, s.sel.Next, s.sel.NextFiltered)
}

// NextAll is nextAll(selector?).
func (s *Selection) NextAll(c sobek.FunctionCall) sobek.Value {
	return s.axis(c, s.sel.NextAll, s.sel.NextAllFiltered)
}

// NextUntil is nextUntil(selector|Selection?, filter?).
func (s *Selection) NextUntil(c sobek.FunctionCall) sobek.Value {
	return s.wrap(s.until(c, (*goquery.Selection).NextAll, (*goquery.Selection).NextAllFiltered,
		(*goquery.Selection).NextUntil, (*goquery.Selection).NextFilteredUntil,
		(*goquery.Selection).NextUntilSelection, (*goquery.Selection).NextFilteredUntilSelection))
}

// PrevUntil is prevUntil(selector|Selection?, filter?).
func (s *Selection) PrevUntil(c sobek.FunctionCall) sobek.Value {
	return s.wrap(s.until(c, (*goquery.Selection).PrevAll, (*goquery.Selection).PrevAllFiltered,
		(*goquery.Selection).PrevUntil, (*goquery.Selection).PrevFilteredUntil,
		(*goquery.Selection).PrevUntilSelection, (*goquery.Selection).PrevFilteredUntilSelection))
}

// ParentsUntil is parentsUntil(selector|Selection?, filter?).
func (s *Selection) ParentsUntil(c sobek.FunctionCall) sobek.Value {
	return s.wrap(s.until(c, (*goquery.Selection).Parents, (*goquery.Selection).ParentsFiltered,
		(*goquery.Selection).ParentsUntil, (*goquery.Selection).ParentsFilteredUntil,
		(*goquery.Selection).ParentsUntilSelection, (*goquery.Selection).ParentsFilteredUntilSelection))
}

// until dispatches the *Until methods on their arguments: no stop means
// every sibling or ancestor, and the optional second argument filters.
func (s *Selection) until(c sobek.FunctionCall,
	all func(*goquery.Selection) *goquery.Selection,
	allFiltered func(*goquery.Selection, string) *goquery.Selection,
	bySel func(*goquery.Selection, string) *goquery.Selection,
	bySelFiltered func(*goquery.Selection, string, string) *goquery.Selection,
	bySelection func(*goquery.Selection, *goquery.Selection) *goquery.Selection,
	bySelectionFiltered func(*goquery.Selection, string, *goquery.Selection) *goquery.Selection,
) *goquery.Selection {
	stop, filter := c.Argument(0), c.Argument(1)
	filtered := !jsmod.Absent(filter)
	if other, ok := selectionOf(stop); ok {
		if filtered {
			return bySelectionFiltered(s.sel, filter.String(), other.sel)
		}
		return bySelection(s.sel, other.sel)
	}
	if jsmod.Absent(stop) {
		if filtered {
			return allFiltered(s.sel, filter.String())
		}
		return all(s.sel)
	}
	if filtered {
		return bySelFiltered(s.sel, filter.String(), stop.String())
	}
	return bySel(s.sel, stop.String())
}

// Not is not(selector|fn|Selection): the nodes that do not match.
func (s *Selection) Not(c sobek.FunctionCall) sobek.Value {
	return s.wrap(s.filterBy("not", c.Argument(0), false))
}

// Parent is parent(selector?).
func (s *Selection) Parent(c sobek.FunctionCall) sobek.Value {
	return s.axis(c, s.sel.Parent, s.sel.ParentFiltered)
}

// Parents is parents(selector?): every ancestor, nearest first.
func (s *Selection) Parents(c sobek.FunctionCall) sobek.Value {
	return s.axis(c, s.sel.Parents, s.sel.ParentsFiltered)
}

// Prev is prev(selector?).
func (s *Selection) Prev(c sobek.FunctionCall) sobek.Value {
	return s.axis(c, s.sel.Prev, s.sel.PrevFiltered)
}

// PrevAll is prevAll(selector?).
func (s *Selection) PrevAll(c sobek.FunctionCall) sobek.Value {
	return s.axis(c, s.sel.PrevAll, s.sel.PrevAllFiltered)
}

// Size is size(): the number of nodes.
func (s *Selection) Size() int { return len(s.sel.Nodes) }

// Slice is slice(start, end?); negative indexes count from the end.
func (s *Selection) Slice(c sobek.FunctionCall) sobek.Value {
	n := len(s.sel.Nodes)
	clamp := func(v sobek.Value, def int) int {
		if jsmod.Absent(v) {
			return def
		}
		i := int(v.ToInteger())
		if i < 0 {
			i += n
		}
		return min(max(i, 0), n)
	}
	start, end := clamp(c.Argument(0), 0), clamp(c.Argument(1), n)
	if end < start {
		end = start
	}
	return s.wrap(s.sel.Slice(start, end))
}

// Text is text(): the combined text of every node and its descendants.
func (s *Selection) Text() string { return s.sel.Text() }

// ToArray is toArray(): one single-node Selection per node.
func (s *Selection) ToArray() sobek.Value {
	out := make([]any, len(s.sel.Nodes))
	for i := range s.sel.Nodes {
		out[i] = s.wrap(s.sel.Eq(i))
	}
	return s.rt.NewArray(out...)
}

// axis is a method that walks from each node (siblings, parents, next…):
// all steps when its selector argument is left out, else only the nodes
// that match it.
func (s *Selection) axis(c sobek.FunctionCall, all func() *goquery.Selection, filtered func(string) *goquery.Selection) sobek.Value {
	if jsmod.Absent(c.Argument(0)) {
		return s.wrap(all())
	}
	return s.wrap(filtered(c.Argument(0).String()))
}
