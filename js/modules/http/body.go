package http

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"unsafe"
)

// maxExactBody is the largest declared Content-Length read straight into
// a buffer of its own size.
const maxExactBody = 64 << 20

var bodyBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readBody reads the whole body: into a string for text, a byte slice for
// binary, nowhere for none. A body of known length is read into one
// allocation of exactly that size; others go through a pooled buffer.
// When reading fails, what arrived before the failure is returned with
// the error, as k6 keeps it.
func readBody(resp *http.Response, kind responseType) (string, []byte, error) {
	if resp.Body == http.NoBody {
		// HEAD, 204 and 304 answers may announce a length they never send.
		return "", nil, nil
	}
	var rd io.Reader = resp.Body
	plain := true
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && !resp.Uncompressed {
		d, err := decompressor(enc, resp.Body)
		if err != nil {
			return "", nil, err
		}
		if d != nil {
			rd, plain = d, false
		}
	}
	if kind == respNone {
		_, err := io.Copy(io.Discard, rd)
		return "", nil, wrapDecompress(err, plain)
	}
	if n := resp.ContentLength; plain && n >= 0 && n <= maxExactBody {
		if n == 0 {
			_, err := io.Copy(io.Discard, rd)
			return "", nil, err
		}
		buf := make([]byte, n)
		got, err := io.ReadFull(rd, buf)
		if err == nil {
			// Reach EOF so the connection goes back to the pool.
			_, err = io.Copy(io.Discard, rd)
		}
		buf = buf[:got]
		if kind == respBinary {
			return "", buf, err
		}
		return unsafe.String(unsafe.SliceData(buf), len(buf)), nil, err
	}
	b := bodyBufs.Get().(*bytes.Buffer)
	defer func() {
		if b.Cap() <= 1<<20 {
			b.Reset()
			bodyBufs.Put(b)
		}
	}()
	_, err := b.ReadFrom(rd)
	err = wrapDecompress(err, plain)
	if kind == respBinary {
		return "", bytes.Clone(b.Bytes()), err
	}
	return b.String(), nil, err
}

// decompressor returns a reader decoding the body's Content-Encoding, or
// nil for encodings it leaves alone.
func decompressor(enc string, body io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(enc)) {
	case "gzip", "x-gzip":
		z, err := gzip.NewReader(body)
		if err != nil {
			return nil, &decompressError{err}
		}
		return z, nil
	case "deflate":
		br := bufio.NewReader(body)
		if hdr, err := br.Peek(2); err == nil && (uint16(hdr[0])<<8|uint16(hdr[1]))%31 == 0 && hdr[0]&0x0f == 8 {
			z, err := zlib.NewReader(br)
			if err != nil {
				return nil, &decompressError{err}
			}
			return z, nil
		}
		return flate.NewReader(br), nil
	}
	return nil, nil
}

type decompressError struct{ err error }

func (e *decompressError) Error() string { return "decompressing the response body: " + e.err.Error() }
func (e *decompressError) Unwrap() error { return e.err }

func wrapDecompress(err error, plain bool) error {
	if err == nil || plain {
		return err
	}
	var de *decompressError
	if errors.As(err, &de) {
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return err
	}
	return &decompressError{err}
}
