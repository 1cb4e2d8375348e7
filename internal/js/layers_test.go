package js_test

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

// module is the import path of this Go module.
const module = "github.com/metronome-load/metronome"

// deps returns every package of this module that pkg (an import path of
// this module) imports, directly or not, without test files, each mapped
// to the package that imports it. root is the module's folder.
func deps(t *testing.T, root, pkg string) map[string]string {
	t.Helper()
	seen := map[string]string{}
	var walk func(p string)
	walk = func(p string) {
		dir := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(p, module), "/")))
		bp, err := build.Default.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("reading the imports of %s: %v", p, err)
		}
		for _, imp := range bp.Imports {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			if _, ok := seen[imp]; ok {
				continue
			}
			seen[imp] = p
			walk(imp)
		}
	}
	walk(pkg)
	return seen
}

// chain renders how pkg reaches dep, for the failure message.
func chain(pkg, dep string, by map[string]string) string {
	path := []string{dep}
	for p := dep; p != pkg; {
		p = by[p]
		path = append([]string{p}, path...)
	}
	return strings.Join(path, " → ")
}

// TestLayers enforces the dependency rule of docs/js-layers.md: the
// compile layer (internal/js/compile) never reaches the runtime layer (internal/js), and
// the executor and metrics packages reach nothing under js/.
func TestLayers(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	runtime := module + "/internal/js"
	rules := []struct {
		pkg    string
		forbid func(dep string) bool
		why    string
	}{
		{module + "/internal/js/compile", func(d string) bool { return d == runtime }, "the compile layer must not import the runtime layer"},
		// Compile resolves built-in modules through the registry only;
		// their implementations, public or internal, run in VUs.
		{module + "/internal/js/compile", func(d string) bool {
			return strings.HasPrefix(d, module+"/js/modules/") || strings.HasPrefix(d, runtime+"/modules/")
		}, "the compile layer must not import module implementations"},
		{module + "/executor", func(d string) bool {
			return d == runtime || strings.HasPrefix(d, runtime+"/") || strings.HasPrefix(d, module+"/js/")
		}, "executor must not import js"},
		{module + "/metrics", func(d string) bool {
			return d == runtime || strings.HasPrefix(d, runtime+"/") || strings.HasPrefix(d, module+"/js/")
		}, "metrics must not import js"},
	}
	// The walk must see an import where there is one: the CLI loads
	// scripts through the runtime layer.
	if _, ok := deps(t, root, module+"/cli")[runtime]; !ok {
		t.Fatalf("the import walk did not find that cli imports %s", runtime)
	}
	for _, r := range rules {
		by := deps(t, root, r.pkg)
		for dep := range by {
			if r.forbid(dep) {
				t.Errorf("%s: %s", r.why, chain(r.pkg, dep, by))
			}
		}
	}
}
