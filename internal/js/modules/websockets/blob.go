package websockets

import (
	"strconv"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules/jsmod"
)

// blobData is what a Blob object holds.
type blobData struct {
	b   []byte
	typ string
}

const blobKey = "__metronomeBlob"

// newBlob is `new Blob(parts, {type})`: parts are strings, buffers, views
// or other Blobs.
func (mod *module) newBlob(call sobek.ConstructorCall) *sobek.Object {
	rt := mod.vu.Runtime()
	var b []byte
	if v := call.Argument(0); !sobek.IsUndefined(v) && !sobek.IsNull(v) {
		o := v.ToObject(rt)
		n := o.Get("length").ToInteger()
		for i := int64(0); i < n; i++ {
			part := o.Get(strconv.FormatInt(i, 10))
			if bb, ok := mod.blobBytes(part); ok {
				b = append(b, bb...)
			} else if bb, ok := jsmod.Bytes(rt, part); ok {
				b = append(b, bb...)
			} else {
				b = append(b, part.String()...)
			}
		}
	}
	typ := ""
	if v := call.Argument(1); !sobek.IsUndefined(v) && !sobek.IsNull(v) {
		if t := v.ToObject(rt).Get("type"); t != nil && !sobek.IsUndefined(t) {
			typ = t.String()
		}
	}
	mod.fillBlob(call.This, b, typ)
	return nil
}

// blob makes a Blob holding b.
func (mod *module) blob(b []byte, typ string) *sobek.Object {
	rt := mod.vu.Runtime()
	o := rt.NewObject()
	_ = o.SetPrototype(mod.blobProto)
	mod.fillBlob(o, b, typ)
	return o
}

func (mod *module) fillBlob(o *sobek.Object, b []byte, typ string) {
	rt := mod.vu.Runtime()
	d := &blobData{b: b, typ: typ}
	_ = o.DefineDataProperty(blobKey, rt.ToValue(d), sobek.FLAG_FALSE, sobek.FLAG_FALSE, sobek.FLAG_FALSE)
	_ = o.Set("size", len(b))
	_ = o.Set("type", typ)
	resolved := func(v any) sobek.Value {
		p, resolve, _ := rt.NewPromise()
		_ = resolve(v)
		return rt.ToValue(p)
	}
	_ = o.Set("arrayBuffer", func() sobek.Value { return resolved(rt.NewArrayBuffer(append([]byte(nil), d.b...))) })
	_ = o.Set("text", func() sobek.Value { return resolved(string(d.b)) })
	_ = o.Set("bytes", func() sobek.Value {
		u8, _ := rt.New(rt.Get("Uint8Array"), rt.ToValue(rt.NewArrayBuffer(append([]byte(nil), d.b...))))
		return resolved(u8)
	})
}

// blobBytes returns the bytes of a Blob made by this module.
func (mod *module) blobBytes(v sobek.Value) ([]byte, bool) {
	o, ok := v.(*sobek.Object)
	if !ok {
		return nil, false
	}
	x := o.Get(blobKey)
	if x == nil {
		return nil, false
	}
	d, ok := x.Export().(*blobData)
	if !ok {
		return nil, false
	}
	return d.b, true
}
