// Package exitcode carries k6's process exit codes through Go errors, so
// that the part that knows what went wrong decides the code and the CLI
// only reads it.
package exitcode

import (
	"errors"
	"fmt"
)

// The exit codes metronome shares with k6.
const (
	OK               = 0
	ThresholdsFailed = 99
	SetupTimeout     = 100
	TeardownTimeout  = 101
	GenericTimeout   = 102
	// StoppedByAPI ends a test stopped with PATCH /v1/status
	// {"stopped":true}.
	StoppedByAPI  = 103
	InvalidConfig = 104
	ExternalAbort = 105
	// CannotStartAPI is a REST API address that cannot be bound.
	CannotStartAPI  = 106
	ScriptException = 107
	ScriptAborted   = 108
	GoPanic         = 109
	MarkedAsFailed  = 110
	Generic         = 255
)

// Error is an error with the exit code it should end the process with.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Wrap attaches code to err; nil stays nil.
func Wrap(code int, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err}
}

// Errorf formats an error that carries code.
func Errorf(code int, format string, args ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}

// Of returns the exit code err carries: 0 for nil, Generic when none.
func Of(err error) int {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Generic
}
