package jsmod

import (
	"math"

	"github.com/grafana/sobek"
)

// Absent reports whether an argument was left out: undefined or null.
func Absent(v sobek.Value) bool {
	return v == nil || sobek.IsUndefined(v) || sobek.IsNull(v)
}

// Describe names the kind of a value for error messages: "undefined",
// "null", "a string", "a number", "a function", "an array", "an object"…
func Describe(v sobek.Value) string {
	switch {
	case v == nil || sobek.IsUndefined(v):
		return "undefined"
	case sobek.IsNull(v):
		return "null"
	case sobek.IsString(v):
		return "a string"
	case sobek.IsNumber(v):
		return "a number"
	case sobek.IsBigInt(v):
		return "a bigint"
	}
	if _, ok := sobek.AssertFunction(v); ok {
		return "a function"
	}
	if _, ok := v.Export().(bool); ok {
		return "a boolean"
	}
	o, ok := v.(*sobek.Object)
	if !ok {
		return "a " + v.ExportType().String()
	}
	switch o.ExportType().Kind().String() {
	case "slice":
		if o.ClassName() == "Array" {
			return "an array"
		}
		return "a typed array"
	}
	if _, ok := o.Export().(sobek.ArrayBuffer); ok {
		return "an ArrayBuffer"
	}
	return "an object"
}

// Function returns v as a function, or throws a TypeError naming what.
func Function(rt *sobek.Runtime, v sobek.Value, what string) sobek.Callable {
	fn, ok := sobek.AssertFunction(v)
	if !ok {
		ThrowTypeError(rt, "%s must be a function, not %s", what, Describe(v))
	}
	return fn
}

// Object returns v as an object (not a function), or throws a TypeError
// naming what.
func Object(rt *sobek.Runtime, v sobek.Value, what string) *sobek.Object {
	o, ok := v.(*sobek.Object)
	if _, fn := sobek.AssertFunction(v); !ok || fn {
		ThrowTypeError(rt, "%s must be an object, not %s", what, Describe(v))
	}
	return o
}

// String returns v as a string, or throws a TypeError naming what; only
// a string primitive is accepted.
func String(rt *sobek.Runtime, v sobek.Value, what string) string {
	if v == nil || !sobek.IsString(v) {
		ThrowTypeError(rt, "%s must be a string, not %s", what, Describe(v))
	}
	return v.String()
}

// Int returns v as an integer, or throws a TypeError naming what when v is
// not a number with an integral value between min and max.
func Int(rt *sobek.Runtime, v sobek.Value, what string, min, max int64) int64 {
	if v == nil || !sobek.IsNumber(v) {
		ThrowTypeError(rt, "%s must be a number, not %s", what, Describe(v))
	}
	f := v.ToFloat()
	if f != math.Trunc(f) || f < float64(min) || f > float64(max) {
		ThrowTypeError(rt, "%s must be an integer from %d to %d, not %v", what, min, max, v)
	}
	return int64(f)
}

// Bytes copies the bytes of binary data: an ArrayBuffer, or the part of
// its buffer a typed array or DataView views. It reports false for
// anything else. The copy is the caller's: JavaScript cannot change it,
// so it may go to another goroutine.
func Bytes(rt *sobek.Runtime, v sobek.Value) ([]byte, bool) {
	o, ok := v.(*sobek.Object)
	if !ok {
		return nil, false
	}
	switch x := o.Export().(type) {
	case sobek.ArrayBuffer:
		return append([]byte{}, x.Bytes()...), true
	case []uint8, []int8, []uint16, []int16, []uint32, []int32, []float32, []float64, []int64, []uint64:
		if o.ClassName() == "Array" {
			return nil, false
		}
		return viewBytes(o)
	}
	if dv, ok := rt.Get("DataView").(*sobek.Object); ok && o.ClassName() != "Array" {
		if rt.InstanceOf(o, dv) {
			return viewBytes(o)
		}
	}
	return nil, false
}

// viewBytes copies what a typed array or DataView views.
func viewBytes(o *sobek.Object) ([]byte, bool) {
	buf, ok := o.Get("buffer").Export().(sobek.ArrayBuffer)
	if !ok {
		return nil, false
	}
	b := buf.Bytes()
	off, n := o.Get("byteOffset").ToInteger(), o.Get("byteLength").ToInteger()
	if off < 0 || n < 0 || off+n > int64(len(b)) {
		return nil, false
	}
	return append([]byte{}, b[off:off+n]...), true
}

// BytesOrString is Bytes that also takes a string, as its UTF-8 bytes.
func BytesOrString(rt *sobek.Runtime, v sobek.Value) ([]byte, bool) {
	if v != nil && sobek.IsString(v) {
		return []byte(v.String()), true
	}
	return Bytes(rt, v)
}
