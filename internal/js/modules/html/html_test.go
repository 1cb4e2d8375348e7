package html_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/executor"
	_ "github.com/metronome-load/metronome/internal/js/modules/html"
	"github.com/metronome-load/metronome/js/jstest"
)

// knownDifferences are the probes where metronome knowingly answers
// otherwise than k6 v2.2.0 did, each with the reason.
var knownDifferences = map[string]string{
	"el.isEqualNode": "k6 says false for equal markup from two documents; metronome compares the markup",
	"el.qs":          "k6's querySelector(...).textContent() concatenates every match; metronome's is the first match's, as in the DOM",
	"single":         "Selection.single is undocumented in k6 and not offered",
	"map4":           "lists Selection's keys, which include the undocumented single",
	"keysSel":        "lists Selection's keys, which include the undocumented single",
	"select":         "k6 has more per-tag methods (autofocus, labels) than metronome offers",
	"textarea":       "k6 has more per-tag methods (readOnly)",
	"input":          "k6 has more per-tag methods (list, formAction/Method/Target/Enctype/NoValidate, labels, width, height)",
	"label":          "k6 has more per-tag methods (control, form)",
	"link":           "k6 has more per-tag methods (crossOrigin)",
	"script":         "k6 has more per-tag methods (crossOrigin)",
	"table":          "table, tr and td elements have no per-tag methods in metronome",
	"tr":             "table, tr and td elements have no per-tag methods in metronome",
	"td":             "table, tr and td elements have no per-tag methods in metronome",
	"button":         "k6 has more per-tag methods (formAction and the like, labels)",
	"img":            "k6 has more per-tag methods (width)",
	"text":           "k6's toString() of a text node is sometimes empty; metronome's is [object #text]",
	"comment":        "k6's nodeValue() of a comment is empty; metronome's is the comment's text, as in the DOM",
	"eachThis":       "k6 binds this in each() callbacks; metronome leaves it undefined",
}

// TestAgainstK6 runs each script of testdata and compares every probe it
// prints ("name => value") with what k6 v2.2.0 printed for the same
// script (testdata/*.k6.txt, recorded with
// `k6 run -q --summary-mode=disabled -i 1`).
func TestAgainstK6(t *testing.T) {
	scripts, _ := filepath.Glob("testdata/*.js")
	if len(scripts) == 0 {
		t.Fatal("no scripts in testdata")
	}
	for _, path := range scripts {
		name := strings.TrimSuffix(filepath.Base(path), ".js")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			r := jstest.Load(t, map[string]string{"script.js": string(src)}, nil)
			v, _ := r.NewVU(t, 1)
			if res := jstest.Iterate(v); res.Outcome != executor.Completed {
				t.Fatalf("outcome %v:\n%s", res.Outcome, r.Stderr.String())
			}
			got := map[string]string{}
			for _, l := range r.Console() {
				k, v, _ := strings.Cut(l, " => ")
				got[k] = v
			}
			compared := 0
			for _, p := range jstest.ReadRecorded(t, strings.TrimSuffix(path, ".js")+".k6.txt", " => ") {
				k, want := p.Name, p.Value
				if _, skip := knownDifferences[k]; skip {
					continue
				}
				compared++
				if got[k] != want {
					t.Errorf("%s:\n got %s\nk6   %s", k, got[k], want)
				}
			}
			if compared < 10 {
				t.Fatalf("only %d probes compared", compared)
			}
		})
	}
}
