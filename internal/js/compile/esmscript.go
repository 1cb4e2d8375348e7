package compile

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/grafana/sobek"
	"github.com/grafana/sobek/ast"
	"github.com/grafana/sobek/token"
	"github.com/grafana/sobek/unistring"
)

// An ES module evaluated by sobek costs a runtime about 20 KB more than the
// same code run as a function: module evaluation always builds the
// Promise constructor, runs each module body as an async function and
// keeps module environments and namespace objects. Most test scripts need
// none of that, so the loader rewrites an ES module whose meaning does not
// depend on it into a function of its imports that returns its exports,
// and VUs call that function instead.
//
// The rewrite keeps every byte offset: import declarations and export
// keywords become spaces, and the wrapper's head shares the first line
// (or, for a module with a source map, takes a line of its own that the
// map is shifted by). Imported bindings are the function's parameters, set
// once the imported module has run, and the exports are read when the
// body has finished. That differs from ES module semantics only where a
// binding changes after its module ran or where modules import each other
// in a cycle, so a module qualifies only when
//   - it has no top-level await and no import.meta,
//   - it re-exports no other module's every name (export * from),
//   - nothing assigns to an imported or exported name,
//   - it does not use "arguments", "eval" or the wrapper's own names,
//   - it is in no import cycle (checked by the loader),
//
// and every other module keeps going through sobek's module records.

// scriptModule is an ES module rewritten as a function.
type scriptModule struct {
	prog *sobek.Program
	// imports are the module's import bindings and side-effect imports,
	// in source order: the function's parameters after the first.
	imports []Import
	// names are the exported names, sorted.
	names []string
	// shift is how many columns the wrapper adds to the first line; 0
	// when a source map maps positions back.
	shift int
}

// ImportKind says what an import binding holds.
type ImportKind uint8

const (
	ImportEffect    ImportKind = iota // import "x": evaluated, binds nothing
	ImportNamed                       // import { name } from "x"
	ImportDefault                     // import name from "x"
	ImportNamespace                   // import * as name from "x"
)

// Import is one binding of an import declaration.
type Import struct {
	spec string
	kind ImportKind
	name string // the imported name, for ImportNamed
	ref  Ref    // what spec resolved to, set by the loader
	// local is the binding's name in the module: the function's
	// parameter. hidden says the rewriter made it up, for a side-effect
	// import or what a re-export passes on.
	local  string
	hidden bool
}

// defaultVar holds an anonymous default export in a rewritten module.
const defaultVar = "__d"

// sourceMapPrefix starts the inline source map esbuild appends.
const sourceMapPrefix = "//# sourceMappingURL=data:application/json;base64,"

// rewriteModule rewrites the module prog, parsed from code, as a function.
// It returns nil when the module does not qualify (see above).
func rewriteModule(key string, prog *ast.Program, code string) *scriptModule {
	if prog.HasTLA {
		return nil
	}
	body, srcMap, ok := splitSourceMap(code)
	if !ok {
		return nil
	}
	r := &rewriter{b: []byte(body), exports: map[string]string{}}
	if !r.rewrite(prog) || !r.qualifies(prog) {
		return nil
	}

	var head strings.Builder
	head.WriteString("(function (" + defaultVar)
	for _, imp := range r.imports {
		head.WriteString(", ")
		head.WriteString(imp.local)
	}
	head.WriteString(`) {"use strict";`)

	names := make([]string, 0, len(r.exports))
	for name := range r.exports {
		names = append(names, name)
	}
	slices.Sort(names)
	var tail strings.Builder
	tail.WriteString("\n;return {__proto__: null")
	for _, name := range names {
		tail.WriteByte(',')
		q, _ := json.Marshal(name)
		tail.Write(q)
		tail.WriteByte(':')
		tail.WriteString(r.exports[name])
	}
	tail.WriteString("};")

	m := &scriptModule{imports: r.imports, names: names}
	var src string
	if srcMap == nil {
		m.shift = head.Len()
		src = head.String() + string(r.b) + tail.String() + "\n})"
	} else {
		// The head takes a line of its own, which the map learns by one
		// more empty generated line.
		shifted, ok := shiftSourceMap(srcMap)
		if !ok {
			return nil
		}
		src = head.String() + "\n" + string(r.b) + tail.String() + "\n" + sourceMapPrefix + shifted + "\n})"
	}
	p, err := sobek.Compile(key, src, false)
	if err != nil {
		return nil
	}
	m.prog = p
	return m
}

// splitSourceMap separates an inline source map in the last line of code
// from the code. A module that refers to a map file does not qualify.
func splitSourceMap(code string) (body string, srcMap []byte, ok bool) {
	if !hasSourceMap(code) {
		return code, nil, true
	}
	trimmed := strings.TrimRight(code, "\n\r\t ")
	i := strings.LastIndexByte(trimmed, '\n')
	line := trimmed[i+1:]
	if !strings.HasPrefix(line, sourceMapPrefix) {
		return "", nil, false
	}
	m, err := base64.StdEncoding.DecodeString(line[len(sourceMapPrefix):])
	if err != nil {
		return "", nil, false
	}
	return trimmed[:i+1], m, true
}

// shiftSourceMap moves every mapping of a source map one generated line
// down, returning it base64-encoded.
func shiftSourceMap(m []byte) (string, bool) {
	var doc map[string]any
	if err := json.Unmarshal(m, &doc); err != nil {
		return "", false
	}
	mappings, ok := doc["mappings"].(string)
	if !ok {
		return "", false
	}
	doc["mappings"] = ";" + mappings
	out, err := json.Marshal(doc)
	if err != nil {
		return "", false
	}
	return base64.StdEncoding.EncodeToString(out), true
}

// rewriter blanks a module's import and export syntax in b, collecting
// what it imported and exported.
type rewriter struct {
	b       []byte
	imports []Import
	exports map[string]string // exported name → local name
	insert  int               // offset where "}.default;" goes, -1 for none
	// protected are the names nothing may assign to: imports and exported
	// locals.
	protected map[unistring.String]bool
}

// rewrite rewrites each import and export declaration of prog's top
// level, which ends where the next statement starts. It returns false
// when one of them does not qualify.
func (r *rewriter) rewrite(prog *ast.Program) bool {
	r.insert = -1
	r.protected = map[unistring.String]bool{}
	for i, st := range prog.Body {
		start := int(st.Idx0()) - 1
		end := len(r.b)
		if i+1 < len(prog.Body) {
			end = int(prog.Body[i+1].Idx0()) - 1
		}
		if start < 0 || end > len(r.b) || start > end {
			return false
		}
		var ok bool
		switch d := st.(type) {
		case *ast.ImportDeclaration:
			ok = r.importDecl(d, start, end)
		case *ast.ExportDeclaration:
			ok = r.exportDecl(d, start, end)
		default:
			ok = true
		}
		if !ok {
			return false
		}
	}
	if r.insert >= 0 {
		r.b = slices.Insert(r.b, r.insert, []byte("}.default;")...)
	}
	return true
}

// importDecl blanks an import declaration, spanning b[start:end], and
// records its bindings.
func (r *rewriter) importDecl(d *ast.ImportDeclaration, start, end int) bool {
	r.blank(start, end)
	spec := d.ModuleSpecifier.String()
	if d.FromClause != nil {
		spec = d.FromClause.ModuleSpecifier.String()
	}
	c := d.ImportClause
	if c == nil {
		// The parameter of a side-effect import has a name nothing can
		// refer to.
		r.hide(Import{spec: spec, kind: ImportEffect})
		return true
	}
	if c.ImportedDefaultBinding != nil {
		r.bind(Import{spec: spec, kind: ImportDefault}, c.ImportedDefaultBinding.Name)
	}
	if c.NameSpaceImport != nil {
		r.bind(Import{spec: spec, kind: ImportNamespace}, c.NameSpaceImport.ImportedBinding)
	}
	if c.NamedImports != nil {
		for _, s := range c.NamedImports.ImportsList {
			local := s.Alias
			if local == "" {
				local = s.IdentifierName
			}
			r.bind(Import{spec: spec, kind: ImportNamed, name: s.IdentifierName.String()}, local)
		}
	}
	return true
}

// bind adds an import binding, which becomes a parameter of the
// function.
func (r *rewriter) bind(imp Import, local unistring.String) {
	imp.local = local.String()
	r.imports = append(r.imports, imp)
	r.protected[local] = true
}

// hide adds an import whose parameter has a name the module's code cannot
// use: a side-effect import, or what a re-export passes on. It returns
// the name.
func (r *rewriter) hide(imp Import) string {
	imp.local, imp.hidden = fmt.Sprintf("%s%d", defaultVar, len(r.imports)), true
	r.imports = append(r.imports, imp)
	return imp.local
}

// exportDecl rewrites an export declaration, spanning b[start:end], and
// records its exports: a declaration loses its export keyword, an
// anonymous default export is assigned to defaultVar, and export lists
// disappear.
func (r *rewriter) exportDecl(d *ast.ExportDeclaration, start, end int) bool {
	export := func(name, local unistring.String) {
		r.exports[name.String()] = local.String()
		r.protected[local] = true
	}
	if d.FromClause != nil {
		// A re-export imports what it passes on. export * would need
		// the other module's names, and does not qualify.
		spec := d.FromClause.ModuleSpecifier.String()
		switch {
		case d.ExportFromClause != nil && d.ExportFromClause.IsWildcard && d.ExportFromClause.Alias != "":
			local := r.hide(Import{spec: spec, kind: ImportNamespace})
			r.exports[d.ExportFromClause.Alias.String()] = local
		case d.NamedExports != nil:
			for _, s := range d.NamedExports.ExportsList {
				name := s.Alias
				if name == "" {
					name = s.IdentifierName
				}
				local := r.hide(Import{spec: spec, kind: ImportNamed, name: s.IdentifierName.String()})
				r.exports[name.String()] = local
			}
		default:
			return false
		}
		r.blank(start, end)
		return true
	}
	if d.ExportFromClause != nil {
		return false
	}
	switch {
	case d.NamedExports != nil:
		r.blank(start, end)
		for _, s := range d.NamedExports.ExportsList {
			name := s.Alias
			if name == "" {
				name = s.IdentifierName
			}
			export(name, s.IdentifierName)
		}
		return true
	case d.IsDefault:
		kwEnd, ok := r.afterDefault(start)
		if !ok {
			return false
		}
		var local unistring.String
		var anon ast.Node // an anonymous function or class, named "default" by ES
		switch {
		case d.HoistableDeclaration != nil:
			f := d.HoistableDeclaration.FunctionDeclaration.Function
			if f.Name == nil || f.Name.Name == "default" {
				anon = f
			} else {
				local = f.Name.Name
			}
		case d.ClassDeclaration != nil:
			c := d.ClassDeclaration.Class
			if c.Name == nil {
				anon = c
			} else {
				local = c.Name.Name
			}
		case d.AssignExpression != nil:
			switch e := d.AssignExpression.(type) {
			case *ast.FunctionLiteral, *ast.ArrowFunctionLiteral, *ast.ClassLiteral:
				anon = e
			default:
				if !r.replace(start, kwEnd, ";"+defaultVar+"=") {
					return false
				}
				local = defaultVar
			}
		default:
			return false
		}
		if anon == nil && local != defaultVar && !r.replace(start, kwEnd, ";") {
			return false
		}
		if anon != nil {
			// {default: function () {}}.default is named "default", as
			// the ES module's export is. The semicolon after it ends the
			// statement where the declaration ended.
			if !r.replace(start, kwEnd, ";"+defaultVar+"={default:") {
				return false
			}
			r.insert = int(anon.Idx1()) - 1
			if r.insert < kwEnd || r.insert > len(r.b) {
				return false
			}
			local = defaultVar
		}
		export("default", local)
		return true
	}
	r.replace(start, start+len("export"), ";")
	bindings := func(list []*ast.Binding) bool {
		for _, b := range list {
			id, ok := b.Target.(*ast.Identifier)
			if !ok {
				return false
			}
			export(id.Name, id.Name)
		}
		return true
	}
	switch {
	case d.Variable != nil:
		return bindings(d.Variable.List)
	case d.LexicalDeclaration != nil:
		return bindings(d.LexicalDeclaration.List)
	case d.HoistableDeclaration != nil:
		f := d.HoistableDeclaration.FunctionDeclaration.Function
		if f.Name == nil {
			return false
		}
		export(f.Name.Name, f.Name.Name)
	case d.ClassDeclaration != nil:
		c := d.ClassDeclaration.Class
		if c.Name == nil {
			return false
		}
		export(c.Name.Name, c.Name.Name)
	default:
		return false
	}
	return true
}

// afterDefault returns the offset after "export default" starting at
// start, with any spaces and comments between the two words.
func (r *rewriter) afterDefault(start int) (int, bool) {
	i := skipSpace(r.b, start+len("export"))
	if !strings.HasPrefix(string(r.b[i:min(len(r.b), i+len("default"))]), "default") {
		return 0, false
	}
	return i + len("default"), true
}

// skipSpace returns the offset of the first byte at or after i that is
// neither white space nor in a comment.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch {
		case b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r':
			i++
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			j := strings.Index(string(b[i+2:]), "*/")
			if j < 0 {
				return len(b)
			}
			i += 2 + j + 2
		default:
			return i
		}
	}
	return i
}

// blank turns b[from:to] into spaces, keeping line terminators, and puts
// a semicolon first so that the code before cannot run on into the code
// after.
func (r *rewriter) blank(from, to int) {
	for i := from; i < to; i++ {
		switch {
		case r.b[i] == '\n' || r.b[i] == '\r':
		case r.b[i] == 0xE2 && i+2 < to && r.b[i+1] == 0x80 && (r.b[i+2] == 0xA8 || r.b[i+2] == 0xA9):
			i += 2 // U+2028, U+2029
		default:
			r.b[i] = ' '
		}
	}
	if from < to {
		r.b[from] = ';'
	}
}

// replace blanks b[from:to] and writes s at its start; s must fit on the
// first line of the span.
func (r *rewriter) replace(from, to int, s string) bool {
	nl := strings.IndexAny(string(r.b[from:to]), "\n\r")
	if nl >= 0 && nl < len(s) || to-from < len(s) {
		return false
	}
	r.blank(from, to)
	copy(r.b[from:], s)
	return true
}

// qualifies checks the parts of the conditions that need the whole tree:
// no import.meta, no "arguments", "eval" (whose code could assign to an
// export) or wrapper names, and no assignment to an imported or exported
// name.
func (r *rewriter) qualifies(prog *ast.Program) bool {
	ok := true
	reserved := func(name unistring.String) bool {
		s := name.String()
		return s == "arguments" || s == "eval" || strings.HasPrefix(s, defaultVar)
	}
	assigned := func(target ast.Node) {
		assignedNames(target, func(name unistring.String) {
			if r.protected[name] {
				ok = false
			}
		})
	}
	for _, st := range prog.Body {
		walkAST(reflect.ValueOf(st), func(n ast.Node) bool {
			if !ok {
				return false
			}
			switch n := n.(type) {
			case *ast.MetaProperty:
				if n.Meta != nil && n.Meta.Name == "import" {
					ok = false
				}
			case *ast.Identifier:
				if reserved(n.Name) {
					ok = false
				}
			case *ast.AssignExpression:
				assigned(n.Left)
			case *ast.UnaryExpression:
				if n.Operator == token.INCREMENT || n.Operator == token.DECREMENT {
					assigned(n.Operand)
				}
			case *ast.ForInStatement:
				if into, isExpr := n.Into.(*ast.ForIntoExpression); isExpr {
					assigned(into.Expression)
				}
			case *ast.ForOfStatement:
				if into, isExpr := n.Into.(*ast.ForIntoExpression); isExpr {
					assigned(into.Expression)
				}
			case *ast.VariableStatement:
				// A var declaration may declare an exported var again.
				if !varExported(prog, n) {
					for _, b := range n.List {
						assigned(b.Target)
					}
				}
			}
			return ok
		})
		if !ok {
			return false
		}
	}
	for _, imp := range r.imports {
		if !imp.hidden && reserved(unistring.NewFromString(imp.local)) {
			return false
		}
	}
	// Every exported name must be declared: an ES module that exports an
	// undeclared name fails with sobek's own message.
	declared := r.declared(prog)
	for _, local := range r.exports {
		if local != defaultVar && !declared[unistring.NewFromString(local)] {
			return false
		}
	}
	return true
}

// declared returns the names the module's top level declares, imports
// included.
func (r *rewriter) declared(prog *ast.Program) map[unistring.String]bool {
	names := map[unistring.String]bool{}
	add := func(n unistring.String) { names[n] = true }
	for _, imp := range r.imports {
		if imp.kind != ImportEffect {
			add(unistring.NewFromString(imp.local))
		}
	}
	var decl func(st ast.Statement)
	decl = func(st ast.Statement) {
		switch d := st.(type) {
		case *ast.VariableStatement:
			for _, b := range d.List {
				assignedNames(b.Target, add)
			}
		case *ast.LexicalDeclaration:
			for _, b := range d.List {
				assignedNames(b.Target, add)
			}
		case *ast.FunctionDeclaration:
			if d.Function.Name != nil {
				add(d.Function.Name.Name)
			}
		case *ast.ClassDeclaration:
			if d.Class.Name != nil {
				add(d.Class.Name.Name)
			}
		case *ast.ExportDeclaration:
			switch {
			case d.Variable != nil:
				decl(d.Variable)
			case d.LexicalDeclaration != nil:
				decl(d.LexicalDeclaration)
			case d.HoistableDeclaration != nil:
				decl(d.HoistableDeclaration.FunctionDeclaration)
			case d.ClassDeclaration != nil:
				decl(d.ClassDeclaration)
			}
		}
	}
	for _, st := range prog.Body {
		decl(st)
	}
	return names
}

// varExported reports whether v is the declaration of an export var
// statement of prog.
func varExported(prog *ast.Program, v *ast.VariableStatement) bool {
	return slices.ContainsFunc(prog.ExportEntries, func(d *ast.ExportDeclaration) bool { return d.Variable == v })
}

// assignedNames calls f with every name an assignment to target binds:
// the identifier itself, or those in a destructuring pattern. A member
// expression assigns to no name.
func assignedNames(target ast.Node, f func(unistring.String)) {
	switch t := target.(type) {
	case *ast.Identifier:
		f(t.Name)
	case *ast.ArrayPattern:
		for _, e := range t.Elements {
			if e != nil {
				assignedNames(e, f)
			}
		}
		if t.Rest != nil {
			assignedNames(t.Rest, f)
		}
	case *ast.ObjectPattern:
		for _, p := range t.Properties {
			switch p := p.(type) {
			case *ast.PropertyShort:
				f(p.Name.Name)
			case *ast.PropertyKeyed:
				assignedNames(p.Value, f)
			default:
				walkAST(reflect.ValueOf(p), func(n ast.Node) bool {
					if id, ok := n.(*ast.Identifier); ok {
						f(id.Name)
					}
					return true
				})
			}
		}
		if t.Rest != nil {
			assignedNames(t.Rest, f)
		}
	case *ast.AssignExpression:
		assignedNames(t.Left, f) // a default value in a pattern
	case *ast.Binding:
		assignedNames(t.Target, f)
	}
}

// walkAST calls visit for every AST node under v, depth first, descending
// into a node's children while visit returns true.
func walkAST(v reflect.Value, visit func(ast.Node) bool) {
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			walkAST(v.Elem(), visit)
		}
	case reflect.Pointer:
		if v.IsNil() || v.Elem().Kind() != reflect.Struct {
			return
		}
		if n, ok := v.Interface().(ast.Node); ok && !visit(n) {
			return
		}
		walkFields(v.Elem(), visit)
	case reflect.Struct:
		// A node held by value, such as PropertyShort's Name.
		if v.CanAddr() {
			if n, ok := v.Addr().Interface().(ast.Node); ok && !visit(n) {
				return
			}
		}
		walkFields(v, visit)
	case reflect.Slice:
		for i := range v.Len() {
			walkAST(v.Index(i), visit)
		}
	}
}

func walkFields(v reflect.Value, visit func(ast.Node) bool) {
	for i := range v.NumField() {
		if f := v.Field(i); f.Type().PkgPath() != "github.com/grafana/sobek/file" {
			walkAST(f, visit)
		}
	}
}

// scriptRecord is the module record of a module VUs run as a function,
// through which sobek's ES modules (and import()) reach it.
type scriptRecord struct {
	l *Loader
	f *Module
}

// Link has nothing to do: the module's own record was linked.
func (r *scriptRecord) Link() error { return nil }

// GetExportedNames reports the module's exports.
func (r *scriptRecord) GetExportedNames(cb func([]string), _ ...sobek.ModuleRecord) bool {
	cb(r.f.script.names)
	return true
}

// ResolveExport binds an export to the module's exports object.
func (r *scriptRecord) ResolveExport(name string, _ ...sobek.ResolveSetElement) (*sobek.ResolvedBinding, bool) {
	if _, ok := slices.BinarySearch(r.f.script.names, name); ok {
		return &sobek.ResolvedBinding{Module: r, BindingName: name}, false
	}
	return nil, false
}

// Evaluate runs the module in the VU that owns rt, once per VU.
func (r *scriptRecord) Evaluate(rt *sobek.Runtime) *sobek.Promise {
	return r.l.evaluate(rt, r.f)
}
