package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/extension"
	"github.com/metronome-load/metronome/internal/extresolve"
	"github.com/metronome-load/metronome/js/modules"
)

// Automatic extension resolution, k6 v2's feature, opt-in here: with
// K6_AUTO_EXTENSION_RESOLUTION=true, `run` of a script that imports k6/x
// modules this binary lacks builds, once, a binary that has them (with
// metronome build, into a cache keyed by what the build is made of) and
// runs the same command line with it.

// The steps of resolution that reach outside the process are variables,
// so that tests can count builds and catch the hand-over.
var (
	// buildInto runs plan (metronome build) and leaves the binary at
	// plan.output.
	buildInto = func(ctx context.Context, g *globals, plan *buildPlan) error { return plan.run(ctx, g) }
	// handOver runs bin with the command line args and environment env in
	// this process's place and returns the error that carries its exit
	// code; on Unix it replaces the process (exec), so that the signals
	// and the exit code are the new binary's own.
	handOver = execBinary
	// probeVersion runs `bin version` and returns what it prints.
	probeVersion = func(ctx context.Context, bin string) ([]byte, error) {
		return commandOutput(ctx, bin, "version")
	}
)

// autoResolve does automatic extension resolution for the script at path,
// before run reads anything else. It reports false when there is nothing
// to do: resolution is off, the script is read from stdin or an archive,
// or this binary has every k6/x module the script imports. A script that
// cannot be read is left to the loader, which says so.
func autoResolve(ctx context.Context, g *globals, path string) (bool, error) {
	if on, _ := strconv.ParseBool(g.env[extresolve.Env]); !on || path == "-" || isArchive(path) {
		return false, nil
	}
	needs, err := extresolve.Scan(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return true, exitcode.Wrap(exitcode.ScriptException, err)
	}
	missing := false
	for _, n := range needs {
		if _, ok := modules.Lookup(n.Import); !ok {
			missing = true
		}
	}
	if !missing {
		return false, nil
	}
	mods, err := extresolve.ParseModules(g.env[extresolve.ModulesEnv])
	if err != nil {
		return true, exitcode.Wrap(exitcode.InvalidConfig, err)
	}
	bi, _ := debug.ReadBuildInfo()
	for spec, with := range builtIn(bi, extension.All()) {
		if _, ok := mods[spec]; !ok {
			mods[spec] = with
		}
	}
	withs, err := extresolve.Withs(needs, mods)
	if err != nil {
		return true, exitcode.Wrap(exitcode.ScriptException, err)
	}
	bin, err := provision(ctx, g, needs, withs)
	if err != nil {
		return true, err
	}
	return true, handOver(bin, commandLine(g), handOverEnv(g.env))
}

// provision returns the cached binary for withs, building it first when
// the cache has none.
func provision(ctx context.Context, g *globals, needs []extresolve.Need, withs []string) (string, error) {
	byHand := "metronome build --with " + strings.Join(withs, " --with ")
	fail := func(what string, err error) error {
		code := exitcode.ScriptException
		if exitcode.Of(err) == exitcode.ExternalAbort {
			code = exitcode.ExternalAbort
		}
		return exitcode.Errorf(code, "automatic extension resolution could not %s (%v); build the binary by hand with %s and run the script with ./metronome",
			what, err, byHand)
	}
	cache, err := extresolve.CacheDir(g.env)
	if err != nil {
		return "", fail("find its cache", err)
	}
	plan, err := planBuild(&buildFlags{with: withs}, "", g.env)
	if err != nil {
		return "", fail("plan the build", err)
	}
	key, err := buildKey(plan, g.env)
	if err != nil {
		return "", fail("key the build", err)
	}
	dir := filepath.Join(cache, key)
	bin := filepath.Join(dir, filepath.Base(plan.output))
	if st, err := os.Stat(bin); err == nil && st.Mode().IsRegular() {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fail("make its cache directory", err)
	}
	// Built under a name of its own and renamed once whole and checked,
	// so that the cache never holds a part of a binary: two runs that
	// build at once each rename a whole one.
	tmp, err := os.CreateTemp(dir, ".build-*")
	if err != nil {
		return "", fail("make its cache directory", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	plan.output = tmp.Name()
	fmt.Fprintf(g.stderr, "automatic extension resolution: building metronome with %s into %s, once; later runs reuse it\n",
		strings.Join(withs, ", "), dir)
	// Ctrl+C stops the Go tool.
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sig := make(chan os.Signal, 1)
	stop := notifySignals(sig)
	go func() {
		select {
		case <-sig:
			cancel()
		case <-bctx.Done():
		}
	}()
	err = buildInto(bctx, g, plan)
	stop()
	if err != nil {
		return "", fail("build a binary with "+importList(needs), err)
	}
	out, err := probeVersion(ctx, tmp.Name())
	if err != nil {
		return "", fail("run the binary it built", err)
	}
	for _, n := range needs {
		if !bytes.Contains(out, []byte(", "+n.Import+" [js module]")) {
			return "", fail("use the binary it built", fmt.Errorf("%s does not provide %s", strings.Join(withs, ", "), n.Import))
		}
	}
	if err := os.Rename(tmp.Name(), bin); err != nil {
		return "", fail("keep the binary it built", err)
	}
	return bin, nil
}

// buildKey names the build of plan: its modules and replacements, what
// the local ones hold, and the target platform.
func buildKey(plan *buildPlan, env map[string]string) (string, error) {
	parts := append(append([]string{}, plan.requires...), plan.replaces...)
	for _, r := range plan.replaces {
		_, to, _ := strings.Cut(r, "=")
		if filepath.IsAbs(to) {
			h, err := extresolve.TreeHash(to)
			if err != nil {
				return "", err
			}
			parts = append(parts, to+"#"+h)
		}
	}
	goos, goarch := env["GOOS"], env["GOARCH"]
	if goos == "" {
		goos = runtime.GOOS
	}
	if goarch == "" {
		goarch = runtime.GOARCH
	}
	return extresolve.Key(parts, fmt.Sprintf("%s/%s cgo=%s %s", goos, goarch, env["CGO_ENABLED"], plan.stampVersion)), nil
}

// builtIn gives, for each k6/x module an extension module built into
// this binary registers, the --with argument that builds it in again:
// the new binary must have what the script imports from this one too,
// whether or not the registry lists it.
func builtIn(bi *debug.BuildInfo, exts []*extension.Extension) map[string]string {
	out := map[string]string{}
	if bi == nil {
		return out
	}
	mods := append([]*debug.Module{&bi.Main}, bi.Deps...)
	for _, e := range exts {
		m := moduleOf(mods, e.Package)
		if e.Kind != extension.JSModule || !strings.HasPrefix(e.Name, "k6/x/") || m == nil || m.Path == metronomeModule {
			continue
		}
		switch r := m.Replace; {
		case r == nil:
			out[e.Name] = m.Path + "@" + m.Version
		case r.Version == "":
			out[e.Name] = m.Path + "=" + r.Path
		default:
			out[e.Name] = m.Path + "=" + r.Path + "@" + r.Version
		}
	}
	return out
}

// importList is the needs' import paths, for messages.
func importList(needs []extresolve.Need) string {
	var names []string
	for _, n := range needs {
		names = append(names, n.Import)
	}
	return strings.Join(names, ", ")
}

// commandLine is the arguments this process was started with.
func commandLine(g *globals) []string {
	if g.args != nil {
		return g.args
	}
	return os.Args[1:]
}

// handOverEnv is the environment of the binary that takes over: this
// process's, with resolution turned off, as k6 does, since that binary has
// what the script imports.
func handOverEnv(env map[string]string) []string {
	out := make([]string, 0, len(env)+1)
	for k, v := range env {
		if k != extresolve.Env {
			out = append(out, k+"="+v)
		}
	}
	return append(out, extresolve.Env+"=false")
}

// errReported ends a command whose failure was already reported, by the
// binary that took over or as a script exception k6 logs: no ERROR line
// follows it.
var errReported = errors.New("already reported")

// commandOutput runs bin with args, for at most a minute, and returns
// its standard output.
func commandOutput(ctx context.Context, bin string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return exec.CommandContext(ctx, bin, args...).Output()
}
