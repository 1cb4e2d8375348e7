package compat

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

var (
	updateK6 = flag.Bool("update-k6", false, "re-run k6 on every corpus script and rewrite the NNN-name.k6.json files with what it did")
	dumpDir  = flag.String("metronome-out", "", "also write what metronome did on each script to `DIR`/NNN-name.json, in the record's format")
)

// metronomeBin is the binary TestMain builds (or $METRONOME_E2E_BINARY);
// k6Bin is $K6_BINARY, else empty: a k6 on PATH is not used, so that
// re-running k6 is asked for, not implied by a k6 user's machine.
var metronomeBin, k6Bin string

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	k6Bin = os.Getenv("K6_BINARY")
	if k6Bin != "" {
		if abs, err := filepath.Abs(k6Bin); err == nil {
			k6Bin = abs
		}
	}
	if b := os.Getenv("METRONOME_E2E_BINARY"); b != "" {
		metronomeBin, _ = filepath.Abs(b)
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "metronome-compat-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	metronomeBin = filepath.Join(dir, "metronome")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", metronomeBin, "../../cmd/metronome").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "compat: building metronome: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// record is a NNN-name.k6.json file: what k6 did, written by -update-k6,
// and the hand-written fields that say how to read it, which -update-k6
// keeps.
type record struct {
	K6Version string       `json:"k6_version"`
	K6        *observation `json:"k6"`
	// Approx holds the tolerances of values that depend on timing, and
	// ApproxWhy the arithmetic behind them.
	Approx    approx `json:"approx,omitempty"`
	ApproxWhy string `json:"approx_why,omitempty"`
	// Differs marks a known difference of metronome from k6.
	Differs *differs `json:"metronome_differs,omitempty"`
}

// differs is a known, reasoned difference. The test checks that metronome
// still differs exactly so: when the difference goes away the test fails,
// and whoever fixed it removes the mark.
type differs struct {
	Reason string `json:"reason"`
	// ExitCode, when set, is how metronome ends instead of running the
	// script like k6; nothing else is compared then. Stderr, when set, is
	// text metronome's stderr must contain.
	ExitCode *int   `json:"exit_code,omitempty"`
	Stderr   string `json:"stderr,omitempty"`
	// Log, when set, is metronome's own log lines, normalized as k6's
	// are, which they must equal: k6's layout around metronome's words.
	Log []string `json:"log,omitempty"`
	// Fields are the comparison keys (or prefixes) that differ; every
	// other key must match k6.
	Fields []string `json:"fields,omitempty"`
}

// k6Version is the k6 release the records come from.
const k6Version = "v2.2.0"

var scriptName = regexp.MustCompile(`^\d{3}-[a-z0-9-]+\.(js|ts)$`)

func corpus(t *testing.T) []string {
	entries, err := os.ReadDir("corpus")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && scriptName.MatchString(e.Name()) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

func recordPath(name string) string {
	return filepath.Join("corpus", strings.TrimSuffix(name, filepath.Ext(name))+".k6.json")
}

// TestCorpus runs every corpus script through metronome and compares the
// run with k6's recorded behaviour; with a k6 binary it first checks that
// k6 still behaves as recorded.
func TestCorpus(t *testing.T) {
	if *updateK6 && k6Bin == "" {
		t.Fatal("-update-k6 needs a k6 binary: set K6_BINARY")
	}
	eps := startEndpoints(t)
	names := corpus(t)
	if len(names) < 80 {
		t.Errorf("the corpus has %d scripts; issue #9 asks for at least 80", len(names))
	}
	// Most scripts spend their time in sleeps, short durations and
	// process start-up, so a few more processes than cores keep the suite
	// short without starving the timing-sensitive ones.
	sem := make(chan struct{}, max(4, runtime.GOMAXPROCS(0)*2))
	for _, name := range names {
		t.Run(strings.TrimSuffix(name, filepath.Ext(name)), func(t *testing.T) {
			t.Parallel()
			sem <- struct{}{}
			defer func() { <-sem }()
			checkScript(t, name, eps)
		})
	}
}

func checkScript(t *testing.T, name string, eps []endpoint) {
	s, err := loadScript(name)
	if err != nil {
		t.Fatal(err)
	}
	got := observe(t, metronomeBin, s, eps)
	if *dumpDir != "" {
		if err := writeRecord(filepath.Join(*dumpDir, strings.TrimSuffix(name, filepath.Ext(name))+".json"), &record{K6: got}); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := readRecord(recordPath(name))
	switch {
	case err == nil:
	case os.IsNotExist(err) && k6Bin != "":
		rec = &record{}
	case os.IsNotExist(err):
		t.Fatalf("%s has no recorded k6 behaviour: run `K6_BINARY=/path/to/k6 go test ./test/compat -run 'TestCorpus/%s' -update-k6`",
			name, strings.TrimSuffix(name, filepath.Ext(name)))
	default:
		t.Fatal(err)
	}
	if k6Bin != "" {
		k6got := observe(t, k6Bin, s, eps)
		switch {
		case *updateK6 || rec.K6 == nil:
			rec.K6Version, rec.K6 = k6Version, k6got
			if err := writeRecord(recordPath(name), rec); err != nil {
				t.Fatal(err)
			}
			if !*updateK6 {
				t.Logf("recorded k6's behaviour in %s", recordPath(name))
			}
		default:
			for _, m := range compare(rec.K6, k6got, rec.Approx) {
				t.Errorf("k6 (%s) no longer does what %s records: %s; re-record with -update-k6 if that is k6's new behaviour",
					k6Bin, recordPath(name), m.text)
			}
		}
	}
	mism := compare(rec.K6, got, rec.Approx)
	if rec.Differs == nil {
		for _, m := range mism {
			t.Errorf("%s: %s", name, m.text)
		}
		if len(mism) > 0 {
			t.Logf("metronome stderr:\n%s", got.stderr)
		}
		return
	}
	checkDiffers(t, name, rec.Differs, got, mism)
}

// checkDiffers holds metronome to a metronome_differs mark: it must still
// fail as stated, and differ from k6 only in the fields named.
func checkDiffers(t *testing.T, name string, d *differs, got *observation, mism []mismatch) {
	if d.Reason == "" {
		t.Errorf("%s: metronome_differs has no reason", recordPath(name))
	}
	stale := func(format string, a ...any) {
		t.Errorf("%s: metronome no longer differs from k6 as marked (%s): %s; if it now matches k6, remove metronome_differs from %s",
			name, d.Reason, fmt.Sprintf(format, a...), recordPath(name))
	}
	if d.Stderr != "" && !strings.Contains(got.stderr, d.Stderr) {
		stale("stderr lacks %q:\n%s", d.Stderr, got.stderr)
	}
	if d.Log != nil && !slices.Equal(got.Log, d.Log) {
		t.Errorf("%s: log lines %q, the mark says %q", name, got.Log, d.Log)
	}
	if d.ExitCode != nil {
		if got.ExitCode != *d.ExitCode {
			stale("exit code %d, the mark says %d", got.ExitCode, *d.ExitCode)
		}
		return
	}
	if len(mism) == 0 {
		stale("every compared value matches k6")
		return
	}
	for _, m := range mism {
		known := false
		for _, f := range d.Fields {
			if strings.HasPrefix(m.key, f) {
				known = true
			}
		}
		if !known {
			t.Errorf("%s: %s (not among the marked differences %q)", name, m.text, d.Fields)
		}
	}
	for _, m := range mism {
		t.Logf("known difference (%s): %s", d.Reason, m.text)
	}
}

func readRecord(path string) (*record, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r record
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if r.K6 == nil {
		return nil, fmt.Errorf("%s: no \"k6\" observation", path)
	}
	if r.K6.Metrics == nil {
		r.K6.Metrics = map[string]*metricObs{}
	}
	return &r, nil
}

// writeRecord writes a record (or the sweep's) as indented JSON.
func writeRecord(path string, r any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // check names hold HTML from k6/html scripts
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
