package js_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/js/jstest"
	"github.com/metronome-load/metronome/js/modules"
)

// A third-party style module: a default export of its own, an async
// function that settles from another goroutine, and access to the VU.
func init() {
	modules.Register("k6/x/jstest", modules.ModuleFunc(func(vu modules.VU) (modules.Exports, error) {
		rt := vu.Runtime()
		def := rt.NewObject()
		_ = def.Set("kind", "custom default")
		return modules.Exports{
			Default: def,
			Named: map[string]any{
				"asyncDouble": func(call sobek.FunctionCall) sobek.Value {
					n := call.Argument(0).ToInteger()
					p, resolve, reject := rt.NewPromise()
					done := vu.RegisterCallback()
					go func() {
						time.Sleep(5 * time.Millisecond)
						done(func() error {
							if n < 0 {
								return reject(rt.NewGoError(errors.New("negative")))
							}
							return resolve(n * 2)
						})
					}()
					return rt.ToValue(p)
				},
				"where": func() string {
					st := vu.State()
					if st == nil {
						return "init"
					}
					return st.Group + "|" + st.Current.Scenario.Name
				},
				"version": "1.0",
			},
		}, nil
	}))
	modules.Register("k6/x/broken", modules.ModuleFunc(func(modules.VU) (modules.Exports, error) {
		return modules.Exports{}, errors.New("cannot start")
	}))
}

func TestExtensionModule(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
import ext, { asyncDouble, where, version } from "k6/x/jstest";
import * as ns from "k6/x/jstest";
import { group } from "k6";
const atInit = where();
export default async function () {
	const a = await asyncDouble(21);
	const [b, c] = await Promise.all([asyncDouble(1), asyncDouble(2)]);
	let err = "";
	try { await asyncDouble(-1); } catch (e) { err = String(e); }
	let inGroup = "";
	group("g", () => { inGroup = where(); });
	console.log(ext.kind, a, b, c, version, atInit, inGroup, err, Object.keys(ns).join(","), ns.default === ext);
}`,
	}, nil)
	got := logged(iterate(t, r))
	want := "custom default 42 2 4 1.0 init ::g|default GoError: negative asyncDouble,default,version,where true"
	if len(got) != 1 || got[0] != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestExtensionModuleFailsToInstantiate(t *testing.T) {
	msg := scriptError(t, map[string]string{
		"script.js": "import b from \"k6/x/broken\";\nexport default function () {}",
	})
	if !strings.Contains(msg, `module "k6/x/broken"`) || !strings.Contains(msg, "cannot start") {
		t.Fatalf("got %q", msg)
	}
}

func TestAsyncGoCallbackAfterInterrupt(t *testing.T) {
	// A callback queued after its iteration was interrupted must not run
	// in the next iteration.
	r := jstest.Load(t, map[string]string{
		"script.js": `
import { asyncDouble } from "k6/x/jstest";
let late = 0;
export default async function () {
	if (__ITER === 0) { asyncDouble(1).then(() => { late++; }); while (true) {} }
	await new Promise((resolve) => setTimeout(resolve, 30));
	console.log("late", late);
}`,
	}, nil)
	vu, _ := r.NewVU(t, 1)
	ctx, cancel := contextWithTimeout(20 * time.Millisecond)
	if res := vu.Run(ctx, executor.Iteration{Scenario: jstest.DefaultScenario}); res.Outcome != executor.Interrupted {
		t.Fatalf("outcome %v", res.Outcome)
	}
	cancel()
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
	}
	if !strings.Contains(r.Stderr.String(), "late 0") {
		t.Fatalf("a stale callback ran: %s", r.Stderr)
	}
}
