package js_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// parts are the types the VU's state is split into (docs/js-layers.md).
var parts = []string{"eventLoop", "runtimeGuard", "moduleSystem", "iterationState"}

// TestPartsOwnTheirState enforces the rule of docs/js-layers.md that a
// part's fields are written only by the part's own methods: an assignment,
// ++, --, delete or clear whose target is a field of a part, reached from
// a method's receiver or a function's parameter, must sit in a method of
// that part. The vu may still make a part whole (v.moduleSystem = ...).
func TestPartsOwnTheirState(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatal("package js not found")
	}
	structs := map[string]*ast.StructType{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if st, ok := ts.Type.(*ast.StructType); ok {
					structs[ts.Name.Name] = st
				}
			}
			return true
		})
	}
	for _, p := range parts {
		if structs[p] == nil {
			t.Fatalf("part %s is not a struct type of the package", p)
		}
	}
	isPart := func(name string) bool {
		for _, p := range parts {
			if p == name {
				return true
			}
		}
		return false
	}
	owned := 0 // writes of a part's fields by its own methods
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			owner := ""
			vars := map[string]string{} // receiver and parameters → type name
			if fn.Recv != nil {
				owner = typeName(fn.Recv.List[0].Type)
				for _, n := range fn.Recv.List[0].Names {
					vars[n.Name] = owner
				}
			}
			for _, p := range fn.Type.Params.List {
				for _, n := range p.Names {
					vars[n.Name] = typeName(p.Type)
				}
			}
			check := func(target ast.Expr) {
				decl, field := declaringStruct(structs, vars, target)
				if !isPart(decl) {
					return
				}
				if decl != owner {
					t.Errorf("%s: %s writes %s.%s: only %s's methods may", fset.Position(target.Pos()), fn.Name.Name, decl, field, decl)
					return
				}
				owned++
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch s := n.(type) {
				case *ast.AssignStmt:
					if s.Tok != token.DEFINE {
						for _, l := range s.Lhs {
							check(l)
						}
					}
				case *ast.IncDecStmt:
					check(s.X)
				case *ast.CallExpr:
					if id, ok := s.Fun.(*ast.Ident); ok && (id.Name == "delete" || id.Name == "clear") && len(s.Args) > 0 {
						check(s.Args[0])
					}
				}
				return true
			})
		}
	}
	// The walk must see the writes there are, or it proves nothing.
	if owned < 20 {
		t.Fatalf("found only %d writes of parts' fields by their own methods; the walk is broken", owned)
	}
}

// typeName is the name of a named type or a pointer to one, "" for any
// other type expression.
func typeName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.StarExpr:
		return typeName(x.X)
	}
	return ""
}

// declaringStruct resolves the field a write's target ends in, such as
// v.loop.timers[id], and returns the struct type that declares it and the
// field's name; "" when the target is not a field reached from vars.
func declaringStruct(structs map[string]*ast.StructType, vars map[string]string, target ast.Expr) (string, string) {
	for {
		switch x := target.(type) {
		case *ast.IndexExpr:
			target = x.X
			continue
		case *ast.StarExpr:
			target = x.X
			continue
		case *ast.ParenExpr:
			target = x.X
			continue
		}
		break
	}
	sel, ok := target.(*ast.SelectorExpr)
	if !ok {
		return "", ""
	}
	var base string
	switch x := sel.X.(type) {
	case *ast.Ident:
		base = vars[x.Name]
	default:
		decl, field := declaringStruct(structs, vars, x)
		if decl == "" {
			return "", ""
		}
		base = fieldType(structs[decl], field)
	}
	if structs[base] == nil {
		return "", ""
	}
	return lookupField(structs, base, sel.Sel.Name), sel.Sel.Name
}

// lookupField returns the struct that declares field as seen from type
// name: name itself, or a struct it embeds (one level, as the VU's parts
// are embedded).
func lookupField(structs map[string]*ast.StructType, name, field string) string {
	st := structs[name]
	for _, f := range st.Fields.List {
		if len(f.Names) == 0 && typeName(f.Type) == field {
			return name
		}
		for _, n := range f.Names {
			if n.Name == field {
				return name
			}
		}
	}
	for _, f := range st.Fields.List {
		if len(f.Names) == 0 && structs[typeName(f.Type)] != nil && fieldType(structs[typeName(f.Type)], field) != "-" {
			return typeName(f.Type)
		}
	}
	return ""
}

// fieldType is the type name of st's field, "" when it is not a named
// type, "-" when st has no such field.
func fieldType(st *ast.StructType, field string) string {
	for _, f := range st.Fields.List {
		if len(f.Names) == 0 && typeName(f.Type) == field {
			return field
		}
		for _, n := range f.Names {
			if n.Name == field {
				return typeName(f.Type)
			}
		}
	}
	return "-"
}
