package compile

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
	"github.com/go-sourcemap/sourcemap"
	"github.com/grafana/sobek"
	"github.com/grafana/sobek/ast"
	"github.com/grafana/sobek/parser"

	"github.com/metronome-load/metronome/internal/extresolve"
	"github.com/metronome-load/metronome/js/modules"
)

// Loader finds, reads, transforms and parses the script's modules. Every
// module is loaded once per test and cached by its URL (file:///abs/path
// or https://...), so that each import of it yields the same record, which
// is what runtimes key their module instances by. It is safe for
// concurrent use: VUs resolve imports while they evaluate.
type Loader struct {
	cfg  Config
	host Host

	mu       sync.Mutex
	files    map[string]*Module
	byRecord map[sobek.ModuleRecord]*Module
	goMods   map[string]*GoModule
	opened   map[string]string // open() cache: path → content
	// local are the local files read so far, by absolute slash path, for
	// an archive.
	local    map[string][]byte
	wrappers map[Ref]*sobek.SourceTextModuleRecord
	// maps are the source-map files read so far, by module URL.
	maps map[string][]byte
	// pending are the rewritten ES modules of the current load that still
	// need the import-cycle check before VUs may run them as functions.
	pending []*Module

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

// Module is one JavaScript or TypeScript file. It is an ES module
// (esm) when it has import or export declarations or a top-level await,
// else a CommonJS module (cjs: a compiled function of module and exports).
type Module struct {
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
	deps []Ref
}

func (f *Module) record() sobek.ModuleRecord {
	if f.srec != nil {
		return f.srec
	}
	if f.esm != nil {
		return f.esm
	}
	return f.rec
}

// Ref is what a specifier resolves to: a *Module or a *GoModule.
type Ref interface {
	record() sobek.ModuleRecord
}

// New returns a loader that reads the modules of the script in cfg.Dir
// and evaluates them through host.
func New(cfg Config, host Host) *Loader {
	return &Loader{
		cfg:      cfg,
		host:     host,
		files:    map[string]*Module{},
		byRecord: map[sobek.ModuleRecord]*Module{},
		goMods:   map[string]*GoModule{},
		opened:   map[string]string{},
		local:    map[string][]byte{},
		wrappers: map[Ref]*sobek.SourceTextModuleRecord{},
		maps:     map[string][]byte{},
		client:   moduleClient(cfg.ModuleClient),
	}
}

func moduleClient(c *http.Client) *http.Client {
	if c != nil {
		return c
	}
	return &http.Client{Timeout: 60 * time.Second}
}

// FileURL is the URL of the local file at the absolute path abs.
func FileURL(abs string) *url.URL {
	return &url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
}

// LoadMain loads the main script and, recursively, its static imports.
func (l *Loader) LoadMain(u *url.URL) (*Module, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := l.loadFileLocked(u, "")
	l.finishLocked()
	return f, err
}

// Resolve returns the module spec names when imported or required from
// the module at base (nil: the main script's folder). Files it loads are
// linked, ready to evaluate.
func (l *Loader) Resolve(base *url.URL, spec string) (Ref, error) {
	l.mu.Lock()
	ref, err := l.resolveLocked(base, spec)
	l.finishLocked()
	var link *Module
	if f, ok := ref.(*Module); ok && err == nil && f.esm != nil && !f.linked {
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

// ResolveHook is sobek's host hook: ref is the importing module record.
func (l *Loader) ResolveHook(ref any, spec string) (sobek.ModuleRecord, error) {
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

// DynamicRecord returns the record import() evaluates for ref. sobek
// evaluates the result of import() directly, which only works for source
// text modules: a Go or CommonJS module is wrapped in a one-line module
// that re-exports it.
func (l *Loader) DynamicRecord(ref Ref) (sobek.ModuleRecord, error) {
	var spec string
	switch m := ref.(type) {
	case *GoModule:
		spec = m.name
	case *Module:
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
	case *GoModule:
		src = "export * from " + q + ";\n" + src
	case *Module:
		if m.srec != nil {
			src = "export * from " + q + ";\n"
			if _, ok := slices.BinarySearch(m.script.names, "default"); ok {
				src += "export { default } from " + q + ";\n"
			}
		}
	}
	w, err := sobek.ParseModule("metronome:import/"+spec, src, l.ResolveHook)
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

// URLOf returns the URL of a module record, nil when it is not a file.
func (l *Loader) URLOf(rec sobek.ModuleRecord) *url.URL {
	l.mu.Lock()
	defer l.mu.Unlock()
	if f := l.byRecord[rec]; f != nil {
		return f.url
	}
	return nil
}

func (l *Loader) resolveLocked(base *url.URL, spec string) (Ref, error) {
	if m, ok := l.goMods[spec]; ok {
		return m, nil
	}
	if mod, ok := modules.Lookup(spec); ok {
		return l.goModuleLocked(spec, mod)
	}
	if msg, ok := retiredModules[spec]; ok {
		return nil, &RetiredError{Msg: msg}
	}
	if strings.HasPrefix(spec, "k6/x/") {
		return nil, errors.New(extresolve.Missing(spec))
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
// resolved against the importing module, and so are absolute paths in a
// remote module: a remote module's imports stay remote. As in k6, modules
// come only from local files and https (plain http would let anyone on the
// path run code on the load generator), and a remote module may not load
// a local file.
func (l *Loader) resolveURL(base *url.URL, spec string) (*url.URL, error) {
	if base == nil {
		base = FileURL(l.cfg.Dir + "/")
	}
	remote := base.Scheme != "file"
	switch {
	case strings.Contains(spec, "://"):
		u, err := url.Parse(spec)
		if err != nil {
			return nil, err
		}
		switch {
		case u.Scheme != "file" && u.Scheme != "https":
			return nil, fmt.Errorf("only supported schemes for imports are file and https, %s has `%s`", spec, u.Scheme)
		case u.Scheme == "file" && remote:
			origin := *base
			origin.Path, origin.RawQuery, origin.Fragment = path.Dir(base.Path), "", ""
			return nil, fmt.Errorf("origin (%s) not allowed to load local file: %s", &origin, spec)
		}
		return u, nil
	case remote && strings.HasPrefix(spec, "/"):
		return base.ResolveReference(&url.URL{Path: spec}), nil
	case filepath.IsAbs(spec):
		return FileURL(spec), nil
	case spec == "." || spec == ".." || strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../"):
		return base.ResolveReference(&url.URL{Path: spec}), nil
	}
	return nil, fmt.Errorf("unknown module %q: import built-in modules by name (\"k6/http\") and files by a relative or absolute path or a URL", spec)
}

// MaxRemoteModule is the largest module fetched over https: a server
// cannot make the load generator hold more than this for one import.
const MaxRemoteModule = 64 << 20

func (l *Loader) read(u *url.URL) ([]byte, error) {
	switch u.Scheme {
	case "file":
		b, err := l.readFile(filepath.FromSlash(u.Path))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s does not exist", filepath.FromSlash(u.Path))
		}
		return b, err
	case "https":
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
		b, err := io.ReadAll(io.LimitReader(resp.Body, MaxRemoteModule+1))
		if err == nil && len(b) > MaxRemoteModule {
			err = fmt.Errorf("cannot fetch %s: the module is larger than %d MiB", u, MaxRemoteModule>>20)
		}
		return b, err
	}
	return nil, fmt.Errorf("unsupported module URL %s", u)
}

// loadFileLocked loads the module at u and, for an ES module, everything it
// imports, so that linking never meets an unknown module. spec is how the
// module was named, for messages.
func (l *Loader) loadFileLocked(u *url.URL, spec string) (*Module, error) {
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
	f := &Module{url: u, key: key}
	if strings.EqualFold(path.Ext(u.Path), ".json") {
		// A JSON file is a CommonJS module exporting its content.
		p, err := sobek.Compile(key, "(function (module, exports) {module.exports = "+string(src)+"\n})", false)
		if err != nil {
			return nil, fmt.Errorf("%s is not valid JSON: %v", key, err)
		}
		return l.keepCommonJS(f, p), nil
	}
	prog, code, err := l.parse(key, u.Path, string(src))
	if err != nil {
		// Like k6, a file that is no ES module may still be CommonJS,
		// whose function body allows what a module does not (a
		// top-level return: jslib.k6.io's formdata).
		if p, cerr := compileCommonJS(key, string(src), l.maps[key]); cerr == nil {
			return l.keepCommonJS(f, p), nil
		}
		return nil, err
	}
	srcMap, mapped := l.maps[key]
	if mapped || hasInlineSourceMap(code) {
		l.mapped.Store(key, true)
	}
	if len(prog.ImportEntries) == 0 && len(prog.ExportEntries) == 0 && !prog.HasTLA {
		// No module syntax: CommonJS.
		if p, cerr := compileCommonJS(key, code, srcMap); cerr == nil {
			return l.keepCommonJS(f, p), nil
		}
	}
	rec, err := sobek.ModuleFromAST(prog, l.ResolveHook)
	if err != nil {
		var se *sobek.CompilerSyntaxError
		if errors.As(err, &se) && se.File == nil {
			return nil, &PosError{Name: key, Line: 1, Col: 1, Msg: "SyntaxError: " + se.Message}
		}
		return nil, err
	}
	f.esm = rec
	f.script = rewriteModule(key, prog, code)
	l.files[key] = f
	l.byRecord[rec] = f
	refs := map[string]Ref{}
	for _, spec := range importSpecifiers(prog) {
		dep, err := l.resolveLocked(u, spec.name)
		if err != nil {
			var pe *PosError
			if errors.As(err, &pe) {
				return nil, err
			}
			pos := prog.File.Position(spec.offset)
			return nil, &PosError{Name: key, Line: pos.Line, Col: pos.Column, Msg: err.Error(), Err: err}
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

// compileCommonJS compiles code as the function of module and exports a
// CommonJS module runs in. The wrapper keeps line numbers; a closing "})"
// line is skipped by sobek's source-map lookup. It gets srcMap, the map
// the module's own parse read, if any: a map that could not be read was
// reported then, and must not fail the wrapper.
func compileCommonJS(key, code string, srcMap []byte) (*sobek.Program, error) {
	wrapped, err := parser.ParseFile(nil, key, "(function (module, exports) {"+code+"\n})", 0,
		parser.WithSourceMapLoader(func(string) ([]byte, error) { return srcMap, nil }))
	if err != nil {
		return nil, err
	}
	return sobek.CompileAST(wrapped, false)
}

// keepCommonJS records f as the CommonJS module compiled to p.
func (l *Loader) keepCommonJS(f *Module, p *sobek.Program) *Module {
	f.cjs = p
	f.rec = &cjsRecord{l: l, f: f}
	l.files[f.key] = f
	l.byRecord[f.rec] = f
	return f
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
func (l *Loader) parse(key, path, src string) (*ast.Program, string, error) {
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
	return strings.HasPrefix(lastLine(code), "//# sourceMappingURL=")
}

// hasInlineSourceMap reports whether code ends with a sourceMappingURL
// comment that holds the map as a data URL.
func hasInlineSourceMap(code string) bool {
	return strings.HasPrefix(lastLine(code), "//# sourceMappingURL=data:")
}

func lastLine(code string) string {
	code = strings.TrimRight(code, "\n\r\t ")
	return code[strings.LastIndexByte(code, '\n')+1:]
}

// Column converts a column sobek reports for a position in the module
// named name to 1-based: through a source map it is 0-based. A module run
// as a function has its wrapper's head on its first line.
func (l *Loader) Column(name string, line, col int) int {
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
func (l *Loader) finishLocked() {
	if len(l.pending) == 0 {
		return
	}
	ok := map[*Module]bool{}
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
func importsResolve(f *Module, ok map[*Module]bool) bool {
	for _, imp := range f.script.imports {
		name := imp.name
		if imp.kind == ImportDefault {
			name = "default"
		}
		var names []string
		switch m := imp.ref.(type) {
		case *GoModule:
			names = m.names
		case *Module:
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
		if imp.kind == ImportNamed || imp.kind == ImportDefault {
			if _, found := slices.BinarySearch(names, name); !found {
				return false
			}
		}
	}
	return true
}

// inCycle reports whether f imports itself through its static imports.
func inCycle(f *Module) bool {
	seen := map[*Module]bool{}
	var reaches func(m *Module) bool
	reaches = func(m *Module) bool {
		for _, d := range m.deps {
			g, ok := d.(*Module)
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

func (l *Loader) parseSource(key, src string) (*ast.Program, error) {
	return parser.ParseFile(nil, key, src, 0, parser.IsModule, parser.WithSourceMapLoader(func(p string) ([]byte, error) {
		return l.sourceMap(key, p), nil
	}))
}

// sourceMap reads the local source map p that the module key refers to
// and keeps it in l.maps. Like k6, it warns about a map it cannot read or
// parse and goes on without it, so that a module shipped without its map
// still runs; a remote module's map is not fetched.
func (l *Loader) sourceMap(key, p string) []byte {
	u, err := url.Parse(p)
	if err != nil || (u.Scheme != "file" && u.Scheme != "") {
		return nil
	}
	b, err := os.ReadFile(filepath.FromSlash(u.Path))
	if err == nil {
		_, err = sourcemap.Parse(p, b)
	}
	if err != nil {
		if l.cfg.Warn != nil {
			l.cfg.Warn(fmt.Sprintf("Couldn't load source map for %s: %v", key, err))
		}
		return nil
	}
	l.maps[key] = b
	return b
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
			return "", &PosError{Name: key, Line: m.Location.Line, Col: m.Location.Column + 1, Msg: "SyntaxError: " + m.Text}
		}
		return "", &PosError{Name: key, Line: 1, Col: 1, Msg: "SyntaxError: " + m.Text}
	}
	return string(res.Code), nil
}

// readFile reads a local file from disk, or from the archive the script
// came from, and remembers it for an archive of this script. l.mu is held
// or the loader is not shared yet.
func (l *Loader) readFile(p string) ([]byte, error) {
	key := filepath.ToSlash(p)
	if files := l.cfg.Files; files != nil {
		b, ok := files[key]
		if !ok {
			return nil, fs.ErrNotExist
		}
		return b, nil
	}
	b, err := modules.ReadLocalFile(p) // as k6 reads it: /proc files are input/output errors
	if err == nil {
		l.local[key] = b
	}
	return b, err
}

// ReadOpened returns the content of a file for open(), read once per test
// and shared by the VUs.
func (l *Loader) ReadOpened(path string) (string, error) {
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

// GoModule is the record of a module implemented in Go. It is shared by
// every runtime; each VU instantiates the module once, when its init
// context first imports or requires it.
type GoModule struct {
	l     *Loader
	name  string
	mod   modules.Module
	names []string // sorted, "default" included
	named []string // names without "default"
}

// goModuleLocked builds the record of a Go module. Linking needs the
// export names before any VU exists, so the module is instantiated once in
// a scratch runtime to learn them.
func (l *Loader) goModuleLocked(name string, mod modules.Module) (*GoModule, error) {
	exp, err := l.host.Probe(mod)
	if err != nil {
		return nil, fmt.Errorf("module %q failed to initialise: %v", name, err)
	}
	names := make([]string, 0, len(exp.Named)+1)
	for k := range exp.Named {
		if k != "default" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	named := names
	names = append(slices.Clone(names), "default")
	sort.Strings(names)
	m := &GoModule{l: l, name: name, mod: mod, names: names, named: named}
	l.goMods[name] = m
	return m, nil
}

func (m *GoModule) record() sobek.ModuleRecord { return m }

// Link has nothing to link: a Go module imports nothing.
func (m *GoModule) Link() error { return nil }

// GetExportedNames reports the module's named exports: as in k6, a
// namespace object of a Go module has no default key, though the default
// export can be imported.
func (m *GoModule) GetExportedNames(cb func([]string), _ ...sobek.ModuleRecord) bool {
	cb(m.named)
	return true
}

// ResolveExport binds an export to this module's instance.
func (m *GoModule) ResolveExport(name string, _ ...sobek.ResolveSetElement) (*sobek.ResolvedBinding, bool) {
	if _, ok := slices.BinarySearch(m.names, name); ok {
		return &sobek.ResolvedBinding{Module: m, BindingName: name}, false
	}
	return nil, false
}

// Evaluate instantiates the module for the VU that owns rt. sobek calls
// it for every import of the module, so the VU caches the instance.
func (m *GoModule) Evaluate(rt *sobek.Runtime) *sobek.Promise {
	return m.l.evaluate(rt, m)
}

// cjsRecord lets ES modules import a CommonJS module: its default export
// is module.exports and any other name reads a property of it.
type cjsRecord struct {
	l *Loader
	f *Module
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
	return r.l.evaluate(rt, r.f)
}

// evaluate is the Evaluate of the module records the loader makes for
// modules that are not sobek's own: the host makes ref's instance in the
// VU that owns rt, which settles the returned promise.
func (l *Loader) evaluate(rt *sobek.Runtime, ref Ref) *sobek.Promise {
	p, resolve, reject := rt.NewPromise()
	if in, err := l.host.Instance(rt, ref); err != nil {
		_ = reject(err)
	} else {
		_ = resolve(in)
	}
	return p
}
