package hdrhist

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// MaxPayloadBytes is the most one encoded histogram may inflate to, for
// every reader of metronome's files (HdrHistogram logs, result files): a
// few bytes of base64 can declare any range and precision, and its
// payload is inflated before it is decoded. 1 MiB holds 115,000 to a
// million populated buckets; metronome's own histograms have at most
// 31,744 counts (1 to 10^12 at 3 digits), 286 KB at the worst.
const MaxPayloadBytes = 1 << 20

// Geometry is the range and precision of a histogram.
type Geometry struct {
	Lowest, Highest int64
	Digits          int
}

// String is the geometry as the messages give it.
func (g Geometry) String() string {
	return fmt.Sprintf("%d to %d at %d significant digits", g.Lowest, g.Highest, g.Digits)
}

// headPrefix is how much of an encoding is read for its header: base64
// of 3 KB of the zlib stream, more than its first block's tables and the
// header's 40 bytes take.
const headPrefix = 4096

// v2 header: cookie, payload length, normalizing offset, digits (int32),
// lowest, highest (int64), conversion ratio (float64).
const headerBytes = 40

// Decode decodes a V2 compressed histogram (base64), sparsely: in memory
// proportional to its populated buckets. It reads the encoding's header
// first and refuses, before inflating the payload, one that inflates past
// MaxPayloadBytes or, when want is not nil, whose geometry is not want.
func Decode(encoded []byte, want *Geometry) (*hdrhistogram.PackedHistogram, error) {
	// The outer cookie and length, then the start of the zlib stream:
	// a few KB hold the inflated header whatever the stream's length.
	raw, err := base64.StdEncoding.DecodeString(string(encoded[:min(len(encoded), headPrefix)]))
	if err != nil {
		return nil, err
	}
	if len(raw) < 8 {
		return nil, errors.New("too short")
	}
	clen := int64(binary.BigEndian.Uint32(raw[4:8]))
	if clen > int64(base64.StdEncoding.DecodedLen(len(encoded))-8) {
		return nil, errors.New("truncated")
	}
	var head [headerBytes]byte
	if err := inflateHead(bytes.NewReader(raw[8:min(8+clen, int64(len(raw)))]), head[:]); err != nil {
		return nil, err
	}
	if n := int32(binary.BigEndian.Uint32(head[4:8])); n > MaxPayloadBytes {
		return nil, fmt.Errorf("it inflates to %d bytes, more than the %d MiB a histogram may", n, MaxPayloadBytes>>20)
	}
	if want != nil {
		got := Geometry{
			Digits:  int(int32(binary.BigEndian.Uint32(head[12:16]))),
			Lowest:  int64(binary.BigEndian.Uint64(head[16:24])),
			Highest: int64(binary.BigEndian.Uint64(head[24:32])),
		}
		if got != *want {
			return nil, fmt.Errorf("it declares the range %s, where metronome writes %s", got, *want)
		}
	}
	return hdrhistogram.DecodePacked(encoded)
}

// inflaters are zlib readers kept for inflateHead: a new one allocates
// and clears some 40 KB, more than inflating a header costs.
var inflaters sync.Pool

// inflateHead inflates the first len(head) bytes of the zlib stream src
// into head.
func inflateHead(src io.Reader, head []byte) error {
	z, _ := inflaters.Get().(io.ReadCloser)
	if z == nil {
		var err error
		if z, err = zlib.NewReader(src); err != nil {
			return err
		}
	} else if err := z.(zlib.Resetter).Reset(src, nil); err != nil {
		inflaters.Put(z)
		return err
	}
	defer inflaters.Put(z)
	if _, err := io.ReadFull(z, head); err != nil {
		return fmt.Errorf("truncated: %v", err)
	}
	return nil
}
