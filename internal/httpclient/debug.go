package httpclient

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httputil"
	"strings"
)

// DebugLevel is the --http-debug setting: what a hop's Debug dump holds.
type DebugLevel uint8

const (
	// DebugOff dumps nothing.
	DebugOff DebugLevel = iota
	// DebugHeaders dumps the request and response lines and headers.
	DebugHeaders
	// DebugFull dumps the bodies too.
	DebugFull
)

// Debug is a hop's --http-debug record: the messages of the two info
// lines k6 writes for it, and the id both carry.
type Debug struct {
	// ID is the request_id of both lines, a random UUID as in k6.
	ID string
	// Request is the "Request:" message: the request as it went on the
	// wire, in net/http's layout (which metronome's HTTP/1.1 writer
	// copies) with its CRLFs as LFs, the body only at full level.
	Request string
	// Response is the "Response:" message in the same layout, the body
	// as it came (still compressed) at full level; empty when no
	// response came, as k6 then writes no line.
	Response string
	// RequestErr and ResponseErr are why a dump could not be made: k6
	// logs such an error at level error before the line, whose dump is
	// then empty.
	RequestErr, ResponseErr string
}

// newDebug starts the record of a hop whose request req is about to be
// sent with body, or refused with refused (then, as in k6, whose dump
// fails the same way, with no dump).
func newDebug(req *http.Request, body string, lvl DebugLevel, refused error) *Debug {
	d := &Debug{ID: requestID()}
	if refused != nil {
		d.Request, d.RequestErr = "Request:\n\n", refused.Error()
		return d
	}
	d.Request, d.RequestErr = dumpRequest(req, body, lvl)
	return d
}

// requestID is a random (version 4) UUID in its text form.
func requestID() string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// dumpRequest is the "Request:" message of req, sent with body: what
// Request.Write puts on the wire, less the body below full level. Unlike
// k6, whose dump comes from a transport of its own that adds
// "Accept-Encoding: gzip", it shows only what metronome sent.
func dumpRequest(req *http.Request, body string, lvl DebugLevel) (msg, errText string) {
	// No trace: the tracer of the hop times the real write, not this one.
	r := req.WithContext(context.Background())
	r.Body = nil
	if r.ContentLength > 0 {
		r.Body = io.NopCloser(strings.NewReader(body))
	}
	var b bytes.Buffer
	if err := r.Write(&b); err != nil {
		return "Request:\n\n", err.Error()
	}
	dump := b.Bytes()
	if lvl != DebugFull {
		if i := bytes.Index(dump, []byte("\r\n\r\n")); i >= 0 {
			dump = dump[:i+4]
		}
	}
	return message("Request:\n", dump), ""
}

// dumpResponse is the "Response:" message of resp, whose body kept read
// (nil below full level). A body that failed to read fails the dump with
// its error, as k6's dump reads the body itself.
func dumpResponse(resp *http.Response, kept *debugBody, lvl DebugLevel) (msg, errText string) {
	r := *resp
	r.Body = http.NoBody
	if kept != nil {
		if kept.err != nil {
			return "Response:\n\n", kept.err.Error()
		}
		r.Body = io.NopCloser(bytes.NewReader(kept.raw.Bytes()))
	}
	dump, err := httputil.DumpResponse(&r, lvl == DebugFull)
	if err != nil {
		return "Response:\n\n", err.Error()
	}
	return message("Response:\n", dump), ""
}

// message is k6's message of a dump: its title, the dump with CRLF as LF
// (in the body too), and a newline.
func message(title string, dump []byte) string {
	return title + string(bytes.ReplaceAll(dump, []byte("\r\n"), []byte("\n"))) + "\n"
}

// debugBody keeps a copy of the bytes of a response body as they are
// read, and the error reading failed with, for the full-level dump.
type debugBody struct {
	body io.ReadCloser
	raw  bytes.Buffer
	err  error
}

func (d *debugBody) Read(p []byte) (int, error) {
	n, err := d.body.Read(p)
	d.raw.Write(p[:n])
	if err != nil && err != io.EOF && d.err == nil {
		d.err = err
	}
	return n, err
}

func (d *debugBody) Close() error { return d.body.Close() }

// keepBody makes resp's body keep what is read of it, for the full-level
// dump; nil for a response without a body.
func keepBody(resp *http.Response) *debugBody {
	if resp.Body == http.NoBody || resp.Body == nil {
		return nil
	}
	d := &debugBody{body: resp.Body}
	resp.Body = d
	return d
}
