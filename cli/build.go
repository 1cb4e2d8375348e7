package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/k6api"
)

func init() { addCommand(newBuildCmd) }

// buildFlags are the flags of `metronome build`.
type buildFlags struct {
	with    []string
	replace []string
	output  string
}

// newBuildCmd builds `metronome build [VERSION]`, which compiles a
// metronome binary with extensions, with xk6's command line: it writes a
// throwaway main module that blank-imports metronome's built-ins and every
// --with module, and runs the user's Go toolchain on it.
func newBuildCmd(g *globals) *cobra.Command {
	f := &buildFlags{}
	cmd := &cobra.Command{
		Use:   "build [VERSION]",
		Short: "Build a metronome binary with extensions (needs a Go toolchain)",
		Long: "build compiles metronome with the extension modules given by --with, using the Go\n" +
			"toolchain on PATH. VERSION is the metronome version to build against; by default it is\n" +
			"this binary's version, or, inside a metronome checkout, that checkout.\n" +
			"GOOS, GOARCH, CGO_ENABLED and GOFLAGS are passed to the Go tool.",
		Example: "  metronome build --with example.com/xk6-foo@v0.2.0\n" +
			"  metronome build v1.2.0 --with example.com/ext=../ext --output ./custom",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			version := ""
			if len(args) == 1 {
				version = args[0]
			}
			plan, err := planBuild(f, version, g.env)
			if err != nil {
				return err
			}
			// Ctrl+C stops the Go tool and still removes the temporary
			// module.
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			sig := make(chan os.Signal, 1)
			defer notifySignals(sig)()
			go func() {
				select {
				case <-sig:
					cancel()
				case <-ctx.Done():
				}
			}()
			return plan.run(ctx, g)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.with, "with", nil, "add the extension module `MODULE[@VERSION][=REPLACEMENT]` (repeatable; REPLACEMENT may be a local directory)")
	fl.StringArrayVar(&f.replace, "replace", nil, "replace a dependency, `MODULE=REPLACEMENT` (repeatable)")
	fl.StringVarP(&f.output, "output", "o", "", "write the binary to `FILE` (default ./metronome)")
	return cmd
}

// buildPlan is what `metronome build` will do: the requirements and
// replacements of the temporary main module, its imports and the output.
type buildPlan struct {
	// metronome is the version of metronome to require; metronomeDir, when
	// set, replaces it by a local checkout.
	metronome, metronomeDir string
	// stampVersion is the version to write into config.Version ("" keeps
	// the source's own).
	stampVersion string
	imports      []string
	requires     []string // "MODULE@VERSION"
	replaces     []string // "MODULE=REPLACEMENT" as go mod edit takes it
	output       string
}

// develVersion is the version a module replaced by a local directory is
// required at; it is the one the go command itself uses for such modules.
const develVersion = "v0.0.0-00010101000000-000000000000"

// develVersionOf is the version a local replacement of mod is required
// at: develVersion, with the major version of a path that has one
// ("example.com/m/v2", "gopkg.in/yaml.v3"), which Go requires of it.
func develVersionOf(mod string) string {
	i := strings.LastIndexAny(mod, "/.")
	if i < 0 || i+2 >= len(mod) || mod[i+1] != 'v' || mod[i+1:] == "v1" || (mod[i] == '.' && !strings.HasPrefix(mod, "gopkg.in/")) {
		return develVersion
	}
	major := mod[i+2:]
	if major[0] == '0' || strings.Trim(major, "0123456789") != "" {
		return develVersion
	}
	return "v" + major + strings.TrimPrefix(develVersion, "v0")
}

// planBuild checks the flags and works out the temporary main module.
// env is the process environment; cwd-relative paths are made absolute.
func planBuild(f *buildFlags, version string, env map[string]string) (*buildPlan, error) {
	p := &buildPlan{imports: []string{metronomeModule + "/builtin"}}
	replaced := map[string]bool{}
	for _, r := range f.replace {
		mod, repl, ok := strings.Cut(r, "=")
		if !ok || badModulePath(mod) || repl == "" {
			return nil, exitcode.Errorf(exitcode.InvalidConfig, "--replace %q: write it as MODULE=REPLACEMENT", r)
		}
		to, err := replacementTarget(repl)
		if err != nil {
			return nil, exitcode.Errorf(exitcode.InvalidConfig, "--replace %s: %v", r, err)
		}
		mod, _, _ = strings.Cut(mod, "@")
		p.replaces = append(p.replaces, mod+"="+to)
		replaced[mod] = true
	}
	for _, w := range f.with {
		spec, repl, hasRepl := strings.Cut(w, "=")
		mod, ver, hasVer := strings.Cut(spec, "@")
		if badModulePath(mod) || (hasVer && ver == "") || (hasRepl && repl == "") {
			return nil, exitcode.Errorf(exitcode.InvalidConfig, "--with %q: write it as MODULE[@VERSION][=REPLACEMENT]", w)
		}
		if mod == metronomeModule || (strings.HasPrefix(mod, metronomeModule+"/") && (hasVer || hasRepl)) {
			return nil, exitcode.Errorf(exitcode.InvalidConfig, "--with %s: metronome itself is not an extension; give its version as the argument of build", w)
		}
		if !slices.Contains(p.imports, mod) {
			p.imports = append(p.imports, mod)
		}
		if strings.HasPrefix(mod, metronomeModule+"/") {
			// A package of metronome's own module, such as its example
			// extension, comes with metronome's version.
			continue
		}
		switch {
		case hasRepl:
			to, err := replacementTarget(repl)
			if err != nil {
				return nil, exitcode.Errorf(exitcode.InvalidConfig, "--with %s: %v", w, err)
			}
			if !hasVer {
				ver = develVersionOf(mod)
			}
			p.requires = append(p.requires, mod+"@"+ver)
			p.replaces = append(p.replaces, mod+"="+to)
		case hasVer:
			p.requires = append(p.requires, mod+"@"+ver)
		}
		// A module without version or replacement is left to go build
		// -mod=mod, which resolves its latest version.
	}

	switch {
	case version != "":
		p.metronome = canonicalVersion(version)
		p.stampVersion = strings.TrimPrefix(p.metronome, "v")
	case replaced[metronomeModule]:
		p.metronome = develVersion
	default:
		if dir, ok := metronomeCheckout(); ok {
			p.metronome, p.metronomeDir = develVersion, dir
			break
		}
		v, ok := runningVersion()
		if !ok {
			return nil, exitcode.Errorf(exitcode.InvalidConfig,
				"this metronome (v%s) is a development build with no published version: name the version to build against, as in metronome build v1.2.3, or run build inside a metronome checkout", config.Version)
		}
		p.metronome, p.stampVersion = v, strings.TrimPrefix(v, "v")
	}
	p.requires = append([]string{metronomeModule + "@" + p.metronome}, p.requires...)
	if p.metronomeDir != "" {
		p.replaces = append(p.replaces, metronomeModule+"="+p.metronomeDir)
	}

	out := f.output
	if out == "" {
		out = "metronome"
		goos := env["GOOS"]
		if goos == "" {
			goos = runtime.GOOS
		}
		if goos == "windows" {
			out += ".exe"
		}
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return nil, exitcode.Errorf(exitcode.InvalidConfig, "--output %s: %v", out, err)
	}
	p.output = abs
	return p, nil
}

// badModulePath reports whether s cannot be a module path.
func badModulePath(s string) bool {
	return s == "" || strings.ContainsAny(s, " \t\"'`=\\") || strings.HasPrefix(s, "-")
}

// canonicalVersion adds the "v" that Go module versions begin with.
func canonicalVersion(v string) string {
	if v != "" && v[0] >= '0' && v[0] <= '9' {
		return "v" + v
	}
	return v
}

// replacementTarget turns REPLACEMENT into go mod edit's form: a local
// directory (one that starts with ".", "/" or exists) becomes an absolute
// path, which must hold a go.mod, and MODULE@VERSION stays as it is.
func replacementTarget(repl string) (string, error) {
	local := filepath.IsAbs(repl) || strings.HasPrefix(repl, ".")
	if !local {
		if st, err := os.Stat(repl); err == nil && st.IsDir() {
			local = true
		}
	}
	if !local {
		if mod, ver, ok := strings.Cut(repl, "@"); ok && !badModulePath(mod) && ver != "" {
			return repl, nil
		}
		return "", fmt.Errorf("%s is neither a local directory nor MODULE@VERSION", repl)
	}
	dir, err := filepath.Abs(repl)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return "", fmt.Errorf("directory %s has no go.mod", dir)
	}
	return dir, nil
}

// metronomeCheckout finds the metronome source tree that the working
// directory is in: the nearest directory, upwards, whose go.mod declares
// metronome's module path.
func metronomeCheckout() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if modulePath(filepath.Join(dir, "go.mod")) == metronomeModule {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// modulePath reads the module path declared by a go.mod file ("" when
// there is none).
func modulePath(gomod string) string {
	f, err := os.Open(gomod)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// runningVersion is the published metronome version this binary was built
// from: its module version when it was built by go install or by
// metronome build, else config.Version unless that is a development one.
func runningVersion() (string, bool) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range append([]*debug.Module{&bi.Main}, bi.Deps...) {
			if m.Path == metronomeModule && m.Replace == nil && published(m.Version) {
				return m.Version, true
			}
		}
	}
	v := canonicalVersion(config.Version)
	return v, published(v)
}

// published reports whether v looks like a version the module proxy
// could serve, as opposed to a development or local one.
func published(v string) bool {
	return strings.HasPrefix(v, "v") && !strings.Contains(v, "dev") && v != develVersion
}

// run writes the temporary main module and runs the Go tool on it,
// streaming its messages to stderr.
func (p *buildPlan) run(ctx context.Context, g *globals) error {
	goPath, ok := lookPath("go", g.env["PATH"])
	if !ok {
		return exitcode.Errorf(exitcode.Generic, "metronome build needs a Go toolchain, and there is no go command on PATH: install Go from https://go.dev/dl/")
	}
	dir, err := os.MkdirTemp("", "metronome-build-")
	if err != nil {
		return exitcode.Errorf(exitcode.Generic, "metronome build: %v", err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(p.mainSource()), 0o644); err != nil {
		return exitcode.Errorf(exitcode.Generic, "metronome build: %v", err)
	}

	if p.metronomeDir != "" {
		// The checkout's checksums vouch for metronome's dependencies, so
		// a build from a checkout needs no checksum database for them.
		if sum, err := os.ReadFile(filepath.Join(p.metronomeDir, "go.sum")); err == nil {
			if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
				return exitcode.Errorf(exitcode.Generic, "metronome build: %v", err)
			}
		}
	}
	against := "metronome " + p.metronome
	if p.metronomeDir != "" {
		against = "metronome from " + p.metronomeDir
	}
	fmt.Fprintf(g.stderr, "building %s with %d extension module(s) into %s\n", against, len(p.imports)-1, p.output)

	goCmd := goTool{ctx: ctx, path: goPath, dir: dir, env: buildEnv(g.env), stderr: g.stderr}.run
	if err := goCmd(g.stderr, "mod", "init", "metronome-custom"); err != nil {
		return err
	}
	seed, err := p.metronomeRequires(goCmd)
	if err != nil {
		return err
	}
	// k6's extension API, metronome's implementation, answers for
	// go.k6.io/k6 and go.k6.io/k6/v2, so that xk6 extensions build
	// unchanged; a module that needs neither never reads it.
	k6, err := p.k6Replaces(filepath.Join(dir, "k6api"))
	if err != nil {
		return exitcode.Errorf(exitcode.Generic, "metronome build: %v", err)
	}
	edit := []string{"mod", "edit"}
	for _, r := range slices.Concat(seed, k6api.Requires(), p.requires) {
		edit = append(edit, "-require="+r)
	}
	for _, r := range append(p.replaces, k6...) {
		edit = append(edit, "-replace="+r)
	}
	if err := goCmd(g.stderr, edit...); err != nil {
		return err
	}
	// -mod=mod lets go build add what the extensions need beyond
	// metronome's own requirements, as go mod tidy would, without loading
	// the whole module graph when nothing is missing.
	build := []string{"build", "-mod=mod", "-o", p.output}
	if p.stampVersion != "" {
		build = append(build, "-ldflags=-X "+metronomeModule+"/config.Version="+p.stampVersion)
	}
	if err := goCmd(g.stderr, append(build, ".")...); err != nil {
		return err
	}
	fmt.Fprintf(g.stderr, "built %s\n", p.output)
	return nil
}

// k6Replaces writes k6's extension API under dir and returns the
// replacements that point its module paths there, leaving out a path the
// user replaced with --replace.
func (p *buildPlan) k6Replaces(dir string) ([]string, error) {
	all, err := k6api.Write(dir, p.metronome)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range all {
		mod, _, _ := strings.Cut(r, "=")
		if !slices.ContainsFunc(p.replaces, func(u string) bool { return strings.HasPrefix(u, mod+"=") }) {
			out = append(out, r)
		}
	}
	return out, nil
}

// goTool runs the go command in the temporary module's directory.
type goTool struct {
	ctx       context.Context
	path, dir string
	env       []string
	stderr    io.Writer
}

// run runs go with args, its output to stdout and its messages to stderr,
// and turns a failure into one line with exit code 255 (105 when the
// context was cancelled by a signal).
func (t goTool) run(stdout io.Writer, args ...string) error {
	c := exec.CommandContext(t.ctx, t.path, args...)
	c.Dir, c.Env, c.Stdout, c.Stderr = t.dir, t.env, stdout, t.stderr
	// go mod init advises running go mod tidy, which metronome build does
	// not need: its messages are shown only when it fails.
	var quiet bytes.Buffer
	if args[0] == "mod" && args[1] == "init" {
		c.Stdout, c.Stderr = &quiet, &quiet
	}
	if err := c.Run(); err != nil {
		if t.ctx.Err() != nil {
			return exitcode.Errorf(exitcode.ExternalAbort, "metronome build was stopped by a signal before it finished")
		}
		_, _ = t.stderr.Write(quiet.Bytes())
		name := args[0]
		if name == "mod" {
			name += " " + args[1]
		}
		return exitcode.Errorf(exitcode.Generic, "go %s failed (%v); the Go tool's messages are above", name, err)
	}
	return nil
}

// metronomeRequires returns the requirements ("MODULE@VERSION") of the
// go.mod of the metronome the binary is built from: the checkout's or a
// local replacement's, else the published version's, which goCmd
// downloads. The temporary module requires them itself, so that its
// go.mod lists every module metronome's packages come from. The go
// command then builds it as it builds metronome, reading only the modules
// the binary needs. Without them it loads the whole module graph, go.mod
// files that nothing builds with included: github.com/ajstarks/svgo, a
// go 1.15 module whose requirements are never pruned, brings in
// github.com/ajstarks/deck/generate, which a module cache filled by
// building metronome does not hold.
func (p *buildPlan) metronomeRequires(goCmd func(io.Writer, ...string) error) ([]string, error) {
	src := metronomeModule + "@" + p.metronome
	for _, r := range p.replaces {
		if mod, to, _ := strings.Cut(r, "="); mod == metronomeModule {
			src = to
		}
	}
	gomod := filepath.Join(src, "go.mod")
	if !filepath.IsAbs(src) {
		var out bytes.Buffer
		if err := goCmd(&out, "mod", "download", "-json", src); err != nil {
			return nil, err
		}
		var m struct{ GoMod string }
		if err := json.Unmarshal(out.Bytes(), &m); err != nil || m.GoMod == "" {
			return nil, exitcode.Errorf(exitcode.Generic, "go mod download %s: no go.mod in its answer %q", src, out.String())
		}
		gomod = m.GoMod
	}
	var out bytes.Buffer
	if err := goCmd(&out, "mod", "edit", "-json", gomod); err != nil {
		return nil, err
	}
	var mf struct {
		Require []struct{ Path, Version string }
	}
	if err := json.Unmarshal(out.Bytes(), &mf); err != nil {
		return nil, exitcode.Errorf(exitcode.Generic, "go mod edit -json %s: %v", gomod, err)
	}
	reqs := make([]string, len(mf.Require))
	for i, r := range mf.Require {
		reqs[i] = r.Path + "@" + r.Version
	}
	return reqs, nil
}

// mainSource is the main package of the custom binary.
func (p *buildPlan) mainSource() string {
	var b strings.Builder
	b.WriteString("// Code generated by metronome build. DO NOT EDIT.\n\npackage main\n\nimport (\n\t\"os\"\n\n\t\"" +
		metronomeModule + "/cli\"\n\n")
	for _, imp := range p.imports {
		fmt.Fprintf(&b, "\t_ %q\n", imp)
	}
	b.WriteString(")\n\nfunc main() { os.Exit(cli.Execute()) }\n")
	return b.String()
}

// buildEnv is the Go tool's environment: the process's, with GOWORK off
// so that a go.work around the user's directory cannot change the
// temporary module.
func buildEnv(env map[string]string) []string {
	out := make([]string, 0, len(env)+1)
	for k, v := range env {
		if k != "GOWORK" {
			out = append(out, k+"="+v)
		}
	}
	sort.Strings(out)
	return append(out, "GOWORK=off")
}

// lookPath finds an executable named name in the directories of path
// (a PATH value), as the shell would.
func lookPath(name, path string) (string, bool) {
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		file := filepath.Join(dir, name)
		st, err := os.Stat(file)
		if err != nil || st.IsDir() {
			continue
		}
		if runtime.GOOS == "windows" || st.Mode()&0o111 != 0 {
			return file, true
		}
	}
	return "", false
}
