// Package encoding implements the "k6/encoding" module: base64 encoding
// and decoding in the standard and URL alphabets, padded or raw.
package encoding

import (
	"encoding/base64"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
)

func init() {
	modules.Register("k6/encoding", modules.ModuleFunc(New))
}

// New instantiates the module for one VU.
func New(vu modules.VU) (modules.Exports, error) {
	m := &module{vu: vu}
	return modules.Exports{Named: map[string]any{
		"b64encode": m.b64encode,
		"b64decode": m.b64decode,
	}}, nil
}

type module struct{ vu modules.VU }

func (m *module) encoding(fn string, v sobek.Value) *base64.Encoding {
	name := "std"
	if !sobek.IsUndefined(v) && !sobek.IsNull(v) && v.String() != "" {
		name = v.String()
	}
	switch name {
	case "std":
		return base64.StdEncoding
	case "rawstd":
		return base64.RawStdEncoding
	case "url":
		return base64.URLEncoding
	case "rawurl":
		return base64.RawURLEncoding
	}
	jsmod.Throwf(m.vu.Runtime(), "%s: unknown encoding %q; use \"std\", \"rawstd\", \"url\" or \"rawurl\"", fn, name)
	return nil
}

// bytesOf reads a string (as UTF-8), an ArrayBuffer or a typed array.
func bytesOf(v sobek.Value) ([]byte, bool) {
	switch x := v.Export().(type) {
	case string:
		return []byte(x), true
	case sobek.ArrayBuffer:
		return x.Bytes(), true
	case []byte:
		return x, true
	}
	return nil, false
}

// b64encode(input, encoding?) returns input in base64.
func (m *module) b64encode(call sobek.FunctionCall) sobek.Value {
	rt := m.vu.Runtime()
	b, ok := bytesOf(call.Argument(0))
	if !ok {
		jsmod.Throwf(rt, "b64encode: the input must be a string or an ArrayBuffer")
	}
	enc := m.encoding("b64encode", call.Argument(1))
	return rt.ToValue(enc.EncodeToString(b))
}

// b64decode(input, encoding?, format?) decodes base64: to a string when
// format is "s", else to an ArrayBuffer.
func (m *module) b64decode(call sobek.FunctionCall) sobek.Value {
	rt := m.vu.Runtime()
	enc := m.encoding("b64decode", call.Argument(1))
	b, err := enc.DecodeString(call.Argument(0).String())
	if err != nil {
		jsmod.Throwf(rt, "b64decode: the input is not valid base64: %v", err)
	}
	if f := call.Argument(2); !sobek.IsUndefined(f) && f.String() == "s" {
		return rt.ToValue(string(b))
	}
	return rt.ToValue(rt.NewArrayBuffer(b))
}
