package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAutoExtensionResolution runs a script that imports k6/x/probe, an
// extension this binary lacks, with K6_AUTO_EXTENSION_RESOLUTION=true:
// the first run builds a binary with the probe (from its local directory,
// offline, as TestXK6Extensions builds it) into the cache and runs the
// script with it; the second finds it there and builds nothing; the exit
// code is the script's. Without resolution, and for a module the offline
// build cannot fetch, the error says what to build.
func TestAutoExtensionResolution(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a metronome binary with the Go tool; skipped with -short")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH, so metronome build cannot be tested")
	}
	probe, err := filepath.Abs("../../internal/k6api/testdata/xk6probe")
	if err != nil {
		t.Fatal(err)
	}
	dir, cache := t.TempDir(), t.TempDir()
	scriptPath := filepath.Join(dir, "probe.js")
	writeFile(t, scriptPath, `import { check } from 'k6';
import { helper } from './lib.js';
export const options = { thresholds: { checks: ['rate==1'] } };
export default function () {
  const got = helper('resolved');
  console.log(got);
  check(got, { 'greeting as asked': (g) => g === 'hello, ' + __ENV.WANT });
}
`)
	writeFile(t, filepath.Join(dir, "lib.js"), "import probe from 'k6/x/probe';\nexport function helper(name) { return probe.greet(name); }\n")
	env := []string{
		"GOPROXY=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local",
		"K6_AUTO_EXTENSION_RESOLUTION=true",
		"METRONOME_BINARY_CACHE=" + cache,
		"METRONOME_EXTENSION_MODULES=k6/x/probe=example.com/xk6probe=" + probe,
	}
	args := []string{"run", "-q", "--no-summary", "-i", "1", "--log-format", "raw", scriptPath}
	building := "automatic extension resolution: building metronome with example.com/xk6probe=" + probe + " into " + cache

	first := metronome(t, runSpec{args: args, env: append(env, "WANT=resolved"), timeout: 10 * time.Minute})
	if first.code != 0 || !strings.Contains(first.stderr, building) || !strings.Contains(first.stderr, "hello, resolved") {
		t.Fatalf("first run: exit %d, want 0, the build announced and the probe's greeting:\n%s", first.code, first.stderr)
	}
	bins, _ := filepath.Glob(filepath.Join(cache, "*", "metronome"))
	if len(bins) != 1 {
		t.Fatalf("cache holds %q, want one binary", bins)
	}
	if left, _ := filepath.Glob(filepath.Join(cache, "*", ".build-*")); len(left) != 0 {
		t.Errorf("the build left %q behind", left)
	}

	second := metronome(t, runSpec{args: args, env: append(env, "WANT=resolved"), timeout: 2 * time.Minute})
	if second.code != 0 || strings.Contains(second.stderr, "building") || !strings.Contains(second.stderr, "hello, resolved") {
		t.Fatalf("second run: exit %d, want 0, no build and the probe's greeting:\n%s", second.code, second.stderr)
	}
	t.Logf("first run (build and run) %v, second run (from the cache) %v", first.elapsed.Round(time.Millisecond), second.elapsed.Round(time.Millisecond))

	// The cached binary's exit code is the command's: the check fails,
	// and so does the threshold on it.
	failed := metronome(t, runSpec{args: args, env: append(env, "WANT=other"), timeout: 2 * time.Minute})
	if failed.code != 99 || strings.Contains(failed.stderr, "building") {
		t.Errorf("failing threshold: exit %d, want 99 and no build:\n%s", failed.code, failed.stderr)
	}

	// Without resolution: the module and the build line.
	redis := filepath.Join(dir, "redis.js")
	writeFile(t, redis, "\nimport redis from 'k6/x/redis';\nexport default function () {}\n")
	off := metronome(t, runSpec{args: []string{"run", "-q", redis}, env: []string{"K6_AUTO_EXTENSION_RESOLUTION=false"}})
	want := fmt.Sprintf(" level=error msg=%q\n", "could not initialize '"+redis+"': could not load JS test 'file://"+filepath.ToSlash(redis)+"': "+
		redis+`:2:1: unknown module "k6/x/redis": this binary lacks the extension that provides it, github.com/grafana/xk6-redis;`+
		` build a binary with it by running metronome build --with github.com/grafana/xk6-redis@v0.4.2 and run the script with ./metronome,`+
		" or set K6_AUTO_EXTENSION_RESOLUTION=true to have metronome do so")
	if _, line, _ := strings.Cut(off.stderr, `"`+" "); off.code != 107 || !strings.HasPrefix(off.stderr, "time=") || " "+line != want {
		t.Errorf("without resolution: exit %d, stderr:\n%s\nwant 107 and:\n%s", off.code, off.stderr, want)
	}

	// With resolution but offline: the build fails, and the error says
	// which and how to build by hand.
	// The Go tool's own messages, which name files of the build's
	// temporary module, come first, so this run bypasses the check for
	// Go source positions.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "run", "-q", redis)
	cmd.Env = append(hermeticEnv(t), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	offline := run{stderr: stderr.String(), code: exitCode(t, ctx, err, "metronome run -q "+redis, 5*time.Minute, stderr.String())}
	lines := strings.Split(strings.TrimSpace(offline.stderr), "\n")
	last := lines[len(lines)-1]
	wantPrefix := "ERROR: automatic extension resolution could not build a binary with k6/x/redis ("
	wantSuffix := "); build the binary by hand with metronome build --with github.com/grafana/xk6-redis@v0.4.2 and run the script with ./metronome"
	if offline.code != 107 || !strings.HasPrefix(last, wantPrefix) || !strings.HasSuffix(last, wantSuffix) {
		t.Errorf("offline: exit %d, last line %q, want 107 and %q…%q:\n%s", offline.code, last, wantPrefix, wantSuffix, offline.stderr)
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 2 {
		t.Errorf("cache holds %d entries, want the probe's and the failed build's directory", len(entries))
	}
	if left, _ := filepath.Glob(filepath.Join(cache, "*", "*")); len(left) != 1 {
		t.Errorf("cache files %q, want only the probe's binary", left)
	}
}

// writeFile writes a test's file or fails the test.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
