package js

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/metronome-load/metronome/internal/js/compile"
	_ "github.com/metronome-load/metronome/js/modules/k6"
)

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
			"script.js": `import { sleep } from "k6"; export default function () { sleep(1); }`,
		}, map[string]bool{"script.js": true}},
		{"export let that never changes", map[string]string{
			"script.js": "export let options = { vus: 1 };\nlet other = 1; other++;" + def,
		}, map[string]bool{"script.js": true}},
		{"member assignment to an export", map[string]string{
			"script.js": "export const options = {};\noptions.vus = 2;" + def,
		}, map[string]bool{"script.js": true}},
		{"library graph", map[string]string{
			"script.js": `import lib, { twice } from "./lib.js"; import * as ns from "./lib.js";` + def,
			"lib.js":    "import { sleep } from \"k6\";\nexport function twice(x) { return 2 * x; }\nexport default class {}\n",
		}, map[string]bool{"script.js": true, "lib.js": true}},
		{"non-ASCII source", map[string]string{
			"script.js": "// héllo — ü\nconst s = \"日本語\";\nimport { sleep } from \"k6\";\nexport const ü = s;" + def,
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
			"script.js": "import { sleep } from \"k6\";\nfunction f() { sleep = null; }" + def,
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
			dir := t.TempDir()
			for name, src := range c.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s, err := Load(filepath.Join(dir, "script.js"), LoadOptions{Stderr: os.Stderr})
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range c.want {
				f := s.loader.Loaded(compile.FileURL(filepath.Join(dir, name)).String())
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
