//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTool writes an executable shell script that prints out (with the
// shell's builtin printf, as PATH holds only the fakes) and exits with
// code, standing in for a peer.
func fakeTool(t *testing.T, dir, name, out string, code int) string {
	t.Helper()
	path := filepath.Join(dir, name)
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' '%s'\nexit %d\n", out, code)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

const (
	wrkUsage  = "Usage: wrk <options> <url>\n    -c, --connections <N>  Connections to keep open\n        --latency          Print latency statistics"
	wrk2Usage = wrkUsage + "\n    -R, --rate        <T>  work rate (throughput)"
)

func TestFindPeers(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	ctx := context.Background()

	t.Run("all present", func(t *testing.T) {
		dir := t.TempDir()
		fakeTool(t, dir, "k6", "k6 v2.2.0 (commit/x, go1.26, linux/amd64)", 0)
		fakeTool(t, dir, "wrk2", wrk2Usage, 1)
		fakeTool(t, dir, "wrk", wrkUsage, 1)
		t.Setenv("PATH", dir)
		t.Setenv("K6_BINARY", "")
		t.Setenv("WRK2_BINARY", "")
		p := findPeers(ctx)
		if p.k6 != filepath.Join(dir, "k6") || p.wrk2 != filepath.Join(dir, "wrk2") || p.wrk != filepath.Join(dir, "wrk") {
			t.Errorf("found %+v", p)
		}
	})

	t.Run("wrk2 built as wrk is not Debian's wrk", func(t *testing.T) {
		dir := t.TempDir()
		fakeTool(t, dir, "wrk", wrk2Usage, 1)
		t.Setenv("PATH", dir)
		t.Setenv("K6_BINARY", "")
		t.Setenv("WRK2_BINARY", "")
		p := findPeers(ctx)
		if p.wrk != "" || p.wrk2 != "" || p.k6 != "" {
			t.Errorf("found %+v, want nothing", p)
		}
		text := strings.Join(p.lines, "\n")
		for _, want := range []string{"k6: absent", "wrk2: absent", "is wrk2 (it takes -R)"} {
			if !strings.Contains(text, want) {
				t.Errorf("lines %q lack %q", text, want)
			}
		}
	})

	t.Run("from the environment", func(t *testing.T) {
		dir := t.TempDir()
		k6 := fakeTool(t, dir, "my-k6", "k6 v2.2.0", 0)
		wrk2 := fakeTool(t, dir, "wrk", wrk2Usage, 1) // wrk2's own build name
		t.Setenv("PATH", t.TempDir())
		t.Setenv("K6_BINARY", k6)
		t.Setenv("WRK2_BINARY", wrk2)
		p := findPeers(ctx)
		if p.k6 != k6 || p.wrk2 != wrk2 || p.wrk != "" {
			t.Errorf("found %+v", p)
		}
	})

	t.Run("impostors", func(t *testing.T) {
		dir := t.TempDir()
		k6 := fakeTool(t, dir, "k6", "something else", 0)
		notWrk2 := fakeTool(t, dir, "wrk2", wrkUsage, 1) // no -R
		t.Setenv("PATH", dir)
		t.Setenv("K6_BINARY", k6)
		t.Setenv("WRK2_BINARY", notWrk2)
		p := findPeers(ctx)
		if p.k6 != "" || p.wrk2 != "" {
			t.Errorf("found %+v, want neither", p)
		}
		t.Setenv("WRK2_BINARY", filepath.Join(dir, "missing"))
		p = findPeers(ctx)
		if p.wrk2 != "" || !strings.Contains(strings.Join(p.lines, "\n"), "cannot be run") {
			t.Errorf("missing wrk2: %+v", p)
		}
	})
}
