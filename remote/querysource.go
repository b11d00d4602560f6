package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/objstore"
	"github.com/sediment/sediment/segment"
)

// QueryOptions configure a QuerySource. Store and Cache are required.
type QueryOptions struct {
	Store objstore.Store
	Cache *objstore.Cache
	// IngestNodes are the ingest nodes' base URLs (http://host:port).
	IngestNodes []string
	// ClusterKey authenticates this node to them (ClusterKeyHeader).
	ClusterKey string
	// Client makes the requests (default a client of its own).
	Client *http.Client
	// Timeout bounds what one snapshot waits for the manifest and the
	// ingest nodes (default 10s): a node slower than that is reported
	// as not answering.
	Timeout time.Duration
	// ManifestMaxAge bounds how stale a manifest a snapshot uses may be
	// (default 1s; negative: none, every snapshot revalidates it with a
	// conditional GET). Within it, snapshots reuse the manifest read last
	// without a request (objstore.ManifestCache); the ingest nodes' answer
	// covers what it does not list yet, so answers stay complete.
	ManifestMaxAge time.Duration
	// MaxUnsealedBytes bounds one ingest node's answer (default 1 GiB).
	MaxUnsealedBytes int64
	// MaxHeldPartBytes bounds the ingest nodes' head parts kept between
	// asks (heldparts.go; default 128 MiB; negative: none kept, every ask
	// gets the ingest nodes' heads whole).
	MaxHeldPartBytes int64
	// UnsealedMaxAge, when above 0, is how long an ingest node's answer
	// (its events not in the store yet) serves later snapshots that read
	// the same manifest; snapshots that ask while an answer is on its way
	// wait for it. An event an ingest node acknowledged then shows in a
	// query node's answers at most this late. 0 (the default): every
	// snapshot asks, and sees every event acknowledged before it began.
	UnsealedMaxAge time.Duration
	// Logger receives failures (default discards).
	Logger *slog.Logger
}

// QuerySource is an engine.External for a query node: a snapshot of a
// source is the segments its manifest lists, read through the cache, and
// what each ingest node holds that the manifest does not list yet. What
// it cannot reach (the store, an ingest node) becomes the answer's
// warnings, so a client sees a partial answer marked as such.
type QuerySource struct {
	opts      QueryOptions
	readers   openReaders
	manifests *objstore.ManifestCache
	unsealed  unsealedCache
	held      heldParts

	manifestFailures, nodeFailures, segmentFailures atomic.Int64
	unsealedBytes, unsealedParts, unsealedAsks      atomic.Int64
	unsealedHeld                                    atomic.Int64
}

var _ engine.External = (*QuerySource)(nil)

// NewQuerySource returns a QuerySource.
func NewQuerySource(opts QueryOptions) (*QuerySource, error) {
	if opts.Store == nil || opts.Cache == nil {
		return nil, fmt.Errorf("remote: Store and Cache are required")
	}
	if opts.Client == nil {
		opts.Client = &http.Client{}
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.MaxUnsealedBytes <= 0 {
		opts.MaxUnsealedBytes = 1 << 30
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ManifestMaxAge == 0 {
		opts.ManifestMaxAge = time.Second
	}
	if opts.MaxHeldPartBytes == 0 {
		opts.MaxHeldPartBytes = 128 << 20
	}
	return &QuerySource{opts: opts, manifests: objstore.NewManifestCache(opts.Store, opts.ManifestMaxAge, nil),
		unsealed: unsealedCache{maxAge: opts.UnsealedMaxAge}, held: heldParts{max: max(opts.MaxHeldPartBytes, 0)}}, nil
}

// QueryStats count what a QuerySource could not reach and what the
// ingest nodes sent.
type QueryStats struct {
	// ManifestFailures, NodeFailures and SegmentFailures count snapshots
	// that could not read a manifest, an ingest node's answer, or a
	// listed segment (each made an answer partial).
	ManifestFailures, NodeFailures, SegmentFailures int64
	// UnsealedParts and UnsealedBytes count the segment files of the
	// ingest nodes' answers that snapshots used; UnsealedAsks how many
	// times the ingest nodes were asked (answers are shared between
	// snapshots, see QueryOptions.UnsealedMaxAge). UnsealedHeldParts
	// counts the parts answers named instead of sending them again, since
	// this node held them (QueryOptions.MaxHeldPartBytes); HeldParts and
	// HeldBytes are what it holds now.
	UnsealedParts, UnsealedBytes, UnsealedAsks int64
	UnsealedHeldParts, HeldParts, HeldBytes    int64
	// Manifests counts how manifest reads were answered: from memory,
	// by a 304, or by a download.
	Manifests objstore.ManifestCacheStats
}

// Stats returns the counters.
func (q *QuerySource) Stats() QueryStats {
	parts, bytes := q.held.held()
	return QueryStats{ManifestFailures: q.manifestFailures.Load(), NodeFailures: q.nodeFailures.Load(),
		SegmentFailures: q.segmentFailures.Load(), UnsealedParts: q.unsealedParts.Load(), UnsealedBytes: q.unsealedBytes.Load(),
		UnsealedAsks: q.unsealedAsks.Load(), UnsealedHeldParts: q.unsealedHeld.Load(), HeldParts: int64(parts), HeldBytes: bytes,
		Manifests: q.manifests.Stats()}
}

// Parts implements engine.External.
func (q *QuerySource) Parts(shard string) ([]engine.ExternalPart, []string) {
	ctx, cancel := context.WithTimeout(context.Background(), q.opts.Timeout)
	defer cancel()
	m, err := q.manifests.Read(ctx, shard)
	if err != nil {
		q.manifestFailures.Add(1)
		q.opts.Logger.Warn("query node: reading a manifest failed", "source_token", shard, "err", err)
		return nil, []string{fmt.Sprintf("the object store did not answer%s (%v): no event of this source is in this answer", unreachable(err), err)}
	}
	q.readers.listed(shard, m)
	listed := make([]string, len(m.Segments))
	for i, e := range m.Segments {
		listed[i] = e.Name
	}
	answers := make([]*Unsealed, len(q.opts.IngestNodes))
	errs := make([]error, len(q.opts.IngestNodes))
	var wg sync.WaitGroup
	for i, base := range q.opts.IngestNodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ask := func() (*Unsealed, error) {
				q.unsealedAsks.Add(1)
				req := UnsealedRequest{Source: shard, Listed: listed}
				if q.held.max <= 0 {
					return q.askNode(ctx, base, req)
				}
				key := heldKey{node: base, shard: shard}
				had := q.held.have(key)
				req.KeepsParts = true
				for name := range had {
					req.Have = append(req.Have, name)
				}
				ans, err := q.askNode(ctx, base, req)
				if err == nil {
					err = q.held.resolve(key, ans, had)
				}
				return ans, err
			}
			if q.opts.UnsealedMaxAge <= 0 {
				answers[i], errs[i] = ask()
				return
			}
			answers[i], errs[i] = q.unsealed.get(ctx, unsealedKey{node: base, shard: shard, generation: m.Generation}, ask)
		}()
	}
	wg.Wait()
	var parts []engine.ExternalPart
	var gaps []string
	skip := map[string]bool{}
	for i, a := range answers {
		if errs[i] != nil {
			q.nodeFailures.Add(1)
			q.opts.Logger.Warn("query node: an ingest node did not answer", "node", q.opts.IngestNodes[i], "source_token", shard, "err", errs[i])
			gaps = append(gaps, fmt.Sprintf("ingest node %s did not answer (%v): the events it has not yet published to the object store are not in this answer", q.opts.IngestNodes[i], errs[i]))
			continue
		}
		for _, name := range a.Skip {
			skip[name] = true
		}
		for _, p := range a.Parts {
			r, release := p.r, func() {} // opened already when held or kept: heldParts owns it
			if r == nil {
				release = nil // Reader.Close once the snapshots are done
				var err error
				if r, err = segment.Open(newBytesFile(p.Data), p.Name); err != nil {
					gaps = append(gaps, fmt.Sprintf("ingest node %s sent segment %s that does not read (%v)", q.opts.IngestNodes[i], p.Name, err))
					continue
				}
			}
			if p.Held {
				q.unsealedHeld.Add(1)
			} else {
				q.unsealedParts.Add(1)
				q.unsealedBytes.Add(int64(len(p.Data)))
			}
			parts = append(parts, engine.ExternalPart{Name: p.Name, Reader: r, Release: release})
		}
	}
	for _, e := range m.Segments {
		if skip[e.Name] {
			continue
		}
		p, err := q.readers.get(ctx, q.opts.Cache, shard, e)
		if err != nil {
			q.segmentFailures.Add(1)
			gaps = append(gaps, fmt.Sprintf("segment %s (%d events) could not be read from the object store%s (%v)", e.Name, e.Rows, unreachable(err), err))
			continue
		}
		parts = append(parts, p)
	}
	return parts, gaps
}

// unreachable is the words a warning adds when err says the store could
// not be reached (rather than, say, refusing access).
func unreachable(err error) string {
	if errors.Is(err, objstore.ErrUnavailable) {
		return ": the object store is unreachable"
	}
	return ""
}

// Close closes the segments kept open between queries (those snapshots
// still hold close when released).
func (q *QuerySource) Close() { q.readers.closeAll() }

// askNode asks one ingest node for what the manifest does not list.
func (q *QuerySource) askNode(ctx context.Context, base string, req UnsealedRequest) (*Unsealed, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, base+UnsealedPath, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set(ClusterKeyHeader, q.opts.ClusterKey)
	res, err := q.opts.Client.Do(hr)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		return nil, fmt.Errorf("%s: %s", res.Status, strings.TrimSpace(string(msg)))
	}
	return DecodeUnsealed(res.Body, q.opts.MaxUnsealedBytes)
}

// bytesFile is a read-only vfs.File over bytes in memory.
type bytesFile struct{ *bytes.Reader }

func newBytesFile(b []byte) *bytesFile { return &bytesFile{bytes.NewReader(b)} }

var _ vfs.File = (*bytesFile)(nil)

func (f *bytesFile) Write([]byte) (int, error) { return 0, objstore.ErrReadOnly }
func (f *bytesFile) Close() error              { return nil }
func (f *bytesFile) Sync() error               { return nil }
func (f *bytesFile) Size() (int64, error)      { return f.Reader.Size(), nil }
func (f *bytesFile) Truncate(int64) error      { return objstore.ErrReadOnly }
