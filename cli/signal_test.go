package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/engine"
)

// The signal warning carries the seconds since the process started, as
// k6's log lines do; it was always [0000].
func TestSignalWarningStamp(t *testing.T) {
	sig := newFakeSignals(t)
	h := newHarness(t, "")
	old := processStart
	t.Cleanup(func() { processStart = old })
	processStart = time.Now().Add(-12*time.Second - 300*time.Millisecond)
	h.engine = func(ctx context.Context, _ engine.Config) error {
		sig.send()
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(10 * time.Second):
			return errors.New("context not cancelled by the signal")
		}
	}
	code, _, stderr := h.run(nil, "run", "s.js")
	if code != exitcode.ExternalAbort || !strings.Contains(stderr, "WARN[0012] received interrupt") {
		t.Errorf("code %d, want 105 and the warning stamped [0012]; stderr %q", code, stderr)
	}
}

// A signal while the script's init context runs (loading it) ends the run
// at once with 105; before, no handler was installed yet and the process
// died of the signal, as k6 does.
func TestSignalWhileLoading(t *testing.T) {
	sig := newFakeSignals(t)
	h := newHarness(t, "")
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	loadScript = func(string, loadOptions) (Script, error) {
		sig.send()
		<-release // an init context that never ends
		return h.script, nil
	}
	done := make(chan struct{})
	var (
		code   int
		stderr string
	)
	go func() {
		defer close(done)
		code, _, stderr = h.run(nil, "run", "s.js")
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not end on a signal while the script loaded")
	}
	if code != exitcode.ExternalAbort || !strings.Contains(stderr, "ERROR: test run aborted by signal while the script's init context ran") {
		t.Errorf("code %d, stderr %q", code, stderr)
	}
	if h.ran != nil {
		t.Error("the engine ran after a signal during loading")
	}
}

// sendWhenListening sends os.Interrupt once a command installed its
// handler.
func (f *fakeSignals) sendWhenListening(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.mu.Lock()
		ready := f.ch != nil
		f.mu.Unlock()
		if ready {
			f.send()
			return
		}
		if time.Now().After(deadline) {
			t.Error("the command installed no signal handler")
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A signal while merge --wait waits for a runner's file stops the wait:
// what was read is merged, the summary export is written whole and the
// merge exits 105, as a run stopped by a signal does. Before, merge had
// no handler: the signal killed it, leaving any file it was writing cut
// short (hostile probe 4, #6).
func TestMergeSignalStopsTheWait(t *testing.T) {
	sig := newFakeSignals(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.result"), filepath.Join(dir, "b.result")
	writeResultFile(t, a, "0:1/2", 5)
	writeResultFile(t, b, "1/2:1", 5)
	raw, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	// b's runner is still running: its file lacks its end line.
	lines := bytes.SplitAfter(raw, []byte("\n"))
	if err := os.WriteFile(b, bytes.Join(lines[:len(lines)-2], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	export := filepath.Join(dir, "summary.json")
	go sig.sendWhenListening(t)
	start := time.Now()
	h := newHarness(t, "")
	code, out, stderr := h.run(nil, "merge", "--wait", "30s", "--summary-export", export, dir)
	if code != exitcode.ExternalAbort || !strings.Contains(stderr, "received interrupt: stopping the wait") ||
		!strings.Contains(stderr, "ERROR: merge interrupted by signal") {
		t.Errorf("code %d, stderr %q", code, stderr)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the merge waited %s: the signal did not stop the wait", d)
	}
	if !strings.Contains(out, "iterations") {
		t.Errorf("no summary:\n%s", out)
	}
	b2, err := os.ReadFile(export)
	if err != nil || !json.Valid(b2) {
		t.Errorf("--summary-export: %v, valid JSON %v", err, json.Valid(b2))
	}
}

// A signal during compare's bootstrap stops it: exit 105, and the HTML
// page it would have written is not there, whole or in part. Before,
// compare had no handler and a long --resamples ran to its end.
func TestCompareSignalStopsTheBootstrap(t *testing.T) {
	sig := newFakeSignals(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.result"), filepath.Join(dir, "b.result")
	writeResultFile(t, a, "0:1", 50)
	writeResultFile(t, b, "0:1", 50)
	page := filepath.Join(dir, "cmp.html")
	go sig.sendWhenListening(t)
	start := time.Now()
	h := newHarness(t, "")
	// A billion resamples take hours: only the signal ends this.
	code, _, stderr := h.run(nil, "compare", "--metric", "iteration_duration", "--resamples", "1000000000", "--html", page, a, b)
	// Most often the signal comes in the bootstrap; on a loaded machine it
	// may come while the files are still read. Either way nothing is
	// written.
	if code != exitcode.ExternalAbort || !strings.Contains(stderr, "ERROR: compare: interrupted by signal") || !strings.Contains(stderr, "nothing was written") {
		t.Errorf("code %d, stderr %q", code, stderr)
	}
	if d := time.Since(start); d > 60*time.Second {
		t.Errorf("compare took %s after the signal", d)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*cmp.html*")); len(left) > 0 {
		t.Errorf("files left: %v", left)
	}
}
