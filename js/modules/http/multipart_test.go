package http

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// bodyEchoServer answers with the request's Content-Type, body (in
// base64, as JSON encodes bytes) and Content-Length.
func bodyEchoServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_ = json.NewEncoder(w).Encode(echoedBody{CT: r.Header.Get("Content-Type"), Body: b, Len: r.ContentLength})
	}))
	t.Cleanup(srv.Close)
	return srv
}

type echoedBody struct {
	CT   string `json:"ct"`
	Body []byte `json:"body"`
	Len  int64  `json:"len"`
}

func decodeBody(t *testing.T, s string) echoedBody {
	t.Helper()
	var b echoedBody
	if err := json.Unmarshal([]byte(s), &b); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return b
}

// Multipart bodies byte for byte as k6 v2.2.0 sent them to the same
// script (its boundary replaced by B): parts in key order, file parts
// with filename and content type, arrays as "[1 2]".
func TestMultipartAsK6(t *testing.T) {
	srv := bodyEchoServer(t)
	e := newEnv(t, nil)
	cases := []struct{ body, want string }{
		{`{ field: "v1", file: http.file("hello", "a.txt", "text/plain"), abc: "z" }`,
			"--B\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\nv1\r\n--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--B\r\nContent-Disposition: form-data; name=\"abc\"\r\n\r\nz\r\n--B--\r\n"},
		{`{ bin: http.file(new Uint8Array([0, 1, 2, 255]).buffer, "b.bin") }`,
			"--B\r\nContent-Disposition: form-data; name=\"bin\"; filename=\"b.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n\x00\x01\x02\xff\r\n--B--\r\n"},
		{`{ f: http.file("x", "x.txt"), arr: ["1", "2"] }`,
			"--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x.txt\"\r\nContent-Type: application/octet-stream\r\n\r\nx\r\n--B\r\nContent-Disposition: form-data; name=\"arr\"\r\n\r\n[1 2]\r\n--B--\r\n"},
		{`{ f: http.file("hello", "a.txt", "text/plain"), n: 5, t: true }`,
			"--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--B\r\nContent-Disposition: form-data; name=\"n\"\r\n\r\n5\r\n--B\r\nContent-Disposition: form-data; name=\"t\"\r\n\r\ntrue\r\n--B--\r\n"},
	}
	boundary := regexp.MustCompile(`^multipart/form-data; boundary=([0-9a-f]{60})$`)
	for _, call := range []string{`http.post(U, BODY)`, `http.request("PUT", U, BODY)`, `http.batch([["POST", U, BODY]])[0]`, `ASYNC`} {
		for _, c := range cases {
			src := strings.ReplaceAll(call, "BODY", c.body)
			if call == "ASYNC" {
				src = `(function () { var out; http.asyncRequest("POST", U, ` + c.body + `).then(function (r) { out = r }); return { json: function () { return out.json() } } })()`
			}
			e.run(fmt.Sprintf(`var U = %q; var res = %s; res`, srv.URL, src))
			v := e.run(`JSON.stringify(res.json())`)
			got := decodeBody(t, v.String())
			m := boundary.FindStringSubmatch(got.CT)
			if m == nil {
				t.Errorf("%s: Content-Type %q is not multipart with a 60-hex boundary", src, got.CT)
				continue
			}
			if body := strings.ReplaceAll(string(got.Body), m[1], "B"); body != c.want {
				t.Errorf("%s:\n got %q\nwant %q", src, body, c.want)
			}
			if got.Len != int64(len(got.Body)) {
				t.Errorf("%s: Content-Length %d for %d bytes", src, got.Len, len(got.Body))
			}
		}
	}
}

// http.file's object is what k6 shows; an object without files stays a
// URL-encoded form; a boundary the script puts in Content-Type is used.
func TestFileAndForms(t *testing.T) {
	srv := bodyEchoServer(t)
	e := newEnv(t, nil)
	v := e.run(`var f = http.file("x"); JSON.stringify([f, Object.keys(f), /^\d+$/.test(f.filename), http.file("d", "n.txt", "text/csv")])`)
	want := `[{"data":"x","filename":"` // filename: nanoseconds, checked by the regexp
	if !strings.HasPrefix(v.String(), want) || !strings.Contains(v.String(), `"content_type":"application/octet-stream"},["data","filename","content_type"],true,{"data":"d","filename":"n.txt","content_type":"text/csv"}]`) {
		t.Errorf("http.file objects: %s", v)
	}
	v = e.run(fmt.Sprintf(`JSON.stringify(http.post(%q, {a: "1", b: "x y"}).json())`, srv.URL))
	if got := decodeBody(t, v.String()); string(got.Body) != "a=1&b=x+y" || got.CT != "application/x-www-form-urlencoded" {
		t.Errorf("a form without files: %+v", got)
	}
	v = e.run(fmt.Sprintf(`JSON.stringify(http.post(%q, {f: http.file("z", "z.txt")}, {headers: {"Content-Type": "multipart/form-data; boundary=XYZ"}}).json())`, srv.URL))
	got := decodeBody(t, v.String())
	if _, params, _ := mime.ParseMediaType(got.CT); params["boundary"] != "XYZ" || !strings.HasPrefix(string(got.Body), "--XYZ\r\n") || !strings.HasSuffix(string(got.Body), "--XYZ--\r\n") {
		t.Errorf("the script's boundary was not used: %+v", got)
	}
}
