package objstore

import (
	"errors"
	"fmt"
)

// The kinds of failure callers act on. Every error a Store returns for one
// of these conditions matches it with errors.Is; anything else (access
// denied, a missing bucket, a bad argument) is permanent and matches none.
var (
	// ErrNotExist: the object does not exist.
	ErrNotExist = errors.New("objstore: object does not exist")
	// ErrPrecondition: a conditional write lost (the object exists for a
	// create-only put, or changed since it was read for a replace), or a
	// conditional read found another version. Read again and retry.
	ErrPrecondition = errors.New("objstore: precondition failed")
	// ErrUnavailable: the store could not be reached or answered with a
	// transient failure (connection refused or reset, timeout, 5xx,
	// throttling). The operation may or may not have happened; retrying
	// later is safe for every operation this package makes.
	ErrUnavailable = errors.New("objstore: store unavailable")
	// ErrChecksum: bytes do not match their checksum (an upload the server
	// stored differently from what was sent, a manifest or cached chunk
	// that does not check out).
	ErrChecksum = errors.New("objstore: checksum mismatch")
	// ErrCorrupt: an object this package wrote (a manifest) does not
	// decode. It also matches ErrChecksum when the checksum is what failed.
	ErrCorrupt = errors.New("objstore: corrupt object")
	// ErrNotModified: a read with GetOptions.IfNoneMatch found the version
	// the caller has (HTTP 304). Not a failure: nothing was sent.
	ErrNotModified = errors.New("objstore: not modified")
)

// Retryable reports whether err is a failure that passes by itself: the
// store being unreachable or a lost conditional race.
func Retryable(err error) bool {
	return errors.Is(err, ErrUnavailable) || errors.Is(err, ErrPrecondition)
}

// OpError is a failed store operation: which one, on which key, and why.
// It matches the kind (ErrNotExist, ErrUnavailable, ...) its cause was
// classified as, and unwraps to the cause.
type OpError struct {
	Op   string // "get", "put", "head", "list", "delete"
	Key  string // relative to the store's prefix
	Kind error  // one of the Err* kinds, or nil for a permanent failure
	Err  error  // the cause as the client reported it
}

func (e *OpError) Error() string {
	if e.Kind != nil && !errors.Is(e.Err, e.Kind) {
		return fmt.Sprintf("objstore: %s %q: %v: %v", e.Op, e.Key, e.Kind, e.Err)
	}
	return fmt.Sprintf("objstore: %s %q: %v", e.Op, e.Key, e.Err)
}

// Unwrap returns the kind and the cause, so errors.Is matches both.
func (e *OpError) Unwrap() []error {
	if e.Kind == nil {
		return []error{e.Err}
	}
	return []error{e.Kind, e.Err}
}

func opErr(op, key string, kind, err error) error {
	return &OpError{Op: op, Key: key, Kind: kind, Err: err}
}
