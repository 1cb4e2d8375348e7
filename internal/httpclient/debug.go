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

// DebugLevel is the --http-debug setting: what a hop's dumps hold.
type DebugLevel uint8

const (
	// DebugOff dumps nothing.
	DebugOff DebugLevel = iota
	// DebugHeaders dumps the request and response lines and headers.
	DebugHeaders
	// DebugFull dumps the bodies too.
	DebugFull
)

// debugRequest writes the "Request:" line of a hop about to be sent, or
// refused with refused (then k6's error line and an empty dump, as k6's
// dump fails the same way), and returns the request_id the hop's
// "Response:" line carries.
func (r *Request) debugRequest(req *http.Request, body string, refused error) string {
	id := requestID()
	msg, errText := "Request:\n\n", ""
	if refused != nil {
		errText = refused.Error()
	} else {
		msg, errText = dumpRequest(req, body, r.Debug)
	}
	if errText != "" {
		r.DebugLog.Error(errText)
	}
	r.DebugLog.Info(msg, "request_id", id)
	return id
}

// debugResponse writes the "Response:" line of the hop id, whose
// response is resp and body kept (nil below full level); a dump that
// fails has k6's error line and an empty dump.
func (r *Request) debugResponse(resp *http.Response, kept *debugBody, id string) {
	msg, errText := dumpResponse(resp, kept, r.Debug)
	if errText != "" {
		r.DebugLog.Error(errText)
	}
	r.DebugLog.Info(msg, "request_id", id)
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

// The messages of k6's lines: "Request:" and the request as it went on
// the wire, in net/http's layout (which metronome's HTTP/1.1 writer
// copies), "Response:" and the response in the same layout, the body as
// it came (still compressed); CRLFs as LFs, the bodies only at full
// level.

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
