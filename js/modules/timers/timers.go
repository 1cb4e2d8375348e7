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

// New instantiates the module for one VU.
func New(vu modules.VU) (modules.Exports, error) {
	h, ok := vu.(Host)
	if !ok {
		return modules.Exports{}, errors.New("k6/timers needs a runtime with an event loop")
	}
	return modules.Exports{Named: map[string]any{
		"setTimeout":    func(c sobek.FunctionCall) sobek.Value { return h.SetTimer(c, false) },
		"setInterval":   func(c sobek.FunctionCall) sobek.Value { return h.SetTimer(c, true) },
		"clearTimeout":  h.ClearTimer,
		"clearInterval": h.ClearTimer,
	}}, nil
}
