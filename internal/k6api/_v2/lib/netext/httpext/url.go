package httpext

import (
	"fmt"
	"net/url"
	"strings"
)

// URL is a request URL with the name its requests are tagged with: a
// template's (http.url`.../${id}`) or the URL itself.
type URL struct {
	u *url.URL
	// Name is the name tag's value; the URL when it has none of its own.
	Name string
	// URL is the URL as given.
	URL string
	// CleanURL is URL with its credentials masked, for tags and output.
	CleanURL string
}

// NewURL parses urlString, named name. An URL that does not parse is
// error code 1020.
func NewURL(urlString, name string) (URL, error) {
	u, err := url.Parse(urlString)
	if err != nil {
		return URL{}, NewK6Error(invalidURLErrorCode, "invalid URL: "+err.Error(), err)
	}
	out := URL{u: u, Name: name, URL: urlString}
	out.CleanURL = out.Clean()
	if urlString == name {
		out.Name = out.CleanURL
	}
	return out, nil
}

// Clean is the URL with a user and password masked as ****:****, a user
// alone as ****.
func (u URL) Clean() string {
	if u.CleanURL != "" {
		return u.CleanURL
	}
	if u.u == nil || u.u.User == nil {
		return u.URL
	}
	prefix := u.u.Scheme + "://"
	rest := strings.TrimPrefix(u.URL, prefix)
	at := strings.IndexByte(rest, '@')
	if at < 0 {
		return u.URL
	}
	mask := "****"
	if _, ok := u.u.User.Password(); ok {
		mask = "****:****"
	}
	return prefix + mask + rest[at:]
}

// GetURL returns the parsed URL.
func (u URL) GetURL() *url.URL { return u.u }

// ToURL turns a URL or a string into a URL.
func ToURL(v any) (URL, error) {
	switch x := v.(type) {
	case URL:
		return x, nil
	case string:
		return NewURL(x, x)
	}
	return URL{}, NewK6Error(invalidURLErrorCode, fmt.Sprintf("invalid URL: '#%v'", v), nil)
}
