package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/extension"
)

// fakeResolution replaces the build, the version probe and the hand-over
// of automatic extension resolution for one test, and records them.
type fakeResolution struct {
	builds   []*buildPlan
	provides string // what the built binary's version lists
	handed   []string
	env      []string
}

func newFakeResolution(t *testing.T) *fakeResolution {
	f := &fakeResolution{}
	oldBuild, oldProbe, oldHand := buildInto, probeVersion, handOver
	t.Cleanup(func() { buildInto, probeVersion, handOver = oldBuild, oldProbe, oldHand })
	buildInto = func(_ context.Context, _ *globals, p *buildPlan) error {
		f.builds = append(f.builds, p)
		return os.WriteFile(p.output, []byte("binary"), 0o755)
	}
	probeVersion = func(context.Context, string) ([]byte, error) { return []byte(f.provides), nil }
	handOver = func(bin string, args, env []string) error {
		f.handed = append([]string{bin}, args...)
		f.env = env
		return nil
	}
	return f
}

func TestAutoResolveBuildsOnceAndHandsOver(t *testing.T) {
	f := newFakeResolution(t)
	f.provides = "metronome v9 (go, linux/amd64)\nExtensions:\n  github.com/grafana/xk6-faker v0.5.2, k6/x/faker [js module]\n  example.com/x (devel), k6/x/local [js module]\n"
	dir, cache, ext := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ext, "go.mod"), []byte("module example.com/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "s.js")
	if err := os.WriteFile(script, []byte("import faker from 'k6/x/faker';\nimport x from 'k6/x/local';\nexport default function () {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"K6_AUTO_EXTENSION_RESOLUTION": "1", "METRONOME_BINARY_CACHE": cache,
		"METRONOME_EXTENSION_MODULES": "k6/x/local=example.com/x=" + ext, "PATH": os.Getenv("PATH")}
	args := []string{"run", "-q", "-e", "A=B", script}
	for i := range 2 {
		var stderr bytes.Buffer
		if code := execute(args, &bytes.Buffer{}, &stderr, env); code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, code, stderr.String())
		}
		if len(f.builds) != 1 {
			t.Fatalf("run %d: %d builds, want 1", i, len(f.builds))
		}
		bins, _ := filepath.Glob(filepath.Join(cache, "*", "metronome"))
		if len(bins) != 1 || !slices.Equal(f.handed, append(bins[:1:1], args...)) {
			t.Fatalf("run %d: handed over %q, cache %q", i, f.handed, bins)
		}
		if !slices.Contains(f.env, "K6_AUTO_EXTENSION_RESOLUTION=false") || slices.Contains(f.env, "K6_AUTO_EXTENSION_RESOLUTION=1") {
			t.Errorf("run %d: the binary taking over gets resolution on: %q", i, f.env)
		}
		f.handed = nil
	}
	p := f.builds[0]
	if !slices.Contains(p.requires, "github.com/grafana/xk6-faker@v0.5.2") || !slices.Contains(p.replaces, "example.com/x="+ext) {
		t.Errorf("build requires %q, replaces %q", p.requires, p.replaces)
	}

	// An edit of the local module makes another build.
	if err := os.WriteFile(filepath.Join(ext, "x.go"), []byte("package x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := execute(args, &bytes.Buffer{}, &bytes.Buffer{}, env); code != 0 || len(f.builds) != 2 {
		t.Errorf("after an edit: exit %d, %d builds, want 0 and 2", code, len(f.builds))
	}
}

func TestAutoResolveRefusesABinaryWithoutTheModule(t *testing.T) {
	f := newFakeResolution(t)
	f.provides = "metronome v9\nExtensions:\n  example.com/other (devel), k6/x/other [js module]\n"
	dir, cache := t.TempDir(), t.TempDir()
	script := filepath.Join(dir, "s.js")
	if err := os.WriteFile(script, []byte("import x from 'k6/x/faker';\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"K6_AUTO_EXTENSION_RESOLUTION": "true", "METRONOME_BINARY_CACHE": cache,
		"METRONOME_EXTENSION_MODULES": "k6/x/faker=example.com/other@v1.0.0"}
	var stderr bytes.Buffer
	code := execute([]string{"run", script}, &bytes.Buffer{}, &stderr, env)
	want := "ERROR: automatic extension resolution could not use the binary it built (example.com/other@v1.0.0 does not provide k6/x/faker);" +
		" build the binary by hand with metronome build --with example.com/other@v1.0.0 and run the script with ./metronome\n"
	if code != 107 || !strings.HasSuffix(stderr.String(), want) || f.handed != nil {
		t.Errorf("exit %d, handed over %q, stderr:\n%s\nwant 107 and:\n%s", code, f.handed, stderr.String(), want)
	}
	if left, _ := filepath.Glob(filepath.Join(cache, "*", "*")); len(left) != 0 {
		t.Errorf("the refused binary stays in the cache: %q", left)
	}
}

// TestAutoResolveStaysOut checks that resolution does nothing when it is
// off, or when the script imports nothing this binary lacks.
func TestAutoResolveStaysOut(t *testing.T) {
	f := newFakeResolution(t)
	dir := t.TempDir()
	missing, present := filepath.Join(dir, "missing.js"), filepath.Join(dir, "present.js")
	for path, src := range map[string]string{missing: "import x from 'k6/x/faker';\n", present: "import http from 'k6/http';\n"} {
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		script string
		env    map[string]string
	}{
		{missing, map[string]string{}},
		{missing, map[string]string{"K6_AUTO_EXTENSION_RESOLUTION": "false"}},
		{present, map[string]string{"K6_AUTO_EXTENSION_RESOLUTION": "true", "METRONOME_BINARY_CACHE": t.TempDir()}},
	} {
		g := &globals{env: c.env, stderr: &bytes.Buffer{}}
		if done, err := autoResolve(context.Background(), g, c.script); done || err != nil {
			t.Errorf("%s with %v: resolved %v, %v", filepath.Base(c.script), c.env, done, err)
		}
	}
	if len(f.builds) != 0 || f.handed != nil {
		t.Errorf("built %d, handed over %q", len(f.builds), f.handed)
	}
}

// TestBuiltInExtensionsAreBuiltAgain checks the --with arguments that put
// this binary's own k6/x modules into the binary resolution builds: a
// published module at its version, a local replacement as its directory,
// nothing for metronome's own modules or other kinds.
func TestBuiltInExtensionsAreBuiltAgain(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Path: "metronome-custom"}, Deps: []*debug.Module{
		{Path: metronomeModule, Version: "v1.0.0"},
		{Path: "example.com/pub", Version: "v1.2.3"},
		{Path: "example.com/local", Version: "v0.0.0-00010101000000-000000000000", Replace: &debug.Module{Path: "/src/local"}},
		{Path: "example.com/fork", Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/fork2", Version: "v1.0.1"}},
	}}
	exts := []*extension.Extension{
		{Kind: extension.JSModule, Name: "k6/x/pub", Package: "example.com/pub/js"},
		{Kind: extension.JSModule, Name: "k6/x/local", Package: "example.com/local"},
		{Kind: extension.JSModule, Name: "k6/x/fork", Package: "example.com/fork"},
		{Kind: extension.JSModule, Name: "k6/x/own", Package: metronomeModule + "/examples/extension/counter"},
		{Kind: extension.JSModule, Name: "k6/http", Package: "example.com/pub/http"},
		{Kind: extension.Output, Name: "pubout", Package: "example.com/pub/out"},
	}
	want := map[string]string{"k6/x/pub": "example.com/pub@v1.2.3", "k6/x/local": "example.com/local=/src/local", "k6/x/fork": "example.com/fork=example.com/fork2@v1.0.1"}
	if got := builtIn(bi, exts); !reflect.DeepEqual(got, want) {
		t.Errorf("builtIn = %v, want %v", got, want)
	}
}

// TestAutoResolveFailures checks the exit codes of a build that fails (107,
// as k6) and of one stopped by a signal (105), and that neither leaves a
// binary in the cache or hands over.
func TestAutoResolveFailures(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
	}{
		{exitcode.Errorf(exitcode.Generic, "go build failed (exit status 1); the Go tool's messages are above"), 107},
		{exitcode.Errorf(exitcode.ExternalAbort, "metronome build was stopped by a signal before it finished"), 105},
	} {
		f := newFakeResolution(t)
		buildInto = func(context.Context, *globals, *buildPlan) error { return c.err }
		dir, cache := t.TempDir(), t.TempDir()
		script := filepath.Join(dir, "s.js")
		if err := os.WriteFile(script, []byte("import x from 'k6/x/faker';\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		code := execute([]string{"run", script}, &bytes.Buffer{}, &stderr, map[string]string{"K6_AUTO_EXTENSION_RESOLUTION": "true", "METRONOME_BINARY_CACHE": cache})
		want := "ERROR: automatic extension resolution could not build a binary with k6/x/faker (" + c.err.Error() +
			"); build the binary by hand with metronome build --with github.com/grafana/xk6-faker@v0.5.2 and run the script with ./metronome\n"
		if code != c.code || !strings.HasSuffix(stderr.String(), want) || f.handed != nil {
			t.Errorf("exit %d, handed over %q, stderr:\n%s\nwant %d and:\n%s", code, f.handed, stderr.String(), c.code, want)
		}
		if left, _ := filepath.Glob(filepath.Join(cache, "*", "*")); len(left) != 0 {
			t.Errorf("a failed build leaves %q", left)
		}
	}
}
