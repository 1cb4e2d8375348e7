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
