package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"
)

// ErrNoChange, returned by the function UpdateObject or UpdateManifest
// calls, ends the update without writing: the object already says what
// the caller wanted.
var ErrNoChange = errors.New("objstore: no change")

// UpdateOptions bound the retries of a conditional update. Zero values
// mean the defaults.
type UpdateOptions struct {
	// MaxAttempts is how many times a lost race is retried before the
	// update fails with ErrPrecondition (default 32).
	MaxAttempts int
	// BackoffMin and BackoffMax bound the wait after a lost race: it
	// starts at BackoffMin (default 10ms), doubles after each loss up to
	// BackoffMax (default 2s), and is jittered (a random half to all of
	// it) so that racing writers spread out.
	BackoffMin, BackoffMax time.Duration
	// MaxObjectBytes bounds the object read (default 256 MiB): a manifest
	// of a million segments is about 100 MiB.
	MaxObjectBytes int64
}

func (o *UpdateOptions) withDefaults() UpdateOptions {
	out := UpdateOptions{}
	if o != nil {
		out = *o
	}
	if out.MaxAttempts <= 0 {
		out.MaxAttempts = 32
	}
	if out.BackoffMin <= 0 {
		out.BackoffMin = 10 * time.Millisecond
	}
	if out.BackoffMax <= 0 {
		out.BackoffMax = 2 * time.Second
	}
	out.BackoffMax = max(out.BackoffMax, out.BackoffMin)
	if out.MaxObjectBytes <= 0 {
		out.MaxObjectBytes = 256 << 20
	}
	return out
}

// UpdateObject changes key by read, modify, conditional write: it reads
// the object (cur is nil and exists false when there is none), calls
// mutate, and writes what mutate returns with If-Match on the ETag it read
// (If-None-Match: * when there was none). When another writer got there
// first, the write fails with a precondition error and the whole cycle is
// retried with backoff, so concurrent writers never lose each other's
// updates. It returns the info of the version written, or of the version
// read when mutate returned ErrNoChange.
//
// mutate must be idempotent (applying it to its own result changes
// nothing) and must not keep cur: when a write's answer is lost (the store
// went away mid-request) the caller cannot know whether it happened, and
// the next try must find its change there and return ErrNoChange. Other
// errors from mutate end the update and are returned as they are; an
// unavailable store ends it with an error matching ErrUnavailable.
func UpdateObject(ctx context.Context, s Store, key string, mutate func(cur []byte, exists bool) ([]byte, error), opts *UpdateOptions) (ObjectInfo, error) {
	o := opts.withDefaults()
	backoff := o.BackoffMin
	var lastErr error
	for attempt := 0; attempt < o.MaxAttempts; attempt++ {
		if attempt > 0 {
			wait := backoff/2 + rand.N(backoff/2+1)
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return ObjectInfo{}, fmt.Errorf("update %s: %w (after %v)", key, ctx.Err(), lastErr)
			case <-t.C:
			}
			backoff = min(backoff*2, o.BackoffMax)
		}
		cur, info, exists, err := readWhole(ctx, s, key, o.MaxObjectBytes)
		if err != nil {
			if errors.Is(err, ErrPrecondition) { // replaced while we read it
				lastErr = err
				continue
			}
			return ObjectInfo{}, err
		}
		next, err := mutate(cur, exists)
		if errors.Is(err, ErrNoChange) {
			return info, nil
		}
		if err != nil {
			return ObjectInfo{}, err
		}
		po := PutOptions{IfNoneMatch: !exists}
		if exists {
			po.IfMatch = info.ETag
		}
		written, err := s.Put(ctx, key, bytes.NewReader(next), int64(len(next)), po)
		if err == nil {
			return written, nil
		}
		if !errors.Is(err, ErrPrecondition) {
			return ObjectInfo{}, err
		}
		lastErr = err
	}
	return ObjectInfo{}, fmt.Errorf("update %s: lost the race %d times: %w", key, o.MaxAttempts, lastErr)
}

// readWhole reads all of key (at most limit bytes), consistently: the
// bytes are those of the ETag returned.
func readWhole(ctx context.Context, s Store, key string, limit int64) ([]byte, ObjectInfo, bool, error) {
	return readWholeWith(ctx, s, key, limit, GetOptions{})
}

// readWholeWith is readWhole with conditions (opts' range is ignored).
func readWholeWith(ctx context.Context, s Store, key string, limit int64, opts GetOptions) ([]byte, ObjectInfo, bool, error) {
	rc, info, err := s.Get(ctx, key, GetOptions{IfMatch: opts.IfMatch, IfNoneMatch: opts.IfNoneMatch})
	if errors.Is(err, ErrNotExist) {
		return nil, ObjectInfo{}, false, nil
	}
	if err != nil {
		return nil, ObjectInfo{}, false, err
	}
	defer rc.Close()
	if info.Size > limit {
		return nil, ObjectInfo{}, false, opErr("get", key, nil, fmt.Errorf("object of %d bytes, more than the %d allowed", info.Size, limit))
	}
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, ObjectInfo{}, false, err
	}
	if int64(len(b)) != info.Size {
		return nil, ObjectInfo{}, false, opErr("get", key, ErrUnavailable, fmt.Errorf("read %d of %d bytes", len(b), info.Size))
	}
	return b, info, true, nil
}

// ReadManifest returns source's manifest and the info of its version. A
// source without a manifest has an empty one (Generation 0, and an info
// with no ETag).
func ReadManifest(ctx context.Context, s Store, source string) (*Manifest, ObjectInfo, error) {
	if !ValidID(source) {
		return nil, ObjectInfo{}, fmt.Errorf("objstore: bad source id %q", source)
	}
	key := ManifestKey(source)
	b, info, exists, err := readWhole(ctx, s, key, 256<<20)
	if err != nil {
		return nil, ObjectInfo{}, err
	}
	if !exists {
		return &Manifest{Source: source}, ObjectInfo{Key: key}, nil
	}
	m, err := decodeManifestOf(source, b)
	return m, info, err
}

func decodeManifestOf(source string, b []byte) (*Manifest, error) {
	m, err := DecodeManifest(b)
	var ve *ManifestVersionError
	if errors.As(err, &ve) {
		ve.Source = source
	}
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", source, err)
	}
	if m.Source != source {
		return nil, fmt.Errorf("source %s: %w: manifest names source %q", source, ErrCorrupt, m.Source)
	}
	return m, nil
}

// UpdateManifest changes source's manifest with mutate (see UpdateObject:
// mutate must be idempotent, and ErrNoChange skips the write), as node at
// time now (µs), and returns the manifest written (or read, if nothing
// changed). A missing manifest starts empty; a damaged one is not
// rewritten (the error matches ErrCorrupt), nor one of a newer format.
func UpdateManifest(ctx context.Context, s Store, source, node string, now func() time.Time, mutate func(m *Manifest) error, opts *UpdateOptions) (*Manifest, error) {
	if !ValidID(source) || !ValidID(node) {
		return nil, fmt.Errorf("objstore: bad source %q or node %q", source, node)
	}
	if now == nil {
		now = time.Now
	}
	var result *Manifest
	_, err := UpdateObject(ctx, s, ManifestKey(source), func(cur []byte, exists bool) ([]byte, error) {
		m := &Manifest{Source: source}
		if exists {
			var err error
			if m, err = decodeManifestOf(source, cur); err != nil {
				return nil, err
			}
		}
		result = m
		if err := mutate(m); err != nil {
			return nil, err
		}
		m.Generation++
		m.UpdatedAt = now().UnixMicro()
		m.UpdatedBy = node
		return m.Marshal(), nil
	}, opts)
	if err != nil {
		return nil, err
	}
	return result, nil
}

// ReadCatalog returns the catalog object's bytes (ErrNotExist when there
// is none). The bytes are the catalog file as catalog.md describes it,
// checksum included; this package does not look inside.
func ReadCatalog(ctx context.Context, s Store) ([]byte, ObjectInfo, error) {
	b, info, exists, err := readWhole(ctx, s, CatalogKey, 256<<20)
	if err != nil {
		return nil, ObjectInfo{}, err
	}
	if !exists {
		return nil, ObjectInfo{}, opErr("get", CatalogKey, ErrNotExist, errors.New("no catalog"))
	}
	return b, info, nil
}

// UpdateCatalog changes the catalog object by read, modify, conditional
// write (UpdateObject), so that nodes changing it at once never lose each
// other's changes. cur is nil when there is no catalog yet.
func UpdateCatalog(ctx context.Context, s Store, mutate func(cur []byte) ([]byte, error), opts *UpdateOptions) (ObjectInfo, error) {
	return UpdateObject(ctx, s, CatalogKey, func(cur []byte, exists bool) ([]byte, error) { return mutate(cur) }, opts)
}
