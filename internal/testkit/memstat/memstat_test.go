package memstat

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
)

// Holding 64 MiB raises both measures by about that much, and dropping it
// lowers the live heap again.
func TestMeasuresFollowAnAllocation(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("RSS reads /proc")
	}
	// Give back what earlier tests (or runs, with -count) freed, so that
	// the allocation below needs fresh pages.
	debug.FreeOSMemory()
	heap0 := LiveHeap()
	rss0, err := RSS()
	if err != nil {
		t.Fatal(err)
	}
	const size = 64 << 20
	b := make([]byte, size)
	for i := range b {
		b[i] = 1 // touch every page, so that it is resident
	}
	heap1 := LiveHeap()
	rss1, err := RSS()
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(b)
	// Other objects of the test binary may come and go meanwhile: a few
	// KB either way.
	if grew := int64(heap1 - heap0); grew < size-size/64 || grew > size+size/8 {
		t.Errorf("live heap grew by %d bytes holding %d", grew, size)
	}
	if grew := rss1 - rss0; grew < size*7/8 {
		t.Errorf("resident set grew by %d bytes holding %d touched bytes", grew, size)
	}
	b = nil
	if heap2 := LiveHeap(); heap2 > heap0+size/8 {
		t.Errorf("live heap %d after dropping the allocation, %d before it", heap2, heap0)
	}
}

// Status reads any size field of any process's status: this process's
// VmRSS by its pid as RSS does, and its anonymous part within it; a field
// that does not exist is an error.
func TestStatusReadsAProcessField(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Status reads /proc")
	}
	self, err := Status(os.Getpid(), "VmRSS")
	if err != nil {
		t.Fatal(err)
	}
	rss, err := RSS()
	if err != nil {
		t.Fatal(err)
	}
	// The two reads are a moment apart: the test binary may map or free a
	// few pages meanwhile.
	if d := self - rss; d < -1<<20 || d > 1<<20 {
		t.Errorf("VmRSS by pid %d, by RSS() %d: more than 1 MB apart", self, rss)
	}
	anon, err := Status(0, "RssAnon")
	if err != nil {
		t.Fatal(err)
	}
	if anon <= 0 || anon > rss+1<<20 {
		t.Errorf("RssAnon %d bytes, VmRSS %d: want 0 < anon ≤ rss", anon, rss)
	}
	if _, err := Status(0, "NoSuchField"); err == nil {
		t.Error("a field /proc/self/status lacks was read without error")
	}
}
