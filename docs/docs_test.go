package docs

import (
	"bufio"
	"os"
	"os/exec"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// trackedFiles lists the files git tracks, as slash-separated paths from
// the repository's root: the tree the tables describe, without build
// output or a user's local folders.
func trackedFiles(t *testing.T) []string {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git command: the tracked tree cannot be listed")
	}
	out, err := exec.Command(git, "-C", "..", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (git ls-files: %v)", err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

// layoutFolders returns the folders layout.md must list: every top-level
// folder, and every folder that holds a Go package (a .go file outside
// testdata and outside folders the go command ignores). It also returns
// every tracked folder, which a row may name beyond those.
func layoutFolders(files []string) (required, all map[string]bool) {
	required, all = map[string]bool{}, map[string]bool{}
	for _, f := range files {
		dir := path.Dir(f)
		if dir == "." {
			continue
		}
		for d := dir; d != "."; d = path.Dir(d) {
			all[d] = true
		}
		required[strings.SplitN(dir, "/", 2)[0]] = true
		if strings.HasSuffix(f, ".go") && !ignoredByGo(dir) {
			required[dir] = true
		}
	}
	return required, all
}

// ignoredByGo reports whether the go command skips dir when it lists
// packages: testdata, and names beginning with "." or "_".
func ignoredByGo(dir string) bool {
	for _, e := range strings.Split(dir, "/") {
		if e == "testdata" || strings.HasPrefix(e, ".") || strings.HasPrefix(e, "_") {
			return true
		}
	}
	return false
}

// tableRow is a row of a Markdown table whose first cell is a code span.
var tableRow = regexp.MustCompile("^\\| `([^`]+)` \\|(.*)\\|$")

// TestLayoutTableIsTheTree checks that layout.md lists every top-level
// folder and every Go package's folder once, each with a description, and
// no folder that does not exist.
func TestLayoutTableIsTheTree(t *testing.T) {
	required, all := layoutFolders(trackedFiles(t))
	f, err := os.Open("layout.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := map[string]int{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		m := tableRow.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		dir, what := m[1], strings.TrimSpace(m[2])
		if prev, ok := listed[dir]; ok {
			t.Errorf("layout.md:%d: %s is listed again (first on line %d)", n, dir, prev)
		}
		listed[dir] = n
		if !all[dir] {
			t.Errorf("layout.md:%d: %s is not a folder of the tree; remove its row", n, dir)
		}
		if what == "" {
			t.Errorf("layout.md:%d: %s has no description", n, dir)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	var missing []string
	for dir := range required {
		if _, ok := listed[dir]; !ok {
			missing = append(missing, dir)
		}
	}
	slices.Sort(missing)
	for _, dir := range missing {
		t.Errorf("layout.md has no row for %s; add one saying what it holds", dir)
	}
}

// mdLink is a Markdown link or image: its target, without a title.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestLinksLead checks that every relative link of the tracked Markdown
// files leads to a tracked file or folder, and that a #fragment names a
// heading of the page it points to.
func TestLinksLead(t *testing.T) {
	files := trackedFiles(t)
	_, dirs := layoutFolders(files)
	tracked := map[string]bool{}
	for _, f := range files {
		tracked[f] = true
	}
	anchors := map[string]map[string]bool{}
	for _, page := range files {
		if !strings.HasSuffix(page, ".md") {
			continue
		}
		b, err := os.ReadFile(path.Join("..", page))
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range outsideCode(string(b)) {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, frag, _ := strings.Cut(target, "#")
				to := page
				if file != "" {
					to = path.Join(path.Dir(page), file)
				}
				switch {
				case !tracked[to] && !dirs[strings.TrimSuffix(to, "/")]:
					t.Errorf("%s:%d: link %s leads to %s, which is not in the tree", page, n+1, target, to)
				case frag != "" && strings.HasSuffix(to, ".md"):
					if anchors[to] == nil {
						anchors[to] = headingAnchors(t, to)
					}
					if !anchors[to][frag] {
						t.Errorf("%s:%d: link %s: %s has no heading #%s", page, n+1, target, to, frag)
					}
				}
			}
		}
	}
}

// outsideCode returns the lines of a Markdown text, with the lines of
// fenced code blocks blanked so that their contents are not read as
// links or headings.
func outsideCode(text string) []string {
	lines := strings.Split(text, "\n")
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
			lines[i] = ""
			continue
		}
		if fenced {
			lines[i] = ""
		}
	}
	return lines
}

// headingAnchors returns the anchors a Markdown renderer such as GitHub's
// gives the headings of page: lower case, letters, digits, '-' and '_'
// kept, spaces turned into '-', everything else dropped.
func headingAnchors(t *testing.T, page string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path.Join("..", page))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, line := range outsideCode(string(b)) {
		text, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if !ok || !strings.HasPrefix(line, "#") {
			continue
		}
		var a strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(text)) {
			switch {
			case r == ' ':
				a.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				a.WriteRune(r)
			}
		}
		out[a.String()] = true
	}
	return out
}
