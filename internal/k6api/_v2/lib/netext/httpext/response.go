package httpext

import "go.k6.io/k6/v2/lib/netext"

// ResponseType says what a request keeps of its response's body.
type ResponseType uint

// The response types: the body as a string, as bytes, or read and
// dropped.
const (
	ResponseTypeText ResponseType = iota
	ResponseTypeBinary
	ResponseTypeNone
)

// ResponseTimings are a request's phases in milliseconds.
type ResponseTimings struct {
	Duration       float64 `json:"duration"`
	Blocked        float64 `json:"blocked"`
	LookingUp      float64 `json:"looking_up"`
	Connecting     float64 `json:"connecting"`
	TLSHandshaking float64 `json:"tls_handshaking"`
	Sending        float64 `json:"sending"`
	Waiting        float64 `json:"waiting"`
	Receiving      float64 `json:"receiving"`
}

// HTTPCookie is a cookie a response set; Expires is in milliseconds
// since the epoch.
type HTTPCookie struct {
	Name, Value, Domain, Path string
	HTTPOnly, Secure          bool
	MaxAge                    int
	Expires                   int64
}

// Response is what a request got, with what it sent.
type Response struct {
	RemoteIP       string                   `json:"remote_ip"`
	RemotePort     int                      `json:"remote_port"`
	URL            string                   `json:"url"`
	Status         int                      `json:"status"`
	StatusText     string                   `json:"status_text"`
	Proto          string                   `json:"proto"`
	Headers        map[string]string        `json:"headers"`
	Cookies        map[string][]*HTTPCookie `json:"cookies"`
	Body           any                      `json:"body"`
	Timings        ResponseTimings          `json:"timings"`
	TLSVersion     string                   `json:"tls_version"`
	TLSCipherSuite string                   `json:"tls_cipher_suite"`
	OCSP           netext.OCSP              `json:"ocsp"`
	Error          string                   `json:"error"`
	ErrorCode      int                      `json:"error_code"`
	Request        *Request                 `json:"request"`
}

// NewResponse returns an empty response: no headers, no cookies, an
// empty body.
func NewResponse() *Response {
	return &Response{
		Headers: make(map[string]string),
		Cookies: make(map[string][]*HTTPCookie),
		Body:    []byte{},
	}
}
