// Package http holds the name of k6's k6/http module that extensions
// reach for: CookieJar, the Go side of a script's cookie jar. metronome's
// k6/http is its own module (js/modules/http), whose jars are not this
// type: an extension that takes a jar object from a script finds none
// here and keeps the VU's jar of lib.State.CookieJar.
package http

import "net/http/cookiejar"

// CookieJar is a cookie jar as k6's k6/http hands it to Go code.
type CookieJar struct {
	Jar *cookiejar.Jar
}
