// Package textencoding provides the globals TextEncoder and TextDecoder as
// k6 has them: UTF-8 encoding, and decoding of UTF-8 and UTF-16 with the
// fatal, ignoreBOM and stream options. Scripts need them to turn text into
// the bytes WebCrypto takes and back.
package textencoding

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
)

func init() {
	modules.RegisterGlobal("TextEncoder", modules.ModuleFunc(newEncoder))
	modules.RegisterGlobal("TextDecoder", modules.ModuleFunc(newDecoder))
}

// newEncoder makes the TextEncoder constructor of one VU.
func newEncoder(vu modules.VU) (modules.Exports, error) {
	rt := vu.Runtime()
	encode := rt.ToValue(func(c sobek.FunctionCall) sobek.Value {
		s := ""
		if a := c.Argument(0); !sobek.IsUndefined(a) {
			s = a.String()
		}
		return uint8Array(rt, []byte(s))
	})
	ctor := func(c sobek.ConstructorCall) *sobek.Object {
		o := c.This
		_ = o.DefineDataProperty("encoding", rt.ToValue("utf-8"), sobek.FLAG_FALSE, sobek.FLAG_FALSE, sobek.FLAG_TRUE)
		_ = o.Set("encode", encode)
		return o
	}
	return modules.Exports{Default: ctor}, nil
}

func uint8Array(rt *sobek.Runtime, b []byte) sobek.Value {
	u8, err := rt.New(rt.Get("Uint8Array"), rt.ToValue(rt.NewArrayBuffer(b)))
	if err != nil {
		jsmod.Throw(rt, err)
	}
	return u8
}

// encodings maps the labels k6 accepts to an encoding name.
var encodings = map[string]string{
	"utf-8": "utf-8", "utf8": "utf-8", "unicode-1-1-utf-8": "utf-8",
	"utf-16le": "utf-16le", "utf-16": "utf-16le",
	"utf-16be": "utf-16be",
}

// decoder is one TextDecoder: its options and, while streaming, the bytes
// of a character not yet complete.
type decoder struct {
	encoding          string
	fatal, ignoreBOM  bool
	pending           []byte
	started, bomCheck bool
}

// newDecoder makes the TextDecoder constructor of one VU.
func newDecoder(vu modules.VU) (modules.Exports, error) {
	rt := vu.Runtime()
	ctor := func(c sobek.ConstructorCall) *sobek.Object {
		label := "utf-8"
		if a := c.Argument(0); !sobek.IsUndefined(a) {
			label = strings.ToLower(strings.TrimSpace(a.String()))
		}
		enc, ok := encodings[label]
		if !ok {
			jsmod.Throw(rt, jsmod.Errorf("RangeError", "unsupported encoding: %s", label))
		}
		d := &decoder{encoding: enc}
		if o, ok := c.Argument(1).(*sobek.Object); ok {
			d.fatal, d.ignoreBOM = flag(o, "fatal"), flag(o, "ignoreBOM")
		}
		o := c.This
		ro := func(name string, v any) {
			_ = o.DefineDataProperty(name, rt.ToValue(v), sobek.FLAG_FALSE, sobek.FLAG_FALSE, sobek.FLAG_TRUE)
		}
		ro("encoding", enc)
		ro("fatal", d.fatal)
		ro("ignoreBOM", d.ignoreBOM)
		_ = o.Set("decode", func(c sobek.FunctionCall) sobek.Value {
			var in []byte
			if a := c.Argument(0); !jsmod.Absent(a) {
				b, ok := jsmod.Bytes(rt, a)
				if !ok {
					jsmod.ThrowTypeError(rt, "TextDecoder.decode takes an ArrayBuffer, a typed array or a DataView, not %s", jsmod.Describe(a))
				}
				in = b
			}
			stream := false
			if opts, ok := c.Argument(1).(*sobek.Object); ok {
				stream = flag(opts, "stream")
			}
			s, ok := d.decode(in, stream)
			if !ok {
				jsmod.ThrowTypeError(rt, "decoding text: invalid byte sequence")
			}
			return rt.ToValue(s)
		})
		return o
	}
	return modules.Exports{Default: ctor}, nil
}

// flag reads a boolean option; a missing one is false.
func flag(o *sobek.Object, name string) bool {
	v := o.Get(name)
	return v != nil && v.ToBoolean()
}

// decode decodes in after what is pending; unless stream, an incomplete
// character at the end is invalid. It reports false when d is fatal and
// the input is not valid.
func (d *decoder) decode(in []byte, stream bool) (string, bool) {
	b := append(d.pending, in...)
	d.pending = nil
	if !d.started && !d.ignoreBOM {
		bom := "\xef\xbb\xbf"
		switch d.encoding {
		case "utf-16le":
			bom = "\xff\xfe"
		case "utf-16be":
			bom = "\xfe\xff"
		}
		if len(b) < len(bom) && stream && strings.HasPrefix(bom, string(b)) {
			d.pending = b
			return "", true
		}
		if strings.HasPrefix(string(b), bom) {
			b = b[len(bom):]
		}
	}
	d.started = len(b) > 0 || d.started
	var out strings.Builder
	valid := true
	if d.encoding == "utf-8" {
		for len(b) > 0 {
			if stream && !utf8.FullRune(b) {
				d.pending = append([]byte{}, b...)
				break
			}
			r, n := utf8.DecodeRune(b)
			if r == utf8.RuneError && n <= 1 {
				valid = false
			}
			out.WriteRune(r)
			b = b[n:]
		}
	} else {
		units := make([]uint16, 0, len(b)/2)
		for len(b) >= 2 {
			if d.encoding == "utf-16le" {
				units = append(units, uint16(b[0])|uint16(b[1])<<8)
			} else {
				units = append(units, uint16(b[1])|uint16(b[0])<<8)
			}
			b = b[2:]
		}
		if stream && len(units) > 0 && utf16.IsSurrogate(rune(units[len(units)-1])) && units[len(units)-1] < 0xdc00 {
			last := units[len(units)-1]
			units = units[:len(units)-1]
			d.pending = []byte{byte(last), byte(last >> 8)}
			if d.encoding == "utf-16be" {
				d.pending[0], d.pending[1] = d.pending[1], d.pending[0]
			}
		}
		for i := 0; i < len(units); i++ {
			u := rune(units[i])
			switch {
			case u >= 0xd800 && u < 0xdc00 && i+1 < len(units) && units[i+1] >= 0xdc00 && units[i+1] < 0xe000:
				out.WriteRune(utf16.DecodeRune(u, rune(units[i+1])))
				i++
			case utf16.IsSurrogate(u):
				valid = false
				out.WriteRune(utf8.RuneError)
			default:
				out.WriteRune(u)
			}
		}
		if len(b) == 1 {
			if stream {
				d.pending = append(d.pending, b[0])
			} else {
				valid = false
				out.WriteRune(utf8.RuneError)
			}
		}
	}
	if !stream {
		d.started = false
	}
	if !valid && d.fatal {
		return "", false
	}
	return out.String(), true
}
