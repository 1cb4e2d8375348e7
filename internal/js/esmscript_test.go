package js_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/js/jstest"
)

// The loader runs most ES modules as functions (esmscript.go). These tests
// check that such modules behave as ES modules do.

func TestModuleRunAsFunctionKeepsModuleSemantics(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
import { state } from "./lib/state.js";
import fn from "./lib/fn.js";
import Cls from "./lib/cls.js";
import arrow from "./lib/arrow.js";
import * as k6 from "k6";
import { k6again } from "./lib/k6again.js";
// A namespace import of CommonJS holds module.exports' properties, as
// in k6 (no default key).
import * as cjs from "./lib/cjs.js";
const viaRequire = require("./lib/state.js");
const topThis = this;
let strict = "sloppy";
try { undeclaredName = 1; } catch (e) { strict = e.name; }
export default async function () {
	const viaImport = await import("./lib/state.js");
	console.log(topThis === undefined, strict, fn.name, Cls.name, arrow.name,
		state.runs, viaRequire.state === state, viaImport.state === state,
		typeof k6.sleep, typeof k6.default, k6 === k6again, cjs.n, cjs.default);
}`,
		"lib/state.js": `export const state = { runs: 0 };
state.runs++;`,
		"lib/fn.js":      "export default function () {}\n[1].forEach(() => {});",
		"lib/cls.js":     "export default class {}\n(() => {})();",
		"lib/arrow.js":   `export default () => 1`,
		"lib/k6again.js": `import * as k6 from "k6"; export { k6 as k6again };`,
		"lib/cjs.js":     `module.exports = { n: 7 };`,
	}, nil)
	want := "true ReferenceError default default default 1 true true function undefined true 7 undefined"
	if got := logged(iterate(t, r)); len(got) != 1 || got[0] != want {
		t.Fatalf("got %q, want %q; stderr %s", got, want, r.Stderr)
	}
}

func TestModuleThatDoesNotQualifyKeepsLiveBindings(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
import { n, inc } from "./counter.js";
export default function () { inc(); inc(); console.log(n); }`,
		"counter.js": `export let n = 0; export function inc() { n++; }`,
	}, nil)
	if got := logged(iterate(t, r)); len(got) != 1 || got[0] != "2" {
		t.Fatalf("got %q; stderr %s", got, r.Stderr)
	}
}

// TestErrorOnFirstLineOfModuleRunAsFunction checks that the wrapper's head,
// which shares the first line, does not move the reported column: the
// same line in a module sobek evaluates (import.meta keeps it there) must
// report the same place.
func TestErrorOnFirstLineOfModuleRunAsFunction(t *testing.T) {
	const line1 = `import { sleep } from "k6"; export default function () { null.x; }`
	place := regexp.MustCompile(`script\.js:\d+:\d+`)
	var got []string
	for _, src := range []string{line1, line1 + "\nfunction unused() { return import.meta.url; }"} {
		r := jstest.Load(t, map[string]string{"script.js": src}, nil)
		vu, _ := r.NewVU(t, 1)
		jstest.Iterate(vu)
		p := place.FindString(r.Stderr.String())
		if p == "" {
			t.Fatalf("no position in %q", r.Stderr)
		}
		got = append(got, p)
	}
	if got[0] != got[1] || got[0][:len("script.js:1:")] != "script.js:1:" {
		t.Fatalf("run as a function: %s, as a module: %s", got[0], got[1])
	}
}

func TestReExportsOfModuleRunAsFunction(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
import { b, ns, default as d, sleep } from "./lib.js";
export default function () { console.log(b, ns.a, ns.default(), d(), typeof sleep); }`,
		"lib.js": `export { a as b, default } from "./a.js";
export * as ns from "./a.js";
export { sleep } from "k6";`,
		"a.js": `export const a = 1; export default function () { return "d"; }`,
	}, nil)
	if got := logged(iterate(t, r)); len(got) != 1 || got[0] != "1 1 d d function" {
		t.Fatalf("got %q; stderr %s", got, r.Stderr)
	}
}

func TestModuleRunAsFunctionWithNonASCIISource(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": "// héllo wörld — ünïcode\nconst s = \"日本語\";\nimport { sleep } from \"k6\";\nexport const ü = s + typeof sleep;\n" +
			"export default function () { console.log(ü); }\n",
	}, nil)
	if got := logged(iterate(t, r)); len(got) != 1 || got[0] != "日本語function" {
		t.Fatalf("got %q; stderr %s", got, r.Stderr)
	}
}

// TestModulesRunBothWaysAgree runs modules once as functions and once
// through sobek's module records (a never-called use of import.meta keeps
// them there) and compares what an iteration logs.
func TestModulesRunBothWaysAgree(t *testing.T) {
	const toSobek = "\nfunction keepAsModule() { return import.meta; }\n"
	cases := map[string]map[string]string{
		"default export forms": {
			"script.js": `import a from "./a.js"; import b from "./b.js"; import c from "./c.js";
import d from "./d.js"; import e from "./e.js"; import f from "./f.js";
export default function () { console.log(JSON.stringify(a), b, c.name, c(), d.name, typeof e, f.name); }`,
			"a.js": `export default { x: [1, 2], "y": "z" }`,
			"b.js": "export /* why */ default 6 * 7;",
			"c.js": "export default async function named() { return 1; }",
			"d.js": "export default class Named { }\n[1, 2].map(String);",
			"e.js": "export default function* () { yield 1; }",
			"f.js": "export default (x) => x",
		},
		"export lists and aliases": {
			"script.js": `import { one, two as deux, three } from "./lib.js";
import * as all from "./lib.js";
export default function () { console.log(one, deux, three(), Object.keys(all).join()); }`,
			"lib.js": "const one = 1, two = 2;\nfunction three() { return one + two; }\nexport { one, two, three as three };\nexport const four = `import ${one} from`;",
		},
		"namespace objects": {
			"script.js": `import * as a from "./lib.js"; import { b } from "./other.js"; const r = require("./lib.js");
export default function () { console.log(a === b, a === r, Object.getPrototypeOf(a) === null, Object.keys(a).join(), a.y, r.x); }`,
			"lib.js":   "export const y = 2, x = 1;",
			"other.js": `import * as b from "./lib.js"; export { b };`,
		},
		"syntax that looks like modules": {
			"script.js": `const re = /export default/g;
const s = "import x from 'y'";
const tpl = ` + "`export { ${s} }`" + `;
label: for (const i of [1]) { break label; }
export default function () { console.log(re.source, s, tpl, typeof label); }`,
		},
		"classes generators and async": {
			"script.js": `export class Counter { #n = 0; inc() { return ++this.#n; } static of() { return new Counter(); } }
export function* gen() { yield* [1, 2]; }
export const later = async () => { await null; return "done"; };
export default async function () {
	const c = Counter.of(); c.inc();
	console.log(c.inc(), [...gen()].join(), await later(), Counter.name, gen.name, later.name);
}`,
		},
		"side-effect imports run once in order": {
			"script.js": `import "./a.js"; import "./b.js"; import "./a.js";
export default function () { console.log(globalThis.order.join()); }`,
			"a.js": `globalThis.order = (globalThis.order || []).concat("a");`,
			"b.js": `import "./a.js"; globalThis.order.push("b");`,
		},
		"errors keep their place": {
			"script.js": `import { boom } from "./lib.js";
export default function () {
	try { boom(); } catch (e) { console.log(e.message, e.stack.split("\n")[1].replace(/\(.*\//, "(")); }
}`,
			"lib.js": "export function boom() {\n  throw new Error(\"boom\");\n}",
		},
	}
	for name, files := range cases {
		t.Run(name, func(t *testing.T) {
			asModules := map[string]string{}
			for f, src := range files {
				asModules[f] = src + toSobek
			}
			var out [2][]string
			for i, fs := range []map[string]string{files, asModules} {
				r := jstest.Load(t, fs, nil)
				out[i] = logged(iterate(t, r))
			}
			if len(out[0]) == 0 || strings.Join(out[0], "\n") != strings.Join(out[1], "\n") {
				t.Fatalf("as functions: %q\nas modules:   %q", out[0], out[1])
			}
		})
	}
}
