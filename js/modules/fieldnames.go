package modules

import (
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/grafana/sobek"
)

// fieldRule is one UseFieldNames registration.
type fieldRule struct {
	path  string
	names sobek.FieldNameMapper
}

var (
	fieldRulesMu sync.Mutex
	// fieldRules are the registrations, longest path first; nil while
	// there are none, so that a runtime without them pays one load.
	fieldRules atomic.Pointer[[]fieldRule]
)

// UseFieldNames makes every VU runtime name the exported fields and
// methods of Go values whose type is declared in the package path, or in
// a package below it (a module path covers the module), with names
// instead of metronome's own rule (a js or json tag, else the name with
// its first word lowered). It is how a module written for another
// runtime's rule keeps the names its scripts know, without changing the
// names of everything else; the longest path that matches wins.
func UseFieldNames(path string, names sobek.FieldNameMapper) {
	fieldRulesMu.Lock()
	defer fieldRulesMu.Unlock()
	var rules []fieldRule
	if old := fieldRules.Load(); old != nil {
		rules = append(rules, *old...)
	}
	rules = append(rules, fieldRule{path: path, names: names})
	sort.SliceStable(rules, func(i, j int) bool { return len(rules[i].path) > len(rules[j].path) })
	fieldRules.Store(&rules)
}

// FieldNamesOf returns the mapper UseFieldNames registered for the
// package that declares t (for a pointer, its element), if any.
func FieldNamesOf(t reflect.Type) (sobek.FieldNameMapper, bool) {
	rules := fieldRules.Load()
	if rules == nil {
		return nil, false
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	pkg := t.PkgPath()
	if pkg == "" {
		return nil, false
	}
	for _, r := range *rules {
		if strings.HasPrefix(pkg, r.path) && (len(pkg) == len(r.path) || pkg[len(r.path)] == '/') {
			return r.names, true
		}
	}
	return nil, false
}
