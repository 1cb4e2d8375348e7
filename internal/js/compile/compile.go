// Package compile turns a k6-style test script into modules ready to run:
// it resolves specifiers, reads local and remote files, transpiles
// TypeScript and syntax sobek lacks with esbuild, parses and links ES and
// CommonJS modules, and rewrites ES modules that allow it into plain
// functions (esmscript.go). It is the compile layer of the JavaScript
// runtime: it never runs a VU. What must happen inside a VU (making a
// module's instance, probing a Go module's exports) it asks of its Host,
// which the runtime layer (package js) implements; compile never imports
// the runtime layer.
package compile

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules"
)

// Config says where a script's modules come from.
type Config struct {
	// Dir is the absolute folder of the main script: bare relative
	// specifiers of the main script resolve against it.
	Dir string
	// ModuleClient fetches https:// modules; nil means a
	// client with the system's certificate pool and a 60 s timeout.
	ModuleClient *http.Client
	// Files, when not nil, holds every local file the script may read,
	// by absolute slash-separated path; nothing is then read from disk.
	Files map[string][]byte
	// Warn, when not nil, reports what the loader works around, such as
	// a source map it cannot read.
	Warn func(msg string)
}

// Host is what the loader needs from the runtime layer.
type Host interface {
	// Probe instantiates a Go module once outside any VU, so that the
	// loader learns its export names before linking.
	Probe(mod modules.Module) (modules.Exports, error)
	// Instance returns the instance of ref (a *GoModule, or a *Module
	// evaluated as CommonJS or as a function) in the VU whose init
	// context runs in rt: the sobek.ModuleInstance its record binds.
	Instance(rt *sobek.Runtime, ref Ref) (sobek.ModuleInstance, error)
}

// PosError is a mistake at a known place in a module; Name is the
// module's URL.
type PosError struct {
	Name      string
	Line, Col int
	Msg       string
	// Err is the error Msg words, when it has a type of its own.
	Err error
}

func (e *PosError) Error() string { return fmt.Sprintf("%s:%d:%d: %s", e.Name, e.Line, e.Col, e.Msg) }

func (e *PosError) Unwrap() error { return e.Err }

// URL is where the module was read from.
func (f *Module) URL() *url.URL { return f.url }

// Key is the module's URL as a string, the name its positions carry.
func (f *Module) Key() string { return f.key }

// ESM is the module's sobek record when it is an ES module, else nil.
func (f *Module) ESM() *sobek.SourceTextModuleRecord { return f.esm }

// CommonJS is the compiled function of module and exports of a CommonJS
// module, else nil.
func (f *Module) CommonJS() *sobek.Program { return f.cjs }

// Linked tells whether the ES module was linked.
func (f *Module) Linked() bool { return f.linked }

// SetLinked records that the ES module was linked.
func (f *Module) SetLinked() { f.linked = true }

// RunsAsFunction tells whether VUs run the ES module as a function of its
// imports (see esmscript.go) rather than through sobek's module records.
func (f *Module) RunsAsFunction() bool { return f.srec != nil }

// Function is the program of a module that runs as a function, which
// evaluates to a function of undefined and the import bindings (in the
// order of imports) that returns the module's exports.
func (f *Module) Function() (prog *sobek.Program, imports []Import) {
	return f.script.prog, f.script.imports
}

// Exported are the names a module that runs as a function exports,
// sorted: the keys of the object its function returns.
func (f *Module) Exported() []string { return f.script.names }

// Name is the module's specifier, such as "k6/http".
func (m *GoModule) Name() string { return m.name }

// Module is the Go implementation of the module.
func (m *GoModule) Module() modules.Module { return m.mod }

// Named are the module's named export names, sorted, without "default".
func (m *GoModule) Named() []string { return m.named }

// Spec is the specifier the import names.
func (i Import) Spec() string { return i.spec }

// Kind says what the import binds.
func (i Import) Kind() ImportKind { return i.kind }

// Name is the imported name of an ImportNamed binding.
func (i Import) Name() string { return i.name }

// Ref is what the import's specifier resolved to.
func (i Import) Ref() Ref { return i.ref }

// LocalFiles returns the local files read so far (the main script, its
// imports, the files the script open()ed), by absolute slash-separated
// path: what an archive of the script must hold.
func (l *Loader) LocalFiles() map[string][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string][]byte, len(l.local))
	for k, v := range l.local {
		out[k] = v
	}
	return out
}

// Loaded returns the module loaded from the URL key, nil when none was.
func (l *Loader) Loaded(key string) *Module {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.files[key]
}
