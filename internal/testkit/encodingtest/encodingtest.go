// Package encodingtest undoes a request body's Content-Encoding for the
// test servers that check what params.compression and httpext's
// Compressions send. It decodes with the libraries themselves, not with
// metronome's compressor, so that a test compares the two.
package encodingtest

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// Decode undoes the codings of a Content-Encoding list ("gzip, br"),
// last applied first; an empty list gives b unchanged.
func Decode(contentEncoding string, b []byte) ([]byte, error) {
	if strings.TrimSpace(contentEncoding) == "" {
		return b, nil
	}
	names := strings.Split(contentEncoding, ",")
	for i := len(names) - 1; i >= 0; i-- {
		var err error
		if b, err = decode(strings.TrimSpace(names[i]), b); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// decode undoes one coding; deflate is the zlib format, as k6 sends it.
func decode(coding string, b []byte) ([]byte, error) {
	src := bytes.NewReader(b)
	var rd io.Reader
	var err error
	switch coding {
	case "gzip":
		rd, err = gzip.NewReader(src)
	case "deflate":
		rd, err = zlib.NewReader(src)
	case "br":
		rd = brotli.NewReader(src)
	case "zstd":
		var d *zstd.Decoder
		if d, err = zstd.NewReader(src); err == nil {
			defer d.Close()
			rd = d
		}
	default:
		err = fmt.Errorf("unknown encoding %q", coding)
	}
	if err != nil {
		return nil, err
	}
	return io.ReadAll(rd)
}
