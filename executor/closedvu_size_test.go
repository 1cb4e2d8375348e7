package executor

import (
	"testing"
	"unsafe"
)

// TestClosedVUFitsItsSizeClass keeps a back-filling VU's wrapper within
// malloc's 352-byte size class: a word more moves every VU of a closed
// model scenario, which back-fills by default, to the 384-byte class.
func TestClosedVUFitsItsSizeClass(t *testing.T) {
	if size := unsafe.Sizeof(closedVU{}); size > 352 {
		t.Errorf("closedVU is %d bytes, want at most 352", size)
	}
}
