//go:build unix

package wholefile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A destination that is not a regular file (a device, a pipe) is written
// in place: /dev/stdout must stay a device.
func TestWriteToDevice(t *testing.T) {
	if err := Write(os.DevNull, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(os.DevNull)
	if err != nil || st.Mode().IsRegular() {
		t.Fatalf("%s is now %v (%v)", os.DevNull, st, err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	got := make(chan string)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	if err := Write(fifo, []byte("through the pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through the pipe" {
		t.Errorf("the pipe's reader got %q", s)
	}
}
