package httpclient

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

	"github.com/andybalholm/brotli"
)

// What a response body may cost. Every buffer grows with the bytes that
// arrive, never with what the server announces, so a server that
// announces a huge body and stalls costs a VU nothing but the bytes it
// sent.
const (
	// maxExactBody is the largest announced Content-Length read straight
	// into one buffer of that size; larger bodies go through a buffer
	// that doubles as bytes arrive.
	maxExactBody = 64 << 10
	// maxBody is the most a response body may hold once decoded. A longer
	// one fails the request (status 0) with the first maxBody bytes kept.
	// k6 has no limit; this one is far above any body a test checks, and
	// it stops a compression bomb from filling the memory.
	maxBody = 1 << 30
)

// errBodyTooLarge fails a request whose body passes maxBody.
var errBodyTooLarge = errors.New("the response body is larger than 1 GiB, the most metronome keeps of a body")

var bodyBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readBody reads the whole body: into a string for text, a byte slice for
// binary, nowhere for none. It decodes the Content-Encodings k6 decodes,
// except when the body is discarded (k6 does not decode those either).
// When reading fails, what arrived before the failure is returned with
// the error, as k6 keeps it.
func readBody(resp *http.Response, kind ResponseType) (string, []byte, error) {
	if resp.Body == http.NoBody {
		// HEAD, 204 and 304 answers may announce a length they never send.
		return "", nil, nil
	}
	if kind == ResponseNone {
		_, err := io.Copy(io.Discard, resp.Body)
		return "", nil, err
	}
	var rd io.Reader = resp.Body
	plain := true
	// The key is already canonical, so indexing the map is what
	// Header.Get does without canonicalising it again (about 250
	// instructions a request, issue 40).
	if enc := firstValue(resp.Header["Content-Encoding"]); enc != "" && !resp.Uncompressed {
		d, err := decoders(enc, resp.Body)
		if err != nil {
			return "", nil, err
		}
		if d != nil {
			rd, plain = d, false
		}
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
		if kind == ResponseBinary {
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
	err := readAtMost(b, rd, maxBody)
	if !plain {
		err = wrapDecompress(err)
	}
	if kind == ResponseBinary {
		return "", bytes.Clone(b.Bytes()), err
	}
	return b.String(), nil, err
}

// readAtMost reads r to its end into b, which grows as bytes arrive (as
// in bytes.Buffer.ReadFrom), and fails with errBodyTooLarge once b holds
// max bytes and r has more.
func readAtMost(b *bytes.Buffer, r io.Reader, max int) error {
	for {
		if b.Len() >= max {
			var one [1]byte
			if n, _ := io.ReadFull(r, one[:]); n > 0 {
				return errBodyTooLarge
			}
			return nil
		}
		b.Grow(bytes.MinRead)
		spare := b.AvailableBuffer()[:min(b.Available(), max-b.Len())]
		n, err := r.Read(spare)
		b.Write(spare[:n])
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// decoders returns a reader decoding the body's Content-Encoding, a list
// of codings applied in order, so decoded last to first; nil when it
// names none metronome decodes (the body is then kept as it came).
func decoders(enc string, body io.Reader) (io.Reader, error) {
	rd := body
	decoded := false
	for rest := enc; rest != ""; {
		var coding string
		if i := strings.LastIndexByte(rest, ','); i >= 0 {
			rest, coding = rest[:i], rest[i+1:]
		} else {
			rest, coding = "", rest
		}
		d, err := decoder(strings.ToLower(strings.TrimSpace(coding)), rd)
		if err != nil {
			return nil, err
		}
		if d != nil {
			rd, decoded = d, true
		}
	}
	if !decoded {
		return nil, nil
	}
	return rd, nil
}

// decoder returns a reader decoding one coding, or nil for codings it
// leaves alone: gzip, deflate (zlib, or raw as some servers send it) and
// br, which k6 decodes too.
//
// A brotli stream names the window its decoder must keep (up to 16 MiB)
// and the decoder sets it aside before the data that fills it arrives, so
// a br body is read whole first, within maxBody: a server that sends a
// few bytes and stalls then holds no window.
func decoder(coding string, body io.Reader) (io.Reader, error) {
	switch coding {
	case "gzip", "x-gzip":
		z, err := gzip.NewReader(body)
		if err != nil {
			return nil, &decompressError{err: err, noBody: true}
		}
		return z, nil
	case "deflate":
		br := bufio.NewReader(body)
		if hdr, err := br.Peek(2); err == nil && (uint16(hdr[0])<<8|uint16(hdr[1]))%31 == 0 && hdr[0]&0x0f == 8 {
			z, err := zlib.NewReader(br)
			if err != nil {
				return nil, &decompressError{err: err, noBody: true}
			}
			return z, nil
		}
		return flate.NewReader(br), nil
	case "br":
		var b bytes.Buffer
		if err := readAtMost(&b, body, maxBody); err != nil {
			return nil, err
		}
		return brotli.NewReader(&b), nil
	}
	return nil, nil
}

// decompressError is a body that does not decode: error_code 1701.
// noBody marks a body whose very start did not decode, which k6 reports as
// no body at all (null) rather than an empty one.
type decompressError struct {
	err    error
	noBody bool
}

func (e *decompressError) Error() string {
	return "error decompressing response body (" + e.err.Error() + ")"
}

func (e *decompressError) Unwrap() error { return e.err }

// wrapDecompress marks an error met while decoding a body as a
// decompression error when k6 does: one of its decoders' own errors
// (k6Decompression), not the connection's, the context's, or an
// unexpected end of the stream, which keep their text and code.
func wrapDecompress(err error) error {
	if err == nil || errors.Is(err, errBodyTooLarge) {
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
	if !k6Listed(err) && !strings.HasPrefix(err.Error(), "brotli: ") {
		return err
	}
	return &decompressError{err: err}
}

// k6Listed reports whether err is one of the decoder errors k6 v2.2.0
// lists as decompression errors (gzip's and zlib's bad header, checksum
// and dictionary): k6 wraps those in "error decompressing response body
// (…)" once where a body's read fails and once more in response.error and
// the error tag.
func k6Listed(err error) bool {
	for _, e := range [...]error{gzip.ErrChecksum, gzip.ErrHeader, zlib.ErrChecksum, zlib.ErrDictionary, zlib.ErrHeader} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// firstValue is the first of a header's values, "" when it has none.
func firstValue(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}
