package js_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/js/jstest"
)

// interopLibs are CommonJS and ES modules written the ways bundlers write
// them. What k6 v2.2.0 logs for interopMain (recorded 2026-12-01, the
// same files served from disk) is interopK6.
var interopLibs = map[string]string{
	// Babel/TypeScript/esbuild output of an ES module: __esModule flag
	// (non-enumerable) and exports.default.
	"lib/esmod.cjs.js": `"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.default = { kind: "the default" };
exports.named = "named value";`,
	"lib/plain.cjs.js": `module.exports = { kind: "plain module.exports", named: "plain named" };`,
	"lib/esm.js":       `export default "esm default"; export const named = "esm named";`,
	"lib/req_esm.js": `const m = require("./esm.js");
module.exports = { keys: Object.keys(m).sort().join(","), def: m.default, named: m.named };`,
	"lib/cyc_a.js": `import { b } from "./cyc_b.js"; export const a = "a"; export function fromA() { return "a sees " + b; }`,
	"lib/cyc_b.js": `import { a, fromA } from "./cyc_a.js"; export const b = "b"; export function fromB() { return "b sees " + a + " / " + fromA(); }`,
	"lib/cjs_a.js": `exports.early = "a-early"; const b = require("./cjs_b.js"); exports.late = "a-late"; exports.bSaw = b.saw;`,
	"lib/cjs_b.js": `const a = require("./cjs_a.js"); exports.saw = "early=" + a.early + " late=" + a.late;`,
}

const interopMain = `
import esmod, { named as esmodNamed } from "./lib/esmod.cjs.js";
import * as esmodNS from "./lib/esmod.cjs.js";
import plain, { named as plainNamed } from "./lib/plain.cjs.js";
import * as plainNS from "./lib/plain.cjs.js";
import reqEsm from "./lib/req_esm.js";
import cjsA from "./lib/cjs_a.js";
const required = require("./lib/esmod.cjs.js");
export default function () {
  console.log("esmod default " + JSON.stringify(esmod));
  console.log("esmod named " + esmodNamed);
  console.log("esmod ns " + Object.keys(esmodNS).sort().join(",") + " " + JSON.stringify(esmodNS.default));
  console.log("plain default " + JSON.stringify(plain));
  console.log("plain named " + plainNamed);
  console.log("plain ns " + Object.keys(plainNS).sort().join(",") + " " + plainNS.default);
  console.log("require esm " + JSON.stringify(reqEsm));
  console.log("cjs cycle " + JSON.stringify(cjsA));
  console.log("require esmod " + JSON.stringify(required) + " " + required.__esModule);
}`

var interopK6 = []string{
	`esmod default {"kind":"the default"}`,
	`esmod named named value`,
	`esmod ns default,named {"kind":"the default"}`,
	`plain default {"kind":"plain module.exports","named":"plain named"}`,
	`plain named plain named`,
	`plain ns kind,named undefined`,
	`require esm {"keys":"default,named","def":"esm default","named":"esm named"}`,
	`cjs cycle {"early":"a-early","late":"a-late","bSaw":"early=a-early late=undefined"}`,
	`require esmod {"default":{"kind":"the default"},"named":"named value"} true`,
}

func withMain(main string, libs map[string]string) map[string]string {
	files := map[string]string{"script.js": main}
	for k, v := range libs {
		files[k] = v
	}
	return files
}

// CommonJS/ES module interop as k6: a default import of a module compiled
// from ESM (__esModule) is its exports.default, of a plain one its
// module.exports; a namespace import holds module.exports' own enumerable
// properties; require() of an ES module gives its namespace; a CommonJS
// cycle sees the exports assigned so far.
func TestCommonJSInteropAsK6(t *testing.T) {
	r := jstest.Load(t, withMain(interopMain, interopLibs), nil)
	got := logged(iterate(t, r))
	if strings.Join(got, "\n") != strings.Join(interopK6, "\n") {
		t.Errorf("logged\n%s\nk6 v2.2.0 logged\n%s", strings.Join(got, "\n"), strings.Join(interopK6, "\n"))
	}
}

// The same default import through sobek's own module machinery, which the
// loader uses for a module in an import cycle, and the cycle itself.
func TestCommonJSDefaultInCycle(t *testing.T) {
	r := jstest.Load(t, withMain(`
import esmod from "./lib/esmod.cjs.js";
import plain from "./lib/plain.cjs.js";
import { fromB } from "./lib/cyc_b.js";
export default function () {
  console.log("esmod default " + JSON.stringify(esmod));
  console.log("plain default " + JSON.stringify(plain));
  console.log("esm cycle " + fromB());
}`, interopLibs), nil)
	want := []string{
		`esmod default {"kind":"the default"}`,
		`plain default {"kind":"plain module.exports","named":"plain named"}`,
		`esm cycle b sees a / a sees b`,
	}
	if got := logged(iterate(t, r)); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("logged %q, want %q (k6 v2.2.0)", got, want)
	}
}

// Remote modules over HTTPS, from a loopback TLS server: ES modules with
// relative imports, a CommonJS bundle shaped like jslib.k6.io's k6chaijs
// (imported for its default export), and a clear error naming the URL of
// a module that cannot be fetched.
func TestRemoteHTTPSModules(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/k6chaijs/index.js":
			_, _ = w.Write([]byte(`"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
function expect(v) { return { to: { equal: (w) => { if (v !== w) throw new Error(v + " != " + w); return true; } } }; }
exports.default = { expect: expect, version: "chai-like" };
exports.expect = expect;`))
		case "/lib/index.js":
			_, _ = w.Write([]byte(`import { part } from "./part.js"; export default "remote " + part;`))
		case "/lib/part.js":
			_, _ = w.Write([]byte(`export const part = "part";`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	cfg := &jstest.Config{ModuleClient: srv.Client()}
	r := jstest.Load(t, map[string]string{
		"script.js": `import chai, { expect } from "` + srv.URL + `/k6chaijs/index.js";
import remote from "` + srv.URL + `/lib/index.js";
export default function () {
  console.log(chai.version + " " + chai.expect(1).to.equal(1) + " " + (expect === chai.expect) + " " + remote);
}`,
	}, cfg)
	if got := logged(iterate(t, r)); len(got) != 1 || got[0] != "chai-like true true remote part" {
		t.Fatalf("got %q; stderr %s", got, r.Stderr)
	}

	for _, tc := range []struct{ url, says string }{
		{srv.URL + "/missing.js", "404"},
		{"https://127.0.0.1:9/lib.js", "refused"},
	} {
		_, err := jstest.TryLoad(t, map[string]string{
			"script.js": `import x from "` + tc.url + `";
export default function () {}`,
		}, cfg)
		if err == nil || exitcode.Of(err) != exitcode.ScriptException {
			t.Fatalf("importing %s: error %v, want a script error (exit code %d)", tc.url, err, exitcode.ScriptException)
		}
		msg := err.Error()
		if !strings.Contains(msg, "script.js:1") || !strings.Contains(msg, "cannot fetch "+tc.url) ||
			!strings.Contains(msg, tc.says) || strings.Count(msg, tc.url) > 2 || strings.Contains(msg, "\n") {
			t.Errorf("importing %s: error %q; want one line with the script's line, the URL and %q", tc.url, msg, tc.says)
		}
	}
}
