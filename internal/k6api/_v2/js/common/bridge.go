package common

import (
	"reflect"
	"strings"

	"github.com/serenize/snaker"
)

// FieldName is the JavaScript name of an exported struct field under
// k6's rule: its js tag ("-" hides it), else its name in snake_case with
// Go's common initialisms kept whole (ContinueOnError → continue_on_error,
// UserID → user_id). Unlike metronome's rule, a json tag is not used.
func FieldName(_ reflect.Type, f reflect.StructField) string {
	if f.PkgPath != "" {
		return ""
	}
	if tag := f.Tag.Get("js"); tag != "" {
		if tag == "-" {
			return ""
		}
		return tag
	}
	if f.Name == "OCSP" {
		return "ocsp"
	}
	return snaker.CamelToSnake(f.Name)
}

// methodNames are the methods whose names are lowered whole.
var methodNames = map[string]string{"JSON": "json", "HTML": "html", "URL": "url", "OCSP": "ocsp"}

// MethodName is the JavaScript name of an exported method under k6's
// rule: its first letter lowered (a few initialisms whole), and a name
// starting with X loses the X.
func MethodName(_ reflect.Type, m reflect.Method) string {
	if m.Name[0] == 'X' {
		return m.Name[1:]
	}
	if name, ok := methodNames[m.Name]; ok {
		return name
	}
	return strings.ToLower(m.Name[:1]) + m.Name[1:]
}

// FieldNameMapper is k6's rule for sobek.Runtime.SetFieldNameMapper.
type FieldNameMapper struct{}

// FieldName is FieldName.
func (FieldNameMapper) FieldName(t reflect.Type, f reflect.StructField) string {
	return FieldName(t, f)
}

// MethodName is MethodName.
func (FieldNameMapper) MethodName(t reflect.Type, m reflect.Method) string { return MethodName(t, m) }
