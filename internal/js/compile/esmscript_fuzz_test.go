package compile

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/grafana/sobek"
	"github.com/grafana/sobek/parser"
)

// moduleSeeds are ES modules for FuzzRewriteModule: shapes the rewriter
// takes, shapes it must refuse, and odd corners of the syntax.
var moduleSeeds = []string{
	"export default function () {}",
	"export const options = { vus: 1 };\nexport default function () {}",
	"export let options = { vus: 1 };\nlet other = 1; other++;\nexport default function () {}",
	"export const options = {};\noptions.vus = 2;\nexport default function () {}",
	"export default async function named() {}",
	"export default class Named {}",
	"export /* a comment */ default { a: 1 };",
	"export default (x) => x",
	"export default 1 + 2;",
	"const a = 1, b = 'two'; export { a, b as c, a as default };",
	"export function f() { return 1 } export class C {} export var v = f();",
	"// héllo — ü\nconst s = \"日本語\";\nexport const ü = s;",
	"export const x = (() => { throw new TypeError('boom') })();",
	"export const y = z; const z = 1;",
	"export let n = 0;\nexport function inc() { n++; }",
	"export let n = 0;\n[n] = [1];",
	"const a = typeof arguments; export default a;",
	"export let n = 0;\neval(\"n = 1\");",
	"const __d = 1; export default __d;",
	"export const { a } = { a: 1 };",
	"await Promise.resolve(); export default 1;",
	"const u = import.meta.url; export { u };",
	"export * from \"./a.js\";",
	"export * as ns from \"./a.js\";",
	"export { a, a as b } from \"./a.js\";",
	"import { sleep } from \"k6\"; export default function () { sleep(1); }",
	"import lib, { twice } from \"./lib.js\"; import * as ns from \"./lib.js\"; export default function () {}",
	"import \"./effect.js\"; export const t = typeof this;",
	"export const s = `a${1 + 1}b`; export const r = /x\\/y/g.source;",
	"label: for (;;) { break label; } export const done = true;",
	"export default function* gen() { yield 1; }",
	"export var a = 1; var a; export { a as \"string name\" };",
	"export const big = 10n ** 20n;",
	"export const o = { get x() { return 1 }, ['y' + 1]: 2 };",
	"//# sourceMappingURL=data:application/json;base64,e30=",
	"export default 1;\n//# sourceMappingURL=data:application/json;base64,eyJ2ZXJzaW9uIjozLCJtYXBwaW5ncyI6IkFBQUEifQ==",
}

// FuzzRewriteModule feeds module sources to the rewriter that runs ES
// modules as functions (esmscript.go). It must not panic; what it
// produces must compile with sobek (rewriteModule compiles it); and for a
// module without imports, running the function must give the exports and
// the exception that sobek's own module evaluation gives.
//
//	go test -fuzz=FuzzRewriteModule -fuzztime=5m ./internal/js/compile
func FuzzRewriteModule(f *testing.F) {
	for _, s := range moduleSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		const key = "file:///fuzz/m.js"
		prog, err := parser.ParseFile(nil, key, src, 0, parser.IsModule)
		if err != nil {
			return
		}
		m := rewriteModule(key, prog, src)
		if m == nil {
			return
		}
		if m.prog == nil {
			t.Fatal("the rewriter returned a module without a program")
		}
		if len(m.imports) > 0 {
			return
		}
		gotExports, gotErr, ok := runRewritten(m)
		if !ok {
			return
		}
		wantExports, wantErr, ok := runModule(t, key, src)
		if !ok {
			return
		}
		if gotErr != wantErr {
			t.Fatalf("as a function: exception %q; as a module: %q", gotErr, wantErr)
		}
		if gotErr != "" {
			return
		}
		if len(gotExports) != len(wantExports) {
			t.Fatalf("as a function: exports %v; as a module: %v", gotExports, wantExports)
		}
		for name, want := range wantExports {
			got, found := gotExports[name]
			if found && got == "undefined" && want == "null" {
				// sobek's module namespace reads an exported var that was
				// never assigned as null (the module itself sees
				// undefined, as the standard says); the function is right.
				continue
			}
			if !found || got != want {
				t.Fatalf("export %q: as a function %q, as a module %q", name, got, want)
			}
		}
	})
}

// runTimeout bounds a fuzzed module's run: a loop that never ends is
// interrupted and the input skipped.
const runTimeout = 200 * time.Millisecond

// describe is what the comparison looks at in an exported value: a
// primitive's type and value, or an object's type.
func describe(rt *sobek.Runtime, v sobek.Value) string {
	if v == nil {
		return "<missing>"
	}
	if o, ok := v.(*sobek.Object); ok {
		if _, fn := sobek.AssertFunction(o); fn {
			return "function"
		}
		return "object"
	}
	if sobek.IsUndefined(v) || sobek.IsNull(v) {
		return v.String()
	}
	return v.ExportType().String() + ":" + v.String()
}

// thrown describes an exception: its string form, or "" for none. It
// reports false when the run was interrupted.
func thrown(err error) (string, bool) {
	if err == nil {
		return "", true
	}
	var ie *sobek.InterruptedError
	if errors.As(err, &ie) {
		return "", false
	}
	var ex *sobek.Exception
	if errors.As(err, &ex) {
		return firstLine(ex.Value().String()), true
	}
	return firstLine(err.Error()), true
}

// firstLine drops the stack trace sobek may append to an error's text.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// runRewritten calls the rewritten module in a fresh runtime.
func runRewritten(m *scriptModule) (map[string]string, string, bool) {
	rt := sobek.New()
	timer := time.AfterFunc(runTimeout, func() { rt.Interrupt("timeout") })
	defer timer.Stop()
	wrapper, err := rt.RunProgram(m.prog)
	if err != nil {
		msg, ok := thrown(err)
		return nil, msg, ok
	}
	call, isFn := sobek.AssertFunction(wrapper)
	if !isFn {
		return nil, "not a function", true
	}
	ret, err := call(sobek.Undefined(), sobek.Undefined())
	if err != nil {
		msg, ok := thrown(err)
		return nil, msg, ok
	}
	obj, isObj := ret.(*sobek.Object)
	if !isObj {
		return nil, "no exports object", true
	}
	out := map[string]string{}
	for _, name := range m.names {
		out[name] = describe(rt, obj.Get(name))
	}
	return out, "", true
}

// runModule evaluates src as an ES module with sobek.
func runModule(t *testing.T, key, src string) (map[string]string, string, bool) {
	noImports := func(any, string) (sobek.ModuleRecord, error) { return nil, errors.New("no imports here") }
	rec, err := sobek.ParseModule(key, src, noImports)
	if err != nil {
		t.Fatalf("sobek cannot parse as a module what it parsed before: %v", err)
	}
	if err := rec.Link(); err != nil {
		return nil, "", false
	}
	rt := sobek.New()
	timer := time.AfterFunc(runTimeout, func() { rt.Interrupt("timeout") })
	defer timer.Stop()
	p := rt.CyclicModuleRecordEvaluate(rec, noImports)
	switch p.State() {
	case sobek.PromiseStateRejected:
		r := p.Result()
		if o, ok := r.(*sobek.Object); ok {
			if ie, isIE := o.Export().(*sobek.InterruptedError); isIE && ie != nil {
				return nil, "", false
			}
		}
		return nil, firstLine(r.String()), true
	case sobek.PromiseStatePending:
		return nil, "", false
	}
	ns := rt.NamespaceObjectFor(rec)
	out := map[string]string{}
	for _, name := range ns.Keys() {
		out[name] = describe(rt, ns.Get(name))
	}
	return out, "", true
}
