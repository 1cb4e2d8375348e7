package httpclient_test

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/metronome-load/metronome"

// TestEngineImportsNoJavaScript keeps the HTTP engine below the binding:
// neither httpclient nor any package of the module it imports, however
// indirectly, may import the JavaScript runtime (sobek) or anything under
// js/ or internal/js, so the engine can never reach back up into k6/http.
func TestEngineImportsNoJavaScript(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var walk func(path, dir string)
	walk = func(path, dir string) {
		if seen[path] {
			return
		}
		seen[path] = true
		p, err := build.Default.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("reading the imports of %s: %v", path, err)
		}
		for _, imp := range p.Imports {
			if forbidden(imp) {
				t.Errorf("%s imports %s; the HTTP engine must not reach the JavaScript runtime or its modules", path, imp)
			}
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
				walk(imp, filepath.Join(root, filepath.FromSlash(rel)))
			}
		}
	}
	walk(module+"/internal/httpclient", ".")
	if !seen[module+"/internal/http1"] {
		t.Fatalf("the walk did not reach http1, which httpclient imports: it read the wrong folder (saw %v)", seen)
	}
}

// forbidden reports whether the engine may not import path.
func forbidden(path string) bool {
	return strings.Contains(path, "/sobek") || strings.Contains(path, "/goja") ||
		strings.HasPrefix(path, module+"/js/") || strings.HasPrefix(path, module+"/internal/js")
}
