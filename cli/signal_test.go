package cli

import (
	"context"
	"errors"
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
