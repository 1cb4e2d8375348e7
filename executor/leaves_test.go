package executor_test

import (
	"go/build"
	"strings"
	"testing"
)

// TestLeavesImportOnlyTheStandardLibrary keeps the arithmetic of arrivals
// and of execution segments pure: packages schedule and segment may import
// the standard library and nothing else, so that they never reach back up
// into the executors (or anything else of the module) and can be reused
// alone. A standard library path has no dot in its first element.
func TestLeavesImportOnlyTheStandardLibrary(t *testing.T) {
	for _, dir := range []string{"schedule", "segment"} {
		p, err := build.Default.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("reading the imports of executor/%s: %v", dir, err)
		}
		if len(p.Imports) == 0 {
			t.Fatalf("executor/%s imports nothing: the walk read the wrong folder", dir)
		}
		for _, imp := range p.Imports {
			if first, _, _ := strings.Cut(imp, "/"); strings.Contains(first, ".") {
				t.Errorf("executor/%s imports %s; it may import only the standard library", dir, imp)
			}
		}
	}
}
