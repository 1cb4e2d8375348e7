package http

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/grafana/sobek"
)

// res.html() parses the body with k6/html: whole document, or a
// selector's matches; the Selection's url is the response's.
func TestResponseHTML(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<html><head><title>Shop</title></head><body><a href="/a">A</a><a href="/b">B</a></body></html>`))
	}))
	t.Cleanup(srv.Close)
	e := newEnv(t, nil)
	// metronome's runtime names Go methods in lower camel case; this is
	// the same mapping for the names k6/html uses.
	e.vu.rt.SetFieldNameMapper(sobek.TagFieldNameMapper("js", true))
	u := srv.URL + "/page"
	v := e.run(fmt.Sprintf(`var r = http.get(%q);
		[r.html().find("title").text(), r.html("a").size(), r.html("a").last().attr("href"), r.html().url === %q, typeof r.html().find].join("|")`, u, u))
	if want := "Shop|2|/b|true|function"; v.String() != want {
		t.Errorf("got %q, want %q", v.String(), want)
	}
	v = e.run(fmt.Sprintf(`var r = http.get(%q, {responseType: "none"}); try { r.html(); "no error" } catch (e) { String(e) }`, u))
	if want := "GoError: the response of " + u + " has no body to parse as HTML"; len(v.String()) < len(want) || v.String()[:len(want)] != want {
		t.Errorf("got %q, want it to start with %q", v.String(), want)
	}
}

const formsPage = `<html><body>
<a id="first" href="../../echoq?from=link">first</a>
<a class="abs" href="ABS/echoq?abs=1">abs</a>
<a class="nohref">none</a>
<form id="login" method="post" action="/echoq?act=1">
<input name="user" value="ann"><input name="pass" type="password" value=""><input type="checkbox" name="remember" value="yes" checked="checked">
<select name="lang"><option value="en" selected>en</option><option value="no">no</option></select>
<input type="submit" name="go" value="Log in"><input type="submit" name="other" value="Other">
</form>
<form id="search" action="echoq"><input name="q" value="shoes"><button type="submit" name="b" value="bv">Go</button></form>
<form id="noaction" method="POST"><input name="x" value="1"></form>
</body></html>`

// res.clickLink() and res.submitForm() send what k6 v2.2.0 sent from the
// same page (recorded as method, path and query, body): links resolved
// against the response's URL, every control the form selector matched,
// the first submit control, fields over them, sorted as url.Values.
func TestClickLinkAndSubmitForm(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/page.html") && r.Method == http.MethodGet {
			_, _ = w.Write([]byte(strings.ReplaceAll(formsPage, "ABS", srv.URL)))
			return
		}
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/echoq" && !strings.HasSuffix(r.URL.Path, "/page.html") {
			w.WriteHeader(http.StatusNotFound)
		}
		_, _ = fmt.Fprintf(w, "%s %s %s|%s|%s", r.Method, r.URL.RequestURI(), b, r.Header.Get("Content-Type"), r.Header.Get("X-A"))
	}))
	t.Cleanup(srv.Close)
	e := newEnv(t, nil)
	e.run(fmt.Sprintf(`var page = http.get(%q); function show(f) { try { var r = f(); return r.status + " " + r.body } catch (e) { return String(e) } }`, srv.URL+"/static/sub/page.html"))
	const form = "application/x-www-form-urlencoded"
	for _, c := range []struct{ call, want string }{
		{`page.clickLink()`, "200 GET /echoq?from=link |"},
		{`page.clickLink({selector: "a.abs"})`, "200 GET /echoq?abs=1 |"},
		{`page.clickLink({selector: "a.nohref"})`, "GoError: no valid href attribute value found on element 'a.nohref' in response '" + srv.URL + "/static/sub/page.html'"},
		{`page.clickLink({selector: "a.zzz"})`, "GoError: no element found for selector 'a.zzz' in response '" + srv.URL + "/static/sub/page.html'"},
		{`page.clickLink({selector: "#first", params: {headers: {"X-A": "1"}}})`, "200 GET /echoq?from=link |"},
		{`page.submitForm()`, "200 POST /echoq?act=1 go=Log+in&lang=en&pass=&q=shoes&remember=yes&user=ann&x=1|" + form},
		{`page.submitForm({formSelector: "#login", fields: {pass: "secret", extra: "e"}})`, "200 POST /echoq?act=1 extra=e&go=Log+in&lang=en&pass=secret&remember=yes&user=ann|" + form},
		{`page.submitForm({formSelector: "#login", submitSelector: "[name=other]"})`, "200 POST /echoq?act=1 lang=en&other=Other&pass=&remember=yes&user=ann|" + form},
		{`page.submitForm({formSelector: "#search"})`, "404 GET /static/sub/echoq?b=bv&q=shoes |"},
		{`page.submitForm({formSelector: "#search", fields: {q: "hats"}})`, "404 GET /static/sub/echoq?b=bv&q=hats |"},
		{`page.submitForm({formSelector: "#noaction"})`, "200 POST /static/sub/page.html x=1|" + form},
		{`page.submitForm({formSelector: "#zzz"})`, "GoError: no form found for selector '#zzz' in response '" + srv.URL + "/static/sub/page.html'"},
	} {
		got := e.run(`show(function () { return ` + c.call + ` })`).String()
		if strings.HasPrefix(c.call, `page.clickLink({selector: "#first"`) {
			c.want += "|1"
		}
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.call, got, c.want)
		}
	}
}
