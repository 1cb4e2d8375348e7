package wholefile

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// streamed are the files of the module allowed to create or write a file
// other than through this package, and why: each writes as it goes, so
// that what a killed process wrote is there to read, or writes a file no
// user takes for a result.
var streamed = map[string]string{
	"output/hdrlog/output.go":              "the HdrHistogram log, written interval by interval during the run",
	"output/result/output.go":              "the result file, written interval by interval during the run",
	"output/internal/file/file.go":         "the json and csv outputs, written sample by sample during the run",
	"internal/logsink/logsink.go":          "--log-output=file=…, appended line by line",
	"cli/root.go":                          "METRONOME_CPUPROFILE, streamed by the profiler",
	"cli/memprofile.go":                    "METRONOME_MEMPROFILE, already written to a temporary name and renamed",
	"cli/build.go":                         "the scratch module of metronome build, in its own temporary directory",
	"internal/k6api/k6api.go":              "k6's extension API written into metronome build's temporary directory",
	"internal/wholefile/wholefile.go":      "this package",
	"examples/extension/counter/counts.go": "an example extension's output, outside the binary",
}

// skipped are the folders of tools and test kits, which write no user's
// result.
var skipped = []string{"cmd/bench", "internal/testkit", "js/jstest", "test"}

// TestEveryResultFileIsWrittenWhole checks that no file of the module
// creates or writes a file with os.WriteFile, os.Create or os.OpenFile
// unless it is listed in streamed: a summary, report or export written in
// place is truncated by a Ctrl-C (hostile probe 4, #6).
func TestEveryResultFileIsWrittenWhole(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	seen := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || slices.Contains(skipped, rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		seen++
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok || pkg.Name != "os" || !slices.Contains([]string{"WriteFile", "Create", "OpenFile"}, sel.Sel.Name) {
				return true
			}
			if sel.Sel.Name == "OpenFile" && len(call.Args) == 3 && !writes(call.Args[1]) {
				return true // opened for reading
			}
			if _, ok := streamed[rel]; !ok {
				t.Errorf("%s: os.%s writes a file in place; write it with wholefile.Write or WriteWith, so that a Ctrl-C never leaves it cut short (or list the file in streamed, saying why)",
					fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 100 {
		t.Fatalf("read %d Go files; the walk did not find the module", seen)
	}
}

// writes reports whether the flags of an os.OpenFile call name a flag
// that writes.
func writes(flags ast.Expr) bool {
	found := false
	ast.Inspect(flags, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && slices.Contains([]string{"O_WRONLY", "O_RDWR", "O_CREATE", "O_TRUNC", "O_APPEND"}, sel.Sel.Name) {
			found = true
		}
		return true
	})
	return found
}
