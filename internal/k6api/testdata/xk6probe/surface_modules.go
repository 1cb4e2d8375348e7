package probe

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/grafana/sobek"

	"go.k6.io/k6/v2/ext"
	"go.k6.io/k6/v2/js/common"
	"go.k6.io/k6/v2/js/modules"
	"go.k6.io/k6/v2/js/promises"
	"go.k6.io/k6/v2/output"
)

// The names of js/modules, js/common, js/promises, output and ext that
// published extensions use and that the rest of the probe does not
// reach at run time: the compiler checks them here.
var (
	_ modules.Module                   = (*rootModule)(nil)
	_ modules.Instance                 = (*probe)(nil)
	_ func(string, any)                = modules.Register
	_                                  = modules.Exports{Default: nil, Named: nil}
	_ output.Output                    = (*probeOutput)(nil)
	_ output.WithThresholds            = (*probeOutput)(nil)
	_ output.Constructor               = newOutput
	_ func(string, output.Constructor) = output.RegisterExtension
	_ *common.InitEnvironment
)

// surface answers the test's surface.js: one line per check of the names
// of k6's packages that published extensions use.
func (p *probe) surface(v sobek.Value) []string {
	out := surfaceJS(p, v)
	out = append(out, surfaceMetrics(p)...)
	return append(out, surfaceLib(p)...)
}

// surfaceJS uses the names of js/modules, js/common, js/promises, output
// and ext, and says what each gave.
func surfaceJS(p *probe, v sobek.Value) []string {
	var out []string
	add := func(f string, a ...any) { out = append(out, fmt.Sprintf(f, a...)) }

	var vu modules.VU = p.vu
	var rt *sobek.Runtime = vu.Runtime()
	add("vu ctx=%v initEnv=%v state=%v", vu.Context().Err() == nil, vu.InitEnv() == nil, vu.State() != nil)

	// The default export, when set, is what a default import gets.
	ex := modules.Exports{Default: "d", Named: map[string]any{"n": 1}}
	add("exports %v %d", ex.Default, len(ex.Named))

	add("nullish %v %v %v %v", common.IsNullish(v), common.IsNullish(sobek.Undefined()), common.IsNullish(sobek.Null()),
		common.IsNullish(rt.ToValue(0)))
	var ice error = common.NewInitContextError("only in init")
	add("initcontexterror %s", ice)

	// Throw raises a Go error as a JS exception.
	thrown := func() (msg string) {
		defer func() {
			switch r := recover().(type) {
			case *sobek.Exception:
				msg = r.Value().String()
			case sobek.Value:
				msg = r.String()
			}
		}()
		common.Throw(rt, errors.New("thrown"))
		return "not thrown"
	}()
	add("throw %s", thrown)

	// A promise and a callback of the VU's event loop; only that they are
	// made: settling is what metrics.js checks through work.
	_, resolve, _ := promises.New(vu)
	resolve("ok")
	enqueue := vu.RegisterCallback()
	enqueue(func() error { return nil })

	var mods []string
	for name, e := range ext.Get(ext.JSExtension) {
		if strings.HasPrefix(name, "k6/x/probe") {
			mods = append(mods, name+"="+e.Type.String())
		}
	}
	sort.Strings(mods)
	add("ext %s", strings.Join(mods, " "))
	return out
}
