package js

import (
	"reflect"
	"strconv"
	"strings"

	"github.com/grafana/sobek"
)

// consoleArg is how console writes one argument, as k6 v2.2.0 does:
// primitives as their String (strings unquoted), functions as
// "[object Function]", Go errors as their message, Error objects as
// "Name: message" and other objects in k6's one-line notation
// (writeConsoleValue). A getter or proxy that throws makes the console
// call throw, as in k6.
func consoleArg(a sobek.Value) string {
	o, ok := a.(*sobek.Object)
	if !ok {
		return a.String()
	}
	if _, isFn := sobek.AssertFunction(o); isFn {
		return consoleFunction
	}
	// A Go error a promise was rejected with (k6/secrets' "no value")
	// prints as its message.
	if t := o.ExportType(); t != nil && t.Implements(errorType) {
		if err, ok := o.Export().(error); ok {
			return err.Error()
		}
	}
	if o.ClassName() == "Error" {
		return o.String()
	}
	f := consoleFormatter{}
	f.object(o)
	return f.b.String()
}

// The words k6 writes for a function and for an object met again inside
// itself.
const (
	consoleFunction = "[object Function]"
	consoleCircular = "[Circular]"
)

var (
	errorType       = reflect.TypeFor[error]()
	arrayBufferType = reflect.TypeFor[sobek.ArrayBuffer]()
)

// consoleFormatter writes values nested in a console argument. Its
// notation is k6's, not Node's: keys bare, strings in double quotes with
// nothing escaped, null and undefined both "null", no depth or length
// limit, and no class names but for binary data.
type consoleFormatter struct {
	b strings.Builder
	// open are the objects being written, outermost first: meeting one
	// of them again is a cycle. An object met twice side by side is
	// written twice.
	open []*sobek.Object
}

// value writes a value nested in an object or array.
func (f *consoleFormatter) value(v sobek.Value) {
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		f.b.WriteString("null")
		return
	}
	o, ok := v.(*sobek.Object)
	if !ok {
		// Strings and symbols export as Go strings.
		if t := v.ExportType(); t != nil && t.Kind() == reflect.String {
			f.b.WriteByte('"')
			f.b.WriteString(v.String())
			f.b.WriteByte('"')
			return
		}
		f.b.WriteString(v.String())
		return
	}
	if _, isFn := sobek.AssertFunction(o); isFn {
		f.b.WriteString(consoleFunction)
		return
	}
	f.object(o)
}

// object writes an object that is not a function.
func (f *consoleFormatter) object(o *sobek.Object) {
	for _, p := range f.open {
		if p == o {
			f.b.WriteString(consoleCircular)
			return
		}
	}
	f.open = append(f.open, o)
	defer func() { f.open = f.open[:len(f.open)-1] }()
	if o.ClassName() == "Error" {
		f.b.WriteString(o.String())
		return
	}
	if f.binary(o) {
		return
	}
	if o.ClassName() == "Array" {
		n := o.Get("length").ToInteger()
		if n == 0 {
			f.b.WriteString("[]")
			return
		}
		f.b.WriteString("[ ")
		for i := range n {
			if i > 0 {
				f.b.WriteString(", ")
			}
			f.value(o.Get(strconv.FormatInt(i, 10)))
		}
		f.b.WriteString(" ]")
		return
	}
	keys := o.Keys()
	if len(keys) == 0 {
		f.empty(o)
		return
	}
	f.b.WriteString("{ ")
	for i, k := range keys {
		if i > 0 {
			f.b.WriteString(", ")
		}
		f.b.WriteString(k)
		f.b.WriteString(": ")
		f.value(o.Get(k))
	}
	f.b.WriteString(" }")
}

// empty writes an object without enumerable keys: a Date as its ISO
// string in quotes ({} when invalid), anything else (Map, Set, RegExp,
// Promise…) as {}.
func (f *consoleFormatter) empty(o *sobek.Object) {
	if o.ClassName() == "Date" {
		if iso, ok := sobek.AssertFunction(o.Get("toISOString")); ok {
			if s, err := iso(o); err == nil {
				f.b.WriteByte('"')
				f.b.WriteString(s.String())
				f.b.WriteByte('"')
				return
			}
		}
	}
	f.b.WriteString("{}")
}

// binary writes an ArrayBuffer as its bytes in hex and a typed array as
// its name, length and elements, and reports whether o was one. As in
// k6, a Uint8ClampedArray is named Uint8Array and a DataView is not
// binary data.
func (f *consoleFormatter) binary(o *sobek.Object) bool {
	t := o.ExportType()
	if t == nil {
		return false
	}
	// Export copies a whole object: only an ArrayBuffer's is asked for.
	if t == arrayBufferType {
		ab, _ := o.Export().(sobek.ArrayBuffer)
		const hex = "0123456789abcdef"
		bs := ab.Bytes()
		f.b.WriteString("ArrayBuffer { [Uint8Contents]: <")
		for i, c := range bs {
			if i > 0 {
				f.b.WriteByte(' ')
			}
			f.b.WriteByte(hex[c>>4])
			f.b.WriteByte(hex[c&15])
		}
		f.b.WriteString(">, byteLength: ")
		f.b.WriteString(strconv.Itoa(len(bs)))
		f.b.WriteString(" }")
		return true
	}
	if t.Kind() != reflect.Slice {
		return false
	}
	name, ok := typedArrayNames[t.Elem().Kind()]
	if !ok {
		return false
	}
	n := o.Get("length").ToInteger()
	f.b.WriteString(name)
	f.b.WriteByte('(')
	f.b.WriteString(strconv.FormatInt(n, 10))
	if n == 0 {
		f.b.WriteString(") []")
		return true
	}
	f.b.WriteString(") [ ")
	for i := range n {
		if i > 0 {
			f.b.WriteString(", ")
		}
		f.b.WriteString(o.Get(strconv.FormatInt(i, 10)).String())
	}
	f.b.WriteString(" ]")
	return true
}

// typedArrayNames names a typed array by the Go kind of its elements.
var typedArrayNames = map[reflect.Kind]string{
	reflect.Int8: "Int8Array", reflect.Uint8: "Uint8Array",
	reflect.Int16: "Int16Array", reflect.Uint16: "Uint16Array",
	reflect.Int32: "Int32Array", reflect.Uint32: "Uint32Array",
	reflect.Float32: "Float32Array", reflect.Float64: "Float64Array",
	reflect.Int64: "BigInt64Array", reflect.Uint64: "BigUint64Array",
}
