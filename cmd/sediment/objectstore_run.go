package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/httpapi"
	"github.com/sediment/sediment/objstore"
	"github.com/sediment/sediment/remote"
)

// nodeIDFile keeps a node's id in its data directory, so that a restart
// (or a replacement machine given the same directory) publishes under
// the same name and finishes what the previous run left.
const nodeIDFile = "node-id"

// objectStorage is what a server with --object-store runs besides the
// engine: the store, the cache of chunks read from it, the publisher of
// this node's segments, and the garbage collector.
type objectStorage struct {
	cfg   objectStoreConfig
	log   *slog.Logger
	store objstore.Store
	cache *objstore.Cache
	node  string
	// rem publishes this node's segments (nil on a query node, which has
	// none); query reads the store and the ingest nodes for a query node
	// (nil on the others).
	rem   *remote.Segments
	query *remote.QuerySource
	// dataDir is the server's; localLimit bounds an ingest node's local
	// segment files (half of --cache-size; 0 on a query node).
	dataDir    string
	localLimit int64
	// adoptCancel stops adopting the store's segments (a new data
	// directory: see markAdoption); adoptDone is closed when it ends.
	adoptCancel context.CancelFunc
	adoptDone   chan struct{}

	gcCancel                      context.CancelFunc
	gcDone                        chan struct{}
	gcRuns, gcFailures, gcDeleted atomic.Int64
	gcMu                          sync.Mutex
	gcLastErr                     error
	gcFailingSince                time.Time

	// syncCancel stops the catalog sync; catalogSyncErr is its last error.
	syncCancel     context.CancelFunc
	syncDone       chan struct{}
	catalogSyncErr atomic.Pointer[syncErr]
}

// openObjectStore opens the store cfg names (a seam for tests).
var openObjectStore = func(cfg objstore.S3Config) (objstore.Store, error) { return objstore.OpenS3(cfg) }

// openObjectStorage sets up object storage for a server on dataDir: the
// node id (kept in the data directory), the store (checked: a missing
// bucket or refused credentials stop the start; a store that cannot be
// reached does not, ingest goes on and publishing waits for it), the
// cache and, unless the node only queries, the publisher.
func openObjectStorage(cfg objectStoreConfig, dataDir string, log *slog.Logger) (_ *objectStorage, err error) {
	if cfg.Role != roleQuery {
		if err := markAdoption(dataDir); err != nil {
			return nil, err
		}
	}
	node, err := loadNodeID(dataDir, cfg.NodeID)
	if err != nil {
		return nil, err
	}
	store, err := openObjectStore(cfg.S3)
	if err != nil {
		return nil, err
	}
	if c, ok := store.(interface{ Check(context.Context) error }); ok {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		err := c.Check(ctx)
		cancel()
		switch {
		case err == nil:
		case errors.Is(err, objstore.ErrUnavailable):
			log.Warn("object store unreachable at startup; starting anyway: ingest goes on locally and segments are published when it is back",
				"store", store.String(), "err", err)
		default:
			return nil, fmt.Errorf("object store %s: %w", store, err)
		}
	}
	cacheDir := cfg.CacheDir
	if cacheDir == "" {
		cacheDir = filepath.Join(dataDir, "cache")
	}
	o := &objectStorage{cfg: cfg, log: log, store: store, node: node, dataDir: dataDir}
	cacheBytes := cfg.CacheSize
	if cfg.Role != roleQuery {
		// An ingest node's local segment files and its cache share
		// --cache-size (remote/evict.go): half each.
		o.localLimit = cfg.CacheSize / 2
		cacheBytes -= o.localLimit
	}
	o.cache, err = objstore.OpenCache(store, objstore.CacheOptions{Dir: cacheDir, MaxBytes: cacheBytes, Logger: log})
	if err != nil {
		return nil, err
	}
	if cfg.Role != roleQuery {
		o.rem, err = remote.New(remote.Options{Store: store, Cache: o.cache, Node: node, Logger: log})
	} else {
		maxAge := cfg.ManifestMaxAge
		if maxAge == 0 {
			maxAge = -1 // QueryOptions' "none"
		}
		o.query, err = remote.NewQuerySource(remote.QueryOptions{Store: store, Cache: o.cache,
			IngestNodes: cfg.IngestNodes, ClusterKey: cfg.ClusterKey, ManifestMaxAge: maxAge,
			UnsealedMaxAge: cfg.UnsealedMaxAge, MaxHeldPartBytes: cfg.HeldPartBytes, Logger: log})
	}
	if err != nil {
		o.cache.Close()
		return nil, err
	}
	log.Info("object store", "store", store.String(), "node_id", node, "role", cfg.Role,
		"cache_dir", cacheDir, "cache_size", cfg.CacheSize)
	return o, nil
}

// loadNodeID returns the node id kept in dataDir, making and keeping one
// on first start (want, when set, instead of a random one). A want that
// differs from the kept id is refused: the node's published segments
// carry the kept one.
func loadNodeID(dataDir, want string) (string, error) {
	p := filepath.Join(dataDir, nodeIDFile)
	b, err := os.ReadFile(p)
	switch {
	case err == nil:
		id := strings.TrimSpace(string(b))
		if !objstore.ValidID(id) {
			return "", fmt.Errorf("%s holds %q, not a node id: restore it, or remove it to make a new one (this node's unpublished segments are then published under the new id)", p, id)
		}
		if want != "" && want != id {
			return "", fmt.Errorf("--node-id %s, but this data directory belongs to node %s (%s): its segments in the store carry that id", want, id, p)
		}
		return id, nil
	case !errors.Is(err, os.ErrNotExist):
		return "", err
	}
	id := want
	if id == "" {
		id = objstore.NewNodeID()
	}
	tmp := p + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return "", err
	}
	_, werr := f.WriteString(id + "\n")
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, p); err != nil {
		return "", err
	}
	if d, err := os.Open(dataDir); err == nil {
		d.Sync()
		d.Close()
	}
	return id, nil
}

// adoptFile, in a data directory, says that the node has not yet taken
// over the segments the store lists under its id: written before the
// node-id file when a data directory starts without one (a new node, or
// a replacement for one whose disk was lost, given the same --node-id),
// removed once remote.Segments.AdoptAll succeeded.
const adoptFile = "adopt-pending"

// markAdoption writes adoptFile when dataDir has no node-id file yet.
func markAdoption(dataDir string) error {
	if _, err := os.Stat(filepath.Join(dataDir, nodeIDFile)); !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dataDir, adoptFile))
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// adoptRetry is how long a failed adoption waits before trying again.
const adoptRetry = 10 * time.Second

// reconcile queues, for every shard the engine opened, the publication
// of what a previous run left unpublished (remote.Segments.Reconcile),
// starts eviction, and, while adoptFile is there, adopts the segments
// the store lists under this node's id.
func (o *objectStorage) reconcile(eng *engine.Engine) {
	if o.rem == nil {
		return
	}
	adoptPath := filepath.Join(o.dataDir, adoptFile)
	_, serr := os.Stat(adoptPath)
	adopt := serr == nil
	for _, sh := range eng.Shards() {
		o.rem.Reconcile(sh, adopt)
	}
	o.rem.StartEviction(eng, o.localLimit, 0)
	if !adopt {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	o.adoptCancel, o.adoptDone = cancel, make(chan struct{})
	go func() {
		defer close(o.adoptDone)
		for {
			err := o.rem.AdoptAll(ctx, eng)
			if err == nil {
				if err := os.Remove(adoptPath); err != nil {
					o.log.Error("object store: adopted this node's segments, but could not remove the marker; the next start adopts again (harmless)", "err", err)
				}
				st := o.rem.Stats()
				o.log.Info("object store: this node's segments in the store adopted", "segments", st.Adopted)
				return
			}
			if ctx.Err() != nil {
				return
			}
			o.log.Warn("object store: adopting the segments the store lists under this node's id failed; retrying", "err", err, "retry_in", adoptRetry)
			select {
			case <-ctx.Done():
				return
			case <-time.After(adoptRetry):
			}
		}
	}()
}

// startGC collects, every GCInterval, the segment objects of every
// source that no manifest lists any more (after the grace period).
func (o *objectStorage) startGC(sources func() []string) {
	ctx, cancel := context.WithCancel(context.Background())
	o.gcCancel, o.gcDone = cancel, make(chan struct{})
	go func() {
		defer close(o.gcDone)
		t := time.NewTicker(o.cfg.GCInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			o.collect(ctx, sources())
		}
	}()
}

// collect runs one garbage collection over sources.
func (o *objectStorage) collect(ctx context.Context, sources []string) {
	o.gcRuns.Add(1)
	var errs []error
	for _, src := range sources {
		res, err := objstore.CollectGarbage(ctx, o.store, src, nil)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			errs = append(errs, fmt.Errorf("source %s: %w", src, err))
			continue
		}
		o.gcDeleted.Add(int64(len(res.Deleted)))
		if len(res.Deleted) > 0 {
			o.log.Info("object store: deleted segments no manifest lists", "source_token", src, "deleted", len(res.Deleted))
		}
	}
	err := errors.Join(errs...)
	o.gcMu.Lock()
	defer o.gcMu.Unlock()
	o.gcLastErr = err
	if err == nil {
		o.gcFailingSince = time.Time{}
		return
	}
	o.gcFailures.Add(1)
	if o.gcFailingSince.IsZero() {
		o.gcFailingSince = time.Now()
	}
	o.log.Warn("object store: garbage collection failed; retried at the next interval", "err", err)
}

// conditions are the object store's problems that /ready reports.
func (o *objectStorage) conditions() []httpapi.ServerCondition {
	var out []httpapi.ServerCondition
	if o.rem != nil {
		if st := o.rem.Stats(); !st.FailingSince.IsZero() {
			out = append(out, httpapi.ServerCondition{Kind: "object_store_publish_failing",
				Detail: fmt.Sprintf("publishing segments to %s fails (%v); %d changes wait, retried with backoff; ingest goes on and nothing acknowledged is lost (the data directory holds it)",
					o.store, st.LastError, st.Pending),
				Since: st.FailingSince.UTC().Format(time.RFC3339), Count: st.Failures})
		}
	}
	if se := o.catalogSyncErr.Load(); se != nil && se.err != nil {
		out = append(out, httpapi.ServerCondition{Kind: "catalog_sync_failing",
			Detail: fmt.Sprintf("the shared catalog in %s cannot be read (%v): this node serves the catalog it has, and changes to sources, endpoints and tokens fail", o.store, se.err),
			Since:  se.since.UTC().Format(time.RFC3339)})
	}
	o.gcMu.Lock()
	defer o.gcMu.Unlock()
	if o.gcLastErr != nil {
		out = append(out, httpapi.ServerCondition{Kind: "object_store_gc_failing",
			Detail: fmt.Sprintf("garbage collection in %s fails: %v", o.store, o.gcLastErr),
			Since:  o.gcFailingSince.UTC().Format(time.RFC3339), Count: o.gcFailures.Load()})
	}
	return out
}

// close stops garbage collection, gives the publisher until ctx ends to
// publish what the engine's close flushed, and stops it; what is left is
// published by the next start (reconcile).
func (o *objectStorage) close(ctx context.Context) error {
	if o.adoptCancel != nil {
		o.adoptCancel()
		<-o.adoptDone
	}
	if o.gcCancel != nil {
		o.gcCancel()
		<-o.gcDone
	}
	var err error
	if o.rem != nil {
		// A store that is away does not hold the shutdown for long.
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if derr := o.rem.Drain(ctx); derr != nil {
			o.log.Warn("object store: stopping with segments not yet published; the next start publishes them", "err", derr)
		}
		err = o.rem.Close()
	}
	if o.query != nil {
		o.query.Close()
	}
	return errors.Join(err, o.cache.Close())
}

// sharedCatalog is the catalog object in the store, as catalog.Shared.
type sharedCatalog struct{ store objstore.Store }

// catalogTimeout bounds one read or update of the shared catalog.
const catalogTimeout = 30 * time.Second

// Read implements catalog.Shared.
func (s sharedCatalog) Read() ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), catalogTimeout)
	defer cancel()
	b, _, err := objstore.ReadCatalog(ctx, s.store)
	if errors.Is(err, objstore.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// Update implements catalog.Shared.
func (s sharedCatalog) Update(mutate func(cur []byte) ([]byte, error)) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), catalogTimeout)
	defer cancel()
	var out []byte
	_, err := objstore.UpdateCatalog(ctx, s.store, func(cur []byte) ([]byte, error) {
		next, err := mutate(cur)
		if err != nil {
			return nil, err
		}
		if next == nil {
			out = cur
			return nil, objstore.ErrNoChange
		}
		out = next
		return next, nil
	}, nil)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// defaultCatalogSync is how often a node adopts catalog changes other
// nodes made.
const defaultCatalogSync = 5 * time.Second

// startCatalogSync adopts, every interval, what other nodes changed in
// the shared catalog.
func (o *objectStorage) startCatalogSync(sync func() error, interval time.Duration) {
	if interval <= 0 {
		interval = defaultCatalogSync
	}
	ctx, cancel := context.WithCancel(context.Background())
	o.syncCancel, o.syncDone = cancel, make(chan struct{})
	go func() {
		defer close(o.syncDone)
		t := time.NewTicker(interval)
		defer t.Stop()
		failing := false
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			err := sync()
			se := &syncErr{err: err, since: time.Now()}
			if prev := o.catalogSyncErr.Load(); err != nil && prev != nil && prev.err != nil {
				se.since = prev.since
			}
			o.catalogSyncErr.Store(se)
			switch {
			case err != nil && !failing:
				o.log.Warn("object store: reading the shared catalog failed; this node keeps the catalog it has", "err", err)
			case err == nil && failing:
				o.log.Info("object store: the shared catalog reads again")
			}
			failing = err != nil
		}
	}()
}

// syncErr boxes the last catalog sync's error for an atomic.Pointer.
type syncErr struct {
	err   error
	since time.Time // when the current run of failures began
}
