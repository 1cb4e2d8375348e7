package js_test

import (
	"context"
	"errors"
	"fmt"
	"image"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/js/jstest"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/metrics"
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
	// Values of image's types take the rule registered for that package;
	// those of this package keep metronome's.
	modules.UseFieldNames("image", shouting{})
	modules.Register("k6/x/fieldrule", modules.ModuleFunc(func(modules.VU) (modules.Exports, error) {
		return modules.Exports{Named: map[string]any{
			"point": image.Point{X: 1, Y: 2},
			"own":   ownOptions{ContinueOnError: true},
			"read":  func(p image.Point) int { return p.X*10 + p.Y },
		}}, nil
	}))
	modules.Register("k6/x/runkit", modules.ModuleFunc(runKit))
	modules.Register("k6/x/offthread", modules.ModuleFunc(offThread))
	modules.Register("k6/x/broken", modules.ModuleFunc(func(modules.VU) (modules.Exports, error) {
		return modules.Exports{}, errors.New("cannot start")
	}))
	modules.Register("k6/x/onfirstuse", modules.OnFirstUse(modules.ModuleFunc(func(vu modules.VU) (modules.Exports, error) {
		made.Add(1)
		return modules.Exports{Named: map[string]any{"made": func() int64 { return made.Load() }}}, nil
	})))
	modules.Register("k6/x/onfirstusedefault", modules.OnFirstUse(modules.ModuleFunc(func(vu modules.VU) (modules.Exports, error) {
		return modules.Exports{Default: "not allowed"}, nil
	})))
}

// runKit uses the run's equipment as an extension would: the process
// environment in the init context, and in an iteration the log, the
// dialer and the inlet, the last from a goroutine of its own.
func runKit(vu modules.VU) (modules.Exports, error) {
	env := vu.InitEnv()
	seen, _ := env.Run.LookupEnv("METRONOME_RUNKIT_TEST")
	return modules.Exports{Named: map[string]any{
		"seen": seen,
		"dial": func(addr string) string {
			st := vu.State()
			conn, err := st.Run.Dialer(st.VUID).DialContext(vu.Context(), "tcp", addr)
			if err != nil {
				return err.Error()
			}
			conn.Close()
			return "connected"
		},
		"send": func(v float64) {
			st := vu.State()
			st.Run.Log.Info("sending", "value", v)
			done := make(chan struct{})
			go func() {
				st.Run.Samples.Send([]metrics.Sample{{Metric: st.Builtin.Iterations, Tags: st.Tags, Time: time.Now(), Value: v}})
				close(done)
			}()
			<-done
		},
	}}, nil
}

// offThread reserves places in the event loop from a goroutine of its
// own, as extensions built on k6-taskqueue-lib do: start() returns a
// promise that resolves once the goroutine holds its reservations; their
// callbacks add to a count later, which done() reads.
func offThread(vu modules.VU) (modules.Exports, error) {
	var count int
	return modules.Exports{Named: map[string]any{
		"start": func(n int) *sobek.Promise {
			rt := vu.Runtime()
			p, resolve, _ := rt.NewPromise()
			held := vu.RegisterCallback()
			go func() {
				var queues []func(func() error)
				for range n {
					queues = append(queues, vu.RegisterCallback())
				}
				held(func() error { return resolve(nil) })
				time.Sleep(20 * time.Millisecond)
				for _, q := range queues {
					q(func() error { count++; return nil })
				}
			}()
			return p
		},
		"done": func() int { return count },
		// spin keeps the VU goroutine busy in its event loop meanwhile:
		// n reservations in a chain, each made by the previous one's
		// callback and queued from a goroutine.
		"spin": func(n int) *sobek.Promise {
			rt := vu.Runtime()
			p, resolve, _ := rt.NewPromise()
			var hop func(left int)
			hop = func(left int) {
				q := vu.RegisterCallback()
				go q(func() error {
					if left == 0 {
						return resolve(nil)
					}
					hop(left - 1)
					return nil
				})
			}
			hop(n)
			return p
		},
	}}, nil
}

// shouting names fields FIELD_X and methods METHOD_X.
type shouting struct{}

func (shouting) FieldName(_ reflect.Type, f reflect.StructField) string {
	return "FIELD_" + strings.ToUpper(f.Name)
}

func (shouting) MethodName(_ reflect.Type, m reflect.Method) string {
	return "METHOD_" + strings.ToUpper(m.Name)
}

// ownOptions is a struct of this package, named by metronome's rule.
type ownOptions struct{ ContinueOnError bool }

// made counts the instances of k6/x/onfirstuse.
var made atomic.Int64

// A module marked OnFirstUse is instantiated in a VU when the VU first
// reads one of its exports, not when its script imports it: a default or
// namespace import alone makes no instance, and a named import makes one
// at once.
func TestModuleInstantiatedOnFirstUse(t *testing.T) {
	made.Store(0)
	r := jstest.Load(t, map[string]string{
		"script.js": `
import m from "k6/x/onfirstuse";
import * as ns from "k6/x/onfirstuse";
export default function () {
	if (__ITER === 1) console.log("made", m.made(), Object.keys(ns).join(","));
}`,
	}, nil)
	probed := made.Load() // loading the script instantiates it once, to learn its names
	vu, _ := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
	}
	if n := made.Load() - probed; n != 0 {
		t.Fatalf("%d instances after an iteration that read no export, want 0", n)
	}
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
	}
	if want := fmt.Sprintf("made %d made", probed+1); !strings.Contains(r.Stderr.String(), want) {
		t.Fatalf("the first read did not make exactly one instance: %s", r.Stderr)
	}

	r = jstest.Load(t, map[string]string{
		"script.js": "import { made as count } from \"k6/x/onfirstuse\";\nexport default function () {}",
	}, nil)
	probed = made.Load()
	r.NewVU(t, 1)
	if n := made.Load() - probed; n != 1 {
		t.Fatalf("a named import made %d instances, want 1", n)
	}
}

// A Go module's export is one value however it is reached, what a script
// sets on the default-export object is read back through it (and by later
// imports), and require() of a module with a default export of its own
// gives its named exports beside it. The instance keeps each export's value
// in place of the raw export it was made of.
func TestGoModuleExportsAreMadeOnce(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
import k6, { sleep } from "k6";
import * as ns from "k6";
import ext, { where } from "k6/x/jstest";
k6.extra = 1;
k6.check = "replaced";
const viaRequire = require("k6");
const withDefault = require("k6/x/jstest");
const { check, extra } = require("./lib.js");
const again = require("k6");
export default function () {
	console.log(k6.sleep === sleep, ns.sleep === sleep, viaRequire.sleep === sleep, again === k6,
		k6.extra, check, extra, Object.keys(k6).join(","),
		withDefault.default === ext, withDefault.where === where, Object.keys(withDefault).join(","));
}`,
		"lib.js": `const k6 = require("k6"); module.exports = { check: k6.check, extra: k6.extra };`,
	}, nil)
	got := logged(iterate(t, r))
	want := "true true true true 1 replaced 1 check,fail,group,randomSeed,sleep true true asyncDouble,version,where,default,__esModule"
	if len(got) != 1 || got[0] != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// A module instantiated on first use cannot have a default export of its
// own: reading it would need the instance.
func TestModuleOnFirstUseWithDefaultFails(t *testing.T) {
	msg := scriptError(t, map[string]string{
		"script.js": "import x from \"k6/x/onfirstusedefault\";\nexport default function () {}",
	})
	if !strings.Contains(msg, "k6/x/onfirstusedefault") || !strings.Contains(msg, "cannot have a default export") {
		t.Fatalf("got %q", msg)
	}
}

// As in k6, the namespace object of a Go module holds its named exports
// only: no default key (issue 25).
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
	console.log(ext.kind, a, b, c, version, atInit, inGroup, err, Object.keys(ns).join(","), ns.default === undefined);
}`,
	}, nil)
	got := logged(iterate(t, r))
	want := "custom default 42 2 4 1.0 init ::g|default GoError: negative asyncDouble,version,where true"
	if len(got) != 1 || got[0] != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// TestFieldNamesByPackage checks that the runtime names a type's fields
// and methods by the rule registered for its package, both ways (a Go
// value seen by the script, an object the script passes to Go), and by
// its own rule for every other package.
func TestFieldNamesByPackage(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
import { point, own, read } from "k6/x/fieldrule";
export default function () {
	console.log(point.FIELD_X, point.FIELD_Y, point.x, typeof point.METHOD_STRING, own.continueOnError,
		read({ FIELD_X: 3, FIELD_Y: 4 }));
}`,
	}, nil)
	got := logged(iterate(t, r))
	want := "1 2 undefined function true 34"
	if len(got) != 1 || got[0] != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// TestRunEquipment checks what modules.Run gives a module: metronome's
// process environment, a dialer under blacklistIPs, a log at the run's
// levels and an inlet whose samples reach the run from other goroutines.
func TestRunEquipment(t *testing.T) {
	t.Setenv("METRONOME_RUNKIT_TEST", "from the process")
	r := jstest.Load(t, map[string]string{
		"script.js": `
import { seen, dial, send } from "k6/x/runkit";
export default function () {
	console.log(seen, "|", dial("127.0.0.1:9"));
	send(7);
}`,
	}, &jstest.Config{Options: &config.Options{BlacklistIPs: []string{"127.0.0.0/8"}}})
	out := iterate(t, r)
	if !strings.Contains(out, "from the process | IP (127.0.0.1) is in a blacklisted range (127.0.0.0/8)") {
		t.Errorf("console:\n%s", out)
	}
	if !strings.Contains(out, "INFO[0000] sending value=7") {
		t.Errorf("the module's log line is missing:\n%s", out)
	}
	sent := r.Sent.Samples()
	if len(sent) != 1 || sent[0].Value != 7 || sent[0].Metric != r.Builtin.Iterations {
		t.Errorf("inlet got %v, want one iterations sample of 7", sent)
	}
}

// TestRequireGoModuleWithDefaultAndNamed checks k6's answer to require()
// of a Go module that has a default export of its own and named ones: the
// named ones, the default one under "default", and __esModule.
func TestRequireGoModuleWithDefaultAndNamed(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
const m = require("k6/x/jstest");
const only = require("k6/x/fieldrule");
export default function () {
	console.log(Object.keys(m).sort().join(","), m.default.kind, m.__esModule, m.version, typeof only.read, only.default);
}`,
	}, nil)
	got := logged(iterate(t, r))
	want := "__esModule,asyncDouble,default,version,where custom default true 1.0 function undefined"
	if len(got) != 1 || got[0] != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// TestRegisterCallbackOffTheVUGoroutine checks that reservations made
// from another goroutine, while the VU goroutine runs its event loop,
// hold the iteration until their callbacks ran (and, with -race, that
// making them is safe).
func TestRegisterCallbackOffTheVUGoroutine(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
import { start, done, spin } from "k6/x/offthread";
export default async function () {
	await Promise.all([start(50), spin(2000)]);
}
export function check() { console.log(done()); }`,
	}, nil)
	vu, _ := r.NewVU(t, 1)
	for range 3 {
		if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
			t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
		}
	}
	if res := vu.Run(context.Background(), executor.Iteration{Scenario: &executor.Scenario{Name: "c", Exec: "check"}}); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
	}
	if got := logged(r.Stderr.String()); len(got) != 1 || got[0] != "150" {
		t.Fatalf("got %q, want the 150 callbacks of 3 iterations run by their end", got)
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

// The namespace of k6/http holds what k6 v2.2.0's does (issue 25): its
// OCSP_* constants and no default key, both when the importing module
// runs as a function and when sobek evaluates it (top-level await).
func TestHTTPNamespaceAsInK6(t *testing.T) {
	// k6 v2.2.0: Object.keys(ns).sort() and the constants' values.
	const wantKeys = `["CookieJar","OCSP_REASON_AA_COMPROMISE","OCSP_REASON_AFFILIATION_CHANGED","OCSP_REASON_CA_COMPROMISE",` +
		`"OCSP_REASON_CERTIFICATE_HOLD","OCSP_REASON_CESSATION_OF_OPERATION","OCSP_REASON_KEY_COMPROMISE",` +
		`"OCSP_REASON_PRIVILEGE_WITHDRAWN","OCSP_REASON_REMOVE_FROM_CRL","OCSP_REASON_SUPERSEDED","OCSP_REASON_UNSPECIFIED",` +
		`"OCSP_STATUS_GOOD","OCSP_STATUS_REVOKED","OCSP_STATUS_SERVER_FAILED","OCSP_STATUS_UNKNOWN","TLS_1_0","TLS_1_1",` +
		`"TLS_1_2","TLS_1_3","asyncRequest","batch","cookieJar","del","expectedStatuses","file","get","head","options",` +
		`"patch","post","put","request","setResponseCallback","url"]`
	const wantValues = `{"OCSP_REASON_AA_COMPROMISE":"aa_compromise","OCSP_REASON_AFFILIATION_CHANGED":"affiliation_changed",` +
		`"OCSP_REASON_CA_COMPROMISE":"ca_compromise","OCSP_REASON_CERTIFICATE_HOLD":"certificate_hold",` +
		`"OCSP_REASON_CESSATION_OF_OPERATION":"cessation_of_operation","OCSP_REASON_KEY_COMPROMISE":"key_compromise",` +
		`"OCSP_REASON_PRIVILEGE_WITHDRAWN":"privilege_withdrawn","OCSP_REASON_REMOVE_FROM_CRL":"remove_from_crl",` +
		`"OCSP_REASON_SUPERSEDED":"superseded","OCSP_REASON_UNSPECIFIED":"unspecified","OCSP_STATUS_GOOD":"good",` +
		`"OCSP_STATUS_REVOKED":"revoked","OCSP_STATUS_SERVER_FAILED":"server_failed","OCSP_STATUS_UNKNOWN":"unknown",` +
		`"TLS_1_0":"tls1.0","TLS_1_1":"tls1.1","TLS_1_2":"tls1.2","TLS_1_3":"tls1.3"}`
	for _, tc := range []struct{ name, prefix string }{{"function", ""}, {"module", "await null;\n"}} {
		t.Run(tc.name, func(t *testing.T) {
			r := jstest.Load(t, map[string]string{"script.js": tc.prefix + `import * as ns from "k6/http";
import http from "k6/http";
export default function () {
	const keys = Object.keys(ns).sort();
	const values = {};
	for (const k of keys) if (typeof ns[k] === "string") values[k] = ns[k];
	console.log(JSON.stringify(keys));
	console.log(JSON.stringify(values));
	console.log(typeof ns.default, "default" in ns, typeof http.get, Object.keys(http).length);
}`}, nil)
			got := logged(iterate(t, r))
			want := []string{wantKeys, wantValues, "undefined false function 34"}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("got\n%s\nwant (k6 v2.2.0)\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
