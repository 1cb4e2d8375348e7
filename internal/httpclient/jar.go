package httpclient

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"sync/atomic"
)

// NewJar returns an empty cookie jar (k6/http's new http.CookieJar()). It
// behaves as net/http/cookiejar's jar, but answers at no cost while nothing
// was stored in it, which is the common case of a test that uses no
// cookies.
func NewJar() http.CookieJar {
	j, _ := cookiejar.New(nil)
	return &jar{j: j}
}

type jar struct {
	j    *cookiejar.Jar
	used atomic.Bool
}

func (j *jar) SetCookies(u *url.URL, cookies []*http.Cookie) {
	if len(cookies) == 0 {
		return
	}
	j.used.Store(true)
	j.j.SetCookies(u, cookies)
}

func (j *jar) Cookies(u *url.URL) []*http.Cookie {
	if !j.used.Load() {
		return nil
	}
	return j.j.Cookies(u)
}

// StdJar returns the jar behind j, for Go code that takes a
// net/http/cookiejar jar (k6/http.CookieJar.Jar). From then on j always
// asks it, since cookies may be stored there directly.
func (j *jar) StdJar() *cookiejar.Jar {
	j.used.Store(true)
	return j.j
}
