package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
	"github.com/metronome-load/metronome/output/result"
)

// writeResultFile writes a result file of one instance: segment seg of halves,
// n iterations of 10 ms each, and a threshold iterations count<15.
func writeResultFile(t *testing.T, path, seg string, n int) {
	t.Helper()
	reg := metrics.NewRegistry()
	b := metrics.RegisterBuiltin(reg)
	opts := `{"scenarios":{"s":{"executor":"shared-iterations","vus":1,"iterations":20}},` +
		`"thresholds":{"iterations":["count<15"]},"executionSegment":"` + seg + `","executionSegmentSequence":"0,1/2,1"}`
	o, err := result.New(output.Params{Arg: path, Registry: reg, Options: json.RawMessage(opts), Script: "t.js"})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Start(); err != nil {
		t.Fatal(err)
	}
	tags := metrics.EmptyTags.With("scenario", "s")
	var batch []metrics.Sample
	for range n {
		batch = append(batch,
			metrics.Sample{Metric: b.Iterations, Tags: tags, Time: time.Now(), Value: 1},
			metrics.Sample{Metric: b.IterationDuration, Tags: tags, Time: time.Now(), Value: 10})
	}
	o.AddSamples(batch)
	o.(output.EndReceiver).ReceiveEnd(output.RunEnd{Elapsed: time.Second})
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
}

func runVerdictCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	g := &globals{stdout: &out, stderr: &errOut, env: map[string]string{}}
	cmd := newMergeCmd(g)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

// Two halves merge into the verdict of the whole: the threshold that
// holds on each half (10 < 15) fails on the union (20), exit 99.
func TestMergeResultFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.result"), filepath.Join(dir, "b.result")
	writeResultFile(t, a, "0:1/2", 10)
	writeResultFile(t, b, "1/2:1", 10)
	export := filepath.Join(dir, "summary.json")
	out, _, err := runVerdictCmd(t, "--summary-export", export, "--threshold", "iteration_duration{scenario:s}: max<20", a, b)
	if exitcode.Of(err) != exitcode.ThresholdsFailed || !strings.Contains(err.Error(), "thresholds on metrics 'iterations' have been crossed") {
		t.Fatalf("exit %d: %v\n%s", exitcode.Of(err), err, out)
	}
	if !regexp.MustCompile(`iterations\.+: 20 `).MatchString(out) || !strings.Contains(out, "✗ 'count<15'") ||
		!strings.Contains(out, "✓ 'max<20'") {
		t.Errorf("summary:\n%s", out)
	}
	if _, err := os.Stat(export); err != nil {
		t.Errorf("no --summary-export: %v", err)
	}
	// A directory stands for the result files in it.
	if _, _, err := runVerdictCmd(t, "--summary-mode", "disabled", dir); exitcode.Of(err) != exitcode.ThresholdsFailed {
		t.Errorf("directory: %v", err)
	}
	// A link in the directory to a runner's file counts as the file (a
	// shared volume may link them); before, it was skipped and the merge
	// said the segment's file was missing. A link to a FIFO is not read.
	linked := t.TempDir()
	if err := os.Symlink(a, filepath.Join(linked, "a.result")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(b, filepath.Join(linked, "b.result")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "fifo"), filepath.Join(linked, "c.result")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runVerdictCmd(t, "--summary-mode", "disabled", linked); exitcode.Of(err) != exitcode.ThresholdsFailed {
		t.Errorf("directory of links: %v", err)
	}
}

// Mistakes get one sentence and exit code 104.
func TestMergeResultMistakes(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.result")
	writeResultFile(t, a, "0:1/2", 1)
	hlog := filepath.Join(dir, "x.hlog")
	writeLog(t, hlog, 1, 2, "metric=corrected_latency")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{a, hlog}, "a.result is a result file and " + hlog + " an HdrHistogram log: merge one kind at a time"},
		{[]string{"--threshold", "iterations", a}, `--threshold "iterations": write it as METRIC[{tag:value}]: EXPRESSION`},
		{[]string{"--threshold", "iterations: counts<3", a}, `--threshold "iterations: counts<3": "counts<3": unknown aggregation`},
		{[]string{"--json", a}, "--json applies to HdrHistogram logs, not to result files"},
		{[]string{"--summary-export", "x.json", hlog}, "--summary-export applies to result files (-o result=FILE); " + hlog + " is an HdrHistogram log"},
		{[]string{"--summary-mode", "loud", a}, `--summary-mode: unknown summary mode "loud"`},
		{[]string{a}, "the files leave the segment 1/2:1 of the test out"},
		{[]string{filepath.Join(dir, "none.result")}, "cannot read " + filepath.Join(dir, "none.result")},
		{[]string{t.TempDir()}, "holds no result files"},
	} {
		_, _, err := runVerdictCmd(t, c.args...)
		if exitcode.Of(err) != exitcode.InvalidConfig || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d %v, want 104 %q", c.args, exitcode.Of(err), err, c.want)
		}
	}
}

// --wait waits for the runners' files to appear and be complete, as a
// merge Job started alongside k6-operator's runners must.
func TestMergeWaits(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.result"), filepath.Join(dir, "b.result")
	writeResultFile(t, a, "0:1/2", 5)
	go func() {
		time.Sleep(1500 * time.Millisecond)
		writeResultFile(t, b, "1/2:1", 5)
	}()
	start := time.Now()
	out, _, err := runVerdictCmd(t, "--wait", "20s", dir)
	if err != nil || !regexp.MustCompile(`iterations\.+: 10 `).MatchString(out) {
		t.Fatalf("%v\n%s", err, out)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("merged after %s, before the second file was there", d)
	}
	// Overlapping files cannot be mended by waiting: refused at once.
	dup := filepath.Join(dir, "c.result")
	raw, _ := os.ReadFile(a)
	os.WriteFile(dup, raw, 0o644)
	start = time.Now()
	_, _, err = runVerdictCmd(t, "--wait", "20s", dir)
	if exitcode.Of(err) != exitcode.InvalidConfig || !strings.Contains(err.Error(), "overlap") || time.Since(start) > 10*time.Second {
		t.Errorf("overlap with --wait: %v after %s", err, time.Since(start))
	}
	os.Remove(dup)
	// Without the second half, the wait ends and the merge says what is
	// missing.
	os.Remove(b)
	_, _, err = runVerdictCmd(t, "--wait", "1s", dir)
	if exitcode.Of(err) != exitcode.InvalidConfig || !strings.Contains(err.Error(), "leave the segment 1/2:1") {
		t.Errorf("after the wait: %v", err)
	}
}

// A file of its header alone (a runner killed at once, before it defined
// the metrics a threshold names) is news of the cut, exit 105, not a
// threshold on an undefined metric, exit 104 (hostile probe 4, #10).
// A file still being written when --wait ends is said to be so, not a
// killed runner's; one that stopped growing is a killed runner's.
func TestMergeCutShortFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.result"), filepath.Join(dir, "b.result")
	writeResultFile(t, a, "0:1/2", 5)
	writeResultFile(t, b, "1/2:1", 5)
	raw, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, raw[:bytes.IndexByte(raw, '\n')+1], 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = runVerdictCmd(t, "--threshold", "my_counter: count<10", a, b)
	if exitcode.Of(err) != exitcode.ExternalAbort || !strings.Contains(err.Error(), "ends before its first interval and has no end line") {
		t.Errorf("header alone: exit %d %v", exitcode.Of(err), err)
	}
	// b's runner goes on writing intervals past the wait.
	lines := bytes.SplitAfter(raw, []byte("\n"))
	var interval []byte
	for _, l := range lines {
		if bytes.HasPrefix(l, []byte(`{"interval":`)) {
			interval = l
		}
	}
	if err := os.WriteFile(b, bytes.Join(lines[:len(lines)-2], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		f, err := os.OpenFile(b, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return
		}
		defer f.Close()
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
				f.Write(interval)
			}
		}
	}()
	_, stderr, err := runVerdictCmd(t, "--wait", "2s", a, b)
	close(stop)
	<-done
	if exitcode.Of(err) != exitcode.ExternalAbort || !strings.Contains(stderr, b+" was still being written when the wait (--wait 2s) ended") {
		t.Errorf("still written: exit %d %v\n%s", exitcode.Of(err), err, stderr)
	}
	_, stderr, err = runVerdictCmd(t, "--wait", "2s", a, b)
	if exitcode.Of(err) != exitcode.ExternalAbort || !strings.Contains(stderr, "the runner was killed") {
		t.Errorf("no longer written: exit %d %v\n%s", exitcode.Of(err), err, stderr)
	}
}

// Result files merge with their HTML report (--report).
func TestMergeReport(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.result"), filepath.Join(dir, "b.result")
	writeResultFile(t, a, "0:1/2", 5)
	writeResultFile(t, b, "1/2:1", 7)
	report := filepath.Join(dir, "report.html")
	out, _, err := runVerdictCmd(t, "--threshold", "iterations: count<15", "--report", report, a, b)
	if err != nil || !strings.Contains(out, "wrote "+report) {
		t.Errorf("merge with --report: %v\n%s", err, out)
	}
}
