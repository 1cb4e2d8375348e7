package httpclient

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// Compression is an encoding a request body is compressed with
// (params.compression, httpext's CompressionType), numbered as in k6.
type Compression uint8

// The compressions k6 v2.2.0 knows. Deflate is the zlib format, as k6
// sends it.
const (
	Gzip Compression = iota
	Deflate
	Zstd
	Br
)

// compressionNames are the Content-Encoding names, by Compression.
var compressionNames = [...]string{Gzip: "gzip", Deflate: "deflate", Zstd: "zstd", Br: "br"}

// String is the compression's Content-Encoding name.
func (c Compression) String() string {
	if int(c) < len(compressionNames) {
		return compressionNames[c]
	}
	return fmt.Sprintf("Compression(%d)", c)
}

// CompressionError is k6's refusal of a params.compression name: the
// request fails before anything is sent, with error_code 0.
type CompressionError struct{ Name string }

func (e *CompressionError) Error() string {
	return fmt.Sprintf("unknown compression algorithm %s, supported algorithms are [gzip deflate zstd br]", e.Name)
}

// ParseCompressions reads params.compression as k6 v2.2.0 does: names
// separated by commas, each trimmed of white space and matched with its
// case, applied in their order; a blank value is no compression (nil).
func ParseCompressions(s string) ([]Compression, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var cs []Compression
	for name := range strings.SplitSeq(s, ",") {
		name = strings.TrimSpace(name)
		c := Compression(0)
		for c < Compression(len(compressionNames)) && compressionNames[c] != name {
			c++
		}
		if c == Compression(len(compressionNames)) {
			return nil, &CompressionError{Name: name}
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// writers pools a compressor per Compression: a flate compressor holds
// hundreds of kilobytes, too much to make for every request. Reset gives
// the same bytes as a new writer.
var writers [len(compressionNames)]sync.Pool

// resetter is a pooled compressor.
type resetter interface {
	io.WriteCloser
	Reset(io.Writer)
}

// newWriter makes c's compressor with the settings k6 uses: each
// library's defaults.
func newWriter(c Compression, w io.Writer) resetter {
	switch c {
	case Gzip:
		return gzip.NewWriter(w)
	case Deflate:
		return zlib.NewWriter(w)
	case Zstd:
		// One goroutine: the frame is the same, without the encoder's
		// workers.
		z, _ := zstd.NewWriter(w, zstd.WithEncoderConcurrency(1))
		return z
	default:
		return brotli.NewWriter(w)
	}
}

// Compress encodes body with each of cs in turn, as k6 does for
// params.compression, and returns the encoded body and its
// Content-Encoding ("gzip, br" for gzip then brotli). An empty body is
// encoded too.
func Compress(cs []Compression, body []byte) ([]byte, string, error) {
	var enc strings.Builder
	for i, c := range cs {
		if int(c) >= len(compressionNames) {
			return nil, "", fmt.Errorf("unknown compression %s", c)
		}
		var buf bytes.Buffer
		w, _ := writers[c].Get().(resetter)
		if w == nil {
			w = newWriter(c, &buf)
		} else {
			w.Reset(&buf)
		}
		_, err := w.Write(body)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		w.Reset(io.Discard) // the pooled writer keeps no body alive
		writers[c].Put(w)
		if err != nil {
			return nil, "", err
		}
		body = buf.Bytes()
		if i > 0 {
			enc.WriteString(", ")
		}
		enc.WriteString(c.String())
	}
	return body, enc.String(), nil
}
