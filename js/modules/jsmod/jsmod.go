// Package jsmod is the kit JavaScript modules are written with: argument
// checks, JavaScript errors made in Go that point at the script's file and
// line, and promises that Go settles later on the VU's event loop. It keeps
// each module a small package of its own that says only what is special
// about it.
package jsmod

import (
	"errors"
	"fmt"

	"github.com/grafana/sobek"
)

// Error is a JavaScript error described in Go, to be thrown or to reject a
// promise with. Name is the error's name property: "Error", "TypeError",
// "RangeError" make instances of those constructors; any other name
// ("OperationError", "NotSupportedError") makes an Error whose name is
// set, which is how DOMException-style errors look to a script.
type Error struct {
	Name    string
	Message string
}

func (e *Error) Error() string { return e.Name + ": " + e.Message }

// GoError is the name k6 gives the errors of failures inside Go code: an
// *Error so named becomes an instance of the runtime's GoError, whose
// message scripts and k6's logs print as "GoError: …".
const GoError = "GoError"

// Bare is an error made into JavaScript as the Go value itself rather
// than as an Error object: scripts see an object whose string is the
// message, with no name and no stack. k6 rejects k6/secrets' promises
// so, and scripts that print the reason see the message alone.
type Bare struct{ Err error }

func (b *Bare) Error() string { return b.Err.Error() }

// Errorf returns an *Error named name.
func Errorf(name, format string, args ...any) *Error {
	return &Error{Name: name, Message: fmt.Sprintf(format, args...)}
}

// NewError makes the JavaScript object for err: an *Error as its name
// says, any other Go error as an Error with the error's text. Made while
// JavaScript calls Go, the object's stack holds the caller's place, which
// metronome reports as file:line.
func NewError(rt *sobek.Runtime, err error) *sobek.Object {
	if b, ok := err.(*Bare); ok {
		return rt.ToValue(b.Err).ToObject(rt)
	}
	name, msg := "Error", err.Error()
	if e, ok := err.(*Error); ok {
		name, msg = e.Name, e.Message
	}
	if name == GoError {
		return rt.NewGoError(errors.New(msg))
	}
	ctor := "Error"
	switch name {
	case "TypeError", "RangeError":
		ctor = name
	}
	o, cerr := rt.New(rt.Get(ctor), rt.ToValue(msg))
	if cerr != nil {
		return rt.NewGoError(err)
	}
	if name != ctor {
		_ = o.Set("name", name)
	}
	return o
}

// Throw throws err as a JavaScript exception from a Go function that
// JavaScript called. An exception or interruption that a JavaScript
// callback raised continues unchanged.
func Throw(rt *sobek.Runtime, err error) {
	switch err.(type) {
	case *sobek.Exception, *sobek.InterruptedError:
		panic(err)
	}
	panic(NewError(rt, err))
}

// Throwf throws an Error with a formatted message.
func Throwf(rt *sobek.Runtime, format string, args ...any) {
	Throw(rt, Errorf("Error", format, args...))
}

// ThrowTypeError throws a TypeError with a formatted message: the error
// for an argument of the wrong kind.
func ThrowTypeError(rt *sobek.Runtime, format string, args ...any) {
	Throw(rt, Errorf("TypeError", format, args...))
}

// ThrowGoError throws a GoError with a formatted message: the error k6
// throws when an operation fails rather than an argument being wrong.
func ThrowGoError(rt *sobek.Runtime, format string, args ...any) {
	Throw(rt, Errorf(GoError, format, args...))
}
