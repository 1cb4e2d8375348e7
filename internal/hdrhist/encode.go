package hdrhist

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// The cookies of HdrHistogram's V2 encoding: of the payload inside the
// compressed stream, and of the compressed form itself.
const (
	payloadCookie    = hdrhistogram.V2EncodingCookieBase | 0x10
	compressedCookie = hdrhistogram.V2CompressedEncodingCookieBase | 0x10
)

// Encoder writes Hists in HdrHistogram's V2 compressed encoding, base64,
// as hdrhistogram-go's EncodeV2 does, but with one compressor and one set
// of buffers for every histogram: hdrhistogram-go makes a new
// best-compression zlib writer (about 800 KB) per call, which at thousands
// of series per second costs more than the interval they are written in.
// The payload is the same bytes; the compressed stream is zlib's fastest
// level, which any zlib reader inflates. It is not safe for concurrent use.
type Encoder struct {
	lowest, highest int64
	digits          int32
	unitMagnitude   int32
	halfMagnitude   int32 // log2 of half a bucket's sub-buckets
	halfCount       int32
	subMask         int64

	// scratch holds a dense histogram's values as a sparse one, to walk its
	// buckets in order without a pass per empty bucket.
	scratch *hdrhistogram.PackedHistogram
	raw     []byte // the payload's header and the payload
	packed  []byte // the compressed form before base64
	z       bytes.Buffer
	stored  *zlib.Writer // zlib without compression, for small payloads
	fast    *zlib.Writer // zlib's fastest compression, for the others
}

// compressFrom is the length of the payload from which it is compressed:
// below it, compressing saves a few bytes for many times the time of
// storing it (a zlib stream of stored blocks, which any zlib reader
// inflates as well).
const compressFrom = 512

// NewEncoder returns an encoder of the pool's histograms.
func (p *Pool) NewEncoder() *Encoder {
	// The geometry as hdrhistogram-go clamps and writes it.
	ref := hdrhistogram.NewPacked(p.lowest, p.highest, p.digits)
	e := &Encoder{lowest: ref.LowestTrackableValue(), highest: ref.HighestTrackableValue(), digits: int32(ref.SignificantFigures()),
		scratch: ref}
	e.unitMagnitude = int32(max(math.Floor(math.Log2(float64(e.lowest))), 0))
	e.halfMagnitude = max(int32(math.Ceil(math.Log2(2*math.Pow10(int(e.digits))))), 1) - 1
	e.halfCount = 1 << e.halfMagnitude
	e.subMask = int64(2*e.halfCount-1) << e.unitMagnitude
	// The levels are valid: no error.
	e.stored, _ = zlib.NewWriterLevel(&e.z, zlib.NoCompression)
	e.fast, _ = zlib.NewWriterLevel(&e.z, zlib.BestSpeed)
	return e
}

// index is the position of v's bucket in HdrHistogram's flat counts array.
func (e *Encoder) index(v int64) int64 {
	bucket := int32(64-bits.LeadingZeros64(uint64(v|e.subMask))) - e.unitMagnitude - (e.halfMagnitude + 1)
	sub := int32(v >> uint(bucket+e.unitMagnitude))
	return int64((bucket+1)<<e.halfMagnitude) + int64(sub-e.halfCount)
}

// Append appends h's encoding to dst. An empty h encodes as an empty
// histogram of the pool's geometry.
func (e *Encoder) Append(dst []byte, h *Hist) []byte {
	src := h.sparse
	if h.dense != nil {
		e.scratch.Reset()
		e.scratch.MergeFrom(h.dense)
		src = e.scratch
	}
	e.raw = e.raw[:0]
	e.raw = binary.BigEndian.AppendUint32(e.raw, uint32(payloadCookie))
	e.raw = binary.BigEndian.AppendUint32(e.raw, 0) // the payload's length, set below
	e.raw = binary.BigEndian.AppendUint32(e.raw, 0) // normalizing index offset
	e.raw = binary.BigEndian.AppendUint32(e.raw, uint32(e.digits))
	e.raw = binary.BigEndian.AppendUint64(e.raw, uint64(e.lowest))
	e.raw = binary.BigEndian.AppendUint64(e.raw, uint64(e.highest))
	e.raw = binary.BigEndian.AppendUint64(e.raw, math.Float64bits(1))
	const headerLen = 40
	// The payload is each count from index 0 to the highest value's, a run
	// of two or more empty buckets written as minus its length.
	next := int64(0) // the index the payload has reached
	gap := func(to int64) {
		switch n := to - next; {
		case n == 1:
			e.raw = appendZigZag(e.raw, 0)
		case n > 1:
			e.raw = appendZigZag(e.raw, -n)
		}
		next = to
	}
	var last int64
	if src != nil {
		src.ForEachBucket(func(value, count int64) bool {
			if count != 0 {
				i := e.index(value)
				gap(i)
				e.raw = appendZigZag(e.raw, count)
				next = i + 1
			}
			return true
		})
		last = src.Max()
	} else {
		last = hdrhistogram.NewPacked(e.lowest, e.highest, int(e.digits)).Max()
	}
	gap(e.index(last) + 1)
	binary.BigEndian.PutUint32(e.raw[4:], uint32(len(e.raw)-headerLen))

	zw := e.stored
	if len(e.raw)-headerLen >= compressFrom {
		zw = e.fast
	}
	e.z.Reset()
	zw.Reset(&e.z)
	_, _ = zw.Write(e.raw) // writes to a bytes.Buffer do not fail
	_ = zw.Close()
	e.packed = e.packed[:0]
	e.packed = binary.BigEndian.AppendUint32(e.packed, uint32(compressedCookie))
	e.packed = binary.BigEndian.AppendUint32(e.packed, uint32(e.z.Len()))
	e.packed = append(e.packed, e.z.Bytes()...)
	return base64.StdEncoding.AppendEncode(dst, e.packed)
}

// AppendLogLine appends h as the interval [startMs, endMs) of the series
// tag in an HdrHistogram log: the line hdrhistogram-go's
// HistogramLogWriter writes (base time 0, the maximum in seconds of
// microsecond values) but for the histogram's compression; nothing for an
// h that never held a value. A tag with a comma, a space or a line break,
// which would split the line, is refused.
func (e *Encoder) AppendLogLine(dst []byte, h *Hist, tag string, startMs, endMs int64) ([]byte, error) {
	if h.dense == nil && h.sparse == nil {
		return dst, nil
	}
	if strings.ContainsAny(tag, ", \r\n") {
		return dst, fmt.Errorf("tag string cannot contain commas, spaces, or line breaks. used tag: %s", tag)
	}
	if tag != "" {
		dst = append(append(append(dst, "Tag="...), tag...), ',')
	}
	start, end := float64(startMs)/1000, float64(endMs)/1000
	dst = append(strconv.AppendFloat(dst, start, 'f', 6, 64), ',')
	dst = append(strconv.AppendFloat(dst, end-start, 'f', 6, 64), ',')
	dst = append(strconv.AppendFloat(dst, float64(h.Max())/hdrhistogram.MsToNsRatio, 'f', 6, 64), ',')
	return append(e.Append(dst, h), '\n'), nil
}

// appendZigZag appends v in HdrHistogram's ZigZag LEB128 form: seven bits
// a byte, least significant first, and a ninth byte of eight bits.
func appendZigZag(b []byte, v int64) []byte {
	u := uint64((v << 1) ^ (v >> 63))
	for i := 0; i < 8; i++ {
		if u>>7 == 0 {
			return append(b, byte(u))
		}
		b = append(b, byte(u&0x7f|0x80))
		u >>= 7
	}
	return append(b, byte(u))
}
