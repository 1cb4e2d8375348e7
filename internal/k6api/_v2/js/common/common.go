// Package common holds what k6's JavaScript modules share: throwing Go
// errors into scripts, reading arguments, custom tags, the init
// environment and k6's rule for the JavaScript names of Go fields.
package common

import (
	"bytes"
	"fmt"
	"io"

	"github.com/grafana/sobek"
)

// Throw throws err into the script from a Go function that JavaScript
// called: a JavaScript exception as it is, any other error as a GoError.
func Throw(rt *sobek.Runtime, err error) {
	if e, ok := err.(*sobek.Exception); ok { //nolint:errorlint // an exception is thrown as it is, never unwrapped
		panic(e)
	}
	panic(rt.NewGoError(err))
}

// IsNullish reports whether v is missing, undefined or null.
func IsNullish(v sobek.Value) bool {
	return v == nil || sobek.IsUndefined(v) || sobek.IsNull(v)
}

// IsAsyncFunction reports whether val is an async function.
func IsAsyncFunction(rt *sobek.Runtime, val sobek.Value) bool {
	if IsNullish(val) {
		return false
	}
	return val.ToObject(rt).Get("constructor").ToObject(rt).Get("name").String() == "AsyncFunction"
}

// GetReader reads data given as a string, bytes, an io.Reader or an
// ArrayBuffer.
func GetReader(data any) (io.Reader, error) {
	switch r := data.(type) {
	case string:
		return bytes.NewBufferString(r), nil
	case []byte:
		return bytes.NewBuffer(r), nil
	case io.Reader:
		return r, nil
	case sobek.ArrayBuffer:
		return bytes.NewBuffer(r.Bytes()), nil
	}
	return nil, fmt.Errorf("invalid type %T, it needs to be a string or ArrayBuffer", data)
}

// ToBytes returns data, a string, bytes or an ArrayBuffer, as bytes.
func ToBytes(data any) ([]byte, error) {
	switch d := data.(type) {
	case []byte:
		return d, nil
	case string:
		return []byte(d), nil
	case sobek.ArrayBuffer:
		return d.Bytes(), nil
	}
	return nil, fmt.Errorf("invalid type %T, expected string, []byte or ArrayBuffer", data)
}

// ToString returns data, a string, bytes or an ArrayBuffer, as a string.
func ToString(data any) (string, error) {
	switch d := data.(type) {
	case []byte:
		return string(d), nil
	case string:
		return d, nil
	case sobek.ArrayBuffer:
		return string(d.Bytes()), nil
	}
	return "", fmt.Errorf("invalid type %T, expected string, []byte or ArrayBuffer", data)
}

// InitContextError is the error of something only the init context may
// do, or something it may not.
type InitContextError string

// NewInitContextError returns an InitContextError saying msg.
func NewInitContextError(msg string) InitContextError { return InitContextError(msg) }

func (i InitContextError) Error() string  { return string(i) }
func (i InitContextError) String() string { return string(i) }
