package http

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"
)

// ntlmServer plays the server side of NTLM far enough to check the
// client: it challenges anonymous requests, answers a NEGOTIATE with a
// CHALLENGE and accepts an AUTHENTICATE for user "user" arriving on the
// connection that negotiated. It logs "<path> <message type> <conn>".
func ntlmServer(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var log []string
	negotiated := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "NTLM ")
		msg, _ := base64.StdEncoding.DecodeString(tok)
		typ := 0
		if ok && len(msg) >= 12 && bytes.HasPrefix(msg, []byte("NTLMSSP\x00")) {
			typ = int(binary.LittleEndian.Uint32(msg[8:]))
		}
		mu.Lock()
		log = append(log, fmt.Sprintf("%s %d", r.URL.Path, typ))
		sameConn := negotiated[r.RemoteAddr]
		if typ == 1 {
			negotiated[r.RemoteAddr] = true
		}
		mu.Unlock()
		switch typ {
		case 0:
			w.Header().Set("WWW-Authenticate", "NTLM")
			w.WriteHeader(http.StatusUnauthorized)
		case 1:
			ch := make([]byte, 48)
			copy(ch, "NTLMSSP\x00")
			binary.LittleEndian.PutUint32(ch[8:], 2)
			binary.LittleEndian.PutUint32(ch[16:], 48)
			binary.LittleEndian.PutUint32(ch[20:], 0x00000001|0x00000200|0x00080000|0x00800000|0x02000000)
			copy(ch[24:32], "srvchall")
			binary.LittleEndian.PutUint32(ch[44:], 48)
			w.Header().Set("WWW-Authenticate", "NTLM "+base64.StdEncoding.EncodeToString(ch))
			w.WriteHeader(http.StatusUnauthorized)
		case 3:
			// UserName is the security buffer at offset 36: length, max, offset.
			n, off := binary.LittleEndian.Uint16(msg[36:]), binary.LittleEndian.Uint32(msg[40:])
			u16 := make([]uint16, n/2)
			for i := range u16 {
				u16[i] = binary.LittleEndian.Uint16(msg[int(off)+2*i:])
			}
			if user := string(utf16.Decode(u16)); user != "user" || !sameConn {
				w.WriteHeader(http.StatusForbidden)
				return
			}
			_, _ = fmt.Fprintf(w, "ok %s", r.Method)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := log
		log = nil
		return out
	}
}

// The hops and verdicts k6 v2.2.0 recorded against the same kind of
// server: anonymous 401 (expected), NEGOTIATE 401 (failed), AUTHENTICATE
// 200; without credentials a single 401, expected.
func TestNTLMAuth(t *testing.T) {
	srv, seen := ntlmServer(t)
	e := newEnv(t, nil)
	creds := strings.Replace(srv.URL, "http://", "http://user:pass@", 1)
	v := e.run(fmt.Sprintf(`var out = [];
		var p = http.post(%[1]q + "/b", "payload", {auth: "ntlm"}); out.push(p.status + " " + p.body);
		http.asyncRequest("GET", %[1]q + "/c", null, {auth: "ntlm"}).then(function (a) { out.push("async " + a.status + " " + a.body) });
		out`, creds))
	if got, want := strings.Join(exportStrings(v), "|"), "200 ok POST|async 200 ok GET"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got, want := strings.Join(seen(), ","), "/b 0,/b 1,/b 3,/c 0,/c 1,/c 3"; got != want {
		t.Errorf("the server saw %s, want %s", got, want)
	}
	e.run(fmt.Sprintf(`http.get(%q, {auth: "ntlm"})`, srv.URL+"/d"))
	if got := strings.Join(seen(), ","); got != "/d 0" {
		t.Errorf("without credentials the server saw %s, want one anonymous request", got)
	}
	var verdicts []string
	for _, s := range e.samples("http_req_failed") {
		verdicts = append(verdicts, fmt.Sprintf("%s:%v", tag(s, "status"), s.Value))
	}
	if got, want := strings.Join(verdicts, " "), "401:0 401:1 200:0 401:0 401:1 200:0 401:0"; got != want {
		t.Errorf("http_req_failed by hop %s, want %s as in k6", got, want)
	}
}
