// Package http holds the names of k6's k6/http module that extensions
// reach for (see go.k6.io/k6/v2/js/modules/k6/http).
package http

import v2 "go.k6.io/k6/v2/js/modules/k6/http"

// CookieJar is a cookie jar as k6's k6/http hands it to Go code.
type CookieJar = v2.CookieJar
