package http

import (
	"fmt"
	"net/http"
	"net/http/httptest"
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
