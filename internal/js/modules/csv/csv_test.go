package csv_test

import (
	"strings"
	"testing"

	"github.com/metronome-load/metronome/executor"
	_ "github.com/metronome-load/metronome/internal/js/modules/csv"
	_ "github.com/metronome-load/metronome/internal/js/modules/fs"
	"github.com/metronome-load/metronome/js/jstest"
)

// knownDifferences are the probes where metronome knowingly answers
// otherwise than k6 v2.2.0 did.
var knownDifferences = map[string]string{
	"keys": "metronome's namespace objects of Go modules also hold default (see docs/k6-compatibility.md)",
}

// TestAgainstK6 runs testdata/csv.js and compares each probe it prints
// ("name=value") with what k6 v2.2.0 printed for it (testdata/csv.k6.txt,
// recorded with `k6 run -q --summary-mode=disabled -i 1`).
func TestAgainstK6(t *testing.T) {
	files := jstest.ReadTestdata(t, "csv.js", "people.csv", "semi.csv")
	r := jstest.Load(t, files, &jstest.Config{Main: "csv.js"})
	for id := uint64(1); id <= 2; id++ {
		v, _ := r.NewVU(t, id)
		if res := jstest.Iterate(v); res.Outcome != executor.Completed {
			t.Fatalf("VU %d: outcome %v:\n%s", id, res.Outcome, r.Stderr.String())
		}
	}
	got := map[string][]string{}
	for _, l := range r.Console() {
		k, v, _ := strings.Cut(l, "=")
		got[k] = append(got[k], v)
	}
	compared := 0
	for _, p := range jstest.ReadRecorded(t, "testdata/csv.k6.txt", "=") {
		k, want := p.Name, p.Value
		if _, skip := knownDifferences[k]; skip {
			continue
		}
		compared++
		// Both VUs, reading the arrays the first one built, print the same.
		if g := got[k]; len(g) != 2 || g[0] != want || g[1] != want {
			t.Errorf("%s:\n got %q\nk6   %s", k, g, want)
		}
	}
	if compared < 15 {
		t.Fatalf("only %d probes compared", compared)
	}
}
