package js

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/grafana/sobek"
)

// A VU keeps the exports of a module run as a function as values, and
// lets go of the object the module's function returned (about 490 bytes
// with its property map, in every idle VU), unless a script asks for that
// object: then one object serves every namespace import of the module.
func TestVUKeepsExportValuesNotTheirObject(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"script.js": `import { sleep } from "k6";
import { named } from "./named.js";
import * as ns from "./ns.js";
import { again } from "./again.js";
export const options = {};
export default function () { sleep(0); named(); return ns === again; }`,
		"named.js": `export function named() {}`,
		"ns.js":    `export const x = 1;`,
		"again.js": `import * as again from "./ns.js"; export { again };`,
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Load(filepath.Join(dir, "script.js"), LoadOptions{Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.newVU(context.Background(), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.exports.obj != nil {
		t.Error("the VU keeps the object of its main module's exports")
	}
	fn, ok := sobek.AssertFunction(v.exports.Get("default"))
	if !ok || v.exports.Get("options") == nil || v.exports.Get("toString") != nil {
		t.Fatalf("exports: default %v, options %v, toString %v", v.exports.Get("default"), v.exports.Get("options"), v.exports.Get("toString"))
	}
	same, err := fn(sobek.Undefined())
	if err != nil || !same.ToBoolean() {
		t.Errorf("two namespace imports of one module got different objects (%v)", err)
	}
	for _, p := range v.scripts {
		if kept := p.val.obj != nil; kept != (filepath.Base(p.key.Key()) == "ns.js") {
			t.Errorf("%s: object kept %v", filepath.Base(p.key.Key()), kept)
		}
	}
}
