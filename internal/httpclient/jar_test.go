package httpclient

import (
	"net/http"
	"net/url"
	"testing"
)

// NewJar's jar answers nothing while empty, then stores and answers as
// net/http/cookiejar's, host by host.
func TestNewJar(t *testing.T) {
	j := NewJar()
	u := &url.URL{Scheme: "http", Host: "example.test", Path: "/a"}
	j.SetCookies(u, nil)
	if cs := j.Cookies(u); cs != nil {
		t.Fatalf("an empty jar answered %v", cs)
	}
	j.SetCookies(u, []*http.Cookie{{Name: "k", Value: "v"}})
	cs := j.Cookies(u)
	if len(cs) != 1 || cs[0].Name != "k" || cs[0].Value != "v" {
		t.Fatalf("the jar answered %v, want k=v", cs)
	}
	if cs := j.Cookies(&url.URL{Scheme: "http", Host: "other.test", Path: "/"}); len(cs) != 0 {
		t.Errorf("another host got %v", cs)
	}
}
