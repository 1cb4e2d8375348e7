package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestMemProfileWrittenAtLargerHeap checks that METRONOME_MEMPROFILE's
// writer replaces the file with a heap profile (gzipped protobuf) once
// the live heap has grown.
func TestMemProfileWrittenAtLargerHeap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mem.prof")
	stop, err := startMemProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Fatalf("before any growth: %v, %v; want an empty file", fi, err)
	}
	live := make([][]byte, 0, 64)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		live = append(live, make([]byte, 1<<20))
		runtime.GC()
		if b, _ := os.ReadFile(path); len(b) > 2 {
			if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
				t.Fatalf("the profile is not gzipped: % x", b[:2])
			}
			runtime.KeepAlive(live)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no profile written within 10s while the live heap grew to %d MB", len(live))
}
