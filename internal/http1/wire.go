package http1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// The fast path writes and reads the common shapes of HTTP/1.1 messages
// itself: net/http's general code allocates a dozen objects per message.
// Anything out of the ordinary (an unusual header, a chunked body, a head
// larger than the read buffer) is left to net/http, whose behaviour these
// functions copy for the cases they accept.

// maxFastHeaders bounds the request headers writeRequest sorts on the stack.
const maxFastHeaders = 24

// writeRequest writes req, which checkRequest accepted, as Request.Write
// would. It returns false, having written nothing, when req is not of a
// shape it handles.
func writeRequest(w *bufio.Writer, req *http.Request) (bool, error) {
	u := req.URL
	if u.Opaque != "" || req.TransferEncoding != nil || req.Trailer != nil || req.ContentLength < 0 ||
		(req.ContentLength == 0 && req.Body != nil && req.Body != http.NoBody) {
		return false, nil
	}
	host := req.Host
	if host == "" {
		host = u.Host
	}
	// Request.Write sends an international name in its ASCII form, drops
	// an IPv6 zone and sends no host at all for one that is not valid.
	if host == "" || !ascii(host) || strings.IndexByte(host, '%') >= 0 || !httpguts.ValidHostHeader(host) ||
		hasCTL(u.RawQuery) || hasCTL(u.Path) {
		return false, nil
	}
	var keys [maxFastHeaders]string
	n := 0
	for k, vs := range req.Header {
		switch k {
		case "Host", "User-Agent", "Content-Length", "Transfer-Encoding", "Trailer":
			continue
		}
		if n == len(keys) {
			return false, nil
		}
		for _, v := range vs {
			if !trimmed(v) {
				return false, nil
			}
		}
		keys[n] = k
		n++
	}
	ua, hasUA := req.Header["User-Agent"]
	if hasUA && len(ua) > 0 && !trimmed(ua[0]) {
		return false, nil
	}
	sortStrings(keys[:n])

	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	w.WriteString(method)
	w.WriteByte(' ')
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	w.WriteString(path)
	if u.ForceQuery || u.RawQuery != "" {
		w.WriteByte('?')
		w.WriteString(u.RawQuery)
	}
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(host)
	w.WriteString("\r\n")
	switch {
	case !hasUA:
		w.WriteString("User-Agent: Go-http-client/1.1\r\n")
	case len(ua) > 0 && ua[0] != "":
		w.WriteString("User-Agent: ")
		w.WriteString(ua[0])
		w.WriteString("\r\n")
	}
	if req.Close && !hasToken(req.Header.Get("Connection"), "close") {
		w.WriteString("Connection: close\r\n")
	}
	if req.ContentLength > 0 || method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		w.WriteString("Content-Length: ")
		var num [20]byte
		w.Write(strconv.AppendInt(num[:0], req.ContentLength, 10))
		w.WriteString("\r\n")
	}
	for _, k := range keys[:n] {
		for _, v := range req.Header[k] {
			w.WriteString(k)
			w.WriteString(": ")
			w.WriteString(v)
			w.WriteString("\r\n")
		}
	}
	_, err := w.WriteString("\r\n")
	if err != nil || req.Body == nil || req.Body == http.NoBody {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return true, err
	}
	written, err := io.Copy(w, req.Body)
	_ = req.Body.Close()
	if err == nil && written != req.ContentLength {
		err = errors.New("http: ContentLength=" + strconv.FormatInt(req.ContentLength, 10) +
			" with Body length " + strconv.FormatInt(written, 10))
	}
	return true, err
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func hasCTL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// sortStrings is an insertion sort for the few header names of a request.
func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// trimmed reports whether v, a valid header value, needs none of the
// clean-up Request.Write applies: no white space at either end.
func trimmed(v string) bool {
	return v == "" || (!isSpace(v[0]) && !isSpace(v[len(v)-1]))
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// trimBlanks drops the spaces and tabs around a header value. It is
// strings.Trim(v, " \t") without the character set that Trim builds on
// every call, which cost more than the rest of a header line's parse.
func trimBlanks(v string) string {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}

// fastResponse is a response readHead parsed and the reader of its body,
// allocated together.
type fastResponse struct {
	http.Response
	body bodyReader
}

// readHead parses a response head that lies entirely in br's buffer and
// consumes it. It returns false, having consumed nothing, for anything it
// does not handle: then http.ReadResponse takes over. The body, unless
// there is none (http.NoBody), is Content-Length bytes still in br, for
// the caller to set up with the response's body reader.
func readHead(br *bufio.Reader, req *http.Request) (*fastResponse, bool) {
	buf, _ := br.Peek(br.Buffered())
	end := bytes.Index(buf, []byte("\r\n\r\n"))
	if end < 0 {
		return nil, false
	}
	head := buf[:end+2] // every line ends in CRLF
	// Status line: HTTP/1.x NNN[ reason]
	// Every line must end in CRLF; a bare LF (which net/http accepts) is
	// left to net/http.
	eol := bytes.IndexByte(head, '\n')
	if eol < 1 || head[eol-1] != '\r' {
		return nil, false
	}
	line := head[:eol-1]
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || (line[7] != '1' && line[7] != '0') || line[8] != ' ' ||
		(len(line) > 12 && line[12] != ' ') {
		return nil, false
	}
	code := 0
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return nil, false
		}
		code = code*10 + int(c-'0')
	}
	if code < 200 {
		return nil, false // 1xx and nonsense go to net/http
	}
	// Count the header lines to size the header in one go.
	rest := head[eol+1:]
	lines := bytes.Count(rest, []byte("\n"))
	text := string(head) // the one string every name and value comes from
	fr := &fastResponse{Response: http.Response{
		StatusCode:    code,
		Proto:         text[:8],
		ProtoMajor:    1,
		ProtoMinor:    int(line[7] - '0'),
		Header:        make(http.Header, lines),
		ContentLength: -1,
		Request:       req,
	}}
	resp := &fr.Response
	resp.Status = text[9:len(line)]
	vals := make([]string, lines)
	off := eol + 1
	keepAlive := false
	for i := 0; off < len(text); i++ {
		nl := strings.IndexByte(text[off:], '\n')
		if nl < 1 || text[off+nl-1] != '\r' {
			return nil, false
		}
		l := text[off : off+nl-1]
		off += nl + 1
		colon := strings.IndexByte(l, ':')
		if colon <= 0 || (l[0] == ' ' || l[0] == '\t') {
			return nil, false
		}
		name := l[:colon]
		if !httpguts.ValidHeaderFieldName(name) {
			return nil, false
		}
		v := trimBlanks(l[colon+1:])
		for j := 0; j < len(v); j++ {
			if c := v[j]; (c < ' ' && c != '\t') || c == 0x7f {
				return nil, false
			}
		}
		if !canonicalKey(name) {
			name = textproto.CanonicalMIMEHeaderKey(name)
		}
		switch name {
		case "Transfer-Encoding", "Trailer":
			return nil, false
		case "Content-Length":
			if resp.ContentLength >= 0 {
				return nil, false // duplicates: net/http decides
			}
			cl, ok := digits(v)
			if !ok {
				return nil, false
			}
			resp.ContentLength = cl
		case "Connection":
			for _, tok := range strings.Split(v, ",") {
				tok = strings.TrimSpace(tok)
				switch {
				case strings.EqualFold(tok, "close"):
					resp.Close = true
				case strings.EqualFold(tok, "keep-alive"):
					keepAlive = true
				}
			}
		}
		vals[i] = v
		if prev, ok := resp.Header[name]; ok {
			resp.Header[name] = append(prev, v)
			continue
		}
		resp.Header[name] = vals[i : i+1 : i+1]
	}
	if resp.ProtoMinor == 0 {
		resp.Close = resp.Close || !keepAlive
	} else if resp.Close {
		// net/http drops the header it acted on.
		delete(resp.Header, "Connection")
	}
	noBody := req.Method == http.MethodHead || code == http.StatusNoContent || code == http.StatusNotModified
	if !noBody && resp.ContentLength < 0 {
		return nil, false // read until close: net/http's case
	}
	if (code == http.StatusNoContent || code == http.StatusNotModified) && req.Method != http.MethodHead {
		// A HEAD answer reports the announced length, as net/http does.
		resp.ContentLength = 0
	}
	_, _ = br.Discard(end + 4)
	if noBody || resp.ContentLength == 0 {
		resp.Body = http.NoBody
	}
	return fr, true
}

// digits parses a Content-Length: decimal digits only.
func digits(v string) (int64, bool) {
	if v == "" || len(v) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// canonicalKey reports whether k is in canonical MIME form already.
func canonicalKey(k string) bool {
	upper := true
	for i := 0; i < len(k); i++ {
		c := k[i]
		if upper && c >= 'a' && c <= 'z' {
			return false
		}
		if !upper && c >= 'A' && c <= 'Z' {
			return false
		}
		upper = c == '-'
	}
	return true
}

// hasToken reports whether token appears in v as a whole word of a comma
// or space separated list, ignoring case (net/http's test for whether a
// Connection header already says close).
func hasToken(v, token string) bool {
	if len(token) > len(v) || token == "" {
		return false
	}
	for i := 0; i+len(token) <= len(v); i++ {
		if !strings.EqualFold(v[i:i+len(token)], token) {
			continue
		}
		if (i == 0 || tokenBoundary(v[i-1])) && (i+len(token) == len(v) || tokenBoundary(v[i+len(token)])) {
			return true
		}
	}
	return false
}

func tokenBoundary(c byte) bool { return c == ' ' || c == ',' || c == '\t' }
