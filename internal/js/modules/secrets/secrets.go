// Package secrets implements the "k6/secrets" module: get(name) and
// source(name).get(name), promises of the secrets of the sources the run
// was given with --secret-source. A value once fetched is hidden from
// every log line (see the secrets package, which holds the sources).
package secrets

import (
	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
	"github.com/metronome-load/metronome/secrets"
)

func init() {
	modules.Register("k6/secrets", modules.ModuleFunc(New))
}

// New instantiates the module for one VU. The run's store is taken from
// the init context, where modules are imported; without one every get
// rejects with k6's "no secret sources are configured".
func New(vu modules.VU) (modules.Exports, error) {
	var store *secrets.Store
	if env := vu.InitEnv(); env != nil {
		store = env.Secrets
	}
	rt := vu.Runtime()
	getter := func(source string) func(sobek.FunctionCall) sobek.Value {
		return func(c sobek.FunctionCall) sobek.Value {
			v, err := store.Get(source, c.Argument(0).String())
			if err != nil {
				// As in k6, the reason is the bare message, not an Error.
				return jsmod.Settled(rt, nil, &jsmod.Bare{Err: err})
			}
			return jsmod.Settled(rt, v, nil)
		}
	}
	def := rt.NewObject()
	_ = def.Set("get", getter(secrets.DefaultName))
	_ = def.Set("source", func(c sobek.FunctionCall) sobek.Value {
		src := rt.NewObject()
		name := ""
		if !jsmod.Absent(c.Argument(0)) {
			name = c.Argument(0).String()
		}
		_ = src.Set("get", getter(name))
		return src
	})
	return modules.Exports{Default: def}, nil
}
