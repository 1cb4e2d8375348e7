// Package timers implements the "k6/timers" module: setTimeout,
// clearTimeout, setInterval and clearInterval as imports. They are the
// very timers the runtime offers as globals, on the VU's event loop, so a
// timer set through one is cleared through the other.
package timers

import (
	"errors"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules"
)

func init() {
	modules.Register("k6/timers", modules.ModuleFunc(New))
}

// Host is what a VU must offer for k6/timers: its event loop's timers.
// metronome's JavaScript runtime implements it.
type Host interface {
	SetTimer(call sobek.FunctionCall, repeat bool) sobek.Value
	ClearTimer(call sobek.FunctionCall) sobek.Value
}

// New instantiates the module for one VU. As in k6 the exports are the
// global functions themselves (setTimeout === globalThis.setTimeout), read
// when the module is first imported; a runtime without the globals gets
// functions of its own over the same Host.
func New(vu modules.VU) (modules.Exports, error) {
	h, ok := vu.(Host)
	if !ok {
		return modules.Exports{}, errors.New("k6/timers needs a runtime with an event loop")
	}
	own := map[string]func(sobek.FunctionCall) sobek.Value{
		"setTimeout":    func(c sobek.FunctionCall) sobek.Value { return h.SetTimer(c, false) },
		"setInterval":   func(c sobek.FunctionCall) sobek.Value { return h.SetTimer(c, true) },
		"clearTimeout":  h.ClearTimer,
		"clearInterval": h.ClearTimer,
	}
	named := make(map[string]any, len(own))
	global := vu.Runtime().GlobalObject()
	for name, fn := range own {
		if g := global.Get(name); g != nil {
			if _, isFn := sobek.AssertFunction(g); isFn {
				named[name] = g
				continue
			}
		}
		named[name] = fn
	}
	return modules.Exports{Named: named}, nil
}
