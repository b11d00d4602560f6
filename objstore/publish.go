package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// DefaultGrace is how long an object no manifest lists is kept before
// CollectGarbage deletes it (default of GCOptions.Grace and
// PublishOptions.Grace; the two must agree).
const DefaultGrace = time.Hour

// ErrCollision: a segment object exists under the name of the one being
// published, with other contents, and a manifest lists it. Two nodes share
// a node id: a configuration error, never resolved by overwriting.
var ErrCollision = errors.New("objstore: another segment has this name")

// errPublishTooSlow: the manifest update came too late after the upload;
// the object may be collected as garbage. Publishing again uploads anew.
var errPublishTooSlow = errors.New("objstore: manifest not updated within half the grace period after the upload")

// SegmentUpload is a sealed segment to publish.
type SegmentUpload struct {
	Source, Node string
	// Seq is the segment's sequence number on Node for Source (the
	// engine's segment id): with Node it names the object.
	Seq  uint64
	File io.ReaderAt
	Size int64
	// MinTime and MaxTime (µs) and Rows go to the manifest entry.
	MinTime, MaxTime int64
	Rows             int64
	// Replaces names the segments (SegmentName) this one replaces, e.g.
	// the inputs of the compaction that wrote it: they are delisted by
	// the same manifest update that lists it, so a reader of the manifest
	// sees either the inputs or the output, never both nor neither.
	Replaces []string
}

// PublishOptions configure PublishSegment and RemoveSegments.
type PublishOptions struct {
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Grace is the garbage collector's grace period (default DefaultGrace).
	// An upload is listed within half of it or uploaded again.
	Grace time.Duration
	// Update bounds the manifest update's retries.
	Update *UpdateOptions
}

func (o *PublishOptions) withDefaults() PublishOptions {
	out := PublishOptions{}
	if o != nil {
		out = *o
	}
	if out.Now == nil {
		out.Now = time.Now
	}
	if out.Grace <= 0 {
		out.Grace = DefaultGrace
	}
	return out
}

// PublishSegment uploads a segment (create only: an existing object is
// never overwritten), verifies its checksum, and lists it in its source's
// manifest, delisting what it replaces, in one conditional update. It is
// idempotent: after a failure or a crash at any point, publishing the same
// segment again finishes the job (an object of an earlier try is reused
// while fresh, replaced when not; an entry listed already is left as it
// is). Until it returns nil, the segment is not published: its events must
// stay where they were (the WAL, or the segments it replaces).
//
// Errors matching ErrUnavailable or ErrPrecondition pass; ErrCollision
// does not.
func PublishSegment(ctx context.Context, s Store, u SegmentUpload, opts *PublishOptions) (SegmentEntry, error) {
	o := opts.withDefaults()
	if !ValidID(u.Source) || !ValidID(u.Node) {
		return SegmentEntry{}, fmt.Errorf("objstore: bad source %q or node %q", u.Source, u.Node)
	}
	name := SegmentName(u.Node, u.Seq)
	key := SegmentsPrefix(u.Source) + name
	sum, err := SumReaderAt(u.File, u.Size)
	if err != nil {
		return SegmentEntry{}, fmt.Errorf("publish %s: read: %w", key, err)
	}
	entry := SegmentEntry{Name: name, Size: u.Size, Sum: sum, MinTime: u.MinTime, MaxTime: u.MaxTime, Rows: u.Rows}

	var info ObjectInfo
	var uploadedAt time.Time
	for try := 0; ; try++ {
		if try == 3 {
			return SegmentEntry{}, fmt.Errorf("publish %s: the object kept changing under us", key)
		}
		info, err = s.Put(ctx, key, u.File, u.Size, PutOptions{IfNoneMatch: true})
		if err == nil {
			uploadedAt = o.Now()
			break
		}
		switch {
		case errors.Is(err, ErrChecksum):
			// Stored damaged: delete it (it is listed nowhere) and try
			// again; if the delete fails, the next publish replaces it.
			if derr := s.Delete(ctx, key); derr != nil {
				return SegmentEntry{}, errors.Join(err, derr)
			}
			continue
		case !errors.Is(err, ErrPrecondition):
			return SegmentEntry{}, err
		}
		// The name is taken: by an earlier try of ours, or (misconfigured
		// node ids) by another node's segment.
		head, err := s.Head(ctx, key)
		if errors.Is(err, ErrNotExist) {
			continue // deleted meanwhile (by the garbage collector)
		}
		if err != nil {
			return SegmentEntry{}, err
		}
		m, _, err := ReadManifest(ctx, s, u.Source)
		if err != nil {
			return SegmentEntry{}, err
		}
		same := head.Sum.Matches(sum) && head.Size == u.Size
		if e := m.Find(name); e != nil {
			if same && e.Sum.Matches(sum) {
				if err := removeReplaced(ctx, s, u, o); err != nil {
					return SegmentEntry{}, err
				}
				return *e, nil // published already: its answer was lost
			}
			return SegmentEntry{}, fmt.Errorf("publish %s: %w (listed with %s, this one is %s)", key, ErrCollision, e.Sum, sum)
		}
		if same && o.Now().Sub(head.Modified) < o.Grace/2 {
			// Reuse it, counting its age by the store's clock as the
			// garbage collector does.
			info, uploadedAt = head, head.Modified
			if now := o.Now(); uploadedAt.After(now) {
				uploadedAt = now
			}
			break
		}
		// Unlisted, and stale or different: an earlier try's leftover.
		if err := s.Delete(ctx, key); err != nil {
			return SegmentEntry{}, err
		}
	}
	entry.ETag = info.ETag

	_, err = UpdateManifest(ctx, s, u.Source, u.Node, o.Now, func(m *Manifest) error {
		if o.Now().Sub(uploadedAt) >= o.Grace/2 {
			return errPublishTooSlow
		}
		now := o.Now().UnixMicro()
		e := entry
		e.Created = now
		changed, err := m.Add(e)
		if err != nil {
			return err
		}
		for _, r := range u.Replaces {
			if m.Remove(r, now) {
				changed = true
			}
		}
		if !changed {
			return ErrNoChange
		}
		return nil
	}, o.Update)
	if err != nil {
		return SegmentEntry{}, fmt.Errorf("publish %s: %w", key, err)
	}
	return entry, nil
}

// removeReplaced finishes the delisting part of a publish whose listing
// part happened already.
func removeReplaced(ctx context.Context, s Store, u SegmentUpload, o PublishOptions) error {
	if len(u.Replaces) == 0 {
		return nil
	}
	return RemoveSegments(ctx, s, u.Source, u.Node, u.Replaces, &o)
}

// RemoveSegments delists segments of source (retention dropping them, or
// compaction replacing them by nothing): their objects are deleted by
// CollectGarbage once the grace period has passed, so readers of the
// previous manifest finish first. Removing what is not listed is not an
// error.
func RemoveSegments(ctx context.Context, s Store, source, node string, names []string, opts *PublishOptions) error {
	o := opts.withDefaults()
	_, err := UpdateManifest(ctx, s, source, node, o.Now, func(m *Manifest) error {
		now := o.Now().UnixMicro()
		changed := false
		for _, n := range names {
			if m.Remove(n, now) {
				changed = true
			}
		}
		if !changed {
			return ErrNoChange
		}
		return nil
	}, o.Update)
	return err
}
