// Package k6api carries k6's extension API as metronome implements it:
// the Go modules go.k6.io/k6 (_v1, the import path of k6 v0.x and v1.x)
// and go.k6.io/k6/v2 (_v2), metronome's own code adapting k6's names onto
// metronome's kit. They sit in folders the go command skips, so that
// metronome's own build never compiles them, with their go.mod files
// stored as go.mod.txt, which go:embed accepts. metronome build writes
// them out and points both module paths at them with replace lines, so
// that an xk6 extension builds unchanged, offline, and no go.k6.io module
// is ever downloaded or published.
//
// To add a package of k6's API: write it under _v2 against metronome's
// public kit, and its aliases under _v1 at the same path. What one layer
// package needs of another's unexported state is exported from a file
// named metronome.go there, whose names k6 does not have; shared helpers
// that need none go in _v2/internal. The layer's own dependencies must be
// required by metronome's go.mod at the same versions
// (TestLayerRequiresMetronomesVersions), and TestXK6Extensions builds
// the test extensions of testdata against it.
package k6api

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

//go:embed all:_v1 all:_v2
var sources embed.FS

// The module paths the layer answers for, the folders they are written
// to under Write's directory, and the version a build requires them at:
// one above any k6 release on the path, which no extension's requirement
// reaches, so that the build's go.mod never needs a newer one. It is never
// downloaded; the replacement answers for every version.
var modules = []struct{ path, src, dir, version string }{
	{"go.k6.io/k6", "_v1", "k6", "v1.999.999"},
	{"go.k6.io/k6/v2", "_v2", "k6v2", "v2.999.999"},
}

// metronomeRequire is the requirement on metronome in the embedded go.mod
// files, whose version Write replaces with the one being built against.
const metronomeRequire = "github.com/metronome-load/metronome v0.0.0-00010101000000-000000000000"

// Write writes both modules under dir, their go.mod files requiring
// metronome at version, and returns the replacements for go mod edit,
// "MODULE=DIRECTORY", one per module path.
func Write(dir, version string) ([]string, error) {
	var replaces []string
	for _, m := range modules {
		to := filepath.Join(dir, m.dir)
		err := fs.WalkDir(sources, m.src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel := strings.TrimPrefix(strings.TrimPrefix(p, m.src), "/")
			out := filepath.Join(to, filepath.FromSlash(rel))
			if d.IsDir() {
				return os.MkdirAll(out, 0o755)
			}
			b, err := sources.ReadFile(p)
			if err != nil {
				return err
			}
			if path.Base(p) == "go.mod.txt" {
				out = filepath.Join(filepath.Dir(out), "go.mod")
				b = []byte(strings.Replace(string(b), metronomeRequire, "github.com/metronome-load/metronome "+version, 1))
			}
			return os.WriteFile(out, b, 0o644)
		})
		if err != nil {
			return nil, fmt.Errorf("writing k6's extension API for %s: %w", m.path, err)
		}
		replaces = append(replaces, m.path+"="+to)
	}
	return replaces, nil
}

// Requires are the requirements a build adds for the layer,
// "MODULE@VERSION". With them the build's go.mod already selects the
// layer for every extension, and the Go tool, which must otherwise load
// the whole module graph to add the requirement an extension brings, reads
// only the modules the binary is built from: a module cache filled by
// building metronome serves the build.
func Requires() []string {
	out := make([]string, len(modules))
	for i, m := range modules {
		out[i] = m.path + "@" + m.version
	}
	return out
}
