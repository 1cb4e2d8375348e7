package fs_test

import (
	"strings"
	"testing"

	"github.com/metronome-load/metronome/executor"
	_ "github.com/metronome-load/metronome/internal/js/modules/fs"
	"github.com/metronome-load/metronome/js/jstest"
)

// knownDifferences are the probes where metronome knowingly answers
// otherwise than k6 v2.2.0 did.
var knownDifferences = map[string]string{
	"keys": "metronome's namespace objects of Go modules also hold default (see docs/k6-compatibility.md)",
	"sub":  "k6 fills the whole ArrayBuffer behind a Uint8Array view; metronome fills only the view",
}

// TestAgainstK6 runs testdata/fs.js and compares each probe it prints
// ("name=value") with what k6 v2.2.0 printed for it (testdata/fs.k6.txt,
// recorded with `k6 run -q --summary-mode=disabled -i 1`).
func TestAgainstK6(t *testing.T) {
	files := jstest.ReadTestdata(t, "fs.js", "data.csv")
	r := jstest.Load(t, files, &jstest.Config{Main: "fs.js"})
	v, _ := r.NewVU(t, 1)
	if res := jstest.Iterate(v); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v:\n%s", res.Outcome, r.Stderr.String())
	}
	got := map[string]string{}
	for _, l := range r.Console() {
		k, v, _ := strings.Cut(l, "=")
		got[k] = v
	}
	compared := 0
	for _, p := range jstest.ReadRecorded(t, "testdata/fs.k6.txt", "=") {
		k, want := p.Name, p.Value
		if _, skip := knownDifferences[k]; skip {
			continue
		}
		compared++
		if got[k] != want {
			t.Errorf("%s:\n got %s\nk6   %s", k, got[k], want)
		}
	}
	if compared < 15 {
		t.Fatalf("only %d probes compared", compared)
	}
}
