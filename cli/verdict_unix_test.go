//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/metronome-load/metronome/exitcode"
)

// A named pipe given to merge is refused at once, with or without
// --wait: opening it waited for a writer, so merge --wait 5s hung for
// ever (hostile probe 4, #9).
func TestMergeRefusesANamedPipe(t *testing.T) {
	dir := t.TempDir()
	a, fifo := filepath.Join(dir, "1.result"), filepath.Join(dir, "2.result")
	writeResultFile(t, a, "0:1/2", 1)
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := runVerdictCmd(t, "--wait", "30s", a, fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if exitcode.Of(err) != exitcode.InvalidConfig || !strings.Contains(err.Error(), fifo+" is a named pipe, not a regular file") {
			t.Errorf("exit %d: %v", exitcode.Of(err), err)
		}
	case <-time.After(20 * time.Second):
		// Unblock the open so the test ends.
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("merge of a named pipe did not end within 20 s")
	}
}
