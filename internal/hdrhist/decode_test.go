package hdrhist

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// A histogram of the expected geometry decodes to the same counts; one of
// another geometry is refused when a geometry is asked for, and decodes
// when none is.
func TestDecodeGeometry(t *testing.T) {
	want := Geometry{Lowest: 1, Highest: 1_000_000_000_000, Digits: 3}
	h := hdrhistogram.NewPacked(want.Lowest, want.Highest, want.Digits)
	for v := int64(1); v < 1e9; v = v*7 + 3 {
		_ = h.RecordValues(v, v%5+1)
	}
	b, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b, &want)
	if err != nil || got.TotalCount() != h.TotalCount() || got.ValueAtPercentile(90) != h.ValueAtPercentile(90) {
		t.Fatalf("round trip: %v, count %d of %d", err, got.TotalCount(), h.TotalCount())
	}
	wide := hdrhistogram.NewPacked(1, math.MaxInt64, 5)
	_ = wide.RecordValue(12345)
	b, err = wide.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(b, &want); err == nil || !strings.Contains(err.Error(), "declares the range 1 to 9223372036854775807 at 5 significant digits") {
		t.Errorf("another geometry: %v", err)
	}
	if got, err := Decode(b, nil); err != nil || got.TotalCount() != 1 {
		t.Errorf("another geometry, none asked for: %v", err)
	}
}

// A few KB declaring a payload of millions of buckets (hostile probe 4,
// #2: 1..2^63 at 5 digits with every bucket at 1, 8 KB of base64) is
// refused from its header, before its payload is inflated.
func TestDecodeRefusesInflation(t *testing.T) {
	const n = 6_160_384 // countsLen of 1..2^63-1 at 5 digits
	var inner bytes.Buffer
	for _, v := range []any{int32(0x1c849313), int32(n), int32(0), int32(5), int64(1), int64(math.MaxInt64), float64(1)} {
		_ = binary.Write(&inner, binary.BigEndian, v)
	}
	inner.Write(bytes.Repeat([]byte{2}, n))
	var comp bytes.Buffer
	z, _ := zlib.NewWriterLevel(&comp, 9)
	z.Write(inner.Bytes())
	z.Close()
	var outer bytes.Buffer
	_ = binary.Write(&outer, binary.BigEndian, int32(0x1c849314))
	_ = binary.Write(&outer, binary.BigEndian, int32(comp.Len()))
	outer.Write(comp.Bytes())
	enc := []byte(base64.StdEncoding.EncodeToString(outer.Bytes()))
	if len(enc) > 64<<10 {
		t.Fatalf("the forged histogram is %d bytes of base64", len(enc))
	}
	if _, err := Decode(enc, nil); err == nil || !strings.Contains(err.Error(), "it inflates to 6160384 bytes, more than the 1 MiB") {
		t.Errorf("%v", err)
	}
}
