package httpclient

import (
	"net/http"
	"sort"
	"strconv"
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

// dumpRequest formats a request the way it goes on the wire: request
// line, headers and, at full level, the body.
func dumpRequest(req *http.Request, body string, lvl DebugLevel) string {
	var b strings.Builder
	b.WriteString("Request:\n")
	b.WriteString(req.Method)
	b.WriteByte(' ')
	b.WriteString(req.URL.RequestURI())
	b.WriteString(" HTTP/1.1\nHost: ")
	if req.Host != "" {
		b.WriteString(req.Host)
	} else {
		b.WriteString(req.URL.Host)
	}
	b.WriteByte('\n')
	if req.ContentLength > 0 {
		b.WriteString("Content-Length: ")
		b.WriteString(strconv.FormatInt(req.ContentLength, 10))
		b.WriteByte('\n')
	}
	writeHeaderAndBody(&b, req.Header, body, lvl)
	return b.String()
}

// dumpResponse formats a response's status line, headers and, at full
// level, its body.
func dumpResponse(resp *http.Response, body string, lvl DebugLevel) string {
	var b strings.Builder
	b.WriteString("Response:\n")
	b.WriteString(resp.Proto)
	b.WriteByte(' ')
	b.WriteString(resp.Status)
	b.WriteByte('\n')
	writeHeaderAndBody(&b, resp.Header, body, lvl)
	return b.String()
}

// writeHeaderAndBody writes the header lines of a dump and, at full
// level, the body after an empty line.
func writeHeaderAndBody(b *strings.Builder, h http.Header, body string, lvl DebugLevel) {
	writeHeader(b, h)
	if lvl == DebugFull && body != "" {
		b.WriteByte('\n')
		b.WriteString(body)
		b.WriteByte('\n')
	}
}

func writeHeader(b *strings.Builder, h http.Header) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			b.WriteString(k)
			b.WriteString(": ")
			b.WriteString(v)
			b.WriteByte('\n')
		}
	}
}
