package ingest

import (
	"errors"
	"fmt"
)

var (
	// ErrTooLarge: the body or its decompressed form exceeds the limit (413).
	ErrTooLarge = errors.New("ingest: body too large")
	// ErrUnsupportedEncoding: the Content-Encoding is not one we decode (400).
	ErrUnsupportedEncoding = errors.New("ingest: unsupported content encoding")
	// ErrMalformed: the body is not valid JSON/NDJSON or its compression is
	// corrupt (400). JSON errors also wrap event.ErrSyntax.
	ErrMalformed = errors.New("ingest: malformed body")
	// ErrBadShape: valid JSON of a shape the route cannot ingest (400).
	ErrBadShape = errors.New("ingest: body shape not accepted by this route")
	// ErrUnsupportedContentType: the route does not parse this content type (415).
	ErrUnsupportedContentType = errors.New("ingest: unsupported content type")
	// ErrBudget: Request.Charge refused the memory decoding would hold
	// (429: the server holds too many request bytes at once; retry).
	ErrBudget = errors.New("ingest: too many request bytes in flight")
)

// StatusCode returns the HTTP status Logflare answers for a decoding error:
// 413, 415, 429 (ErrBudget) or 400 (also for errors of unknown origin,
// which can only be caused by the body).
func StatusCode(err error) int {
	switch {
	case errors.Is(err, ErrTooLarge):
		return 413
	case errors.Is(err, ErrBudget):
		return 429
	case errors.Is(err, ErrUnsupportedContentType):
		return 415
	}
	return 400
}

// wrapErr is an error with a sentinel and, optionally, an underlying cause.
type wrapErr struct {
	sentinel error
	msg      string
	cause    error
}

func (e *wrapErr) Error() string {
	if e.cause != nil {
		return e.sentinel.Error() + ": " + e.msg + ": " + e.cause.Error()
	}
	return e.sentinel.Error() + ": " + e.msg
}

func (e *wrapErr) Unwrap() []error {
	if e.cause != nil {
		return []error{e.sentinel, e.cause}
	}
	return []error{e.sentinel}
}

func errorf(sentinel error, format string, args ...any) error {
	return &wrapErr{sentinel: sentinel, msg: fmt.Sprintf(format, args...)}
}

func wrap(sentinel, cause error, format string, args ...any) error {
	return &wrapErr{sentinel: sentinel, msg: fmt.Sprintf(format, args...), cause: cause}
}
