package optdecode

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Strict decodes the JSON object raw into v, a pointer to a Go struct (an
// executor's options), rejecting unknown options, wrongly typed values and
// trailing data. Every error is an *Error naming the option path below
// path, however deep the failure and whichever part of the decoder found
// it (a type mismatch, an unknown key, or a field's own UnmarshalJSON such
// as a bad duration), in the wording the rest of the options grammar uses:
//
//	scenarios.api.timeUnit: invalid duration "1x"
//	scenarios.api.env.REGION: expected a string, got 5
//	scenarios.api.rate: expected a whole number, got 1.5
//	scenarios.api.bogus: unknown option; use executor, startTime, …
func Strict(path string, raw json.RawMessage, v any) error {
	err := decodeStrict(raw, v)
	if err == nil {
		return nil
	}
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return &Error{Path: path, Msg: strings.TrimPrefix(err.Error(), "json: "), Err: err}
	}
	p, f := locate(raw, t.Elem())
	if f.err == nil {
		f = failure{err: err, raw: raw, t: t.Elem()}
	}
	return &Error{Path: path + p, Msg: f.describe(), Err: f.err}
}

// failure is where strict decoding failed: the decoder's error, the JSON
// value it failed on and the Go type it was decoded into.
type failure struct {
	err error
	raw json.RawMessage
	t   reflect.Type
}

// describe words the decoder's error for a user who wrote JSON, not Go.
func (f failure) describe() string {
	var te *json.UnmarshalTypeError
	if errors.As(f.err, &te) {
		if te.Field == "" {
			return "expected " + jsonKind(te.Type) + ", got " + Describe(f.raw)
		}
		return fmt.Sprintf("expected %s, got a JSON %s", jsonKind(te.Type), te.Value)
	}
	if _, ok := unknownField(f.err); ok {
		return "unknown option; use " + strings.Join(fieldNames(f.t), ", ")
	}
	if errors.Is(f.err, errTrailingData) {
		return f.err.Error()
	}
	return strings.TrimPrefix(f.err.Error(), "json: ")
}

// decodeStrict decodes raw into v, rejecting unknown fields and anything
// after the first JSON value.
func decodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errTrailingData
	}
	return nil
}

var errTrailingData = errors.New("unexpected data after the options object")

// unknownField returns the key that DisallowUnknownFields rejected.
// encoding/json has no error type for it, only this message.
func unknownField(err error) (string, bool) {
	f, ok := strings.CutPrefix(err.Error(), "json: unknown field ")
	if !ok {
		return "", false
	}
	k, uerr := strconv.Unquote(f)
	return k, uerr == nil
}

// jsonKind names what a JSON value must be to decode into t.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "an array"
	case reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// locate finds where raw fails to decode strictly into a value of type t.
// It returns the failing path relative to raw (".timeUnit",
// ".stages[2].target", or "" for raw itself) and the failure there, whose
// err is nil when raw decodes. Members are tried one at a time in document
// order, each against a fresh value, so the first failing one is reported;
// encoding/json alone decides whether a member fails, and the Go types only
// guide the descent into nested objects and arrays.
func locate(raw []byte, t reflect.Type) (string, failure) {
	err := decodeStrict(raw, reflect.New(t).Interface())
	if err == nil {
		return "", failure{}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	here := failure{err: err, raw: raw, t: t}
	pt := reflect.PointerTo(t)
	if pt.Implements(jsonUnmarshaler) || pt.Implements(textUnmarshaler) {
		return "", here
	}
	path, cause := "", failure{}
	switch t.Kind() {
	case reflect.Struct:
		if b := bytes.TrimSpace(raw); len(b) == 0 || b[0] != '{' {
			break
		}
		eachMember(raw, func(key string, val json.RawMessage) bool {
			name, merr := json.Marshal(key)
			if merr != nil {
				return false
			}
			one := slices.Concat([]byte("{"), name, []byte(":"), val, []byte("}"))
			kerr := decodeStrict(one, reflect.New(t).Interface())
			if kerr == nil {
				return false
			}
			path, cause = "."+key, failure{err: kerr, raw: val, t: t}
			if k, ok := unknownField(kerr); ok && k == key {
				return true
			}
			if ft, ok := fieldType(t, key); ok {
				if p, f := locate(val, ft); f.err != nil {
					path, cause = "."+key+p, f
				}
			}
			return true
		})
	case reflect.Map:
		eachMember(raw, func(key string, val json.RawMessage) bool {
			p, f := locate(val, t.Elem())
			if f.err != nil {
				path, cause = "."+key+p, f
			}
			return f.err != nil
		})
	case reflect.Slice, reflect.Array:
		eachElement(raw, func(i int, val json.RawMessage) bool {
			p, f := locate(val, t.Elem())
			if f.err != nil {
				path, cause = fmt.Sprintf("[%d]%s", i, p), f
			}
			return f.err != nil
		})
	}
	if cause.err == nil {
		return "", here
	}
	return path, cause
}

// eachMember calls f with the members of the JSON object raw in document
// order until f returns true. It does nothing if raw is not an object.
func eachMember(raw []byte, f func(key string, val json.RawMessage) bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return
	}
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			return
		}
		var val json.RawMessage
		if dec.Decode(&val) != nil || f(key, val) {
			return
		}
	}
}

// eachElement calls f with the elements of the JSON array raw in order
// until f returns true. It does nothing if raw is not an array.
func eachElement(raw []byte, f func(i int, val json.RawMessage) bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return
	}
	for i := 0; dec.More(); i++ {
		var val json.RawMessage
		if dec.Decode(&val) != nil || f(i, val) {
			return
		}
	}
}

// fieldType returns the type of the struct field that encoding/json
// decodes the object key into: fields of embedded structs are promoted, an
// exact name beats a case-insensitive one, a shallower field a deeper one.
// Fields with the ",string" option are reported as not found, since their
// JSON is a string whatever their type.
func fieldType(t reflect.Type, key string) (reflect.Type, bool) {
	var fold reflect.Type
	foldString := false
	for level := []reflect.Type{t}; len(level) > 0; {
		var next []reflect.Type
		for _, st := range level {
			for i := range st.NumField() {
				f := st.Field(i)
				tag := f.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if f.Anonymous && name == "" {
					et := f.Type
					if et.Kind() == reflect.Pointer {
						et = et.Elem()
					}
					if et.Kind() == reflect.Struct {
						next = append(next, et)
						continue
					}
				}
				if !f.IsExported() {
					continue
				}
				if name == "" {
					name = f.Name
				}
				asString := slices.Contains(strings.Split(opts, ","), "string")
				if name == key {
					return f.Type, !asString
				}
				if fold == nil && strings.EqualFold(name, key) {
					fold, foldString = f.Type, asString
				}
			}
		}
		level = next
	}
	return fold, fold != nil && !foldString
}

// fieldNames lists the JSON names of t's options, for "unknown option;
// use ...": fields of embedded structs first, as they are promoted.
func fieldNames(t reflect.Type) []string {
	var names []string
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			names = append(names, fieldNames(f.Type)...)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}
