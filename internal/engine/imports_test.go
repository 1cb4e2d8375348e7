package engine_test

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/metronome-load/metronome"

// kitLeaves are the packages under executor/ the run may import: the
// arithmetic the executor kit is built on. Every other package there is
// a built-in executor (capacity), which the run must reach only through
// the registry and executor.Ask, as it reaches an extension's.
var kitLeaves = map[string]bool{module + "/executor/schedule": true, module + "/executor/segment": true}

// TestRunImportsNoBuiltinExecutor keeps the run and the options model
// blind to which executors exist: neither internal/engine nor config, nor
// any package of the module they import however indirectly, may import a
// built-in executor's package. What a scenario can do beyond the
// contract comes from executor.Ask, so a built-in gets nothing an
// extension cannot have.
func TestRunImportsNoBuiltinExecutor(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var walk func(path string)
	walk = func(path string) {
		if seen[path] {
			return
		}
		seen[path] = true
		rel, _ := strings.CutPrefix(path, module+"/")
		p, err := build.Default.ImportDir(filepath.Join(root, filepath.FromSlash(rel)), 0)
		if err != nil {
			t.Fatalf("reading the imports of %s: %v", path, err)
		}
		for _, imp := range p.Imports {
			if builtinExecutor(imp) {
				t.Errorf("%s imports %s, a built-in executor; ask what a scenario can do through executor.Ask", path, imp)
			}
			if strings.HasPrefix(imp, module+"/") {
				walk(imp)
			}
		}
	}
	walk(module + "/internal/engine")
	walk(module + "/config")
	if !seen[module+"/executor"] || !seen[module+"/executor/schedule"] {
		t.Fatalf("the walk did not reach executor and executor/schedule, which the run imports: it read the wrong folders (saw %v)", seen)
	}
}

// builtinExecutor reports whether path is a package under executor/ that
// is not one of the kit's leaves.
func builtinExecutor(path string) bool {
	return strings.HasPrefix(path, module+"/executor/") && !kitLeaves[path]
}
