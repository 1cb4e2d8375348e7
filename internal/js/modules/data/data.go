// Package data implements the "k6/data" module: SharedArray, an array
// built once per process and shared read-only by every VU.
package data

import (
	"errors"
	"fmt"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
)

func init() {
	modules.Register("k6/data", modules.ModuleFunc(New))
}

// New instantiates the module for one VU.
func New(vu modules.VU) (modules.Exports, error) {
	m := &module{vu: vu}
	return modules.Exports{Named: map[string]any{"SharedArray": m.sharedArray}}, nil
}

type module struct {
	vu     modules.VU
	freeze sobek.Callable
}

// array is a SharedArray's content: each element as JSON. It never
// changes once built, so VUs read it without locking.
type array struct {
	elems []string
}

// sharedArray is new SharedArray(name, fn): in the init context, the
// first VU to reach it calls fn and stores each element of the array it
// returns as JSON; every VU then gets a read-only array-like view.
func (m *module) sharedArray(call sobek.ConstructorCall) *sobek.Object {
	rt := m.vu.Runtime()
	env := m.vu.InitEnv()
	if env == nil {
		jsmod.Throwf(rt, "new SharedArray() can only be called in the init context")
	}
	name := call.Argument(0).String()
	if sobek.IsUndefined(call.Argument(0)) || name == "" {
		jsmod.Throwf(rt, "new SharedArray(name, fn) needs a non-empty name")
	}
	fn, ok := sobek.AssertFunction(call.Argument(1))
	if !ok {
		jsmod.Throwf(rt, "new SharedArray(%q, fn) needs a function that returns an array", name)
	}
	// An exception of fn belongs to this VU's runtime: rethrow it here,
	// and hand other VUs only its text.
	var thrown error
	val, err := env.Shared.Get("k6/data.SharedArray:"+name, func() (any, error) {
		a, err := m.build(name, fn)
		if err != nil {
			thrown = err
			return nil, errors.New(err.Error())
		}
		return a, nil
	})
	if thrown != nil {
		var ex *sobek.Exception
		if errors.As(thrown, &ex) {
			panic(ex)
		}
		jsmod.Throwf(rt, "%v", thrown)
	}
	if err != nil {
		jsmod.Throwf(rt, "new SharedArray(%q): the function that builds it failed: %v", name, err)
	}
	arr, ok := val.(*array)
	if !ok {
		jsmod.Throwf(rt, "new SharedArray(%q): the name is taken by other shared data", name)
	}
	return rt.NewDynamicArray(&view{m: m, arr: arr})
}

func (m *module) build(name string, fn sobek.Callable) (*array, error) {
	rt := m.vu.Runtime()
	ret, err := fn(sobek.Undefined())
	if err != nil {
		return nil, err
	}
	obj, ok := ret.(*sobek.Object)
	if !ok || obj.ClassName() != "Array" {
		return nil, fmt.Errorf("new SharedArray(%q): the function must return an array", name)
	}
	stringify, _ := sobek.AssertFunction(rt.Get("JSON").ToObject(rt).Get("stringify"))
	n := int(obj.Get("length").ToInteger())
	a := &array{elems: make([]string, n)}
	for i := range n {
		s, err := stringify(sobek.Undefined(), obj.Get(fmt.Sprint(i)))
		if err != nil {
			return nil, err
		}
		if sobek.IsUndefined(s) {
			a.elems[i] = "null"
			continue
		}
		a.elems[i] = s.String()
	}
	return a, nil
}

// view is one VU's array-like view of a SharedArray. Each access parses
// the element afresh and freezes it, so no VU can change what others see.
type view struct {
	m     *module
	arr   *array
	parse sobek.Callable
}

func (v *view) Len() int { return len(v.arr.elems) }

func (v *view) Get(i int) sobek.Value {
	if i < 0 || i >= len(v.arr.elems) {
		return sobek.Undefined()
	}
	rt := v.m.vu.Runtime()
	if v.parse == nil {
		v.parse, _ = sobek.AssertFunction(rt.Get("JSON").ToObject(rt).Get("parse"))
	}
	val, err := v.parse(sobek.Undefined(), rt.ToValue(v.arr.elems[i]))
	if err != nil {
		panic(err)
	}
	v.m.deepFreeze(val)
	return val
}

func (v *view) Set(int, sobek.Value) bool {
	jsmod.ThrowTypeError(v.m.vu.Runtime(), "SharedArray is read-only")
	return false
}

func (v *view) SetLen(int) bool {
	jsmod.ThrowTypeError(v.m.vu.Runtime(), "SharedArray is read-only")
	return false
}

func (m *module) deepFreeze(val sobek.Value) {
	o, ok := val.(*sobek.Object)
	if !ok {
		return
	}
	if m.freeze == nil {
		rt := m.vu.Runtime()
		m.freeze, _ = sobek.AssertFunction(rt.Get("Object").ToObject(rt).Get("freeze"))
	}
	for _, k := range o.Keys() {
		m.deepFreeze(o.Get(k))
	}
	_, _ = m.freeze(sobek.Undefined(), o)
}
