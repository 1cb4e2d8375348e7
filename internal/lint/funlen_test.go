package lint

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxLines is the most lines a function's body may have, counted between
// its braces: k6's funlen limit.
const maxLines = 80

// longAllowed are the functions that may run over maxLines, each with the
// reason, as k6 names its funlen exceptions one by one. A name is
// "path/to/file.go:Func" or "path/to/file.go:Type.Method". Shortening one
// of them means removing its line; a new long function needs its own line
// and reason, or to be split.
var longAllowed = map[string]string{
	"internal/httpclient/do.go:Do":                                    "one request's path, in the class of k6's MakeRequest (232 lines) and Go's Client.do (159)",
	"internal/js/modules/webcrypto/keyformat.go:importAs":             "one case per WebCrypto key format and algorithm, as the spec lists them",
	"internal/js/modules/webcrypto/keyformat.go:export":               "one case per WebCrypto key format and algorithm, as the spec lists them",
	"internal/js/modules/webcrypto/params.go:webcrypto.algorithm":     "one case per algorithm's parameters, as the WebCrypto spec lists them",
	"summary/export.go:Data":                                          "the handleSummary data object, one block per key of k6's layout",
	"cmd/bench/main.go:main":                                          "the bench command's flags and dispatch, a list of measures",
	"internal/engine/merge.go:Merge":                                  "the merge's steps in order, sharing the union being built",
	"internal/js/compile/esmscript.go:rewriter.exportDecl":            "one case per form of export declaration ECMAScript has",
	"cmd/grafana-dashboard/main.go:Build":                             "the dashboard's panels, declared in order as a list",
	"output/dashboard/hlog.go:LogReader.Timeline":                     "one pass over the logs' intervals, merging as it reads",
	"internal/http1/wire.go:readHead":                                 "the response head parsed in one pass, every branch falling back to net/http",
	"internal/http1/wire.go:writeRequest":                             "the request written in one pass, byte for byte as Request.Write",
	"cli/run.go:runCmd.run":                                           "the run command's steps in order; cli is being reshaped on another branch (issue #39 W2)",
	"output/dashboard/charts.go:sectionCharts":                        "the dashboard's charts, declared as a list",
	"js/modules/http/response.go:response.build":                      "the response object's properties, one per k6 field",
	"js/modules/http/parse.go:instance.parseParams":                   "one case per key of k6's params object",
	"internal/audit/open.go:auditRun.rebuildOpen":                     "one pass over an open scenario's events, matching them to the schedule",
	"cli/build.go:planBuild":                                          "the build flags' checks in order; cli is being reshaped on another branch (issue #39 W2)",
	"internal/testkit/faultserver/faultserver.go:Server.answer":       "one case per fault mode (a test kit)",
	"config/parse.go:decodeJSON":                                      "one case per option field type the table holds",
	"cmd/bench/sidebyside.go:bench.measureClosed":                     "the closed-loop measure's runs of each tool, alternated in one loop",
	"internal/js/modules/textencoding/textencoding.go:decoder.decode": "one case per encoding and its streaming state, as the Encoding spec",
	"internal/js/modules/browser/mapping.go:vuBrowser.pageObject":     "the Page object's methods, one entry per k6 method (a table)",
	"internal/js/modules/browser/mapping.go:vuBrowser.elementMethods": "the methods Locator and ElementHandle share, one entry per k6 method (a table)",
	"internal/js/modules/browser/browser.go:vuBrowser.contextObject":  "the BrowserContext object's methods, one entry per k6 method (a table)",
}

// longFunc is a function whose body runs over the limit.
type longFunc struct {
	name  string // file.go:Func or file.go:Type.Method, the path slash-separated
	lines int
}

// longFuncs returns the functions of src (the file at path) whose bodies
// have more than limit lines.
func longFuncs(path string, src []byte, limit int) ([]longFunc, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var long []longFunc
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		n := fset.Position(fn.Body.Rbrace).Line - fset.Position(fn.Body.Lbrace).Line - 1
		if n > limit {
			long = append(long, longFunc{name: filepath.ToSlash(path) + ":" + funcName(fn), lines: n})
		}
	}
	return long, nil
}

// funcName is Func, or Type.Method for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

// moduleLongFuncs walks the module from root and returns the long
// functions of its Go files, tests left out, as k6's linter leaves them.
// Folders the go command skips (leading _ or ., testdata) are skipped.
func moduleLongFuncs(root string, limit int) ([]longFunc, error) {
	var long []longFunc
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		fl, err := longFuncs(rel, src, limit)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		long = append(long, fl...)
		return nil
	})
	return long, err
}

// TestFunctionLength fails on a function of the module whose body runs
// over maxLines without a named exception, and on an exception that no
// longer names a long function.
func TestFunctionLength(t *testing.T) {
	long, err := moduleLongFuncs("../..", maxLines)
	if err != nil {
		t.Fatal(err)
	}
	if len(long) == 0 {
		t.Fatal("no long function found at all: the walk read the wrong folder")
	}
	seen := map[string]bool{}
	for _, f := range long {
		seen[f.name] = true
		if _, ok := longAllowed[f.name]; !ok {
			t.Errorf("%s has %d lines, more than %d: split it, or name it in longAllowed with the reason", f.name, f.lines, maxLines)
		}
	}
	var stale []string
	for name := range longAllowed {
		if !seen[name] {
			stale = append(stale, name)
		}
	}
	slices.Sort(stale)
	for _, name := range stale {
		t.Errorf("longAllowed names %s, which is no longer over %d lines (or is gone): remove its line", name, maxLines)
	}
}

// The checker itself: a synthetic 81-line function is caught, under its
// method name, and one of 80 lines is not.
func TestLongFuncsCatches81Lines(t *testing.T) {
	body := func(n int) string { return strings.Repeat("\t_ = 0\n", n) }
	src := "package p\n\ntype T struct{}\n\nfunc (*T) Long() {\n" + body(81) + "}\n\nfunc Fits() {\n" + body(80) + "}\n"
	long, err := longFuncs("p/p.go", []byte(src), maxLines)
	if err != nil {
		t.Fatal(err)
	}
	if want := []longFunc{{name: "p/p.go:T.Long", lines: 81}}; !slices.Equal(long, want) {
		t.Errorf("long functions %v, want %v", long, want)
	}
}
