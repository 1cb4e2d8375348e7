package extresolve

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Env names the variable that turns automatic extension resolution on,
// k6 v2's name for it. k6 has it on by default; metronome only when it is
// set to a true value (1, t, true, ...), since it runs the Go toolchain.
const Env = "K6_AUTO_EXTENSION_RESOLUTION"

// ModulesEnv names the variable that adds to or overrides the table:
// entries "k6/x/NAME=MODULE[@VERSION][=REPLACEMENT]", separated by spaces
// or commas, where what follows the first "=" is a --with argument of
// metronome build. It serves extensions the registry does not list and
// local checkouts.
const ModulesEnv = "METRONOME_EXTENSION_MODULES"

// CacheEnv names the variable that moves the cache of built binaries from
// its default, DIR/metronome/builds under the user's cache directory.
const CacheEnv = "METRONOME_BINARY_CACHE"

// Missing is the reason a binary without the module spec ("k6/x/NAME")
// gives: the module that provides it and the build line, or, for a name
// the registry does not know, where to read on.
func Missing(spec string) string {
	e, ok := Lookup(spec)
	if !ok {
		return fmt.Sprintf("unknown module %q: no extension built into this binary provides it, and k6's extension registry lists none that does;"+
			" if you have the Go module that registers it, build it in with metronome build --with MODULE"+
			" (see \"Using xk6 extensions\" in metronome's docs/extensions.md)", spec)
	}
	return fmt.Sprintf("unknown module %q: this binary lacks the extension that provides it, %s;"+
		" build a binary with it by running metronome build --with %s@%s and run the script with ./metronome,"+
		" or set %s=true to have metronome do so", spec, e.Module, e.Module, e.Latest(), Env)
}

// ParseModules reads the value of ModulesEnv: import path → --with
// argument.
func ParseModules(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, entry := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		spec, with, ok := strings.Cut(entry, "=")
		if !ok || !strings.HasPrefix(spec, "k6/x/") || len(spec) == len("k6/x/") || with == "" || strings.HasPrefix(with, "=") {
			return nil, fmt.Errorf("%s: %q: write each entry as k6/x/NAME=MODULE[@VERSION][=REPLACEMENT]", ModulesEnv, entry)
		}
		out[spec] = with
	}
	return out, nil
}

// Withs turns the needs of a script into the --with arguments of the
// build that provides them, sorted: an entry of modules when there is one,
// else the table's module at the newest listed version its constraint
// allows. Several imports of one module give one argument.
func Withs(needs []Need, modules map[string]string) ([]string, error) {
	var out []string
	for _, n := range needs {
		w, ok := modules[n.Import]
		if !ok {
			e, known := Lookup(n.Import)
			if !known {
				return nil, fmt.Errorf("%s: %s", n.Where, Missing(n.Import))
			}
			v, ok := e.Pick(n.Constraint)
			if !ok {
				return nil, fmt.Errorf("%s: %s %s: k6's extension registry lists no version of %s that satisfies it (it lists %s); name one in %s",
					n.Where, n.Import, n.Constraint, e.Module, strings.Join(e.Versions, ", "), ModulesEnv)
			}
			w = e.Module + "@" + v
		}
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Key names the build of withs for a metronome identified by base (its
// version, and what else makes one build differ from another, such as
// the target platform): a hash of both, the same whatever the order of
// withs.
func Key(withs []string, base string) string {
	sorted := slices.Sorted(slices.Values(withs))
	h := sha256.New()
	fmt.Fprintf(h, "%q\n", base)
	for _, w := range sorted {
		fmt.Fprintf(h, "%q\n", w)
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}

// CacheDir is where built binaries are kept: CacheEnv's value, else
// metronome/builds under os.UserCacheDir. env is the process environment.
func CacheDir(env map[string]string) (string, error) {
	if d := env[CacheEnv]; d != "" {
		return filepath.Abs(d)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for built binaries (%v): set %s", err, CacheEnv)
	}
	return filepath.Join(d, "metronome", "builds"), nil
}

// TreeHash is a digest of the files under dir that go into a build (names
// and contents; hidden files and folders such as .git, testdata folders
// and _test.go files left out): a local module's part of a build's key,
// so that an edited checkout is built again.
func TreeHash(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" && d.IsDir() || strings.HasSuffix(d.Name(), "_test.go")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%q %d\n", filepath.ToSlash(rel), info.Size())
		_, err = io.Copy(h, f)
		return err
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
