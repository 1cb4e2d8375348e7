package modules

import (
	"net/netip"
	"net/url"
	"reflect"
	"testing"
	"text/template/parse"

	"github.com/grafana/sobek"
)

// TestFieldNamesOf checks which types a registration covers: those of
// its package and of the packages below it, pointers included, and not
// those of a package whose path merely starts with the same letters; the
// longest registered path wins.
func TestFieldNamesOf(t *testing.T) {
	if _, ok := FieldNamesOf(reflect.TypeOf(url.URL{})); ok {
		t.Fatal("a rule before any registration")
	}
	outer, inner := sobek.TagFieldNameMapper("outer", false), sobek.TagFieldNameMapper("inner", false)
	UseFieldNames("net", outer)
	UseFieldNames("net/url", inner)
	UseFieldNames("text/template", outer)
	for _, c := range []struct {
		v    any
		want sobek.FieldNameMapper
	}{
		{netip.Addr{}, outer},
		{&netip.Prefix{}, outer},
		{url.URL{}, inner},
		{(**url.Userinfo)(nil), inner},
		{parse.Tree{}, outer},
		{reflect.Value{}, nil},
		{struct{ A int }{}, nil},
	} {
		got, ok := FieldNamesOf(reflect.TypeOf(c.v))
		if ok != (c.want != nil) || got != c.want {
			t.Errorf("%T: got %v %v, want %v", c.v, got, ok, c.want)
		}
	}
	UseFieldNames("text/templ", inner)
	if got, _ := FieldNamesOf(reflect.TypeOf(parse.Tree{})); got != outer {
		t.Error("text/templ covers text/template/parse")
	}
}
