package httpext

// errCode is k6's error_code of a failed request.
type errCode uint32

// invalidURLErrorCode is the error_code of an URL that does not parse.
const invalidURLErrorCode errCode = 1020

// K6Error is an error with k6's error_code.
type K6Error struct {
	Code          errCode
	Message       string
	OriginalError error
}

// NewK6Error returns the error msg of code, caused by originalErr.
func NewK6Error(code errCode, msg string, originalErr error) K6Error {
	return K6Error{Code: code, Message: msg, OriginalError: originalErr}
}

// Error is the message.
func (e K6Error) Error() string { return e.Message }

// Unwrap is the cause.
func (e K6Error) Unwrap() error { return e.OriginalError }
