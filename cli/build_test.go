package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/exitcode"
)

// extModule writes a throwaway extension module, example.com/ext, into a
// temporary directory: a JS module k6/x/ext whose answer() returns 42 and
// an output "ext-out". body replaces the package's source when not empty.
func extModule(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	gomod := "module example.com/ext\n\ngo 1.26\n\nrequire " + metronomeModule + " " + develVersion + "\n"
	if body == "" {
		body = `// Package ext is a throwaway extension for metronome build's test.
package ext

import (
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/output"
)

func init() {
	modules.Register("k6/x/ext", modules.ModuleFunc(func(modules.VU) (modules.Exports, error) {
		return modules.Exports{Named: map[string]any{"answer": func() int { return 42 }}}, nil
	}))
	output.Register("ext-out", func(output.Params) (output.Output, error) { return nil, nil })
}
`
	}
	for name, text := range map[string]string{"go.mod": gomod, "ext.go": body} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// offlineEnv is the process environment with the module proxy turned
// off: everything the build needs is the local extension and metronome's
// own dependencies, which are in the module cache because this test's
// package was built from them, with their checksums in the checkout's
// go.sum.
func offlineEnv() map[string]string {
	env := environ()
	env["GOPROXY"] = "off"
	env["GOFLAGS"] = "-mod=mod"
	env["GOTOOLCHAIN"] = "local"
	return env
}

// TestBuildCustomBinary builds metronome with a throwaway extension from
// a local directory, against this checkout (found from the test's working
// directory), then runs a script that imports the extension and checks
// that version lists it. It runs the Go tool twice, which takes some tens
// of seconds, so -short skips it.
func TestBuildCustomBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a metronome binary with the Go tool; skipped with -short")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH, so metronome build cannot be tested")
	}
	ext := extModule(t, "")
	bin := filepath.Join(t.TempDir(), "custom")
	var out, errs bytes.Buffer
	code := execute([]string{"build", "--with", "example.com/ext=" + ext, "--output", bin}, &out, &errs, offlineEnv())
	if code != 0 {
		t.Fatalf("build exited %d:\n%s", code, errs.String())
	}

	script := writeFile(t, "s.js", `import { answer } from 'k6/x/ext';
export const options = { iterations: 1, vus: 1 };
export default function () { console.log('answer=' + answer()); }
`)
	run, err := exec.Command(bin, "run", "-q", "--no-summary", script).CombinedOutput()
	if err != nil || !strings.Contains(string(run), "answer=42") {
		t.Errorf("custom binary run: %v\n%s", err, run)
	}

	version, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("custom binary version: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(version)), "\n")
	want := []string{
		"Extensions:",
		"  example.com/ext (devel), k6/x/ext [js module]",
		"  example.com/ext (devel), ext-out [output]",
	}
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "metronome v") || !slices.Equal(lines[1:], want) {
		t.Errorf("custom binary version:\n%s\nwant a version line and\n%s", version, strings.Join(want, "\n"))
	}

	// A compile error in the extension: the Go tool's message reaches
	// stderr and build ends with one line and exit code 255.
	broken := extModule(t, "package ext\n\nvar x int = \"not an int\"\n")
	out.Reset()
	errs.Reset()
	code = execute([]string{"build", "--with", "example.com/ext=" + broken, "--output", bin + "2"}, &out, &errs, offlineEnv())
	if code != exitcode.Generic || !strings.Contains(errs.String(), "ext.go:3") ||
		!strings.Contains(errs.String(), "ERROR: go build failed") {
		t.Errorf("broken extension: exit %d, stderr:\n%s", code, errs.String())
	}
	if _, err := os.Stat(bin + "2"); err == nil {
		t.Error("a failed build left a binary behind")
	}
}

func TestBuildWithoutGoToolchain(t *testing.T) {
	env := environ()
	env["PATH"] = t.TempDir()
	var out, errs bytes.Buffer
	code := execute([]string{"build", "--with", "example.com/ext@v1.0.0", "--output", filepath.Join(t.TempDir(), "m")}, &out, &errs, env)
	msg := errs.String()
	if code != exitcode.Generic || strings.Count(msg, "\n") != 1 ||
		!strings.HasPrefix(msg, "ERROR: metronome build needs a Go toolchain, and there is no go command on PATH") {
		t.Errorf("exit %d, stderr %q", code, msg)
	}
}

func TestBuildBadFlags(t *testing.T) {
	ext := extModule(t, "")
	noMod := t.TempDir()
	for _, args := range [][]string{
		{"build", "--with", ""},
		{"build", "--with", "example.com/ext@"},
		{"build", "--with", "example.com/ext="},
		{"build", "--with", "example.com/ext=" + noMod},
		{"build", "--with", "example.com/ext=not a module"},
		{"build", "--with", metronomeModule},
		{"build", "--with", metronomeModule + "/builtin@v1.0.0"},
		{"build", "--replace", "example.com/ext"},
		{"build", "--replace", "example.com/ext=./no/such/dir"},
		{"build", "v1.0.0", "v2.0.0"},
		{"build", "--with", "example.com/ext=" + ext, "--bogus"},
	} {
		var out, errs bytes.Buffer
		code := execute(args, &out, &errs, environ())
		if code != exitcode.InvalidConfig || strings.Count(errs.String(), "\n") != 1 || !strings.HasPrefix(errs.String(), "ERROR: ") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errs.String())
		}
	}
}

func TestPlanBuild(t *testing.T) {
	ext := extModule(t, "")
	checkout, ok := metronomeCheckout()
	if !ok {
		t.Fatal("the test runs inside metronome's checkout, but it was not found")
	}
	p, err := planBuild(&buildFlags{
		with: []string{
			"example.com/a",
			"example.com/b@v1.2.3",
			"example.com/c=" + ext,
			"example.com/d@v0.4.0=example.com/fork@v0.4.1",
			"example.com/a",
			metronomeModule + "/examples/extension/counter",
		},
		replace: []string{"example.org/dep=example.org/dep2@v2.0.0"},
		output:  "out/custom",
	}, "", map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if p.output != filepath.Join(wd, "out/custom") {
		t.Errorf("output %q", p.output)
	}
	if p.metronomeDir != checkout || p.stampVersion != "" {
		t.Errorf("metronome from %q stamped %q, want the checkout %q, unstamped", p.metronomeDir, p.stampVersion, checkout)
	}
	wantImports := []string{metronomeModule + "/builtin", "example.com/a", "example.com/b", "example.com/c", "example.com/d", metronomeModule + "/examples/extension/counter"}
	wantRequires := []string{metronomeModule + "@" + develVersion, "example.com/b@v1.2.3", "example.com/c@" + develVersion, "example.com/d@v0.4.0"}
	wantReplaces := []string{"example.org/dep=example.org/dep2@v2.0.0", "example.com/c=" + ext, "example.com/d=example.com/fork@v0.4.1", metronomeModule + "=" + checkout}
	if !slices.Equal(p.imports, wantImports) || !slices.Equal(p.requires, wantRequires) || !slices.Equal(p.replaces, wantReplaces) {
		t.Errorf("imports %q\nrequires %q\nreplaces %q", p.imports, p.requires, p.replaces)
	}
	src := p.mainSource()
	for _, imp := range wantImports {
		if !strings.Contains(src, "\t_ \""+imp+"\"\n") {
			t.Errorf("main.go does not import %s:\n%s", imp, src)
		}
	}

	// An explicit version wins over the checkout and is stamped into the
	// binary; a Windows target gets metronome.exe.
	p, err = planBuild(&buildFlags{}, "1.4.0", map[string]string{"GOOS": "windows"})
	if err != nil {
		t.Fatal(err)
	}
	if p.metronomeDir != "" || p.requires[0] != metronomeModule+"@v1.4.0" || p.stampVersion != "1.4.0" || filepath.Base(p.output) != "metronome.exe" {
		t.Errorf("explicit version: %+v", p)
	}

	// Outside a checkout, a development build cannot name a version.
	t.Chdir(t.TempDir())
	if _, err := planBuild(&buildFlags{}, "", map[string]string{}); exitcode.Of(err) != exitcode.InvalidConfig ||
		!strings.Contains(err.Error(), "development build") {
		t.Errorf("outside a checkout: %v", err)
	}
}

// TestDevelVersionOf checks the version a local replacement is required
// at: the major version of the path, which Go refuses otherwise ("should
// be v2, not v0"), as for github.com/mostafa/xk6-kafka/v2.
func TestDevelVersionOf(t *testing.T) {
	for mod, want := range map[string]string{
		"example.com/ext":                 "v0.0.0-00010101000000-000000000000",
		"github.com/mostafa/xk6-kafka/v2": "v2.0.0-00010101000000-000000000000",
		"example.com/m/v12":               "v12.0.0-00010101000000-000000000000",
		"example.com/m/v1":                "v0.0.0-00010101000000-000000000000",
		"example.com/m/v0":                "v0.0.0-00010101000000-000000000000",
		"example.com/m/version":           "v0.0.0-00010101000000-000000000000",
		"example.com/m.v2":                "v0.0.0-00010101000000-000000000000",
		"gopkg.in/yaml.v3":                "v3.0.0-00010101000000-000000000000",
	} {
		if got := develVersionOf(mod); got != want {
			t.Errorf("develVersionOf(%q) = %q, want %q", mod, got, want)
		}
	}
}

// TestBuildStopsOnSignal runs build with a fake go command that hangs, and
// checks that Ctrl+C stops it with exit code 105 and removes the
// temporary module.
func TestBuildStopsOnSignal(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake go command is a shell script")
	}
	sig := newFakeSignals(t)
	bin := t.TempDir()
	started := filepath.Join(t.TempDir(), "started")
	fake := "#!/bin/sh\npwd > " + started + ".tmp && mv " + started + ".tmp " + started + "\nexec sleep 30\n"
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	env := environ()
	env["PATH"] = bin + string(os.PathListSeparator) + env["PATH"]
	done := make(chan int, 1)
	var out, errs bytes.Buffer
	go func() {
		done <- execute([]string{"build", "v1.0.0", "--output", filepath.Join(t.TempDir(), "m")}, &out, &errs, env)
	}()
	var moduleDir []byte
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var err error
		if moduleDir, err = os.ReadFile(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the fake go command did not start within 10s")
		}
	}
	sig.send()
	select {
	case code := <-done:
		if code != exitcode.ExternalAbort || !strings.Contains(errs.String(), "ERROR: metronome build was stopped by a signal") {
			t.Errorf("exit %d, stderr %q", code, errs.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("build did not stop within 10s of the signal")
	}
	if _, err := os.Stat(strings.TrimSpace(string(moduleDir))); !os.IsNotExist(err) {
		t.Errorf("the temporary module %s is still there (%v)", moduleDir, err)
	}
}
