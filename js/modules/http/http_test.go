package http

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/internal/httpclient"
)

func ptr[T any](v T) *T { return &v }

// decodeEcho reads the JSON string a script returned into an echo.
func decodeEcho(t *testing.T, v sobek.Value) echo {
	t.Helper()
	var e echo
	if err := json.Unmarshal([]byte(v.String()), &e); err != nil {
		t.Fatalf("not an echo: %q: %v", v.String(), err)
	}
	return e
}

func TestMethods(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	u := srv.URL + "/echo"
	cases := []struct{ call, method string }{
		{`http.get(U)`, "GET"},
		{`http.post(U)`, "POST"},
		{`http.put(U)`, "PUT"},
		{`http.patch(U)`, "PATCH"},
		{`http.del(U)`, "DELETE"},
		{`http.options(U)`, "OPTIONS"},
		{`http.request("purge", U)`, "PURGE"},
		{`http.request("GET", U, null, {})`, "GET"},
	}
	for _, c := range cases {
		v := e.run(fmt.Sprintf("var U = %q; %s.body", u, c.call))
		if got := decodeEcho(t, v).Method; got != c.method {
			t.Errorf("%s: server saw %s, want %s", c.call, got, c.method)
		}
	}
	v := e.run(fmt.Sprintf(`var r = http.head(%q); [r.status, r.body].join("|")`, u))
	if v.String() != "200|" {
		t.Errorf("head: got %q, want status 200 and an empty body", v.String())
	}
	if n := len(e.samples("http_reqs")); n != len(cases)+1 {
		t.Errorf("http_reqs samples = %d, want %d", n, len(cases)+1)
	}
}

func TestBodies(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	u := srv.URL + "/echo"
	cases := []struct {
		name, body, want, ctype string
	}{
		{"string", `"hello"`, "hello", ""},
		{"arraybuffer", `new Uint8Array([104, 105]).buffer`, "hi", ""},
		{"typed array view", `new Uint8Array([0, 65, 66, 67, 0]).subarray(1, 4)`, "ABC", ""},
		{"dataview", `new DataView(new Uint8Array([120, 121, 122]).buffer, 1, 2)`, "yz", ""},
		{"object", `{b: "2 3", a: "1", list: ["x", "y"]}`, "a=1&b=2+3&list=x&list=y", "application/x-www-form-urlencoded"},
		{"object keeps content type", `{a: "1"}`, "a=1", "text/plain"},
	}
	for _, c := range cases {
		params := "{headers: null}"
		if c.name == "object keeps content type" {
			params = `{headers: {"content-type": "text/plain"}}`
		}
		got := decodeEcho(t, e.run(fmt.Sprintf("http.post(%q, %s, %s).body", u, c.body, params)))
		if got.Body != c.want {
			t.Errorf("%s: server got body %q, want %q", c.name, got.Body, c.want)
		}
		if got.ContentType != c.ctype {
			t.Errorf("%s: Content-Type %q, want %q", c.name, got.ContentType, c.ctype)
		}
	}
	// A form body must not leave its Content-Type on later requests.
	if got := decodeEcho(t, e.run(fmt.Sprintf("http.post(%q, 'raw').body", u))); got.ContentType != "" {
		t.Errorf("a later request inherited Content-Type %q", got.ContentType)
	}
	// The request field of the response shows what was sent.
	v := e.run(fmt.Sprintf(`var r = http.put(%q, "payload", {headers: {"X-A": "1"}}).request;
		[r.method, r.url, r.body, r.headers["X-A"][0]].join("|")`, u))
	if want := "PUT|" + u + "|payload|1"; v.String() != want {
		t.Errorf("request field: %q, want %q", v.String(), want)
	}
}

func TestHeadersTagsAndName(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, &config.Options{UserAgent: ptr("agent/1")})
	u := srv.URL + "/echo"
	got := decodeEcho(t, e.run(fmt.Sprintf(`http.get(%q, {headers: {"x-custom": "v", "Host": "example.test"}, tags: {team: "a"}}).body`, u)))
	if got.Headers["X-Custom"] != "v" || got.Headers["User-Agent"] != "agent/1" || got.Host != "example.test" {
		t.Errorf("server saw headers %v host %q", got.Headers, got.Host)
	}
	reqs := e.samples("http_reqs")
	if len(reqs) != 1 {
		t.Fatalf("%d http_reqs samples", len(reqs))
	}
	s := reqs[0]
	for k, want := range map[string]string{"team": "a", "url": u, "name": u, "method": "GET", "status": "200", "proto": "HTTP/1.1", "scenario": "default", "expected_response": "true"} {
		if got := tag(s, k); got != want {
			t.Errorf("tag %s = %q, want %q", k, got, want)
		}
	}
	if hasTag(s, "error") || hasTag(s, "error_code") || hasTag(s, "tls_version") {
		t.Errorf("unexpected tags on a plain 200: %v", s.Tags)
	}

	e.reset()
	e.run(fmt.Sprintf(`http.get(%q, {tags: {name: "echo-endpoint"}})`, u+"?id=1"))
	s = e.samples("http_req_duration")[0]
	if tag(s, "name") != "echo-endpoint" || tag(s, "url") != "echo-endpoint" {
		t.Errorf("a user name must set name and url: %v", s.Tags)
	}

	e.reset()
	v := e.run(fmt.Sprintf("var id = 7; var r = http.get(http.url`%s?id=${id}`); r.url", u))
	if v.String() != u+"?id=7" {
		t.Errorf("url template requested %q", v.String())
	}
	s = e.samples("http_reqs")[0]
	if want := u + "?id=${}"; tag(s, "name") != want || tag(s, "url") != want {
		t.Errorf("url template tags: %v, want name %q", s.Tags, want)
	}
}

func TestTimeout(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	start := time.Now()
	v := e.run(fmt.Sprintf(`var r = http.get(%q, {timeout: "100ms"}); [r.status, r.error_code, r.error, r.body].join("|")`, srv.URL+"/slow"))
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("the timeout did not cut the request: it took %v", took)
	}
	if v.String() != "0|1050|request timeout|" {
		t.Errorf("got %q, want status 0, code 1050", v.String())
	}
	s := e.samples("http_reqs")
	if len(s) != 1 || tag(s[0], "error_code") != "1050" || tag(s[0], "status") != "0" || tag(s[0], "expected_response") != "false" {
		t.Fatalf("timeout samples: %v", s)
	}
	if w := e.samples("http_req_waiting")[0].Value; w < 50 {
		t.Errorf("waiting %.1fms: the time until the timeout should be charged to waiting", w)
	}
	// A number is milliseconds.
	v = e.run(fmt.Sprintf(`http.get(%q, {timeout: 100}).error_code`, srv.URL+"/slow"))
	if v.String() != "1050" {
		t.Errorf("numeric timeout: error_code %s", v)
	}
	if _, err := e.try(fmt.Sprintf(`http.get(%q, {timeout: "soon"})`, srv.URL)); err == nil || !strings.Contains(err.Error(), "params.timeout") {
		t.Errorf("a bad timeout must throw naming params.timeout, got %v", err)
	}
}

func TestRedirects(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, &config.Options{MaxRedirects: ptr(int64(3))})
	v := e.run(fmt.Sprintf(`var r = http.get(%q); [r.status, r.url].join("|")`, srv.URL+"/redirect/2"))
	if want := "200|" + srv.URL + "/echo"; v.String() != want {
		t.Errorf("followed redirects: %q, want %q", v.String(), want)
	}
	reqs := e.samples("http_reqs")
	if len(reqs) != 4 {
		t.Fatalf("%d http_reqs samples for 3 redirects and the final request, want 4", len(reqs))
	}
	wantURLs := []string{"/redirect/2", "/redirect/1", "/redirect/0", "/echo"}
	for i, s := range reqs {
		if tag(s, "url") != srv.URL+wantURLs[i] {
			t.Errorf("hop %d url tag %q, want %q", i, tag(s, "url"), srv.URL+wantURLs[i])
		}
		wantStatus := "302"
		if i == 3 {
			wantStatus = "200"
		}
		if tag(s, "status") != wantStatus {
			t.Errorf("hop %d status tag %q", i, tag(s, "status"))
		}
	}

	// maxRedirects stops the chain and returns the redirect.
	e.reset()
	v = e.run(fmt.Sprintf(`http.get(%q).status`, srv.URL+"/redirect/5"))
	if v.String() != "302" || len(e.samples("http_reqs")) != 4 {
		t.Errorf("over maxRedirects: status %s, %d samples; want 302 after 4 requests", v, len(e.samples("http_reqs")))
	}
	if !strings.Contains(e.logs.text(), "Stopped after 3 redirects") {
		t.Errorf("no warning about the exhausted redirects: %q", e.logs.text())
	}
	// The redirects param overrides it; 0 does not follow at all.
	e.reset()
	v = e.run(fmt.Sprintf(`[http.get(%q, {redirects: 0}).status, http.get(%q, {redirects: 1}).status].join()`, srv.URL+"/redirect/0", srv.URL+"/redirect/1"))
	if v.String() != "302,302" || len(e.samples("http_reqs")) != 3 {
		t.Errorf("redirects param: %s with %d samples", v, len(e.samples("http_reqs")))
	}

	// 303 turns a POST into a GET without body; 307 keeps both.
	got := decodeEcho(t, e.run(fmt.Sprintf(`http.post(%q, "data").body`, srv.URL+"/to/303")))
	if got.Method != "GET" || got.Body != "" {
		t.Errorf("after 303: %s with body %q", got.Method, got.Body)
	}
	got = decodeEcho(t, e.run(fmt.Sprintf(`http.post(%q, "data").body`, srv.URL+"/to/307")))
	if got.Method != "POST" || got.Body != "data" {
		t.Errorf("after 307: %s with body %q", got.Method, got.Body)
	}
}

func TestResponseTypes(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	v := e.run(fmt.Sprintf(`var b = http.get(%q, {responseType: "binary"}).body;
		var a = new Uint8Array(b); [b instanceof ArrayBuffer, a.length, a[0], a[255]].join()`, srv.URL+"/bin"))
	if v.String() != "true,256,0,255" {
		t.Errorf("binary body: %s", v)
	}
	v = e.run(fmt.Sprintf(`var r = http.get(%q, {responseType: "none"}); [r.body === null, r.status].join()`, srv.URL+"/bin"))
	if v.String() != "true,200" {
		t.Errorf("none body: %s", v)
	}
	v = e.run(fmt.Sprintf(`http.get(%q).body.length`, srv.URL+"/chunked"))
	if v.String() != "3000" {
		t.Errorf("chunked text body length %s", v)
	}
	if _, err := e.try(fmt.Sprintf(`http.get(%q, {responseType: "blob"})`, srv.URL)); err == nil {
		t.Error("an unknown responseType must throw")
	}

	d := newEnv(t, &config.Options{DiscardResponseBodies: ptr(true)})
	v = d.run(fmt.Sprintf(`[http.get(%q).body, http.get(%q, {responseType: "text"}).body].join("|")`, srv.URL+"/multi", srv.URL+"/multi"))
	if v.String() != "|multi" {
		t.Errorf("discardResponseBodies: %q, want the default body null and an explicit text body", v.String())
	}
	v = e.run(fmt.Sprintf(`[http.get(%q).body, http.get(%q, {headers: {"Accept-Encoding": "gzip"}}).body].join("|")`, srv.URL+"/gzip", srv.URL+"/gzip"))
	if v.String() != "plain|hello, compressed world" {
		t.Errorf("compression: %q", v.String())
	}
}

func TestResponseFields(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	v := e.run(fmt.Sprintf(`var r = http.get(%q);
		JSON.stringify([r.status, r.status_text, r.proto, r.headers["X-Multi"], r.headers["Content-Length"],
			r.error, r.error_code, r.remote_ip, r.remote_port > 0, r.tls_version, typeof r.timings.duration])`, srv.URL+"/multi"))
	var got []any
	if err := json.Unmarshal([]byte(v.String()), &got); err != nil {
		t.Fatal(err)
	}
	want := []any{200.0, "200 OK", "HTTP/1.1", "a, b", "5", "", 0.0, "127.0.0.1", true, "", "number"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("fields %v, want %v", got, want)
	}
	// Every field is enumerable and survives JSON.stringify.
	v = e.run(fmt.Sprintf(`Object.keys(JSON.parse(JSON.stringify(http.get(%q)))).sort().join()`, srv.URL+"/multi"))
	if want := "body,cookies,error,error_code,headers,ocsp,proto,remote_ip,remote_port,request,status,status_text,timings,tls_cipher_suite,tls_version,url"; v.String() != want {
		t.Errorf("keys %s", v)
	}
	// Without TLS the OCSP status is empty, as in k6.
	if v = e.run(fmt.Sprintf(`http.get(%q).ocsp.status`, srv.URL+"/multi")); v.String() != "" {
		t.Errorf("ocsp.status %q without TLS, want empty", v)
	}
	// The keys come in k6 v2.2.0's order, its methods after its fields,
	// which console.log and JSON.stringify follow.
	v = e.run(fmt.Sprintf(`var r = http.get(%q); r.json = 1; r.extra = 2; Object.keys(r).join()`, srv.URL+"/multi"))
	if want := "remote_ip,remote_port,url,status,status_text,proto,headers,cookies,body,timings,tls_version,tls_cipher_suite,ocsp,error,error_code,request,clickLink,html,json,submitForm,extra"; v.String() != want {
		t.Errorf("keys in order %s\nwant %s", v, want)
	}
	// Scripts may add and change properties.
	v = e.run(fmt.Sprintf(`var r = http.get(%q); r.extra = 1; r.status = 99; [r.extra, r.status, "extra" in r].join()`, srv.URL+"/multi"))
	if v.String() != "1,99,true" {
		t.Errorf("writable response: %s", v)
	}
}

func TestJSON(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	v := e.run(fmt.Sprintf(`var r = http.get(%q);
		var whole = r.json();
		JSON.stringify([whole.items[1].name, r.json("a.b.1.c"), r.json("items.0.name"), r.json("n"), r.json("t"),
			r.json("z"), r.json("missing") === undefined, r.json("items.#"), r.json("a.b"), r.json() === whole])`, srv.URL+"/json"))
	want := `["two","x","one",3.5,true,null,true,2,[1,{"c":"x"}],true]`
	if v.String() != want {
		t.Errorf("json: %s, want %s", v, want)
	}
	// As in k6: without a selector a body that is not JSON throws, with
	// the place of the error; with one nothing is found.
	_, err := e.try(fmt.Sprintf(`http.get(%q).json()`, srv.URL+"/bad-json"))
	if err == nil || !strings.Contains(err.Error(), "cannot parse json due to an error at line 1, character 2 , error: invalid character") {
		t.Errorf("json() on invalid JSON: %v", err)
	}
	v = e.run(fmt.Sprintf(`var b = http.get(%q); [b.json("a"), b.json(undefined), b.json(null)].map(String).join()`, srv.URL+"/bad-json"))
	if v.String() != "undefined,undefined,undefined" {
		t.Errorf("json(selector) on invalid JSON: %s", v)
	}
	v = e.run(fmt.Sprintf(`http.get(%q, {responseType: "binary"}).json("items.1.name")`, srv.URL+"/json"))
	if v.String() != "two" {
		t.Errorf("json on a binary body: %s", v)
	}
}

func TestTimings(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	v := e.run(fmt.Sprintf(`var out = [];
		for (var i = 0; i < 3; i++) { out.push(http.get(%q).timings); }
		JSON.stringify(out)`, srv.URL+"/echo"))
	var ts []map[string]float64
	if err := json.Unmarshal([]byte(v.String()), &ts); err != nil {
		t.Fatal(err)
	}
	for i, tm := range ts {
		for k, x := range tm {
			if x < 0 {
				t.Errorf("request %d: %s = %v is negative", i, k, x)
			}
		}
		if sum := tm["sending"] + tm["waiting"] + tm["receiving"]; math.Abs(sum-tm["duration"]) > 1e-6 {
			t.Errorf("request %d: duration %v != sending+waiting+receiving %v", i, tm["duration"], sum)
		}
		if tm["looking_up"] != 0 {
			t.Errorf("looking_up = %v", tm["looking_up"])
		}
	}
	if ts[0]["connecting"] <= 0 {
		t.Errorf("the first request dialled, but connecting = %v", ts[0]["connecting"])
	}
	if ts[1]["connecting"] != 0 || ts[2]["connecting"] != 0 {
		t.Errorf("later requests reuse the connection, but connecting = %v, %v", ts[1]["connecting"], ts[2]["connecting"])
	}
	durs := e.samples("http_req_duration")
	sends, waits, recvs := e.samples("http_req_sending"), e.samples("http_req_waiting"), e.samples("http_req_receiving")
	for i := range durs {
		if math.Abs(durs[i].Value-(sends[i].Value+waits[i].Value+recvs[i].Value)) > 1e-6 {
			t.Errorf("sample %d: http_req_duration != sending+waiting+receiving", i)
		}
		if durs[i].Value != ts[i]["duration"] {
			t.Errorf("sample %d: http_req_duration %v, timings.duration %v", i, durs[i].Value, ts[i]["duration"])
		}
	}
}

func TestErrors(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	// A loopback port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/"
	_ = l.Close()

	v := e.run(fmt.Sprintf(`var r = http.get(%q); [r.status, r.error_code, r.body === null].join() + "|" + r.error`, closed))
	if !strings.HasPrefix(v.String(), "0,1212,true|") || !strings.Contains(v.String(), "connection refused") {
		t.Errorf("refused: %q", v.String())
	}
	s := e.samples("http_reqs")[0]
	if tag(s, "status") != "0" || tag(s, "error_code") != "1212" || !strings.Contains(tag(s, "error"), "connection refused") {
		t.Errorf("refused tags: %v", s.Tags)
	}
	if f := e.samples("http_req_failed"); len(f) != 1 || f[0].Value != 1 {
		t.Errorf("http_req_failed for a refused connection: %v", f)
	}
	// k6's warning: the message alone, Go's client error in a field.
	if want := fmt.Sprintf(`level=WARN msg="Request Failed" error="Get \"%s\": dial tcp %s: connect: connection refused"`, closed, l.Addr()); !strings.Contains(e.logs.text(), want) {
		t.Errorf("warning logged:\n%s\nwant:\n%s", e.logs.text(), want)
	}

	e.reset()
	v = e.run(fmt.Sprintf(`var r = http.get(%q); [r.status, r.error_code, r.error, r.body].join("|")`, srv.URL+"/status/404"))
	if v.String() != "404|1404||status 404" {
		t.Errorf("404: %q", v.String())
	}
	s = e.samples("http_reqs")[0]
	if tag(s, "status") != "404" || tag(s, "error_code") != "1404" || hasTag(s, "error") {
		t.Errorf("404 tags: %v", s.Tags)
	}

	e.reset()
	v = e.run(`var r = http.get("http://[fe80"); [r.status, r.error_code, JSON.stringify(r.url), String(r.request), r.body.length].join()`)
	if v.String() != `0,1020,"",null,0` || len(e.rec.samples) != 0 {
		t.Errorf("invalid URL: %q with %d samples, want code 1020 and no samples", v.String(), len(e.rec.samples))
	}

	// A URL that parses is sent, whatever its scheme and host: Go's client
	// refuses it, a failed request that is measured, as in k6.
	for _, c := range []struct{ url, text string }{
		{"not a url", `unsupported protocol scheme ""`},
		{"localhost/x", `unsupported protocol scheme ""`},
		{"ftp://localhost/x", `unsupported protocol scheme "ftp"`},
		{"http:///x", "http: no Host in request URL"},
	} {
		e.reset()
		v = e.run(fmt.Sprintf(`var r = http.get(%q); [r.status, r.error_code, r.error, r.url].join("|")`, c.url))
		if want := "0|1000|" + c.text + "|" + c.url; v.String() != want {
			t.Errorf("%s: %q, want %q", c.url, v.String(), want)
		}
		if f := e.samples("http_req_failed"); len(f) != 1 || f[0].Value != 1 {
			t.Errorf("%s: http_req_failed %v", c.url, f)
		} else if tag(f[0], "error") != c.text || tag(f[0], "error_code") != "1000" {
			t.Errorf("%s: tags %v", c.url, f[0].Tags)
		}
	}

	// The throw option turns network errors into exceptions.
	th := newEnv(t, &config.Options{Throw: ptr(true)})
	if _, err := th.try(fmt.Sprintf(`http.get(%q)`, closed)); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("throw: %v", err)
	}
	if _, err := th.try(fmt.Sprintf(`http.get(%q)`, srv.URL+"/status/500")); err != nil {
		t.Errorf("an HTTP error status must not throw: %v", err)
	}
	if _, err := e.try(fmt.Sprintf(`http.get(%q, {throw: true})`, closed)); err == nil {
		t.Error("params.throw must throw")
	}
}

func TestResponseCallback(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	ok, nf := srv.URL+"/status/200", srv.URL+"/status/404"
	failed := func() []float64 {
		var out []float64
		for _, s := range e.samples("http_req_failed") {
			out = append(out, s.Value)
		}
		return out
	}
	expectedTags := func() []string {
		var out []string
		for _, s := range e.samples("http_reqs") {
			v, has := s.Tags.Get("expected_response")
			if !has {
				v = "-"
			}
			out = append(out, v)
		}
		return out
	}

	e.run(fmt.Sprintf(`http.get(%q); http.get(%q)`, ok, nf))
	if fmt.Sprint(failed()) != "[0 1]" || fmt.Sprint(expectedTags()) != "[true false]" {
		t.Errorf("default callback: failed %v, tags %v", failed(), expectedTags())
	}

	e.reset()
	e.run(fmt.Sprintf(`http.setResponseCallback(http.expectedStatuses(404, {min: 500, max: 599})); http.get(%q); http.get(%q)`, ok, nf))
	if fmt.Sprint(failed()) != "[1 0]" || fmt.Sprint(expectedTags()) != "[false true]" {
		t.Errorf("custom callback: failed %v, tags %v", failed(), expectedTags())
	}

	e.reset()
	e.run(fmt.Sprintf(`http.get(%q, {responseCallback: http.expectedStatuses(200)}); http.get(%q, {responseCallback: null})`, ok, ok))
	if fmt.Sprint(failed()) != "[0]" || fmt.Sprint(expectedTags()) != "[true -]" {
		t.Errorf("per-request callbacks: failed %v, tags %v", failed(), expectedTags())
	}

	e.reset()
	e.run(fmt.Sprintf(`http.setResponseCallback(null); http.get(%q); http.get(%q)`, ok, nf))
	if len(failed()) != 0 || fmt.Sprint(expectedTags()) != "[- -]" {
		t.Errorf("null callback: failed %v, tags %v", failed(), expectedTags())
	}

	for _, src := range []string{
		`http.setResponseCallback(function(r) { return true })`,
		`http.expectedStatuses(200.5)`,
		`http.expectedStatuses({min: 200})`,
		`http.get("http://127.0.0.1:1", {responseCallback: 200})`,
	} {
		if _, err := e.try(src); err == nil || !strings.Contains(err.Error(), "TypeError") {
			t.Errorf("%s: want a TypeError, got %v", src, err)
		}
	}
}

func TestCookies(t *testing.T) {
	t.Run("NewJar", func(t *testing.T) { testCookies(t, httpclient.NewJar()) })
	t.Run("cookiejar", func(t *testing.T) {
		j, _ := cookiejar.New(nil)
		testCookies(t, j)
	})
}

func testCookies(t *testing.T, jar http.CookieJar) {
	srv := newServer(t)
	e := newEnv(t, nil)
	e.st.Jar = jar
	v := e.run(fmt.Sprintf(`var r = http.get(%q);
		JSON.stringify([r.cookies.session[0].value, r.cookies.session[0].http_only])`, srv.URL+"/set-cookie?session=abc"))
	if v.String() != `["abc",true]` {
		t.Errorf("response cookies: %s", v)
	}
	got := decodeEcho(t, e.run(fmt.Sprintf(`http.get(%q).body`, srv.URL+"/echo")))
	if got.Cookie != "session=abc" {
		t.Errorf("the jar did not send the cookie: %q", got.Cookie)
	}
	// params cookies go along with the jar's unless they replace them.
	got = decodeEcho(t, e.run(fmt.Sprintf(`http.get(%q, {cookies: {extra: "1"}}).body`, srv.URL+"/echo")))
	if got.Cookie != "extra=1; session=abc" {
		t.Errorf("params cookie: %q", got.Cookie)
	}
	v = e.run(fmt.Sprintf(`var r = http.get(%q, {cookies: {session: {value: "mine", replace: true}}});
		JSON.parse(r.body).cookie + "|" + JSON.stringify(r.request.cookies)`, srv.URL+"/echo"))
	if v.String() != `session=mine|{"session":[{"name":"session","value":"mine","replace":true}]}` {
		t.Errorf("replacing cookie: %s", v)
	}
	// A cookie set on a redirect hop reaches the next hop.
	got = decodeEcho(t, e.run(fmt.Sprintf(`http.get(%q).body`, srv.URL+"/set-cookie-redirect")))
	if !strings.Contains(got.Cookie, "hop=1") {
		t.Errorf("redirect cookie: %q", got.Cookie)
	}
	// The VU's jar from script.
	v = e.run(fmt.Sprintf(`var jar = http.cookieJar(); jar.set(%q, "k", "v");
		var c = jar.cookiesForURL(%q); JSON.stringify([c.k, c.session])`, srv.URL, srv.URL+"/echo"))
	if v.String() != `[["v"],["abc"]]` {
		t.Errorf("cookiesForURL: %s", v)
	}
	v = e.run(fmt.Sprintf(`jar.delete(%q, "k"); var c = jar.cookiesForURL(%q); JSON.stringify([c.k === undefined, c.session])`, srv.URL, srv.URL))
	if v.String() != `[true,["abc"]]` {
		t.Errorf("delete: %s", v)
	}
	// A jar of its own, passed per request; and no jar at all.
	got = decodeEcho(t, e.run(fmt.Sprintf(`var own = new http.CookieJar(); own.set(%q, "own", "1");
		http.get(%q, {jar: own}).body`, srv.URL, srv.URL+"/echo")))
	if got.Cookie != "own=1" {
		t.Errorf("own jar: %q", got.Cookie)
	}
	got = decodeEcho(t, e.run(fmt.Sprintf(`http.get(%q, {jar: null}).body`, srv.URL+"/echo")))
	if got.Cookie != "" {
		t.Errorf("jar null still sent %q", got.Cookie)
	}
	e.run(fmt.Sprintf(`jar.clear(%q)`, srv.URL))
	got = decodeEcho(t, e.run(fmt.Sprintf(`http.get(%q).body`, srv.URL+"/echo")))
	if got.Cookie != "" {
		t.Errorf("after clear the jar still sent %q", got.Cookie)
	}
}

func TestBasicAuth(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	withCreds := strings.Replace(srv.URL, "http://", "http://user:p%40ss@", 1) + "/echo"
	v := e.run(fmt.Sprintf(`var r = http.get(%q, {auth: "basic"}); r.url + "|" + r.body`, withCreds))
	parts := strings.SplitN(v.String(), "|", 2)
	// As in k6 v2.2.0: the response's url is the URL as written,
	// credentials included; the url and name tags mask them.
	if parts[0] != withCreds {
		t.Errorf("response url %q, want the URL as written, %q", parts[0], withCreds)
	}
	got := decodeEcho(t, e.vu.rt.ToValue(parts[1]))
	if want := "Basic " + base64.StdEncoding.EncodeToString([]byte("user:p@ss")); got.Auth != want {
		t.Errorf("Authorization %q, want %q", got.Auth, want)
	}
	s := e.samples("http_reqs")[0]
	masked := strings.Replace(srv.URL, "http://", "http://****:****@", 1) + "/echo"
	if tag(s, "url") != masked || tag(s, "name") != masked {
		t.Errorf("tags %v, want url and name %s", s.Tags, masked)
	}
	if _, err := e.try(fmt.Sprintf(`http.get(%q, {auth: "kerberos"})`, withCreds)); err == nil || !strings.Contains(err.Error(), `params.auth "kerberos" is not supported`) {
		t.Errorf("an unknown auth scheme must be refused clearly, got %v", err)
	}
}

func TestSystemTags(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	e.st.SystemTags = map[string]bool{"method": true, "status": true, "scenario": true}
	e.run(fmt.Sprintf(`http.get(%q, {tags: {mine: "x"}})`, srv.URL+"/status/404"))
	s := e.samples("http_reqs")[0]
	want := "{group:, method:GET, mine:x, scenario:default, status:404}"
	if s.Tags.String() != want {
		t.Errorf("tags %s, want %s", s.Tags, want)
	}
	if len(e.samples("http_req_failed")) != 1 {
		t.Error("http_req_failed must be emitted even without the expected_response tag")
	}
}

func TestSamples(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	before := time.Now()
	e.run(fmt.Sprintf(`http.post(%q, "x".repeat(1000))`, srv.URL+"/echo"))
	after := time.Now()
	names := []string{"http_reqs", "http_req_duration", "http_req_blocked", "http_req_connecting", "http_req_tls_handshaking",
		"http_req_sending", "http_req_waiting", "http_req_receiving", "http_req_failed"}
	for _, n := range names {
		ss := e.samples(n)
		if len(ss) != 1 {
			t.Errorf("%s: %d samples", n, len(ss))
			continue
		}
		if ss[0].Time.Before(before) || ss[0].Time.After(after) {
			t.Errorf("%s: time %v outside the request", n, ss[0].Time)
		}
	}
	// The bytes add up in the VU's state, which emits data_sent and
	// data_received once per iteration, as k6 does.
	if n := len(e.samples("data_sent")) + len(e.samples("data_received")); n != 0 {
		t.Errorf("%d data_sent/data_received samples from the module; the VU emits them per iteration", n)
	}
	if e.st.DataSent < 1000 || e.st.DataReceived < 100 {
		t.Errorf("the iteration's bytes: %d sent for a 1000-byte body, %d received", e.st.DataSent, e.st.DataReceived)
	}
	if s := e.samples("http_reqs"); len(s) == 1 && s[0].Value != 1 {
		t.Errorf("http_reqs value %v", s[0].Value)
	}
}

func TestInitContext(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	e.vu.state = nil
	for _, src := range []string{`http.get(%q)`, `http.batch([%q])`, `http.asyncRequest("GET", %q)`, `http.cookieJar(%q)`} {
		_, err := e.try(fmt.Sprintf(src, srv.URL))
		if err == nil || !strings.Contains(err.Error(), "init context") {
			t.Errorf("%s in the init context: %v", src, err)
		}
	}
	// Building callbacks and URLs is fine there.
	e.run(`http.setResponseCallback(http.expectedStatuses(200)); http.url` + "`http://x/${1}`")
}

func TestBatch(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	u := srv.URL + "/echo"
	v := e.run(fmt.Sprintf(`var rs = http.batch([%q, ["POST", %q, "b", {tags: {k: "v"}}], {method: "PUT", url: %q, body: "c"}, http.url`+"`%s`"+`]);
		JSON.stringify([Array.isArray(rs), rs.length].concat(rs.map(function(r) { var e = JSON.parse(r.body); return e.method + ":" + e.body })))`, u, u, u, u))
	if v.String() != `[true,4,"GET:","POST:b","PUT:c","GET:"]` {
		t.Errorf("array batch: %s", v)
	}
	if n := len(e.samples("http_reqs")); n != 4 {
		t.Errorf("%d samples for 4 requests", n)
	}
	v = e.run(fmt.Sprintf(`var rs = http.batch({a: %q, b: {method: "DELETE", url: %q}});
		JSON.stringify([Object.keys(rs).sort(), JSON.parse(rs.a.body).method, JSON.parse(rs.b.body).method])`, u, u))
	if v.String() != `[["a","b"],"GET","DELETE"]` {
		t.Errorf("object batch: %s", v)
	}
	if _, err := e.try(`http.batch("x")`); err == nil {
		t.Error("batch of a string must throw")
	}
}

func TestBatchConcurrencyLimit(t *testing.T) {
	var cur, peak atomic.Int32
	release := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n := cur.Add(1)
		defer cur.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		if n >= 2 {
			once.Do(func() { close(release) })
		}
		// Hold the request until two run at once (or give up), so the
		// limit is actually reached.
		select {
		case <-release:
		case <-time.After(2 * time.Second):
		}
		time.Sleep(5 * time.Millisecond)
	}))
	t.Cleanup(srv.Close)
	e := newEnv(t, &config.Options{BatchPerHost: ptr(int64(2))})
	v := e.run(fmt.Sprintf(`http.batch([%q, %q, %q, %q, %q, %q]).map(function(r) { return r.status }).join()`,
		srv.URL, srv.URL, srv.URL, srv.URL, srv.URL, srv.URL))
	if v.String() != "200,200,200,200,200,200" {
		t.Errorf("statuses %s", v)
	}
	if p := peak.Load(); p != 2 {
		t.Errorf("peak concurrency %d, want exactly the batchPerHost limit 2", p)
	}
}

func TestAsyncRequest(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	e.run(fmt.Sprintf(`var out = []; var p = http.asyncRequest("POST", %q, "async");
		out.push(typeof p.then);
		p.then(function(r) { out.push(JSON.parse(r.body).body) });
		(async function() { var r = await http.asyncRequest("GET", %q); out.push(r.status) })();`, srv.URL+"/echo", srv.URL+"/status/201"))
	v := e.run(`out.sort().join()`)
	if v.String() != "201,async,function" {
		t.Errorf("async results %s", v)
	}
	if n := len(e.samples("http_reqs")); n != 2 {
		t.Errorf("%d samples for 2 async requests", n)
	}
	th := newEnv(t, &config.Options{Throw: ptr(true)})
	v = th.run(`var msg = ""; http.asyncRequest("GET", "http://127.0.0.1:1/").catch(function(e) { msg = String(e) }); msg`)
	if v2 := th.run(`msg`); !strings.Contains(v2.String(), "connect") {
		t.Errorf("a failed async request with throw must reject: %q (before loop %q)", v2, v)
	}
}

func TestHTTP2AndTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(okHandler)
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused certificate below
	srv.StartTLS()
	t.Cleanup(srv.Close)
	e := newEnv(t, &config.Options{InsecureSkipTLSVerify: ptr(true)})
	v := e.run(fmt.Sprintf(`var a = http.get(%q), b = http.get(%q);
		JSON.stringify([a.proto, a.tls_version, a.timings.tls_handshaking > 0, b.timings.tls_handshaking, b.timings.connecting, a.body])`, srv.URL, srv.URL))
	if v.String() != `["HTTP/2.0","tls1.3",true,0,0,"ok"]` {
		t.Errorf("h2: %s", v)
	}
	s := e.samples("http_reqs")[0]
	if tag(s, "proto") != "HTTP/2.0" || tag(s, "tls_version") != "tls1.3" {
		t.Errorf("h2 tags: %v", s.Tags)
	}
	// Without skipping verification the self-signed certificate fails.
	strict := newEnv(t, nil)
	v = strict.run(fmt.Sprintf(`http.get(%q).error_code`, srv.URL))
	if v.String() != "1310" {
		t.Errorf("unknown authority: code %s", v)
	}
}

func TestNoConnectionReuse(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(okHandler)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	e := newEnv(t, &config.Options{NoConnectionReuse: ptr(true)})
	e.run(fmt.Sprintf(`for (var i = 0; i < 3; i++) http.get(%q)`, srv.URL))
	if n := conns.Load(); n != 3 {
		t.Errorf("noConnectionReuse: %d connections for 3 requests", n)
	}
	conns.Store(0)
	r := newEnv(t, nil)
	r.run(fmt.Sprintf(`for (var i = 0; i < 3; i++) http.get(%q)`, srv.URL))
	if n := conns.Load(); n != 1 {
		t.Errorf("with reuse: %d connections for 3 requests", n)
	}
}

func TestClientDoesNotFollowRedirects(t *testing.T) {
	srv := newServer(t)
	resp, err := NewClient(nil).Get(srv.URL + "/redirect/0")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Errorf("NewClient followed a redirect: %d", resp.StatusCode)
	}
}

// TestKeptResponses keeps responses of synchronous requests, which share
// one call, and reads them only after later requests ran: each must show
// its own request, including the fields built on first read.
func TestKeptResponses(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	v := e.run(fmt.Sprintf(`
		var a = http.post(%[1]q + "/echo", "first", {headers: {"X-Which": "a"}});
		var b = http.get(%[1]q + "/status/404");
		var c = http.request("PUT", %[1]q + "/redirect/1", "third");
		JSON.stringify([
			[a.status, a.url, JSON.parse(a.body).body, a.request.method, a.request.body, a.request.headers["X-Which"], a.headers["Content-Type"], a.error_code, typeof a.timings.duration],
			[b.status, b.url, b.body, b.request.method, b.request.body, b.request.headers["X-Which"], b.error_code],
			[c.status, c.url, JSON.parse(c.body).method, c.request.method, c.request.body, c.request.url],
		])`, srv.URL))
	want := fmt.Sprintf(`[[200,"%[1]s/echo","first","POST","first",["a"],"application/json",0,"number"],`+
		`[404,"%[1]s/status/404","status 404","GET","",null,1404],`+
		`[200,"%[1]s/echo","GET","PUT","third","%[1]s/redirect/1"]]`, srv.URL)
	if v.String() != want {
		t.Errorf("kept responses:\n got %s\nwant %s", v, want)
	}
}

// TestNestedSyncRequests makes a request while another one's arguments
// are read (a params getter): the inner request must not take the outer
// one's call. A URL argument that is an object is not read at all: as in
// k6 v2.2.0, its toString is not called and the request fails (see
// TestURLArgumentKinds).
func TestNestedSyncRequests(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	v := e.run(fmt.Sprintf(`
		var inner = [];
		var params = {get tags() { inner.push(http.get(%[1]q + "/status/201")); return {t: "outer"}; }};
		var url = {toString() { inner.push(http.get(%[1]q + "/status/202")); return %[1]q + "/echo"; }};
		var a = http.post(%[1]q + "/echo", "outer body", params);
		var b = http.get(url);
		JSON.stringify([a.status, JSON.parse(a.body).body, b.status, b.url, inner.map(r => r.status + " " + r.body)])`, srv.URL))
	want := `[200,"outer body",0,"",["201 status 201"]]`
	if v.String() != want {
		t.Errorf("nested requests:\n got %s\nwant %s", v, want)
	}
}

// TestURLArgumentKinds holds what k6 v2.2.0 answered (run on this script's
// cases against a loopback server) for URL arguments that are not
// strings: the request fails with error_code 1020 and an empty url, and
// nothing throws, undefined and null included.
func TestURLArgumentKinds(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	v := e.run(fmt.Sprintf(`
		var kinds = [[%[1]q + "/echo"], 123, new String(%[1]q + "/echo"), undefined, null, true];
		JSON.stringify(kinds.map(k => { var r = http.get(k); return [r.status, r.url, r.error, r.error_code]; }))`, srv.URL))
	want := `[[0,"","invalid URL: '#[` + srv.URL + `/echo]'",1020],[0,"","invalid URL: '#123'",1020],[0,"","invalid URL: '#map[]'",1020],` +
		`[0,"","invalid URL: '#<nil>'",1020],[0,"","invalid URL: '#<nil>'",1020],[0,"","invalid URL: '#true'",1020]]`
	if v.String() != want {
		t.Errorf("URL arguments:\n got %s\nwant %s", v, want)
	}
}
