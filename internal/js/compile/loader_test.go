package compile_test

import (
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/internal/js/compile"
	"github.com/metronome-load/metronome/js/modules"
)

// testModule is a Go module the loader finds in the registry, as it finds
// k6's: the compile layer knows modules only by their names and exports.
const testModule = "k6/x/compiletest"

func init() {
	modules.Register(testModule, modules.ModuleFunc(func(modules.VU) (modules.Exports, error) {
		return modules.Exports{Named: map[string]any{"sleep": func() {}, "check": func() {}}}, nil
	}))
}

// host is the runtime side of the loader for tests that run no VU: it
// learns a Go module's exports by instantiating it without one, and makes
// no instances.
type host struct{}

func (host) Probe(mod modules.Module) (modules.Exports, error) { return mod.Instantiate(nil) }

func (host) Instance(*sobek.Runtime, compile.Ref) (sobek.ModuleInstance, error) {
	return nil, errors.New("the compile tests run no VU")
}

// load loads script.js from files (slash-separated name → content, in a
// folder of their own) as the runtime does: LoadMain, then linking the
// main module if it is an ES module record. The files are given to the
// loader as an archive's are (Config.Files, to which they are added), so
// nothing is read from disk.
func load(t *testing.T, files map[string]string, cfg compile.Config) (*compile.Loader, string, error) {
	t.Helper()
	dir := t.TempDir()
	cfg.Dir = dir
	cfg.Files = maps.Clone(cfg.Files)
	if cfg.Files == nil {
		cfg.Files = map[string][]byte{}
	}
	for name, src := range files {
		cfg.Files[filepath.ToSlash(filepath.Join(dir, filepath.FromSlash(name)))] = []byte(src)
	}
	l := compile.New(cfg, host{})
	main, err := l.LoadMain(compile.FileURL(filepath.Join(dir, "script.js")))
	if err == nil && main.ESM() != nil {
		if err = main.ESM().Link(); err == nil {
			main.SetLinked()
		}
	}
	return l, dir, err
}

// loadError loads files and returns the error, failing when there is none.
func loadError(t *testing.T, files map[string]string, cfg compile.Config) string {
	t.Helper()
	_, _, err := load(t, files, cfg)
	if err == nil {
		t.Fatal("loading succeeded, want an error")
	}
	return err.Error()
}

// TestWhichModulesRunAsFunctions loads module graphs and checks which ES
// modules VUs run as functions and which stay sobek module records.
func TestWhichModulesRunAsFunctions(t *testing.T) {
	const def = "\nexport default function () {}\n"
	cases := []struct {
		name  string
		files map[string]string
		want  map[string]bool // file → runs as a function
	}{
		{"plain script", map[string]string{
			"script.js": `import { sleep } from "` + testModule + `"; export default function () { sleep(1); }`,
		}, map[string]bool{"script.js": true}},
		{"export let that never changes", map[string]string{
			"script.js": "export let options = { vus: 1 };\nlet other = 1; other++;" + def,
		}, map[string]bool{"script.js": true}},
		{"member assignment to an export", map[string]string{
			"script.js": "export const options = {};\noptions.vus = 2;" + def,
		}, map[string]bool{"script.js": true}},
		{"library graph", map[string]string{
			"script.js": `import lib, { twice } from "./lib.js"; import * as ns from "./lib.js";` + def,
			"lib.js":    "import { sleep } from \"" + testModule + "\";\nexport function twice(x) { return 2 * x; }\nexport default class {}\n",
		}, map[string]bool{"script.js": true, "lib.js": true}},
		{"non-ASCII source", map[string]string{
			"script.js": "// héllo — ü\nconst s = \"日本語\";\nimport { sleep } from \"" + testModule + "\";\nexport const ü = s;" + def,
		}, map[string]bool{"script.js": true}},
		{"default export forms", map[string]string{
			"script.js": `import a from "./a.js"; import b from "./b.js"; import c from "./c.js"; import d from "./d.js";` + def,
			"a.js":      "export default async function named() {}",
			"b.js":      "export default class Named {}",
			"c.js":      "export /* a comment */ default { a: 1 };",
			"d.js":      "export default (x) => x",
		}, map[string]bool{"script.js": true, "a.js": true, "b.js": true, "c.js": true, "d.js": true}},
		{"top-level await", map[string]string{
			"script.js": "await Promise.resolve();" + def,
		}, map[string]bool{"script.js": false}},
		{"import.meta", map[string]string{
			"script.js": "const u = import.meta.url;" + def,
		}, map[string]bool{"script.js": false}},
		{"named re-export", map[string]string{
			"script.js": `import { a, b, ns } from "./lib.js";` + def,
			"lib.js":    `export { a, a as b } from "./a.js"; export * as ns from "./a.js";`,
			"a.js":      `export const a = 1;`,
		}, map[string]bool{"script.js": true, "lib.js": true, "a.js": true}},
		{"re-export of every name", map[string]string{
			"script.js": `import { a } from "./lib.js";` + def,
			"lib.js":    `export * from "./a.js";`,
			"a.js":      `export const a = 1;`,
		}, map[string]bool{"script.js": false, "lib.js": false, "a.js": true}},
		{"export changed later", map[string]string{
			"script.js": "export let n = 0;\nexport function inc() { n++; }" + def,
		}, map[string]bool{"script.js": false}},
		{"export changed by destructuring", map[string]string{
			"script.js": "export let n = 0;\n[n] = [1];" + def,
		}, map[string]bool{"script.js": false}},
		{"assignment to an import", map[string]string{
			"script.js": "import { sleep } from \"" + testModule + "\";\nfunction f() { sleep = null; }" + def,
		}, map[string]bool{"script.js": false}},
		{"arguments", map[string]string{
			"script.js": "const a = typeof arguments;" + def,
		}, map[string]bool{"script.js": false}},
		{"eval", map[string]string{
			"script.js": "export let n = 0;\neval(\"n = 1\");" + def,
		}, map[string]bool{"script.js": false}},
		{"the wrapper's name", map[string]string{
			"script.js": "const __d = 1;" + def,
		}, map[string]bool{"script.js": false}},
		{"destructured export", map[string]string{
			"script.js": "export const { a } = { a: 1 };" + def,
		}, map[string]bool{"script.js": false}},
		{"import cycle", map[string]string{
			"script.js": `import { b } from "./b.js"; export const a = 1;` + def,
			"b.js":      `import { a } from "./script.js"; export function b() { return a; }`,
		}, map[string]bool{"script.js": false, "b.js": false}},
		{"importer of a module sobek runs", map[string]string{
			"script.js": `import { a } from "./tla.js";` + def,
			"tla.js":    `export const a = await 1;`,
		}, map[string]bool{"script.js": false, "tla.js": false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, dir, err := load(t, c.files, compile.Config{})
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range c.want {
				f := l.Loaded(compile.FileURL(filepath.Join(dir, name)).String())
				if f == nil {
					t.Fatalf("%s was not loaded", name)
				}
				if got := f.RunsAsFunction(); got != want {
					t.Errorf("%s runs as a function: %v, want %v", name, got, want)
				}
			}
		})
	}
}

// TestLoadErrors checks the mistakes the loader finds before any VU runs
// and that their messages name the place. The runtime turns them into
// one line with an exit code, and finds a missing export when a VU
// evaluates the import (internal/js TestLoadErrors).
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"unknown built-in module", map[string]string{
			"script.js": "import { x } from \"k6/no-such-module\";\nexport default function () {}",
		}, `script.js:1:1: unknown module "k6/no-such-module"`},
		// A k6/x module this binary lacks: the registry's module and the
		// build line when the registry knows it, the docs when not.
		{"extension in the registry", map[string]string{
			"script.js": "\n\nimport redis from \"k6/x/redis\";\nexport default function () {}",
		}, `script.js:3:1: unknown module "k6/x/redis": this binary lacks the extension that provides it, github.com/grafana/xk6-redis;` +
			` build a binary with it by running metronome build --with github.com/grafana/xk6-redis@v0.4.2 and run the script with ./metronome,` +
			` or set K6_AUTO_EXTENSION_RESOLUTION=true to have metronome do so`},
		{"extension nobody lists", map[string]string{
			"script.js": "import x from \"k6/x/nobody-lists-this\";\nexport default function () {}",
		}, `script.js:1:1: unknown module "k6/x/nobody-lists-this": no extension built into this binary provides it, and k6's extension registry lists none that does;` +
			` if you have the Go module that registers it, build it in with metronome build --with MODULE (see "Using xk6 extensions" in metronome's docs/extensions.md)`},
		// k6 v2.2.0 explains each k6/experimental module it retired
		// (test/compat's 219-224 record every one).
		{"graduated experimental module", map[string]string{
			"script.js": "import { setTimeout } from \"k6/experimental/timers\";\nexport default function () {}",
		}, `script.js:1:1: k6/experimental/timers has been graduated, and it's now globally available as defined by standard WebAPIs. You just need to remove the import.`},
		{"removed experimental module", map[string]string{
			"script.js": "\nimport redis from \"k6/experimental/redis\";\nexport default function () {}",
		}, `script.js:2:1: k6/experimental/redis has been removed. Please migrate to the new version by changing your import to 'k6/x/redis'.`},
		{"missing file", map[string]string{
			"script.js": "\nimport { x } from \"./nope.js\";\nexport default function () {}",
		}, `script.js:2:1: cannot import "./nope.js": `},
		{"missing file names the path", map[string]string{
			"script.js": "import \"./sub/nope.js\";\nexport default function () {}",
		}, filepath.Join("sub", "nope.js") + " does not exist"},
		{"bare specifier", map[string]string{
			"script.js": "import _ from \"lodash\";\nexport default function () {}",
		}, `script.js:1:1: unknown module "lodash"`},
		{"syntax error", map[string]string{
			"script.js": "export default function () {\n  let x = ;\n}",
		}, "script.js:2:11: SyntaxError:"},
		{"syntax error in an imported file", map[string]string{
			"script.js": "import \"./lib.js\";\nexport default function () {}",
			"lib.js":    "export const a = 1;\n\nexport const b = {;\n",
		}, "lib.js:3:"},
		{"TypeScript syntax error", map[string]string{
			"script.js": "import \"./lib.ts\";\nexport default function () {}",
			"lib.ts":    "const a: number = 1;\nconst b = (;\n",
		}, "lib.ts:2:"},
		// A file that is neither a valid ES module nor a valid CommonJS
		// function body reports the ES module's error.
		{"neither ES module nor CommonJS", map[string]string{
			"script.js": "import \"./lib.js\";\nexport default function () {}",
			"lib.js":    "export const a = 1;\nreturn;\n",
		}, "lib.js:2:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if msg := loadError(t, tc.files, compile.Config{}); !strings.Contains(msg, tc.want) {
				t.Fatalf("error %q does not contain %q", msg, tc.want)
			}
		})
	}
}

// TestRemoteModules checks where modules load from: over https, relative
// to the importing module; a remote module cannot reach local files (a
// file:// URL is refused and an absolute path is fetched from the
// module's own origin); nothing loads over plain http; and a module larger
// than MaxRemoteModule is refused after that many bytes. The messages are
// k6 v2.2.0's.
func TestRemoteModules(t *testing.T) {
	local := filepath.Join(t.TempDir(), "local.json")
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`export default "plain http";`))
	}))
	defer plain.Close()
	var fetched []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched = append(fetched, r.URL.Path)
		switch r.URL.Path {
		case "/lib/index.js":
			_, _ = w.Write([]byte(`import { part } from "./part.js"; export const remote = "remote " + part;`))
		case "/lib/part.js":
			_, _ = w.Write([]byte(`export const part = "part";`))
		case "/www/file.js":
			_, _ = w.Write([]byte(`import a from "file://` + filepath.ToSlash(local) + `"; export default a;`))
		case "/www/abs.js":
			_, _ = w.Write([]byte(`import a from "` + filepath.ToSlash(local) + `"; export default a;`))
		case "/www/http.js":
			_, _ = w.Write([]byte(`export { default } from "` + plain.URL + `/plain.js";`))
		case "/big.js":
			chunk := []byte(strings.Repeat(" ", 1<<20))
			for range compile.MaxRemoteModule>>20 + 8 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	// The local file exists for the loader: what keeps it out of reach is
	// the rule, not its absence.
	cfg := compile.Config{ModuleClient: srv.Client(), Files: map[string][]byte{filepath.ToSlash(local): []byte(`{"secret": "LOCAL"}`)}}
	script := func(module string) map[string]string {
		return map[string]string{"script.js": `import m from "` + module + `"; export default function () {}`}
	}

	l, _, err := load(t, map[string]string{
		"script.js": `import { remote } from "` + srv.URL + `/lib/index.js"; export default function () {}`,
	}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/lib/index.js", "/lib/part.js"} {
		if l.Loaded(srv.URL+p) == nil {
			t.Errorf("%s was not loaded", srv.URL+p)
		}
	}

	for module, want := range map[string]string{
		srv.URL + "/missing.js":  "404",
		srv.URL + "/www/file.js": "origin (" + srv.URL + "/www) not allowed to load local file: file://" + filepath.ToSlash(local),
		srv.URL + "/www/abs.js":  "cannot fetch " + srv.URL + filepath.ToSlash(local) + ": 404 Not Found",
		srv.URL + "/www/http.js": "only supported schemes for imports are file and https, " + plain.URL + "/plain.js has `http`",
		plain.URL + "/plain.js":  "only supported schemes for imports are file and https, " + plain.URL + "/plain.js has `http`",
		srv.URL + "/big.js":      "the module is larger than 64 MiB",
	} {
		if msg := loadError(t, script(module), cfg); !strings.Contains(msg, want) {
			t.Errorf("import %s: %q, want %q", module, msg, want)
		}
	}
	if !slices.Contains(fetched, filepath.ToSlash(local)) {
		t.Errorf("the absolute path was not asked of the module's origin; it served %q", fetched)
	}
}

// A CommonJS module whose sourceMappingURL names a local map that cannot
// be read loads as CommonJS, with k6's warning (issue 25).
func TestUnreadableSourceMapWarns(t *testing.T) {
	const lib = "exports.x = 1;\n//# sourceMappingURL=lib.js.map\n"
	for _, tc := range []struct{ name, srcMap string }{{"missing map", ""}, {"not a map", "not json"}} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"lib.js": lib, "script.js": `import { x } from "./lib.js"; export default function () {}`}
			if tc.srcMap != "" {
				files["lib.js.map"] = tc.srcMap
			}
			var warned []string
			l, dir, err := load(t, files, compile.Config{Warn: func(msg string) { warned = append(warned, msg) }})
			if err != nil {
				t.Fatal(err)
			}
			key := compile.FileURL(filepath.Join(dir, "lib.js")).String()
			if f := l.Loaded(key); f == nil || f.CommonJS() == nil {
				t.Fatalf("lib.js did not load as CommonJS: %v", f)
			}
			if len(warned) != 1 || !strings.HasPrefix(warned[0], "Couldn't load source map for "+key) {
				t.Errorf("warnings %q, want one about lib.js's source map", warned)
			}
		})
	}
}
