package js

import (
	"reflect"
	"strings"
	"unicode"

	"github.com/metronome-load/metronome/js/modules"
)

// fieldNames maps Go struct fields and methods to JavaScript names for
// values modules hand to scripts: a field takes its `js` tag, else its
// `json` tag, else its name with a lower-case first letter; "-" hides it.
// A method's leading capitals are lowered as a word (JSON → json, HTMLBody
// → htmlBody). Types of the packages given to modules.UseFieldNames take
// the rule registered for them instead.
type fieldNames struct{}

// FieldName returns the JavaScript name of a struct field.
func (fieldNames) FieldName(t reflect.Type, f reflect.StructField) string {
	if m, ok := modules.FieldNamesOf(t); ok {
		return m.FieldName(t, f)
	}
	for _, key := range []string{"js", "json"} {
		if tag, ok := f.Tag.Lookup(key); ok {
			name, _, _ := strings.Cut(tag, ",")
			if name == "-" {
				return ""
			}
			if name != "" {
				return name
			}
		}
	}
	return lowerFirstWord(f.Name)
}

// MethodName returns the JavaScript name of a method.
func (fieldNames) MethodName(t reflect.Type, m reflect.Method) string {
	if names, ok := modules.FieldNamesOf(t); ok {
		return names.MethodName(t, m)
	}
	return lowerFirstWord(m.Name)
}

// lowerFirstWord lowers the leading run of capitals, leaving the last one
// when it starts the next word.
func lowerFirstWord(s string) string {
	r := []rune(s)
	n := 0
	for n < len(r) && unicode.IsUpper(r[n]) {
		n++
	}
	if n > 1 && n < len(r) && unicode.IsLower(r[n]) {
		n--
	}
	for i := 0; i < n; i++ {
		r[i] = unicode.ToLower(r[i])
	}
	return string(r)
}
