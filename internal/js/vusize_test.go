package js

import (
	"testing"
	"unsafe"
)

// TestVUFitsItsSizeClass keeps the vu within malloc's 768-byte size class
// (760 bytes and the 8-byte header): a field more moves every VU to the
// 896-byte class (see the comment on vu).
func TestVUFitsItsSizeClass(t *testing.T) {
	if size := unsafe.Sizeof(vu{}); size > 760 {
		t.Errorf("vu is %d bytes, want at most 760", size)
	}
}

// TestEnvObjectFitsItsSizeClass keeps every VU's __ENV object within
// malloc's 32-byte size class: what a VU remembers of the values it read
// hangs off one pointer, made on its first read.
func TestEnvObjectFitsItsSizeClass(t *testing.T) {
	if size := unsafe.Sizeof(envObject{}); size > 32 {
		t.Errorf("envObject is %d bytes, want at most 32", size)
	}
}
