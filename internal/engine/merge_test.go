package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	rtmetrics "runtime/metrics"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output/result"
	"github.com/metronome-load/metronome/summary"
)

// splitOptions is a test of 40 arrivals/s for 2 s (80 arrivals) whose
// thresholds are: iterations count<60, which holds on each quarter (20)
// and fails on the whole (80); http_req_duration p(99)<100, which holds
// everywhere; and a submetric's, corrected_latency{name:login}
// p(90)<1.5, which fails everywhere (login takes 2 ms).
const splitOptions = `{
  "scenarios": {"s": {"executor": "constant-arrival-rate", "rate": 40, "timeUnit": "1s", "duration": "2s", "preAllocatedVUs": 8}},
  "thresholds": {"iterations": ["count<60"], "http_req_duration": ["p(99)<100"], "corrected_latency{name:login}": ["p(90)<1.5"]},
  "summaryTrendStats": ["min", "med", "max", "p(90)", "p(99)"]%s
}`

// splitRun is one instance's run: its exit error, its export, the data
// its handleSummary got and what it printed.
type splitRun struct {
	err     error
	export  map[string]any
	handled map[string]any
	file    string
	out     string
}

// runInstance runs the fake script on segment seg of the quarters (""
// for the whole test), on virtual time, writing a result file.
func runInstance(t *testing.T, dir, name, seg string) splitRun {
	t.Helper()
	extra := ""
	if seg != "" {
		extra = fmt.Sprintf(`, "executionSegment": %q, "executionSegmentSequence": "0,1/4,2/4,3/4,1", "tags": {"instance_id": %q}`, seg, name)
	}
	var r splitRun
	r.file = filepath.Join(dir, name+".result")
	synctest.Test(t, func(t *testing.T) {
		// Each iteration sends a request named login, thinks, and sends
		// one named home (endpoints_test.go).
		s := &endpointsScript{fakeScript: &fakeScript{}}
		var out bytes.Buffer
		cfg := Config{
			Script: s, ScriptPath: "fake.js", Options: options(t, fmt.Sprintf(splitOptions, extra)),
			Outputs:       []string{"result=" + r.file},
			SummaryExport: filepath.Join(dir, name+".json"), SummaryMode: "compact", Quiet: true, NoColor: true,
			Stdout: &out, Stderr: &out,
		}
		r.err = Run(context.Background(), cfg)
		r.handled, r.out = s.summary, out.String()
	})
	r.export = readJSON(t, filepath.Join(dir, name+".json"))
	return r
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// mergeFiles runs Merge on the files with the fake script's
// handleSummary, and returns its error, export, handleSummary data and
// printed output.
func mergeFiles(t *testing.T, dir string, extra map[string][]string, paths ...string) (splitRun, string) {
	t.Helper()
	return mergeFilesWith(t, dir, func(cfg *MergeConfig) {
		if extra != nil {
			var err error
			if cfg.Thresholds, err = thresholdFlags(extra); err != nil {
				t.Fatal(err)
			}
		}
	}, paths...)
}

// mergeFilesWith is mergeFiles with the config changed by set.
func mergeFilesWith(t *testing.T, dir string, set func(*MergeConfig), paths ...string) (splitRun, string) {
	t.Helper()
	var files []*result.File
	tails := map[*result.File]*result.Tail{}
	// Files are named as given: relative to dir, as a user in it would.
	t.Chdir(dir)
	for _, p := range paths {
		if rel, err := filepath.Rel(dir, p); err == nil {
			p = rel
		}
		tail := result.NewTail(p)
		if _, err := tail.Poll(); err != nil {
			t.Fatal(err)
		}
		f, err := tail.Finish()
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		tails[f] = tail
	}
	var out bytes.Buffer
	s := &fakeScript{}
	export := filepath.Join(dir, "merged.json")
	os.Remove(export)
	cfg := MergeConfig{Files: files, Script: s, SummaryExport: export, SummaryMode: "compact", NoColor: true, Stdout: &out, Stderr: &out,
		Open: func(f *result.File) (io.ReadCloser, error) { return tails[f].Open() }}
	var reported *summary.Input
	cfg.Report = func(in *summary.Input) error { reported = in; return nil }
	set(&cfg)
	r := splitRun{err: Merge(context.Background(), cfg), handled: s.summary}
	if b, err := os.ReadFile(export); err == nil {
		json.Unmarshal(b, &r.export)
		if reported == nil {
			t.Error("the report got no summary")
		}
	}
	return r, out.String()
}

// thresholds returns each threshold's pass/fail in an export: metric →
// source → failed (k6's inverted booleans).
func thresholds(export map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for name, m := range export["metrics"].(map[string]any) {
		if th, ok := m.(map[string]any)["thresholds"].(map[string]any); ok {
			out[name] = th
		}
	}
	return out
}

// shape is the structure of a handleSummary data object: its keys, every
// level down, with the values of the leaves left out. The reasons of the
// generator's health account are left out too: which reasons held
// depends on how loaded the machine was during each run.
func shape(v any, prefix string, out *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			*out = append(*out, prefix+"/"+k)
			if prefix+"/"+k == "/metronome/health/reasons" {
				continue
			}
			shape(x, prefix+"/"+k, out)
		}
	case []any:
		for i, x := range v {
			shape(x, fmt.Sprintf("%s[%d]", prefix, i), out)
		}
	}
}

func shapeOf(v any) []string {
	var s []string
	shape(v, "", &s)
	slices.Sort(s)
	return s
}

// Four quarter instances and their merge against one instance of the same
// schedule, on virtual time (so both measure the very same latencies):
// the merge gets the single run's threshold verdicts and exit code (99),
// its counts and percentiles, and hands handleSummary data of the same
// shape; the count threshold holds on every quarter and fails on the
// union, as on the single run.
func TestMergeQuartersEqualsSingleRun(t *testing.T) {
	dir := t.TempDir()
	single := runInstance(t, dir, "single", "")
	var parts []string
	var quarterHealth []float64
	for i, seg := range []string{"0:1/4", "1/4:2/4", "2/4:3/4", "3/4:1"} {
		q := runInstance(t, dir, fmt.Sprint(i+1), seg)
		if exitcode.Of(q.err) != exitcode.ThresholdsFailed {
			t.Errorf("quarter %d: %v", i+1, q.err)
		}
		if got := thresholds(q.export)["iterations"]["count<60"]; got != false {
			t.Errorf("quarter %d: iterations count<60 failed=%v, want it to hold on a quarter", i+1, got)
		}
		if n := metricValue(t, q.export, "iterations", "count"); n != 20 {
			t.Errorf("quarter %d ran %v iterations, want 20", i+1, n)
		}
		lim := q.export["metrics"].(map[string]any)["generator_limited"].(map[string]any)
		quarterHealth = append(quarterHealth, lim["passes"].(float64)+lim["fails"].(float64))
		parts = append(parts, q.file)
	}
	merged, out := mergeFiles(t, dir, nil, parts...)

	if exitcode.Of(single.err) != exitcode.ThresholdsFailed || exitcode.Of(merged.err) != exitcode.ThresholdsFailed {
		t.Fatalf("exit: single %v, merged %v; want 99 both\n%s", single.err, merged.err, out)
	}
	if single.err.Error() != merged.err.Error() {
		t.Errorf("merged: %q, single: %q", merged.err, single.err)
	}
	want := thresholds(single.export)
	if !reflect.DeepEqual(thresholds(merged.export), want) || len(want) != 3 {
		t.Errorf("thresholds merged %v, single %v", thresholds(merged.export), want)
	}
	if want["iterations"]["count<60"] != true {
		t.Errorf("iterations count<60 holds on the single run: %v", want)
	}
	if a, b := metricValue(t, single.export, "iterations", "count"), metricValue(t, merged.export, "iterations", "count"); a != 80 || a != b {
		t.Errorf("iterations: single %v, merged %v; want 80", a, b)
	}
	for _, stat := range []string{"min", "med", "max", "p(90)", "p(99)"} {
		for _, m := range []string{"corrected_latency", "corrected_latency{name:login}", "http_req_duration", "iteration_duration"} {
			if a, b := metricValue(t, single.export, m, stat), metricValue(t, merged.export, m, stat); a != b {
				t.Errorf("%s %s: single %v, merged %v", m, stat, a, b)
			}
		}
	}
	if single.handled == nil || merged.handled == nil {
		t.Fatal("handleSummary was not called")
	}
	// The generator's health of the merge is the four instances' together.
	var quarters float64
	for _, q := range quarterHealth {
		quarters += q
	}
	if got := merged.handled["metronome"].(map[string]any)["health"].(map[string]any)["intervals"]; got != int64(quarters) || quarters < 4 {
		t.Errorf("merged health intervals %v, the quarters had %v", got, quarters)
	}
	if a, b := shapeOf(single.handled), shapeOf(merged.handled); !slices.Equal(a, b) {
		t.Errorf("handleSummary data shapes differ:\nsingle %v\nmerged %v", a, b)
	}
	if !strings.Contains(out, "80 intended") {
		t.Errorf("the merged summary has no account of the 80 arrivals:\n%s", out)
	}
	// The per-endpoint table of the union is the single run's.
	if a, b := section(single.out, "ENDPOINTS"), section(out, "ENDPOINTS"); a != b || !strings.Contains(a, "login") || !strings.Contains(a, "home") {
		t.Errorf("endpoints:\nsingle:\n%s\nmerged:\n%s", a, b)
	}

	// A threshold given at merge time, on a submetric, is evaluated on
	// the union too.
	extra, _ := mergeFiles(t, dir, map[string][]string{"corrected_latency{scenario:s}": {"max<1000"}, "iterations": {"count>=80"}}, parts...)
	th := thresholds(extra.export)
	if th["corrected_latency{scenario:s}"]["max<1000"] != false || th["iterations"]["count>=80"] != false || th["iterations"]["count<60"] != true {
		t.Errorf("with --threshold: %v", th)
	}
}

// Files that are not one test's, or do not cover it once, are refused with
// exit code 104 in one sentence naming them; a file cut short is merged
// for what it holds and the merge exits 105.
func TestMergeRefuses(t *testing.T) {
	dir := t.TempDir()
	var parts []string
	for i, seg := range []string{"0:1/2", "1/2:1"} {
		parts = append(parts, halfInstance(t, dir, fmt.Sprint(i+1), seg, "").file)
	}
	other := halfInstance(t, dir, "other", "1/2:1", `, "noSetup": true`).file
	for _, c := range []struct {
		name  string
		files []string
		code  int
		want  string
	}{
		{"mixed", []string{parts[0], other}, exitcode.InvalidConfig, "1.result and other.result come from different tests (their options differ in noSetup); merge only the result files of one test"},
		{"overlap", []string{parts[0], parts[1], parts[1]}, exitcode.InvalidConfig, "2.result (segment 1/2:1) and 2.result (segment 1/2:1) overlap"},
		{"missing", []string{parts[1]}, exitcode.InvalidConfig, "the files leave the segment 0:1/2 of the test out: the result file of the runner that ran it is missing"},
		{"threshold", parts, exitcode.InvalidConfig, `thresholds.nope: metric "nope" is not defined`},
	} {
		var extra map[string][]string
		if c.name == "threshold" {
			extra = map[string][]string{"nope": {"count<1"}}
		}
		r, _ := mergeFiles(t, dir, extra, c.files...)
		if exitcode.Of(r.err) != c.code || r.err == nil || !strings.Contains(r.err.Error(), c.want) {
			t.Errorf("%s: %v (exit %d), want %d %q", c.name, r.err, exitcode.Of(r.err), c.code, c.want)
		}
	}

	// The second half's runner was killed: its file lacks its last
	// lines.
	raw, err := os.ReadFile(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.result")
	lines := bytes.SplitAfter(raw, []byte("\n"))
	if err := os.WriteFile(cut, bytes.Join(lines[:len(lines)-4], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	r, out := mergeFiles(t, dir, nil, parts[0], cut)
	if exitcode.Of(r.err) != exitcode.ExternalAbort || !strings.Contains(r.err.Error(), "1 of them have no end line") {
		t.Errorf("cut: %v", r.err)
	}
	if !strings.Contains(out, "cut.result ends without its end line after") || r.export == nil {
		t.Errorf("the summary does not say the file was cut short, or was not written:\n%s", out)
	}
}

// halfInstance is runInstance with a quarter's worth of settings changed.
func halfInstance(t *testing.T, dir, name, seg, more string) splitRun {
	t.Helper()
	var r splitRun
	r.file = filepath.Join(dir, name+".result")
	synctest.Test(t, func(t *testing.T) {
		opts := fmt.Sprintf(splitOptions, fmt.Sprintf(`, "executionSegment": %q, "executionSegmentSequence": "0,1/2,1"%s`, seg, more))
		var out bytes.Buffer
		r.err = Run(context.Background(), Config{
			Script: &fakeScript{work: 30 * time.Millisecond}, ScriptPath: "fake.js", Options: options(t, opts),
			Outputs: []string{"result=" + r.file}, SummaryMode: "disabled", Quiet: true, Stdout: &out, Stderr: &out,
		})
	})
	return r
}

// section returns the part of a text summary from the heading that starts
// with name to the next heading.
func section(text, name string) string {
	i := strings.Index(text, "█ "+name)
	if i < 0 {
		return ""
	}
	rest := text[i+len("█ "):]
	if j := strings.Index(rest, "█"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// thresholdFlags turns sources by key into threshold definitions.
func thresholdFlags(in map[string][]string) (map[string][]metrics.ThresholdDef, error) {
	out := map[string][]metrics.ThresholdDef{}
	for k, srcs := range in {
		for _, s := range srcs {
			out[k] = append(out[k], metrics.ThresholdDef{Source: s})
		}
	}
	return out, nil
}

// heapObjects is the bytes of live and not yet swept heap objects.
func heapObjects() uint64 {
	s := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	rtmetrics.Read(s)
	return s[0].Value.Uint64()
}

// Merge folds each file into the union before it reads the next, so its
// memory is one file's totals whatever the number of files (hostile probe
// 4, #3: each file's totals were held until all were read, 778 MB for 250
// files of 33 KB and out of memory for 1,000).
func TestMergeHoldsOneFileAtATime(t *testing.T) {
	dir := t.TempDir()
	whole := runInstance(t, dir, "whole", "").file
	raw, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	// What one file's totals take: the mean over ten read and held at
	// once, so that what the runtime or an earlier test's goroutines free
	// meanwhile (once seen in CI: a reading of 4 KB, not ~45) does not
	// shrink the allowance below.
	const reads = 10
	runtime.GC()
	before := heapObjects()
	held := make([]*result.File, reads)
	for i := range held {
		if held[i], err = result.Read(bytes.NewReader(raw), "one"); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	perFile := (heapObjects() - min(heapObjects(), before)) / reads
	runtime.KeepAlive(held)
	held = nil
	nl := bytes.IndexByte(raw, '\n')
	var head map[string]map[string]json.RawMessage // options kept as written
	if err := json.Unmarshal(raw[:nl], &head); err != nil {
		t.Fatal(err)
	}
	// peakFor merges n copies of the file, as the n segments of one test,
	// and returns the most live heap the merge held over what it started
	// with.
	peakFor := func(n int) uint64 {
		many := t.TempDir()
		var paths []string
		for i := range n {
			head["header"]["executionSegment"] = json.RawMessage(fmt.Sprintf(`"%d/%d:%d/%d"`, i, n, i+1, n))
			h, _ := json.Marshal(head)
			p := filepath.Join(many, fmt.Sprintf("%d.result", i))
			if err := os.WriteFile(p, append(h, raw[nl:]...), 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
		var peak uint64
		deltas := 0
		watch := func(*result.Delta) {
			if deltas++; deltas%50 == 0 {
				// The live heap: what the merge holds, not the garbage
				// the collector has yet to take.
				runtime.GC()
				peak = max(peak, heapObjects())
			}
		}
		runtime.GC()
		base := heapObjects()
		r, out := mergeFilesWith(t, many, func(c *MergeConfig) { c.Visit = watch }, paths...)
		if exitcode.Of(r.err) != exitcode.ThresholdsFailed {
			t.Fatalf("merge: %v\n%s", r.err, out)
		}
		if iters := r.export["metrics"].(map[string]any)["iterations"].(map[string]any)["count"]; iters != float64(n*80) {
			t.Errorf("the merge counted %v iterations, want %d", iters, n*80)
		}
		return peak - min(peak, base)
	}
	// The live heap holds the union and the file being read, and a few
	// KB per file of what was looked at (its header): 50 files more add
	// about 20 files' totals (measured: 16–21), where holding every
	// file's totals would add 50 of them and more. The bound is three
	// quarters of that.
	const n = 50
	small, large := peakFor(n), peakFor(2*n)
	t.Logf("one file's totals: %d KB; peak live heap merging %d copies: %d KB, %d copies: %d KB", perFile>>10, n, small>>10, 2*n, large>>10)
	if grew := large - min(large, small); grew > n*perFile*3/4 {
		t.Errorf("merging %d files more took %d KB more heap, %.0f files' totals (%d KB each): the merge holds what it read", n, grew>>10, float64(grew)/float64(perFile), perFile>>10)
	}
}

// A file whose run ended early (a signal, exec.test.abort()) says so in
// its end line: the merge warns with the file and the reason and exits
// with the run's own code, rather than 0 for what looks like a whole run.
// A crossed threshold still wins, as in the run.
func TestMergeSaysARunStoppedEarly(t *testing.T) {
	dir := t.TempDir()
	var parts []string
	for i, seg := range []string{"0:1/2", "1/2:1"} {
		file := filepath.Join(dir, fmt.Sprint(i+1)+".result")
		synctest.Test(t, func(t *testing.T) {
			opts := fmt.Sprintf(`{"scenarios": {"s": {"executor": "constant-arrival-rate", "rate": 40, "timeUnit": "1s", "duration": "1s", "preAllocatedVUs": 4}},
  "executionSegment": %q, "executionSegmentSequence": "0,1/2,1"}`, seg)
			var out bytes.Buffer
			if err := Run(context.Background(), Config{
				Script: &fakeScript{work: 10 * time.Millisecond}, ScriptPath: "fake.js", Options: options(t, opts),
				Outputs: []string{"result=" + file}, SummaryMode: "disabled", Quiet: true, Stdout: &out, Stderr: &out,
			}); err != nil {
				t.Fatal(err)
			}
		})
		parts = append(parts, file)
	}
	raw, err := os.ReadFile(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(raw, []byte("\n"))
	last := len(lines) - 2 // the end line; the last element is empty
	if !bytes.HasPrefix(lines[last], []byte(`{"end":{`)) {
		t.Fatalf("line %q is no end line", lines[last])
	}
	lines[last] = bytes.Replace(lines[last], []byte(`{"end":{`), []byte(`{"end":{"stopped":{"code":108,"error":"test aborted: enough"},`), 1)
	stopped := filepath.Join(dir, "stopped.result")
	if err := os.WriteFile(stopped, bytes.Join(lines, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	r, out := mergeFiles(t, dir, nil, parts[0], stopped)
	want := "stopped.result: its run stopped before its end (exit 108): test aborted: enough"
	if exitcode.Of(r.err) != exitcode.ScriptAborted || !strings.Contains(r.err.Error(), want) {
		t.Errorf("merge: %v (exit %d), want 108 %q", r.err, exitcode.Of(r.err), want)
	}
	if !strings.Contains(out, want) || r.export == nil {
		t.Errorf("the summary does not say the run stopped early, or was not written:\n%s", out)
	}
	// The same files with a crossed threshold: 99, as the run gives.
	r, _ = mergeFiles(t, dir, map[string][]string{"iterations": {"count<1"}}, parts[0], stopped)
	if exitcode.Of(r.err) != exitcode.ThresholdsFailed {
		t.Errorf("merge with a crossed threshold: %v (exit %d), want 99", r.err, exitcode.Of(r.err))
	}
	// A forged code is not passed on.
	forged := bytes.ReplaceAll(bytes.Join(lines, nil), []byte(`"code":108`), []byte(`"code":0`))
	if err := os.WriteFile(stopped, forged, 0o644); err != nil {
		t.Fatal(err)
	}
	if r, _ = mergeFiles(t, dir, nil, parts[0], stopped); exitcode.Of(r.err) != exitcode.ExternalAbort {
		t.Errorf("merge of a stop with code 0: %v (exit %d), want 105", r.err, exitcode.Of(r.err))
	}
}
