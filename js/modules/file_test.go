package modules

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// A regular file reads whole, a file:// URL is its path, and a file whose
// reported size is not what it holds (/proc/self/environ: size 0) is an
// input/output error, as k6's file cache makes it.
func TestReadLocalFile(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 4096, 1 << 20} {
		p := filepath.Join(dir, "f")
		want := make([]byte, size)
		for i := range want {
			want[i] = byte(i)
		}
		if err := os.WriteFile(p, want, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReadLocalFile(LocalPath("file://" + p))
		if err != nil || string(got) != string(want) {
			t.Errorf("%d bytes: got %d bytes, %v", size, len(got), err)
		}
	}
	if _, err := ReadLocalFile(dir); err == nil {
		t.Error("a directory was read")
	}
	if _, err := ReadLocalFile(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	if runtime.GOOS != "linux" {
		return
	}
	if _, err := ReadLocalFile("/proc/self/environ"); !errors.Is(err, syscall.EIO) || err.Error() != "input/output error" {
		t.Errorf("/proc/self/environ: %v, want input/output error", err)
	}
}
