package http

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/internal/testkit/encodingtest"
)

// decodingServer answers with what a request's body decodes to through
// its Content-Encoding (undone last name first), that header and the
// number of bytes on the wire.
func decodingServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		ce := r.Header.Get("Content-Encoding")
		body, err := encodingtest.Decode(ce, raw)
		out := map[string]any{"ce": ce, "wire": len(raw), "body": string(body), "ct": r.Header.Get("Content-Type")}
		if err != nil {
			out["err"] = err.Error()
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestCompression checks params.compression as k6 v2.2.0 applies it
// (corpus 440–443): each name in order, the body the server decodes is
// the script's, the response's request keeps it uncompressed with the
// Content-Encoding sent, and batch and asyncRequest compress as well.
func TestCompression(t *testing.T) {
	srv := decodingServer(t)
	e := newEnv(t, nil)
	body := strings.Repeat("metronome ", 200)
	v := e.run(fmt.Sprintf(`var u = %q, b = %q, out = [];
		for (const c of ["gzip", "deflate", "br", "zstd", " zstd , br,gzip ,deflate"]) {
			const r = http.post(u, b, {compression: c});
			const j = r.json();
			out.push([j.ce, j.body === b, j.wire < b.length, r.request.body === b, r.request.headers["Content-Encoding"][0]].join());
		}
		const f = http.post(u, {a: "1 2"}, {compression: "gzip"}).json();
		out.push([f.ce, f.body, f.ct].join());
		const rs = http.batch([["POST", u, b, {compression: "br"}], {method: "POST", url: u, body: "", params: {compression: "deflate"}}]);
		out.push(rs.map(r => r.json().ce + ":" + r.json().body.length).join());
		out.push(http.get(u, {compression: "gzip"}).json().ce === "");
		out.push(http.post(u, null, {compression: "gzip"}).json().ce === "");
		out.join("|")`, srv.URL, body))
	want := "gzip,true,true,true,gzip|deflate,true,true,true,deflate|br,true,true,true,br|zstd,true,true,true,zstd|" +
		"zstd, br, gzip, deflate,true,true,true,zstd, br, gzip, deflate|gzip,a=1+2,application/x-www-form-urlencoded|br:2000,deflate:0|true|true"
	if v.String() != want {
		t.Errorf("got  %s\nwant %s", v, want)
	}
	e.run(fmt.Sprintf(`var got; http.asyncRequest("POST", %q, "x".repeat(100), {compression: "gzip"}).then(r => got = r.json())`, srv.URL))
	v = e.run(`[got.ce, got.body.length].join()`)
	if v.String() != "gzip,100" {
		t.Errorf("asyncRequest: %s", v)
	}
}

// TestCompressionHeaderOfTheScript checks that a Content-Encoding of the
// script's own is sent as it is, over a compressed body, with k6's
// warning when the two differ.
func TestCompressionHeaderOfTheScript(t *testing.T) {
	srv := decodingServer(t)
	e := newEnv(t, nil)
	v := e.run(fmt.Sprintf(`[http.post(%q, "x", {compression: "gzip", headers: {"content-encoding": "gzip"}}).json().ce,
		http.post(%q, "x", {headers: {"Content-Encoding": "br"}, compression: "gzip"}).json().err !== undefined].join()`, srv.URL, srv.URL))
	if v.String() != "gzip,true" {
		t.Errorf("got %s, want the script's header kept both times", v)
	}
	logs := e.logs.text()
	if strings.Count(logs, "mismatch between the desired `compression`") != 1 || !strings.Contains(logs, "POST request for '"+srv.URL+"'") {
		t.Errorf("want one mismatch warning, for the br header; logs:\n%s", logs)
	}
}

// TestCompressionUnknown checks k6's answer to a name it does not know:
// the request fails before it is sent, with error_code 0 and k6's text,
// records nothing, and throws only under the throw option.
func TestCompressionUnknown(t *testing.T) {
	srv := decodingServer(t)
	e := newEnv(t, nil)
	v := e.run(fmt.Sprintf(`var out = [];
		for (const c of ["lzw", "GZIP", "gzip,", undefined, null]) {
			const r = http.post(%q, "x", {compression: c});
			out.push([r.status, r.error_code, r.url, r.error].join(";"));
		}
		out.join("|")`, srv.URL))
	var want []string
	for _, n := range []string{"lzw", "GZIP", "", "undefined", "null"} {
		want = append(want, "0;0;;unknown compression algorithm "+n+", supported algorithms are [gzip deflate zstd br]")
	}
	if v.String() != strings.Join(want, "|") {
		t.Errorf("got  %s\nwant %s", v, strings.Join(want, "|"))
	}
	if n := len(e.rec.samples); n != 0 {
		t.Errorf("%d samples recorded for requests never sent", n)
	}
	if !strings.Contains(e.logs.text(), `level=WARN msg="Request Failed" error="unknown compression algorithm lzw, supported`) {
		t.Errorf("no Request Failed warning:\n%s", e.logs.text())
	}
	v = e.run(fmt.Sprintf(`var rs = http.batch([["POST", %q, "x", {compression: "gzip"}], ["POST", %q, "x", {compression: "lzw"}], ["GET", %q]]);
		[rs[0].status, rs[0].error, rs[1].error_code, rs[2]].join(";")`, srv.URL, srv.URL, srv.URL))
	if v.String() != "0;;0;" || len(e.rec.samples) != 0 {
		t.Errorf("batch: %s with %d samples; want the batch stopped before anything is sent", v, len(e.rec.samples))
	}

	th := newEnv(t, &config.Options{Throw: ptr(true)})
	if _, err := th.try(fmt.Sprintf(`http.post(%q, "x", {compression: "lzw"})`, srv.URL)); err == nil ||
		!strings.Contains(err.Error(), "unknown compression algorithm lzw, supported algorithms are [gzip deflate zstd br]") {
		t.Errorf("throw option: %v", err)
	}
	if strings.Contains(th.logs.text(), "Request Failed") {
		t.Errorf("under the throw option the error is thrown, not logged too:\n%s", th.logs.text())
	}
}

// TestRequesterCompression checks Request.Compression, which the xk6
// layer's httpext sends its Compressions through: the body goes out
// compressed in order, the caller's header map is left as it was, and an
// unknown name fails the request as a script's does.
func TestRequesterCompression(t *testing.T) {
	srv := decodingServer(t)
	e := newEnv(t, nil)
	q := NewRequester(e.vu)
	h := http.Header{"X-Own": {"1"}}
	res, err := q.Do(&Request{Method: http.MethodPost, URL: srv.URL, Header: h, Body: []byte("pushed"), Compression: "gzip,br"})
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ CE, Body string }
	if err := json.Unmarshal([]byte(res.Body), &got); err != nil || got.CE != "gzip, br" || got.Body != "pushed" {
		t.Errorf("the server got %+v (%v) from %q", got, err, res.Body)
	}
	if res.SentHeader.Get("Content-Encoding") != "gzip, br" || h.Get("Content-Encoding") != "" {
		t.Errorf("sent header %v, caller's header %v", res.SentHeader, h)
	}
	res, err = q.Do(&Request{Method: http.MethodPost, URL: srv.URL, Body: []byte("x"), Compression: "lzw"})
	if err != nil || res.ErrorCode != 0 || res.Error != "unknown compression algorithm lzw, supported algorithms are [gzip deflate zstd br]" {
		t.Errorf("unknown compression: %+v, %v", res, err)
	}
	if n := len(e.samples("http_reqs")); n != 1 {
		t.Errorf("%d http_reqs, want the first request's only", n)
	}
}

// TestOwnContentLength checks that a Content-Length header of the
// script's own gives way to the body's length, as in k6: dropped from
// what is sent and from the response's request, with k6's warning when
// it differs, the compressed length counting.
func TestOwnContentLength(t *testing.T) {
	srv := decodingServer(t)
	e := newEnv(t, nil)
	v := e.run(fmt.Sprintf(`var a = http.post(%q, "hello", {headers: {"Content-Length": "5"}}), b = http.post(%q, "hello", {compression: "gzip", headers: {"content-length": "5"}});
		[a.json().wire, a.request.headers["Content-Length"], b.json().wire, b.request.headers["Content-Length"]].join()`, srv.URL, srv.URL))
	if v.String() != "5,,29," {
		t.Errorf("got %s, want the body's lengths sent and no Content-Length in the requests", v)
	}
	logs := e.logs.text()
	want := `The specified Content-Length header "5" in the POST request for ` + srv.URL + ` doesn't match the actual request body length of 29, so it will be ignored!`
	if logs != want {
		t.Errorf("logs:\n%s\nwant only:\n%s", logs, want)
	}
}
