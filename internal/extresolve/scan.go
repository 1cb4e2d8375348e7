package extresolve

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Need is a `k6/x/` module a script imports.
type Need struct {
	// Import is the module's path, "k6/x/NAME".
	Import string
	// Where is the first import of it found, "FILE:LINE".
	Where string
	// Constraint is the version a "use k6 with k6/x/NAME CONSTRAINT"
	// directive asks for; nil when none does.
	Constraint *semver.Constraints
}

// importSpec matches what names a module in source whose comments are
// blanked: `from 'X'` (import and export), `import 'X'`, `import('X')`
// and `require('X')`.
var importSpec = regexp.MustCompile(`(?:\bfrom\s*|\bimport\s*|\b(?:import|require)\s*\(\s*)(?:'([^'\n]+)'|"([^"\n]+)")`)

// Scan finds the `k6/x/` modules the script at path imports, itself and
// through the local files it imports (relative, absolute and file://
// specifiers; remote modules are not read), with the versions its "use
// k6" directives ask for. The scan is lexical, as k6's: an import inside a
// string or a template is taken for one, one inside a comment is not.
func Scan(path string) ([]Need, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	s := scanner{seen: map[string]bool{}, needs: map[string]*Need{}, constraints: map[string]*semver.Constraints{}}
	if err := s.file(abs, path); err != nil {
		return nil, err
	}
	out := make([]Need, 0, len(s.needs))
	for _, n := range s.needs {
		n.Constraint = s.constraints[n.Import]
		out = append(out, *n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Import < out[j].Import })
	return out, nil
}

type scanner struct {
	seen        map[string]bool
	needs       map[string]*Need
	constraints map[string]*semver.Constraints
}

// file scans one file; name is how messages call it.
func (s *scanner) file(abs, name string) error {
	if s.seen[abs] {
		return nil
	}
	s.seen[abs] = true
	src, err := os.ReadFile(abs)
	if err != nil {
		return err
	}
	if err := s.directives(src, name); err != nil {
		return err
	}
	code := blankComments(src)
	for _, m := range importSpec.FindAllSubmatchIndex(code, -1) {
		lo, hi := m[2], m[3]
		if lo < 0 {
			lo, hi = m[4], m[5]
		}
		spec := string(code[lo:hi])
		line := 1 + bytes.Count(code[:lo], []byte("\n"))
		switch {
		case strings.HasPrefix(spec, "k6/x/"):
			if _, ok := s.needs[spec]; !ok {
				s.needs[spec] = &Need{Import: spec, Where: fmt.Sprintf("%s:%d", name, line)}
			}
		case strings.HasPrefix(spec, "./"), strings.HasPrefix(spec, "../"), filepath.IsAbs(spec), strings.HasPrefix(spec, "file://"):
			p := strings.TrimPrefix(spec, "file://")
			if !filepath.IsAbs(p) {
				p = filepath.Join(filepath.Dir(abs), filepath.FromSlash(p))
			}
			rel := p
			if strings.HasPrefix(spec, ".") {
				rel = filepath.Join(filepath.Dir(name), filepath.FromSlash(spec))
			}
			// A file the scan cannot read is left to the loader, which
			// says so with the importing line.
			if err := s.file(p, rel); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
	}
	return nil
}

// directives reads the "use k6 with k6/x/NAME CONSTRAINT" directives of
// src: string literals at its start, before any other statement, as k6
// reads them ("use k6 CONSTRAINT", for k6 itself, is not metronome's
// business and is skipped).
func (s *scanner) directives(src []byte, name string) error {
	for _, d := range prologue(src) {
		d = strings.Join(strings.Fields(d), " ")
		rest, ok := strings.CutPrefix(d, "use k6 with ")
		if !ok || !strings.HasPrefix(rest, "k6/x/") {
			continue
		}
		mod, constraint, _ := strings.Cut(rest, " ")
		if constraint == "" {
			continue
		}
		c, err := semver.NewConstraint(constraint)
		if err != nil {
			return fmt.Errorf("%s: the directive %q: %q is not a version constraint: %v", name, d, constraint, err)
		}
		if prev, ok := s.constraints[mod]; ok && prev.String() != c.String() {
			return fmt.Errorf("%s: the directive %q contradicts an earlier one, which asks for %s %s", name, d, mod, prev)
		}
		s.constraints[mod] = c
	}
	return nil
}

// prologue returns the string literals that open src (after a #! line),
// skipping white space, semicolons and comments.
func prologue(src []byte) []string {
	if bytes.HasPrefix(src, []byte("#!")) {
		_, src, _ = bytes.Cut(src, []byte("\n"))
	}
	var out []string
	for i := 0; i < len(src); {
		switch c := src[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';':
			i++
		case c == '\'' || c == '"':
			end := bytes.IndexByte(src[i+1:], c)
			if end < 0 {
				return out
			}
			out = append(out, string(src[i+1:i+1+end]))
			i += end + 2
		case bytes.HasPrefix(src[i:], []byte("//")):
			end := bytes.IndexByte(src[i:], '\n')
			if end < 0 {
				return out
			}
			i += end + 1
		case bytes.HasPrefix(src[i:], []byte("/*")):
			end := bytes.Index(src[i+2:], []byte("*/"))
			if end < 0 {
				return out
			}
			i += end + 4
		default:
			return out
		}
	}
	return out
}

// blankComments returns a copy of src with the text of its comments
// replaced by spaces (line breaks kept, so lines still count), skipping
// over string and template literals.
func blankComments(src []byte) []byte {
	out := bytes.Clone(src)
	for i := 0; i < len(out); i++ {
		switch c := out[i]; {
		case c == '\'' || c == '"' || c == '`':
			for i++; i < len(out) && out[i] != c; i++ {
				if out[i] == '\\' {
					i++
				} else if out[i] == '\n' && c != '`' {
					break
				}
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			out[i], out[i+1] = ' ', ' '
			for i += 2; i < len(out) && !(out[i] == '*' && i+1 < len(out) && out[i+1] == '/'); i++ {
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
			if i+1 < len(out) {
				out[i], out[i+1] = ' ', ' '
				i++
			}
		}
	}
	return out
}
