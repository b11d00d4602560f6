package objstore

import (
	"context"
	"io"
	"time"
)

// Store is an object store: a flat namespace of immutable-per-version
// objects under string keys. Keys are relative to wherever the store was
// opened (an S3 bucket and prefix); they use '/' as the separator and never
// start with one.
//
// Every method is safe for concurrent use. Errors match ErrNotExist,
// ErrPrecondition or ErrUnavailable when they are one of those (see
// errors.go), and are *OpError values naming the operation and key.
type Store interface {
	// Get reads an object, or the byte range opts asks for, with the
	// object's info (Size is the whole object's). The caller closes the
	// reader; a read error from it is classified like any other error.
	Get(ctx context.Context, key string, opts GetOptions) (io.ReadCloser, ObjectInfo, error)
	// Put stores size bytes read from body as key, and verifies that the
	// server stored exactly them: the CRC32-C the server computed (returned
	// by the PUT or read back by a HEAD) must equal the one computed while
	// reading body, else ErrChecksum. The object's SHA-256 is stored with
	// it as metadata. opts makes the write conditional.
	Put(ctx context.Context, key string, body io.ReaderAt, size int64, opts PutOptions) (ObjectInfo, error)
	// Head returns an object's info without its bytes.
	Head(ctx context.Context, key string) (ObjectInfo, error)
	// List returns the objects whose keys start with prefix, sorted by
	// key. The infos carry Key, Size, ETag and Modified only.
	List(ctx context.Context, prefix string) ([]ObjectInfo, error)
	// Delete removes an object; deleting one that does not exist succeeds.
	Delete(ctx context.Context, key string) error
	// String names the store for logs, without credentials
	// ("s3://bucket/prefix", "mem").
	String() string
}

// GetOptions select what Get reads.
type GetOptions struct {
	// Offset and Length select a byte range; Length 0 reads to the end.
	// A range past the end of the object is clipped to it.
	Offset, Length int64
	// IfMatch, when set, makes the read fail with ErrPrecondition unless
	// the object's ETag is this one: the bytes come from the version the
	// caller expects, not from one that replaced it.
	IfMatch string
	// IfNoneMatch, when set, makes the read fail with ErrNotModified if
	// the object's ETag is still this one (If-None-Match: etag, answered
	// 304 without a body): a caller holding that version reads nothing
	// again. A store that ignores it returns the object as usual.
	IfNoneMatch string
}

// PutOptions make a Put conditional. At most one may be set.
type PutOptions struct {
	// IfNoneMatch creates the object only if no object has the key
	// (If-None-Match: *); otherwise Put fails with ErrPrecondition.
	IfNoneMatch bool
	// IfMatch replaces the object only if its ETag is still this one
	// (If-Match: etag); otherwise Put fails with ErrPrecondition, as it
	// does when the object does not exist.
	IfMatch string
}

// ObjectInfo describes one version of an object.
type ObjectInfo struct {
	Key  string
	Size int64
	// ETag identifies the version; conditional operations compare it.
	ETag string
	// Modified is when this version was stored, by the store's clock.
	Modified time.Time
	// Sum is the content's checksum, where the store reports it (Put and
	// Head always do for objects this package wrote; List does not).
	Sum Checksum
}
