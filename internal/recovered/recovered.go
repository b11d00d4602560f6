// Package recovered turns a panic into an error that carries the stack of
// the goroutine that panicked, so that one request's or one query's bug
// fails that request only, and the stack still reaches the log.
//
// A goroutine that must not take the process down defers Catch (or calls
// New from its own recover) and hands the error to whoever waits for it;
// the layer that owns a logger logs Error.Stack with the request it served.
package recovered

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
)

// Error is a recovered panic.
type Error struct {
	// Value is what was passed to panic.
	Value any
	// Stack is the panicking goroutine's stack, taken in the deferred
	// function that recovered it (so it includes the frames that panicked).
	Stack []byte

	reported atomic.Bool
}

// FirstReport reports whether this is the first call for e: the layers a
// recovered panic passes through each may log it, and only the first does.
func (e *Error) FirstReport() bool { return !e.reported.Swap(true) }

// Error describes the panic without its stack: the stack belongs in the
// server's log, not in an answer to a client.
func (e *Error) Error() string {
	return fmt.Sprintf("internal error (a bug; it was logged with its stack): %v", e.Value)
}

// Unwrap returns the panic value when it was an error.
func (e *Error) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}

// New wraps a value returned by recover, capturing the current stack. Call
// it from the deferred function that recovered, so the stack shows where
// the panic happened. A value that already is an *Error (a panic carried
// over from another goroutine and raised again) is returned as it is.
func New(r any) *Error {
	if e, ok := r.(*Error); ok {
		return e
	}
	return &Error{Value: r, Stack: debug.Stack()}
}

// Catch, deferred, recovers a panic of the calling function and stores it
// in *err as an *Error:
//
//	func run() (err error) {
//		defer recovered.Catch(&err)
//		...
//	}
func Catch(err *error) {
	if r := recover(); r != nil {
		*err = New(r)
	}
}

// As returns the *Error in err's chain, or nil.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
