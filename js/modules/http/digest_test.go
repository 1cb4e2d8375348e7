package http

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// digestField is one name=value or name="value" of a Digest
// Authorization header.
var digestField = regexp.MustCompile(`(\w+)=(?:"([^"]*)"|([^,\s]*))`)

// digestFields reads the fields of a Digest Authorization header, as the
// test server's own parser, apart from the module's.
func digestFields(s string) map[string]string {
	m := map[string]string{}
	for _, f := range digestField.FindAllStringSubmatch(s, -1) {
		m[f[1]] = f[2] + f[3]
	}
	return m
}

// digestServer checks Digest (MD5, qop=auth) for user:pass and counts
// the requests and the Authorization schemes it saw.
func digestServer(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var seen []string
	md := func(s string) string { x := md5.Sum([]byte(s)); return hex.EncodeToString(x[:]) }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := r.Header.Get("Authorization")
		scheme, rest, _ := strings.Cut(a, " ")
		mu.Lock()
		seen = append(seen, scheme)
		mu.Unlock()
		if scheme != "Digest" {
			w.Header().Set("WWW-Authenticate", `Digest realm="r@x", qop="auth", nonce="abc123", opaque="op", algorithm=MD5`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		m := digestFields(rest)
		ha1, ha2 := md("user:r@x:pass"), md(r.Method+":"+m["uri"])
		if m["uri"] != r.URL.RequestURI() || m["opaque"] != "op" || m["response"] != md(ha1+":"+m["nonce"]+":"+m["nc"]+":"+m["cnonce"]+":"+m["qop"]+":"+ha2) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = fmt.Fprintf(w, "ok %s", r.Method)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := seen
		seen = nil
		return out
	}
}

// As k6 v2.2.0 does against the same server: the first hop carries the
// URL's credentials as Basic, the second the digest; both count in
// http_reqs, and the handshake's 401 is not a failed request. Six digest
// requests (four good, one wrong password, one without credentials) made
// k6 record 12 http_reqs of which 2 failed.
func TestDigestAuth(t *testing.T) {
	srv, seen := digestServer(t)
	e := newEnv(t, nil)
	host := strings.TrimPrefix(srv.URL, "http://")
	good := "http://user:pass@" + host
	v := e.run(fmt.Sprintf(`var out = [];
		var r = http.get(%[1]q + "/a?q=1", {auth: "digest"}); out.push(r.status + " " + r.body);
		var bad = http.get(%[2]q + "/b", {auth: "digest"}); out.push(bad.status + " " + bad.error_code);
		var p = http.post(%[1]q + "/c", "payload", {auth: "digest"}); out.push(p.status + " " + p.body);
		http.asyncRequest("GET", %[1]q + "/d", null, {auth: "digest"}).then(function (a) { out.push("async " + a.status) });
		var b = http.batch([["GET", %[1]q + "/e", null, {auth: "digest"}]]); out.push("batch " + b[0].status);
		out.push("nocred " + http.get(%[3]q + "/f", {auth: "digest"}).status);
		out`, good, "http://user:wrong@"+host, srv.URL))
	got := strings.Join(exportStrings(v), "|")
	want := "200 ok GET|401 1401|200 ok POST|batch 200|nocred 401|async 200"
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if s := strings.Join(seen(), ","); strings.Count(s, "Basic") != 5 || strings.Count(s, "Digest") != 6 || strings.Count(s, ",") != 11 {
		t.Errorf("the server saw %s; want each of the 6 requests as Basic (or none) then Digest", s)
	}
	if n := len(e.samples("http_reqs")); n != 12 {
		t.Errorf("http_reqs = %d, want 12 as in k6", n)
	}
	// k6 tags every 401 hop error_code=1401, the answered challenges too.
	unauthorized := 0
	for _, s := range e.samples("http_reqs") {
		if tag(s, "status") == "401" {
			unauthorized++
			if c := tag(s, "error_code"); c != "1401" {
				t.Errorf("a 401 hop has error_code %q, want 1401 as in k6", c)
			}
		}
	}
	if unauthorized != 8 {
		t.Errorf("401 hops = %d, want 8: six challenges and two refusals", unauthorized)
	}
	failed := 0
	for _, s := range e.samples("http_req_failed") {
		failed += int(s.Value)
	}
	if failed != 2 {
		t.Errorf("failed requests = %d, want 2 as in k6", failed)
	}
}

func exportStrings(v interface{ Export() any }) []string {
	var out []string
	if xs, ok := v.Export().([]any); ok {
		for _, x := range xs {
			out = append(out, fmt.Sprint(x))
		}
	}
	return out
}
