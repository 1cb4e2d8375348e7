package js_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/js/jstest"

	_ "github.com/metronome-load/metronome/internal/js/modules/data"
	_ "github.com/metronome-load/metronome/internal/js/modules/encoding"
	_ "github.com/metronome-load/metronome/internal/js/modules/execution"
	_ "github.com/metronome-load/metronome/js/modules/http"
	_ "github.com/metronome-load/metronome/js/modules/k6"
	_ "github.com/metronome-load/metronome/js/modules/metrics"
)

// result runs one iteration that stores its answer in globalThis.out and
// returns the Stderr lines the script logged with console.log.
func iterate(t *testing.T, r *jstest.Runner) string {
	t.Helper()
	vu, _ := r.NewVU(t, 1)
	res := jstest.Iterate(vu)
	if res.Outcome != executor.Completed {
		t.Fatalf("iteration outcome %v; stderr:\n%s", res.Outcome, r.Stderr)
	}
	return r.Stderr.String()
}

// logged extracts the messages of console lines.
func logged(out string) []string {
	var msgs []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		_, msg, _ := strings.Cut(l, "] ")
		msg = strings.TrimSuffix(msg, " source=console")
		msgs = append(msgs, msg)
	}
	return msgs
}

func TestESMImportsAcrossFiles(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
import def, { twice, name as n } from "./lib/math.js";
import * as ns from "./lib/math.js";
import again from "./lib/../lib/math.js";
export default function () {
	console.log(def(2), twice(3), n, ns.twice(5), ns.default(1), Object.keys(ns).join(","), again === def);
}`,
		"lib/math.js": `
import { base } from "./base.js";
export const name = "math";
export function twice(x) { return x * base; }
export default function square(x) { return x * x; }`,
		"lib/base.js": `export const base = 2;`,
	}, nil)
	got := logged(iterate(t, r))
	want := []string{"4 6 math 10 1 default,name,twice true"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestRequireCommonJSAndBuiltins(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
const lib = require("./lib.js");
const again = require("./lib.js");
const k6 = require("k6");
const esm = require("./esm.js");
import cjsDefault, { greet } from "./lib.js";
export default function () {
	console.log(lib.greet("a"), lib.count, lib === again, typeof k6.check, esm.value, cjsDefault.count, greet("b"));
}`,
		"lib.js": `
let count = 0;
count++;
exports.greet = (who) => "hello " + who;
module.exports.count = count;`,
		"esm.js": `export const value = 42;`,
	}, nil)
	got := logged(iterate(t, r))
	if len(got) != 1 || got[0] != "hello a 1 true function 42 1 hello b" {
		t.Fatalf("got %q", got)
	}
}

func TestCommonJSMainScript(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
module.exports.options = { iterations: 3 };
module.exports.default = function () { console.log("cjs main"); };`,
	}, nil)
	if string(r.Script.Options()) != `{"iterations":3}` {
		t.Fatalf("options %s", r.Script.Options())
	}
	if !r.Script.Exports("default") || r.Script.Exports("options") || r.Script.Exports("nope") {
		t.Fatal("Exports is wrong for a CommonJS script")
	}
	if got := logged(iterate(t, r)); len(got) != 1 || got[0] != "cjs main" {
		t.Fatalf("got %q", got)
	}
}

func TestOptionsAndExports(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
export const options = { vus: 10, duration: "30s", thresholds: { http_req_duration: ["p(95)<200"] } };
export function setup() {}
export function apiFlow() {}
export const notAFunction = 1;
export default function () {}`,
	}, nil)
	want := `{"vus":10,"duration":"30s","thresholds":{"http_req_duration":["p(95)<200"]}}`
	if string(r.Script.Options()) != want {
		t.Fatalf("options %s, want %s", r.Script.Options(), want)
	}
	for name, want := range map[string]bool{"default": true, "setup": true, "apiFlow": true, "notAFunction": false, "teardown": false} {
		if got := r.Script.Exports(name); got != want {
			t.Errorf("Exports(%q) = %v, want %v", name, got, want)
		}
	}

	r = jstest.Load(t, map[string]string{"script.js": `export default function () {}`}, nil)
	if r.Script.Options() != nil {
		t.Fatalf("a script without options has options %s", r.Script.Options())
	}
}

func TestTypeScript(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.ts": `import { helper } from "./helper.ts";

interface Point {
	x: number;
	y: number;
}

enum Color { Red, Green }

export const options = { iterations: 1 };

function explode(p: Point): number {
	throw new Error("boom at " + p.x);
}

export default function (): void {
	console.log(helper(2), Color.Green);
	explode({ x: 1, y: 2 });
}`,
		"helper.ts": `export const helper = (n: number): number => n * 21;`,
	}, &jstest.Config{Main: "script.ts"})
	vu, _ := r.NewVU(t, 1)
	res := jstest.Iterate(vu)
	if res.Outcome != executor.Failed {
		t.Fatalf("outcome %v, want Failed", res.Outcome)
	}
	out := r.Stderr.String()
	if !strings.Contains(out, "42 1") {
		t.Fatalf("the TypeScript code did not run: %s", out)
	}
	// The throw is on line 13 of script.ts; "new Error" starts in column 8.
	if !regexp.MustCompile(`Error: boom at 1\n\tat explode \(file://\S+/script\.ts:13:8\(\d+\)\)\n`).MatchString(out) {
		t.Fatalf("the error does not name the .ts line: %s", out)
	}
}

func TestSyntaxSobekLacksIsLowered(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
async function* numbers() { yield 1; yield 2; yield 3; }

export default async function () {
	let sum = 0;
	for await (const n of numbers()) { sum += n; }
	console.log("sum", sum);
	null.boom;
}`,
	}, nil)
	vu, _ := r.NewVU(t, 1)
	res := jstest.Iterate(vu)
	out := r.Stderr.String()
	if res.Outcome != executor.Failed || !strings.Contains(out, "sum 6") {
		t.Fatalf("outcome %v; stderr %s", res.Outcome, out)
	}
	// The lowered code keeps the original positions through its source map.
	if !strings.Contains(out, "script.js:8:") {
		t.Fatalf("the error does not name line 8: %s", out)
	}
}

func scriptError(t *testing.T, files map[string]string) string {
	t.Helper()
	_, err := jstest.TryLoad(t, files, nil)
	if err == nil {
		t.Fatal("loading succeeded, want an error")
	}
	if code := exitcode.Of(err); code != exitcode.ScriptException {
		t.Fatalf("exit code %d, want %d (%v)", code, exitcode.ScriptException, err)
	}
	msg := err.Error()
	if strings.Contains(msg, "goroutine") || strings.Contains(msg, ".go:") || strings.Contains(msg, "\n") {
		t.Fatalf("the error is not one clean line: %q", msg)
	}
	return msg
}

// TestLoadErrors checks the messages of mistakes a VU finds while it
// evaluates the init context (an exception, a missing export, require()
// or open() of a missing file) and that a mistake the compile layer finds
// reaches the user as the same one clean line with exit code 107; the
// compile layer's own findings are tested in internal/js/compile.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"syntax error", map[string]string{
			"script.js": "export default function () {\n  let x = ;\n}",
		}, "script.js:2:11: SyntaxError:"},
		{"exception in the init context", map[string]string{
			"script.js": "const a = 1;\n\nfoo.bar();\nexport default function () {}",
		}, "script.js:3:1: ReferenceError: foo is not defined"},
		{"exception in an imported module's init", map[string]string{
			"script.js": "import \"./lib.js\";\nexport default function () {}",
			"lib.js":    "export const a = 1;\nthrow new Error(\"lib broke\");\n",
		}, "lib.js:2:7: Error: lib broke"},
		{"missing named export", map[string]string{
			"script.js": "import { nope } from \"./lib.js\";\nexport default function () {}",
			"lib.js":    "export const a = 1;\n",
		}, `script.js:1:`},
		{"missing re-exported name", map[string]string{
			"script.js": "export { nope } from \"./lib.js\";\nexport default function () {}",
			"lib.js":    "export const a = 1;\n",
		}, `does not provide an export named "nope"`},
		{"missing export of a Go module", map[string]string{
			"script.js": "import { nope } from \"k6\";\nexport default function () {}",
		}, `does not provide an export named "nope"`},
		{"require of a missing file", map[string]string{
			"script.js": "\nconst x = require(\"./gone.js\");\nexport default function () {}",
		}, "script.js:2:"},
		{"open of a missing file", map[string]string{
			"script.js": "const data = open(\"./data.txt\");\nexport default function () {}",
		}, "script.js:1:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := scriptError(t, tc.files)
			t.Log(msg)
			if !strings.Contains(msg, tc.want) {
				t.Fatalf("error %q does not contain %q", msg, tc.want)
			}
		})
	}
}

func TestMissingScript(t *testing.T) {
	_, err := jstest.TryLoad(t, map[string]string{"other.js": ""}, nil)
	if err == nil || exitcode.Of(err) != exitcode.Generic || !strings.Contains(err.Error(), "script.js") {
		t.Fatalf("got %v", err)
	}
}

func TestRemoteModule(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/lib/index.js":
			_, _ = w.Write([]byte(`import { part } from "./part.js"; export const remote = "remote " + part;`))
		case "/lib/part.js":
			_, _ = w.Write([]byte(`export const part = "part";`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	r := jstest.Load(t, map[string]string{
		"script.js": `import { remote } from "` + srv.URL + `/lib/index.js";
export default function () { console.log(remote); }`,
	}, &jstest.Config{ModuleClient: srv.Client()})
	if got := logged(iterate(t, r)); len(got) != 1 || got[0] != "remote part" {
		t.Fatalf("got %q", got)
	}
}

// A remote module cannot read local files through require() either: an
// absolute path is fetched from the module's own origin, as k6 v2.2.0 does
// (the rules for imports are tested in internal/js/compile).
func TestRemoteModuleStaysRemote(t *testing.T) {
	local := filepath.Join(t.TempDir(), "local.json")
	if err := os.WriteFile(local, []byte(`{"secret": "LOCAL"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var fetched []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched = append(fetched, r.URL.Path)
		if r.URL.Path != "/www/require.js" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`module.exports = require("` + filepath.ToSlash(local) + `");`))
	}))
	defer srv.Close()
	_, err := jstest.TryLoad(t, map[string]string{
		"script.js": `import m from "` + srv.URL + `/www/require.js"; export default function () { console.log(JSON.stringify(m)); }`,
	}, &jstest.Config{ModuleClient: srv.Client()})
	want := "cannot fetch " + srv.URL + filepath.ToSlash(local) + ": 404 Not Found"
	if err == nil || !strings.Contains(err.Error(), want) || exitcode.Of(err) != exitcode.ScriptException {
		t.Errorf("got %v (exit %d), want %q and exit %d", err, exitcode.Of(err), want, exitcode.ScriptException)
	}
	if !slices.Contains(fetched, filepath.ToSlash(local)) {
		t.Errorf("the absolute path was not asked of the module's origin; it served %q", fetched)
	}
}

func TestOpen(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
import { readData } from "./lib/reader.js";
const text = open("./data.txt");
const bin = open("data.bin", "b");
const nested = readData();
export default function () {
	const bytes = new Uint8Array(bin);
	console.log(text.trim(), bin instanceof ArrayBuffer, bytes.length, bytes[0], bytes[3], nested.trim());
}`,
		"data.txt":        "hello file\n",
		"data.bin":        "\x00\x01\x02\xff",
		"lib/reader.js":   `const d = open("./nested.txt"); export function readData() { return d; }`,
		"lib/nested.txt":  "nested relative to lib\n",
		"lib/unused.json": "{}",
	}, nil)
	got := logged(iterate(t, r))
	want := "hello file true 4 0 255 nested relative to lib"
	if len(got) != 1 || got[0] != want {
		t.Fatalf("got %q, want %q", got, want)
	}

	r = jstest.Load(t, map[string]string{
		"script.js": `export default function () { open("./script.js"); }`,
	}, nil)
	vu, _ := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Failed ||
		!strings.Contains(r.Stderr.String(), "can only be called in the init context") {
		t.Fatalf("open() outside init: outcome %v, stderr %s", res.Outcome, r.Stderr)
	}
}

func TestOpenAbsolutePath(t *testing.T) {
	other := t.TempDir()
	p := filepath.Join(other, "abs.txt")
	if err := os.WriteFile(p, []byte("absolute"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := jstest.Load(t, map[string]string{
		"script.js": `const t = open(` + "`" + p + "`" + `); export default function () { console.log(t); }`,
	}, nil)
	if got := logged(iterate(t, r)); len(got) != 1 || got[0] != "absolute" {
		t.Fatalf("got %q", got)
	}
}

func TestDynamicImport(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
const early = await import("./lib/a.js");
export default async function () {
	const b = await import("./lib/b.js");
	const k6 = await import("k6");
	let failed = "";
	try { await import("./nope.js"); } catch (e) { failed = String(e).includes("nope.js") ? "missing" : String(e); }
	console.log(early.a, b.b, b.fromA, typeof k6.check, failed);
}`,
		"lib/a.js": `export const a = "A";`,
		"lib/b.js": `export const b = "B"; export const fromA = (await import("./a.js")).a;`,
	}, nil)
	if got := logged(iterate(t, r)); len(got) != 1 || got[0] != "A B A function missing" {
		t.Fatalf("got %q; stderr %s", got, r.Stderr)
	}
}

func TestRequireJSONAndTypeScriptCommonJS(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
const cfg = require("./config.json");
import other from "./other.json";
const helper = require("./helper.ts");
export default function () { console.log(cfg.name, cfg.list.length, other.x, helper.twice(4)); }`,
		"config.json": `{"name": "cfg", "list": [1, 2, 3]}`,
		"other.json":  `{"x": true}`,
		"helper.ts":   "const twice = (n: number): number => n * 2;\nmodule.exports = { twice };\n",
	}, nil)
	if got := logged(iterate(t, r)); len(got) != 1 || got[0] != "cfg 3 true 8" {
		t.Fatalf("got %q; stderr %s", got, r.Stderr)
	}
}

func TestTopLevelAwaitThatNeverSettles(t *testing.T) {
	msg := scriptError(t, map[string]string{
		"script.js": "await new Promise(() => {});\nexport default function () {}",
	})
	if !strings.Contains(msg, "top-level await never finished") {
		t.Fatalf("got %q", msg)
	}
}

func TestRequireAndImportModulesWithImports(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
const viaRequire = require("./lib/req.js");
export default async function () {
	const viaImport = await import("./lib/dyn.js");
	console.log(viaRequire.value, viaImport.value);
}`,
		"lib/req.js":    `import { base } from "./base.js"; import { check } from "k6"; export const value = base + (typeof check);`,
		"lib/dyn.js":    `import { base } from "./base.js"; import cjs from "./cjs.js"; export const value = base + cjs.n;`,
		"lib/base.js":   `export const base = "base:";`,
		"lib/cjs.js":    `module.exports = { n: 7 };`,
		"lib/unused.js": `export const nothing = 0;`,
	}, nil)
	if got := logged(iterate(t, r)); len(got) != 1 || got[0] != "base:function base:7" {
		t.Fatalf("got %q; stderr %s", got, r.Stderr)
	}
}

// The default import of a CommonJS module marked __esModule is its
// exports.default, as in k6 (test/compat/corpus/123), both when the importing
// module runs as a plain function and when sobek evaluates it (top-level
// await keeps it a real ES module); a namespace import's default agrees.
func TestCommonJSESModuleDefault(t *testing.T) {
	bundle := `Object.defineProperty(exports, "__esModule", { value: true });
exports.default = function bundled() { return "bundled"; };
exports.helper = function () { return "helper"; };`
	plain := `module.exports = { name: "plain" };`
	for _, tc := range []struct{ name, prefix string }{{"function", ""}, {"module", "await null;\n"}} {
		t.Run(tc.name, func(t *testing.T) {
			r := jstest.Load(t, map[string]string{
				"bundle.js": bundle,
				"plain.js":  plain,
				"script.js": tc.prefix + `import lib, { helper } from "./bundle.js";
import * as ns from "./bundle.js";
import p from "./plain.js";
export default function () { console.log(typeof lib === "function" ? lib() : "exports", helper(), ns.default === lib, p.name); }`,
			}, nil)
			if got := logged(iterate(t, r)); len(got) != 1 || got[0] != "bundled helper true plain" {
				t.Fatalf("got %q, want [bundled helper true plain]", got)
			}
		})
	}
}

func TestCapabilities(t *testing.T) {
	r := jstest.Load(t, map[string]string{"script.js": `
export const options = { vus: 1 };
export function setup() { return 1; }
export function handleSummary() { return {}; }
export function api() {}
export const notAFunction = 3;
export default function () {}`}, nil)
	c := r.Script.Capabilities()
	if !c.Setup || c.Teardown || !c.HandleSummary {
		t.Errorf("setup %v teardown %v handleSummary %v, want true false true", c.Setup, c.Teardown, c.HandleSummary)
	}
	want := []string{"api", "default", "handleSummary", "setup"}
	if strings.Join(c.Functions, ",") != strings.Join(want, ",") {
		t.Errorf("functions %q, want %q", c.Functions, want)
	}
	if !c.Exports("api") || c.Exports("notAFunction") || c.Exports("options") {
		t.Errorf("Exports: api %v, notAFunction %v, options %v", c.Exports("api"), c.Exports("notAFunction"), c.Exports("options"))
	}
	if c.ConnectRun == nil || c.SetSetupData == nil {
		t.Error("the run hooks are missing")
	}
}

// A CommonJS module whose sourceMappingURL names a map that cannot be
// read runs as CommonJS, whether it is local (the map is missing or not a
// source map; internal/js/compile tests k6's warning) or remote (remote
// maps are not fetched), and a map that reads maps its positions. k6 v2.2.0 runs all three and
// prints "x=1" (issue 25; jslib.k6.io's k6-utils 1.3.0–1.6.0 has this
// shape).
func TestCommonJSWithUnreadableSourceMap(t *testing.T) {
	const lib = "exports.x = 1;\nexports.f = function () { throw new Error(\"boom\"); };\n//# sourceMappingURL=lib.js.map\n"
	const script = `import { x } from "./lib.js";
export default function () { console.log("x=" + x); }`
	for _, tc := range []struct{ name, srcMap string }{{"missing map", ""}, {"not a map", "not json"}} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"lib.js": lib, "script.js": script}
			if tc.srcMap != "" {
				files["lib.js.map"] = tc.srcMap
			}
			r := jstest.Load(t, files, nil)
			if got := logged(iterate(t, r)); got[len(got)-1] != "x=1" {
				t.Fatalf("got %q, want x=1 last", got)
			}
		})
	}
	t.Run("remote", func(t *testing.T) {
		srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/lib.js" {
				http.NotFound(w, r)
				return
			}
			_, _ = w.Write([]byte(lib))
		}))
		defer srv.Close()
		r := jstest.Load(t, map[string]string{"script.js": strings.Replace(script, "./lib.js", srv.URL+"/lib.js", 1)},
			&jstest.Config{ModuleClient: srv.Client()})
		if got := logged(iterate(t, r)); len(got) != 1 || got[0] != "x=1" {
			t.Fatalf("got %q, want [x=1]", got)
		}
	})
	t.Run("map that reads", func(t *testing.T) {
		r := jstest.Load(t, map[string]string{
			"lib.js":     lib,
			"lib.js.map": `{"version":3,"sources":["orig.js"],"names":[],"mappings":"AAAA;AACA;AAAA"}`,
			"script.js":  `import { f } from "./lib.js"; export default function () { f(); }`,
		}, nil)
		vu, _ := r.NewVU(t, 1)
		jstest.Iterate(vu)
		// k6 v2.2.0 reports the throw at orig.js:2:0.
		if !strings.Contains(r.Stderr.String(), "orig.js:2:0") {
			t.Fatalf("the error does not name the mapped position orig.js:2:0:\n%s", r.Stderr)
		}
	})
}

// A script that exports no function is refused as k6 refuses it: "no
// exported functions in script", exit code 255 (issue 25).
func TestNoExportedFunctions(t *testing.T) {
	for name, src := range map[string]string{
		"empty":                 "",
		"options only":          "export const options = { vus: 1 };",
		"options as a function": "export function options() {}",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := jstest.TryLoad(t, map[string]string{"script.js": src}, nil)
			if err == nil || exitcode.Of(err) != exitcode.Generic || !strings.Contains(err.Error(), "no exported functions in script") {
				t.Fatalf("got %v (exit code %d), want exit code 255 and k6's message", err, exitcode.Of(err))
			}
		})
	}
}

// A file that is no valid ES module but a valid CommonJS function body
// (a top-level return, as jslib.k6.io's formdata has) loads as CommonJS,
// as in k6 v2.2.0; and k6's global, the global object under the name Node
// bundles use (k6chaijs 4.3.4.2), exists.
func TestCommonJSTopLevelReturnAndGlobal(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"lib.js": "if (exports.Thing) {\n  return;\n}\nexports.Thing = function Thing() { return typeof global; };\n",
		"script.js": `import { Thing } from "./lib.js";
const required = require("./lib.js");
export default function () { console.log(Thing(), global === globalThis, typeof required.Thing); }`,
	}, nil)
	if got := logged(iterate(t, r)); len(got) != 1 || got[0] != "object true function" {
		t.Fatalf("got %q, want [object true function] as k6 prints", got)
	}
}
