package js

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/evanw/esbuild/pkg/api"
	"github.com/grafana/sobek"
	"github.com/grafana/sobek/ast"
	"github.com/grafana/sobek/parser"

	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/metrics"
)

// loader finds, reads, transforms and parses the script's modules. Every
// module is loaded once per test and cached by its URL (file:///abs/path
// or https://...), so that each import of it yields the same record, which
// is what runtimes key their module instances by. It is safe for
// concurrent use: VUs resolve imports while they evaluate.
type loader struct {
	s *Script

	mu       sync.Mutex
	files    map[string]*fileModule
	byRecord map[sobek.ModuleRecord]*fileModule
	goMods   map[string]*goModule
	opened   map[string]string // open() cache: path → content
	// local are the local files read so far, by absolute slash path, for
	// an archive.
	local    map[string][]byte
	wrappers map[moduleRef]*sobek.SourceTextModuleRecord
	// pending are the rewritten ES modules of the current load that still
	// need the import-cycle check before VUs may run them as functions.
	pending []*fileModule

	// resolved caches the resolve hook's answers, which every VU asks for
	// every import while it evaluates its init context.
	resolved sync.Map // resolveKey → sobek.ModuleRecord
	// mapped holds the URLs of modules with a source map, whose positions
	// sobek reports with 0-based columns.
	mapped sync.Map
	// shifted holds, for the URL of a module run as a function without a
	// source map, how many columns its wrapper adds to the first line.
	shifted sync.Map
	client  *http.Client
}

type resolveKey struct {
	ref  sobek.ModuleRecord
	spec string
}

// fileModule is one JavaScript or TypeScript file. It is an ES module
// (esm) when it has import or export declarations or a top-level await,
// else a CommonJS module (cjs: a compiled function of module and exports).
type fileModule struct {
	url *url.URL
	key string
	esm *sobek.SourceTextModuleRecord
	cjs *sobek.Program
	// rec is the record through which ES modules import a CommonJS one.
	rec    *cjsRecord
	linked bool
	// script is the ES module rewritten as a function (see esmscript.go),
	// nil when it does not qualify; srec, set once the module is known to
	// be in no import cycle, is the record through which sobek's ES
	// modules import it. VUs run a module with an srec as a function.
	script *scriptModule
	srec   *scriptRecord
	// deps are what the ES module's import and export declarations name.
	deps []moduleRef
}

func (f *fileModule) record() sobek.ModuleRecord {
	if f.srec != nil {
		return f.srec
	}
	if f.esm != nil {
		return f.esm
	}
	return f.rec
}

// moduleRef is what a specifier resolves to: a *fileModule or a *goModule.
type moduleRef interface {
	record() sobek.ModuleRecord
}

func newLoader(s *Script) *loader {
	return &loader{
		s:        s,
		files:    map[string]*fileModule{},
		byRecord: map[sobek.ModuleRecord]*fileModule{},
		goMods:   map[string]*goModule{},
		opened:   map[string]string{},
		local:    map[string][]byte{},
		wrappers: map[moduleRef]*sobek.SourceTextModuleRecord{},
		client:   moduleClient(s.opts.ModuleClient),
	}
}

func moduleClient(c *http.Client) *http.Client {
	if c != nil {
		return c
	}
	return &http.Client{Timeout: 60 * time.Second}
}

func fileURL(abs string) *url.URL {
	return &url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
}

// loadMain loads the main script and, recursively, its static imports.
func (l *loader) loadMain(u *url.URL) (*fileModule, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := l.loadFileLocked(u, "")
	l.finishLocked()
	return f, err
}

// resolve returns the module spec names when imported or required from
// the module at base (nil: the main script's folder). Files it loads are
// linked, ready to evaluate.
func (l *loader) resolve(base *url.URL, spec string) (moduleRef, error) {
	l.mu.Lock()
	ref, err := l.resolveLocked(base, spec)
	l.finishLocked()
	var link *fileModule
	if f, ok := ref.(*fileModule); ok && err == nil && f.esm != nil && !f.linked {
		link = f
	}
	l.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if link != nil {
		// Linking resolves imports through the resolve hook, which takes
		// l.mu: link outside it. Linking twice is harmless.
		if err := link.esm.Link(); err != nil {
			return nil, err
		}
		l.mu.Lock()
		link.linked = true
		l.mu.Unlock()
	}
	return ref, nil
}

// resolveHook is sobek's host hook: ref is the importing module record.
func (l *loader) resolveHook(ref any, spec string) (sobek.ModuleRecord, error) {
	rec, _ := ref.(sobek.ModuleRecord)
	key := resolveKey{rec, spec}
	if r, ok := l.resolved.Load(key); ok {
		return r.(sobek.ModuleRecord), nil
	}
	l.mu.Lock()
	var base *url.URL
	if f := l.byRecord[rec]; f != nil {
		base = f.url
	}
	m, err := l.resolveLocked(base, spec)
	l.finishLocked()
	var r sobek.ModuleRecord
	if err == nil {
		r = m.record()
	}
	l.mu.Unlock()
	if err != nil {
		return nil, err
	}
	l.resolved.Store(key, r)
	return r, nil
}

// dynamicRecord returns the record import() evaluates for ref. sobek
// evaluates the result of import() directly, which only works for source
// text modules: a Go or CommonJS module is wrapped in a one-line module
// that re-exports it.
func (l *loader) dynamicRecord(ref moduleRef) (sobek.ModuleRecord, error) {
	var spec string
	switch m := ref.(type) {
	case *goModule:
		spec = m.name
	case *fileModule:
		if m.esm != nil && m.srec == nil {
			return m.esm, nil
		}
		spec = m.key
	}
	l.mu.Lock()
	w, ok := l.wrappers[ref]
	l.mu.Unlock()
	if ok {
		return w, nil
	}
	q := strconv.Quote(spec)
	src := "export { default } from " + q + ";\n"
	switch m := ref.(type) {
	case *goModule:
		src = "export * from " + q + ";\n" + src
	case *fileModule:
		if m.srec != nil {
			src = "export * from " + q + ";\n"
			if _, ok := slices.BinarySearch(m.script.names, "default"); ok {
				src += "export { default } from " + q + ";\n"
			}
		}
	}
	w, err := sobek.ParseModule("metronome:import/"+spec, src, l.resolveHook)
	if err != nil {
		return nil, err
	}
	// Linking resolves the wrapped module through the resolve hook, which
	// takes l.mu: link outside it.
	if err := w.Link(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if prev, ok := l.wrappers[ref]; ok {
		return prev, nil
	}
	l.wrappers[ref] = w
	return w, nil
}

// urlOf returns the URL of a module record, nil when it is not a file.
func (l *loader) urlOf(rec sobek.ModuleRecord) *url.URL {
	l.mu.Lock()
	defer l.mu.Unlock()
	if f := l.byRecord[rec]; f != nil {
		return f.url
	}
	return nil
}

func (l *loader) resolveLocked(base *url.URL, spec string) (moduleRef, error) {
	if m, ok := l.goMods[spec]; ok {
		return m, nil
	}
	if mod, ok := modules.Lookup(spec); ok {
		return l.goModuleLocked(spec, mod)
	}
	if spec == "k6" || strings.HasPrefix(spec, "k6/") {
		return nil, fmt.Errorf("unknown module %q: no such built-in or extension module", spec)
	}
	u, err := l.resolveURL(base, spec)
	if err != nil {
		return nil, err
	}
	return l.loadFileLocked(u, spec)
}

// resolveURL turns a specifier into a module URL. Relative specifiers are
// resolved against the importing module, so a remote module's relative
// imports stay remote.
func (l *loader) resolveURL(base *url.URL, spec string) (*url.URL, error) {
	if base == nil {
		base = fileURL(l.s.dir + "/")
	}
	switch {
	case strings.HasPrefix(spec, "file://"), strings.HasPrefix(spec, "https://"), strings.HasPrefix(spec, "http://"):
		return url.Parse(spec)
	case filepath.IsAbs(spec):
		return fileURL(spec), nil
	case spec == "." || spec == ".." || strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../"):
		return base.ResolveReference(&url.URL{Path: spec}), nil
	}
	return nil, fmt.Errorf("unknown module %q: import built-in modules by name (\"k6/http\") and files by a relative or absolute path or a URL", spec)
}

func (l *loader) read(u *url.URL) ([]byte, error) {
	switch u.Scheme {
	case "file":
		b, err := l.readFile(filepath.FromSlash(u.Path))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s does not exist", filepath.FromSlash(u.Path))
		}
		return b, err
	case "http", "https":
		resp, err := l.client.Get(u.String())
		if err != nil {
			// The url.Error would name the URL a second time.
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return nil, fmt.Errorf("cannot fetch %s: %v", u, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("cannot fetch %s: %s", u, resp.Status)
		}
		return io.ReadAll(resp.Body)
	}
	return nil, fmt.Errorf("unsupported module URL %s", u)
}

// loadFileLocked loads the module at u and, for an ES module, everything it
// imports, so that linking never meets an unknown module. spec is how the
// module was named, for messages.
func (l *loader) loadFileLocked(u *url.URL, spec string) (*fileModule, error) {
	key := u.String()
	if f, ok := l.files[key]; ok {
		return f, nil
	}
	src, err := l.read(u)
	if err != nil {
		if spec != "" {
			return nil, fmt.Errorf("cannot import %q: %v", spec, err)
		}
		return nil, err
	}
	f := &fileModule{url: u, key: key}
	if strings.EqualFold(path.Ext(u.Path), ".json") {
		// A JSON file is a CommonJS module exporting its content.
		p, err := sobek.Compile(key, "(function (module, exports) {module.exports = "+string(src)+"\n})", false)
		if err != nil {
			return nil, fmt.Errorf("%s is not valid JSON: %v", key, err)
		}
		f.cjs = p
		f.rec = &cjsRecord{l: l, f: f}
		l.files[key] = f
		l.byRecord[f.rec] = f
		return f, nil
	}
	prog, code, err := l.parse(key, u.Path, string(src))
	if err != nil {
		return nil, err
	}
	if hasSourceMap(code) {
		l.mapped.Store(key, true)
	}
	if len(prog.ImportEntries) == 0 && len(prog.ExportEntries) == 0 && !prog.HasTLA {
		// No module syntax: CommonJS. The wrapper keeps line numbers; a
		// closing "})" line is skipped by sobek's source-map lookup.
		p, cerr := sobek.Compile(key, "(function (module, exports) {"+code+"\n})", false)
		if cerr == nil {
			f.cjs = p
			f.rec = &cjsRecord{l: l, f: f}
			l.files[key] = f
			l.byRecord[f.rec] = f
			return f, nil
		}
	}
	rec, err := sobek.ModuleFromAST(prog, l.resolveHook)
	if err != nil {
		var se *sobek.CompilerSyntaxError
		if errors.As(err, &se) && se.File == nil {
			return nil, &posError{name: key, line: 1, col: 1, msg: "SyntaxError: " + se.Message}
		}
		return nil, err
	}
	f.esm = rec
	f.script = rewriteModule(key, prog, code)
	l.files[key] = f
	l.byRecord[rec] = f
	refs := map[string]moduleRef{}
	for _, spec := range importSpecifiers(prog) {
		dep, err := l.resolveLocked(u, spec.name)
		if err != nil {
			var pe *posError
			if errors.As(err, &pe) {
				return nil, err
			}
			pos := prog.File.Position(spec.offset)
			return nil, &posError{name: key, line: pos.Line, col: pos.Column, msg: err.Error()}
		}
		f.deps = append(f.deps, dep)
		refs[spec.name] = dep
	}
	if f.script != nil {
		// The rewriter reads the same declarations as importSpecifiers;
		// a spec it lacks would leave ref nil, which importsResolve
		// refuses, leaving the module to sobek.
		for i := range f.script.imports {
			f.script.imports[i].ref = refs[f.script.imports[i].spec]
		}
		l.pending = append(l.pending, f)
	}
	return f, nil
}

type specifier struct {
	name   string
	offset int
}

// importSpecifiers lists the modules a module statically imports or
// re-exports from, with the offset of the declaration.
func importSpecifiers(prog *ast.Program) []specifier {
	var out []specifier
	for _, d := range prog.ImportEntries {
		if d.FromClause != nil {
			out = append(out, specifier{d.FromClause.ModuleSpecifier.String(), int(d.Idx0()) - 1})
		} else if d.ModuleSpecifier != "" {
			out = append(out, specifier{d.ModuleSpecifier.String(), int(d.Idx0()) - 1})
		}
	}
	for _, d := range prog.ExportEntries {
		if d.FromClause != nil {
			out = append(out, specifier{d.FromClause.ModuleSpecifier.String(), int(d.Idx0()) - 1})
		}
	}
	return out
}

// needsLowering spots syntax that sobek cannot run: async generators (a
// compile error) and for await (a parse error).
var needsLowering = regexp.MustCompile(`async\s*(?:function\s*)?\*|for\s+await\b|for\s*await\s*\(`)

// parse parses a module's source. TypeScript always goes through esbuild;
// JavaScript only when it uses syntax sobek lacks, or when sobek cannot
// parse it (esbuild's message then has the right position). esbuild output
// carries an inline source map, so positions name the original lines.
func (l *loader) parse(key, path, src string) (*ast.Program, string, error) {
	ext := strings.ToLower(filepath.Ext(path))
	if ext == ".ts" || ext == ".mts" || ext == ".cts" || ext == ".tsx" {
		loader := api.LoaderTS
		if ext == ".tsx" {
			loader = api.LoaderTSX
		}
		code, err := transform(key, src, loader)
		if err != nil {
			return nil, "", err
		}
		prog, err := l.parseSource(key, code)
		return prog, code, err
	}
	if needsLowering.MatchString(src) {
		if code, err := transform(key, src, api.LoaderJS); err == nil {
			if prog, err := l.parseSource(key, code); err == nil {
				return prog, code, nil
			}
		}
	}
	prog, err := l.parseSource(key, src)
	if err == nil {
		return prog, src, nil
	}
	code, terr := transform(key, src, api.LoaderJS)
	if terr != nil {
		return nil, "", terr
	}
	if prog, err2 := l.parseSource(key, code); err2 == nil {
		return prog, code, nil
	}
	return nil, "", err
}

// hasSourceMap reports whether code ends with a sourceMappingURL comment.
func hasSourceMap(code string) bool {
	code = strings.TrimRight(code, "\n\r\t ")
	i := strings.LastIndexByte(code, '\n')
	return strings.HasPrefix(code[i+1:], "//# sourceMappingURL=")
}

// column converts a column sobek reports for a position in the module
// named name to 1-based: through a source map it is 0-based. A module run
// as a function has its wrapper's head on its first line.
func (l *loader) column(name string, line, col int) int {
	if _, ok := l.mapped.Load(name); ok {
		return col + 1
	}
	if shift, ok := l.shifted.Load(name); ok && line == 1 && col > shift.(int) {
		return col - shift.(int)
	}
	return col
}

// finishLocked gives the rewritten ES modules of the load that just ended
// their function records, except those in an import cycle (evaluated as
// functions, a cycle would see bindings before they are set) and those
// importing a name their module lacks or importing an ES module that
// sobek evaluates: sobek reports the former in its own words, and answers
// the latter only through the loader's lock.
func (l *loader) finishLocked() {
	if len(l.pending) == 0 {
		return
	}
	ok := map[*fileModule]bool{}
	for _, f := range l.pending {
		ok[f] = !inCycle(f)
	}
	for changed := true; changed; {
		changed = false
		for _, f := range l.pending {
			if ok[f] && !importsResolve(f, ok) {
				ok[f], changed = false, true
			}
		}
	}
	for _, f := range l.pending {
		if ok[f] {
			f.srec = &scriptRecord{l: l, f: f}
			if f.script.shift > 0 {
				l.shifted.Store(f.key, f.script.shift)
			}
		}
	}
	l.pending = l.pending[:0]
}

// importsResolve reports whether every module f imports is one a function
// can import from and has the names f imports. ok marks the rewritten
// modules of this load that still qualify.
func importsResolve(f *fileModule, ok map[*fileModule]bool) bool {
	for _, imp := range f.script.imports {
		name := imp.name
		if imp.kind == importDefault {
			name = "default"
		}
		var names []string
		switch m := imp.ref.(type) {
		case *goModule:
			names = m.names
		case *fileModule:
			switch {
			case m.esm == nil: // CommonJS: any name reads module.exports
				continue
			case m.srec != nil || ok[m]:
				names = m.script.names
			default:
				return false
			}
		default:
			return false
		}
		if imp.kind == importNamed || imp.kind == importDefault {
			if _, found := slices.BinarySearch(names, name); !found {
				return false
			}
		}
	}
	return true
}

// inCycle reports whether f imports itself through its static imports.
func inCycle(f *fileModule) bool {
	seen := map[*fileModule]bool{}
	var reaches func(m *fileModule) bool
	reaches = func(m *fileModule) bool {
		for _, d := range m.deps {
			g, ok := d.(*fileModule)
			if !ok {
				continue
			}
			if g == f {
				return true
			}
			if !seen[g] {
				seen[g] = true
				if reaches(g) {
					return true
				}
			}
		}
		return false
	}
	return reaches(f)
}

func (l *loader) parseSource(key, src string) (*ast.Program, error) {
	return parser.ParseFile(nil, key, src, 0, parser.IsModule, parser.WithSourceMapLoader(l.sourceMap))
}

// sourceMap reads a source map a module refers to; a missing map is
// ignored rather than failing the module.
func (l *loader) sourceMap(p string) ([]byte, error) {
	u, err := url.Parse(p)
	if err != nil || (u.Scheme != "file" && u.Scheme != "") {
		return nil, nil
	}
	b, err := os.ReadFile(filepath.FromSlash(u.Path))
	if err != nil {
		return nil, nil
	}
	return b, nil
}

// transform runs esbuild on one file: TypeScript to JavaScript, and async
// generators and for await lowered. The module format is kept as it is:
// ES modules stay ES modules, and a CommonJS file stays CommonJS (esbuild's
// ESM format would wrap it into a module whose default export is
// module.exports). The inline source map names the file by key, so stack
// traces show its lines.
func transform(key, src string, loader api.Loader) (string, error) {
	res := api.Transform(src, api.TransformOptions{
		Loader:         loader,
		Format:         api.FormatDefault,
		Target:         api.ESNext,
		Supported:      map[string]bool{"async-generator": false, "for-await": false},
		Sourcemap:      api.SourceMapInline,
		SourcesContent: api.SourcesContentExclude,
		Sourcefile:     key,
		LogLevel:       api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		m := res.Errors[0]
		if m.Location != nil {
			return "", &posError{name: key, line: m.Location.Line, col: m.Location.Column + 1, msg: "SyntaxError: " + m.Text}
		}
		return "", &posError{name: key, line: 1, col: 1, msg: "SyntaxError: " + m.Text}
	}
	return string(res.Code), nil
}

// readFile reads a local file from disk, or from the archive the script
// came from, and remembers it for an archive of this script. l.mu is held
// or the loader is not shared yet.
func (l *loader) readFile(p string) ([]byte, error) {
	key := filepath.ToSlash(p)
	if files := l.s.opts.Files; files != nil {
		b, ok := files[key]
		if !ok {
			return nil, fs.ErrNotExist
		}
		return b, nil
	}
	b, err := os.ReadFile(p)
	if err == nil {
		l.local[key] = b
	}
	return b, err
}

// LocalFiles returns the local files the script read while it loaded and
// ran its init context once (the main script, its imports, the files it
// open()ed), by absolute slash-separated path: what an archive must hold.
func (s *Script) LocalFiles() map[string][]byte {
	s.loader.mu.Lock()
	defer s.loader.mu.Unlock()
	out := make(map[string][]byte, len(s.loader.local))
	for k, v := range s.loader.local {
		out[k] = v
	}
	return out
}

// readOpened returns the content of a file for open(), read once per test
// and shared by the VUs.
func (l *loader) readOpened(path string) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.opened[path]; ok {
		return s, nil
	}
	b, err := l.readFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s does not exist", path)
		}
		return "", err
	}
	s := string(b)
	l.opened[path] = s
	return s, nil
}

// goModule is the record of a module implemented in Go. It is shared by
// every runtime; each VU instantiates the module once, when its init
// context first imports or requires it.
type goModule struct {
	l     *loader
	name  string
	mod   modules.Module
	names []string // sorted, "default" included
}

// goModuleLocked builds the record of a Go module. Linking needs the
// export names before any VU exists, so the module is instantiated once in
// a scratch runtime to learn them.
func (l *loader) goModuleLocked(name string, mod modules.Module) (*goModule, error) {
	probe := &vu{s: l.s, rt: sobek.New()}
	reg := metrics.NewRegistry()
	metrics.RegisterBuiltin(reg)
	probe.initEnv = &modules.InitEnv{Registry: reg, CWD: l.s.dir, Shared: &modules.Shared{Get: probeShared}, Logf: func(string, ...any) {}}
	probe.ctx = contextBackground
	exp, err := instantiate(probe, mod)
	if err != nil {
		return nil, fmt.Errorf("module %q failed to initialise: %v", name, err)
	}
	names := make([]string, 0, len(exp.Named)+1)
	for k := range exp.Named {
		if k != "default" {
			names = append(names, k)
		}
	}
	names = append(names, "default")
	sort.Strings(names)
	m := &goModule{l: l, name: name, mod: mod, names: names}
	l.goMods[name] = m
	return m, nil
}

// probeShared builds shared data without sharing it: the probe runtime's
// data are thrown away.
func probeShared(_ string, build func() (any, error)) (any, error) { return build() }

// instantiate calls the module's Instantiate, turning a panic into an
// error: a module may throw a JavaScript exception while it initialises.
func instantiate(v *vu, mod modules.Module) (exp modules.Exports, err error) {
	defer func() {
		if r := recover(); r != nil {
			switch x := r.(type) {
			case *sobek.Exception:
				err = x
			case sobek.Value:
				err = errors.New(x.String())
			case error:
				err = x
			default:
				err = fmt.Errorf("%v", x)
			}
		}
	}()
	return mod.Instantiate(v)
}

func (m *goModule) record() sobek.ModuleRecord { return m }

// Link has nothing to link: a Go module imports nothing.
func (m *goModule) Link() error { return nil }

// GetExportedNames reports the module's exports.
func (m *goModule) GetExportedNames(cb func([]string), _ ...sobek.ModuleRecord) bool {
	cb(m.names)
	return true
}

// ResolveExport binds an export to this module's instance.
func (m *goModule) ResolveExport(name string, _ ...sobek.ResolveSetElement) (*sobek.ResolvedBinding, bool) {
	if _, ok := slices.BinarySearch(m.names, name); ok {
		return &sobek.ResolvedBinding{Module: m, BindingName: name}, false
	}
	return nil, false
}

// Evaluate instantiates the module for the VU that owns rt. sobek calls
// it for every import of the module, so the VU caches the instance.
func (m *goModule) Evaluate(rt *sobek.Runtime) *sobek.Promise {
	p, resolve, reject := rt.NewPromise()
	v := m.l.s.vuOf(rt)
	if v == nil {
		_ = reject(fmt.Errorf("module %q evaluated outside an init context", m.name))
		return p
	}
	inst, err := v.goInstance(m)
	if err != nil {
		_ = reject(err)
	} else {
		_ = resolve(inst)
	}
	return p
}

// goInstance is a Go module's exports in one runtime. Exports become
// JavaScript values when first used: an import binding is read lazily, and
// a script rarely uses everything a module offers.
type goInstance struct {
	rt      *sobek.Runtime
	exports modules.Exports
	names   []string
	values  map[string]sobek.Value
	// namespace is the object import * binds in modules run as
	// functions, made on first use.
	namespace *sobek.Object
}

// GetBindingValue returns an export, nil when there is no such export.
func (i *goInstance) GetBindingValue(name string) sobek.Value {
	if v, ok := i.values[name]; ok {
		return v
	}
	var v sobek.Value
	switch raw, ok := i.exports.Named[name]; {
	case name == "default" && i.exports.Default != nil:
		v = i.rt.ToValue(i.exports.Default)
	case name == "default":
		v = i.rt.NewDynamicObject(&moduleObject{i: i})
	case ok:
		v = i.rt.ToValue(raw)
	default:
		return nil
	}
	if i.values == nil {
		i.values = make(map[string]sobek.Value, 4)
	}
	i.values[name] = v
	return v
}

// moduleObject is the default export of a Go module that has none of its
// own: an object holding the named exports. As the namespace object of
// import * it holds the default export too.
type moduleObject struct {
	i         *goInstance
	namespace bool
}

func (o *moduleObject) Get(key string) sobek.Value {
	if key == "default" && !o.namespace {
		return nil
	}
	return o.i.GetBindingValue(key)
}

func (o *moduleObject) Set(key string, val sobek.Value) bool {
	if o.i.values == nil {
		o.i.values = map[string]sobek.Value{}
	}
	o.i.values[key] = val
	return true
}

func (o *moduleObject) Has(key string) bool { return o.Get(key) != nil }

func (o *moduleObject) Delete(string) bool { return false }

func (o *moduleObject) Keys() []string {
	keys := make([]string, 0, len(o.i.names))
	for _, n := range o.i.names {
		if n != "default" || o.namespace {
			keys = append(keys, n)
		}
	}
	return keys
}

// cjsRecord lets ES modules import a CommonJS module: its default export
// is module.exports and any other name reads a property of it.
type cjsRecord struct {
	l *loader
	f *fileModule
}

// Link has nothing to link: require() resolves at run time.
func (r *cjsRecord) Link() error { return nil }

// GetExportedNames reports only default: a CommonJS module's other names
// are known once it ran.
func (r *cjsRecord) GetExportedNames(cb func([]string), _ ...sobek.ModuleRecord) bool {
	cb([]string{"default"})
	return true
}

// ResolveExport binds any name to module.exports or one of its properties.
func (r *cjsRecord) ResolveExport(name string, _ ...sobek.ResolveSetElement) (*sobek.ResolvedBinding, bool) {
	return &sobek.ResolvedBinding{Module: r, BindingName: name}, false
}

// Evaluate runs the module in the VU that owns rt, once per VU.
func (r *cjsRecord) Evaluate(rt *sobek.Runtime) *sobek.Promise {
	return r.l.evaluate(rt, r.f, func(v *vu) (any, error) {
		mod, err := v.commonJS(r.f)
		return &cjsInstance{module: mod}, err
	})
}

// evaluate is the Evaluate of the module records the loader makes for
// modules that are not sobek's own: it runs instance in the VU that owns
// rt and settles the returned promise with the instance it makes.
func (l *loader) evaluate(rt *sobek.Runtime, f *fileModule, instance func(*vu) (any, error)) *sobek.Promise {
	p, resolve, reject := rt.NewPromise()
	v := l.s.vuOf(rt)
	if v == nil {
		_ = reject(fmt.Errorf("module %s evaluated outside an init context", f.key))
		return p
	}
	if in, err := instance(v); err != nil {
		_ = reject(err)
	} else {
		_ = resolve(in)
	}
	return p
}

type cjsInstance struct{ module *sobek.Object }

// GetBindingValue reads module.exports, or a property of it; the default
// export follows the __esModule interop (cjsDefault).
func (i *cjsInstance) GetBindingValue(name string) sobek.Value {
	exp := i.module.Get("exports")
	if name == "default" {
		return cjsDefault(exp)
	}
	if o, ok := exp.(*sobek.Object); ok {
		return o.Get(name)
	}
	return sobek.Undefined()
}

// cjsDefault is what `import x from` gives for a CommonJS module whose
// module.exports is exports: exports.default when the module says it was
// compiled from an ES module (exports.__esModule is truthy, as Babel,
// TypeScript and esbuild write it), else module.exports itself. k6 does
// the same, so `import chai from '.../k6chaijs/.../index.js'` is the
// library's default export, not the object around it.
func cjsDefault(exports sobek.Value) sobek.Value {
	if o, ok := exports.(*sobek.Object); ok {
		if flag := o.Get("__esModule"); flag != nil && flag.ToBoolean() {
			if d := o.Get("default"); d != nil {
				return d
			}
			return sobek.Undefined()
		}
	}
	return exports
}

// cjsNamespace is what `import * as ns from` gives for a CommonJS module,
// as in k6: an object holding module.exports' own enumerable properties
// (so a __esModule flag, defined non-enumerable, is left out, and a plain
// module has no default key).
func cjsNamespace(rt *sobek.Runtime, exports sobek.Value) sobek.Value {
	ns := rt.NewObject()
	if o, ok := exports.(*sobek.Object); ok {
		for _, k := range o.Keys() {
			_ = ns.Set(k, o.Get(k))
		}
	}
	return ns
}
