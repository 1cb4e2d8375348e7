// Package httpext is k6's HTTP engine as Go code reaches it (see
// go.k6.io/k6/v2/lib/netext/httpext).
package httpext

import v2 "go.k6.io/k6/v2/lib/netext/httpext"

type (
	// ParsedHTTPRequest is a request ready to send.
	ParsedHTTPRequest = v2.ParsedHTTPRequest
	// Request is what a request sent.
	Request = v2.Request
	// HTTPRequestCookie is a cookie a request sends besides its jar's.
	HTTPRequestCookie = v2.HTTPRequestCookie
	// Response is what a request got.
	Response = v2.Response
	// ResponseTimings are a request's phases in milliseconds.
	ResponseTimings = v2.ResponseTimings
	// HTTPCookie is a cookie a response set.
	HTTPCookie = v2.HTTPCookie
	// ResponseType says what a request keeps of its response's body.
	ResponseType = v2.ResponseType
	// CompressionType is an encoding a request body is compressed with.
	CompressionType = v2.CompressionType
	// URL is a request URL with its name.
	URL = v2.URL
	// K6Error is an error with k6's error_code.
	K6Error = v2.K6Error
)

// The response types and compressions.
const (
	ResponseTypeText       = v2.ResponseTypeText
	ResponseTypeBinary     = v2.ResponseTypeBinary
	ResponseTypeNone       = v2.ResponseTypeNone
	CompressionTypeGzip    = v2.CompressionTypeGzip
	CompressionTypeDeflate = v2.CompressionTypeDeflate
	CompressionTypeZstd    = v2.CompressionTypeZstd
	CompressionTypeBr      = v2.CompressionTypeBr
)

// The engine's functions.
var (
	MakeRequest = v2.MakeRequest
	NewResponse = v2.NewResponse
	NewURL      = v2.NewURL
	ToURL       = v2.ToURL
)
