// Package http holds the name of k6's k6/http module that extensions
// reach for: CookieJar, the Go side of a script's cookie jar. It is
// metronome's own k6/http jar object: a jar a script passes an extension
// (http.cookieJar() or new http.CookieJar()) exports as *CookieJar, whose
// Jar stores and sends the cookies the script's requests do.
package http

import mhttp "github.com/metronome-load/metronome/js/modules/http"

// CookieJar is a cookie jar as k6's k6/http hands it to Go code; its Jar
// field is the jar (a *cookiejar.Jar).
type CookieJar = mhttp.CookieJar
