package catalog

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/sediment/sediment/internal/vfs"
)

// FileName is the catalog's file in the data directory; PrevFileName is
// its version before the last change, kept by every save (see
// RestorePrevious).
const (
	FileName     = "catalog.json"
	PrevFileName = FileName + ".prev"
)

// Versions of the catalog file (see file.go). The writer always writes
// FormatLatest; the reader accepts FormatMinSupported..FormatLatest.
const (
	// FormatV1: the catalog as one JSON object, without a checksum.
	FormatV1 = 1
	// FormatV2: the catalog in an envelope with a CRC-32C of its bytes.
	FormatV2           = 2
	FormatLatest       = FormatV2
	FormatMinSupported = FormatV1
)

// ErrCorrupt is wrapped by the error Open returns for a catalog file that
// cannot be read back (bad JSON, a checksum mismatch, an unknown version,
// inconsistent entries), and for a missing catalog file whose previous
// version exists.
var ErrCorrupt = errors.New("catalog: corrupt")

// ErrDiskFull is matched (errors.Is) by the error of a change that could
// not be saved because the file system is full (ENOSPC, EDQUOT). The
// catalog is then as it was, in memory and on disk: the change may be
// retried once space is freed.
var ErrDiskFull = errors.New("catalog: disk full")

// ErrReadOnly is returned by changes to a catalog opened read-only.
var ErrReadOnly = errors.New("catalog: opened read-only")

// Options configure a Catalog. A nil *Options means all defaults.
type Options struct {
	// FS is the file system (default the OS).
	FS vfs.FS
	// Now is the clock for inserted_at/updated_at and LQL validation
	// (default time.Now).
	Now func() time.Time
	// NewUUID returns the token of a new source or endpoint (default a
	// random UUIDv4).
	NewUUID func() string
	// Logger receives operational logs (default discards).
	Logger *slog.Logger
	// ReadOnly opens the catalog without changing anything on disk (fsck,
	// the query command): a format 1 file is not rewritten, and every
	// change fails with ErrReadOnly.
	ReadOnly bool
	// Shared, when set, is the copy several nodes share: changes go to it
	// first, and SyncShared adopts the others' (shared.go). Nil (the
	// default): the local file is the catalog.
	Shared Shared
}

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.FS == nil {
		out.FS = vfs.OS
	}
	if out.Now == nil {
		out.Now = time.Now
	}
	if out.NewUUID == nil {
		out.NewUUID = uuid.NewString
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return out
}

// Catalog holds the sources, endpoints and access tokens. It is safe for
// concurrent use; see the package documentation for the rules.
type Catalog struct {
	opts Options
	path string // the catalog file
	prev string // its previous version

	// mu serialises changes: clone, edit, persist, publish, notify.
	mu sync.Mutex
	st atomic.Pointer[state]
	// file is the catalog file as last read or written (under mu): what
	// the next save keeps as the previous version.
	file []byte

	validateSQL atomic.Pointer[func(string) error]

	subsMu  sync.Mutex
	subs    map[uint64]func(Change)
	nextSub uint64
}

// state is one immutable version of the catalog. Changes work on a clone.
type state struct {
	nextSourceID, nextEndpointID, nextTokenID int64
	// changeIDs are the ids of the latest shared changes applied, oldest
	// first (shared.go): a retried change finds its id and is not
	// applied twice.
	changeIDs []string

	sources   []*Source // sorted by ID
	endpoints []*Endpoint
	tokens    []*AccessToken

	sourceByToken   map[string]*Source
	sourceByName    map[string]*Source // the lowest ID among equal names
	sourceByID      map[int64]*Source
	endpointByToken map[string]*Endpoint
	endpointByName  map[string]*Endpoint
	endpointByID    map[int64]*Endpoint
}

func (s *state) clone() *state {
	return &state{
		nextSourceID:   s.nextSourceID,
		nextEndpointID: s.nextEndpointID,
		nextTokenID:    s.nextTokenID,
		changeIDs:      s.changeIDs, // replaced, never changed in place
		sources:        append([]*Source(nil), s.sources...),
		endpoints:      append([]*Endpoint(nil), s.endpoints...),
		tokens:         append([]*AccessToken(nil), s.tokens...),
	}
}

// reindex sorts the lists and rebuilds the lookup maps.
func (s *state) reindex() {
	sort.Slice(s.sources, func(i, j int) bool { return s.sources[i].ID < s.sources[j].ID })
	sort.Slice(s.endpoints, func(i, j int) bool { return s.endpoints[i].ID < s.endpoints[j].ID })
	sort.Slice(s.tokens, func(i, j int) bool { return s.tokens[i].ID < s.tokens[j].ID })
	s.sourceByToken = make(map[string]*Source, len(s.sources))
	s.sourceByName = make(map[string]*Source, len(s.sources))
	s.sourceByID = make(map[int64]*Source, len(s.sources))
	for _, src := range s.sources {
		s.sourceByToken[src.Token] = src
		s.sourceByID[src.ID] = src
		if _, dup := s.sourceByName[src.Name]; !dup {
			s.sourceByName[src.Name] = src // sorted by ID: the first wins
		}
	}
	s.endpointByToken = make(map[string]*Endpoint, len(s.endpoints))
	s.endpointByName = make(map[string]*Endpoint, len(s.endpoints))
	s.endpointByID = make(map[int64]*Endpoint, len(s.endpoints))
	for _, ep := range s.endpoints {
		s.endpointByToken[ep.Token] = ep
		s.endpointByName[ep.Name] = ep
		s.endpointByID[ep.ID] = ep
	}
}

// Open loads the catalog of data directory dir (creating the directory if
// needed; a missing file is an empty catalog). A file in format 1 (without
// a checksum) is rewritten in the current format, its old bytes kept as
// the previous version, unless opts.ReadOnly.
func Open(dir string, opts *Options) (*Catalog, error) {
	o := opts.withDefaults()
	if !o.ReadOnly {
		if err := o.FS.MkdirAll(dir); err != nil {
			return nil, err
		}
	}
	c := &Catalog{opts: o, path: filepath.Join(dir, FileName), prev: filepath.Join(dir, PrevFileName), subs: map[uint64]func(Change){}}
	st := &state{nextSourceID: 1, nextEndpointID: 1, nextTokenID: 1}
	format := FormatLatest
	switch {
	case o.FS.Exists(c.path):
		data, err := vfs.ReadFile(o.FS, c.path)
		if err != nil {
			return nil, fmt.Errorf("read catalog: %w", err)
		}
		if st, format, err = decodeFile(data); err != nil {
			return nil, fmt.Errorf("catalog %s: %w", c.path, err)
		}
		c.file = data
	case o.FS.Exists(c.prev):
		// A save never leaves the file missing: it was deleted or lost.
		// Starting empty would orphan every source's data.
		return nil, fmt.Errorf("catalog %s: %w: the file is missing but its previous version %s exists", c.path, ErrCorrupt, PrevFileName)
	}
	st.reindex()
	c.st.Store(st)
	if format < FormatLatest && !o.ReadOnly {
		if err := c.save(st); err != nil {
			return nil, fmt.Errorf("catalog %s: rewrite in format %d: %w", c.path, FormatLatest, err)
		}
		o.Logger.Info("catalog rewritten with a checksum", "file", c.path, "from_format", format, "to_format", FormatLatest,
			"previous_version", c.prev)
	}
	return c, nil
}

// save writes st as the catalog file (writeFile).
func (c *Catalog) save(st *state) error {
	if c.opts.ReadOnly {
		return ErrReadOnly
	}
	data, err := encodeFile(st)
	if err != nil {
		return err
	}
	return c.writeFile(data)
}

// writeFile writes data as the catalog file, atomically and durably, after
// keeping the current file as the previous version. The new file is
// written (and synced) to a temporary name first, the write most likely to
// fail on a full disk: when any step before the rename fails, the
// temporary file is removed and both files are as they were.
func (c *Catalog) writeFile(data []byte) error {
	fs := c.opts.FS
	tmp := c.path + ".tmp"
	if err := vfs.WriteFileSynced(fs, tmp, data); err != nil {
		fs.Remove(tmp)
		return saveError("write catalog", err)
	}
	if c.file != nil {
		if err := vfs.WriteFileAtomic(fs, c.prev, c.file); err != nil {
			fs.Remove(tmp)
			return saveError("write catalog's previous version", err)
		}
	}
	if err := fs.Rename(tmp, c.path); err != nil {
		fs.Remove(tmp)
		return saveError("write catalog", err)
	}
	if err := fs.SyncDir(filepath.Dir(c.path)); err != nil {
		return saveError("write catalog", err)
	}
	c.file = data
	return nil
}

// saveError wraps a failed save's error, making a full disk ErrDiskFull.
func saveError(what string, err error) error {
	if vfs.IsNoSpace(err) {
		return fmt.Errorf("%s: %w: %w", what, ErrDiskFull, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// change runs fn on a clone of the current state; if fn reports changes,
// the clone is persisted, published and the changes notified, in that order.
// Nothing is published when fn or the write fails.
func (c *Catalog) change(fn func(st *state) ([]Change, error)) error {
	if c.opts.ReadOnly {
		return ErrReadOnly
	}
	if c.opts.Shared != nil {
		return c.changeShared(fn)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	next := c.st.Load().clone()
	changes, err := fn(next)
	if err != nil {
		return err
	}
	if len(changes) == 0 {
		return nil
	}
	next.reindex()
	if err := c.save(next); err != nil {
		return err
	}
	c.st.Store(next)
	c.notify(changes)
	return nil
}

func (c *Catalog) load() *state { return c.st.Load() }

// CanonicalToken parses s as a UUID in any form google/uuid accepts (upper
// case, braces, urn:uuid:) and returns the canonical lower-case form that
// tokens are stored in.
func CanonicalToken(s string) (string, bool) {
	u, err := uuid.Parse(s)
	if err != nil {
		return "", false
	}
	return u.String(), true
}

func (c *Catalog) now() time.Time { return c.opts.Now().UTC() }

// SetSQLValidator installs the function that checks an endpoint's SQL
// query when it is saved (language bq_sql). A non-nil error rejects the
// save with a 422-style ValidationError whose "query" field holds the
// error's message. The validator may read the catalog (e.g. HasSourceName)
// but must not change it. nil removes the validator (every query accepted).
func (c *Catalog) SetSQLValidator(fn func(query string) error) {
	if fn == nil {
		c.validateSQL.Store(nil)
		return
	}
	c.validateSQL.Store(&fn)
}

func (c *Catalog) sqlValidator() func(string) error {
	if p := c.validateSQL.Load(); p != nil {
		return *p
	}
	return nil
}

// ChangeKind says what a Change did.
type ChangeKind uint8

// Kinds of change.
const (
	SourceCreated ChangeKind = iota + 1
	SourceUpdated
	SourceDeleted
	EndpointCreated
	EndpointUpdated
	EndpointDeleted
	TokensChanged
)

// String names the kind, e.g. "source_created".
func (k ChangeKind) String() string {
	switch k {
	case SourceCreated:
		return "source_created"
	case SourceUpdated:
		return "source_updated"
	case SourceDeleted:
		return "source_deleted"
	case EndpointCreated:
		return "endpoint_created"
	case EndpointUpdated:
		return "endpoint_updated"
	case EndpointDeleted:
		return "endpoint_deleted"
	case TokensChanged:
		return "tokens_changed"
	}
	return "change(?)"
}

// Change describes one change. For sources, Source is the new value (nil
// after a delete) and OldSource the previous one (nil after a create);
// likewise Endpoint and OldEndpoint.
type Change struct {
	Kind        ChangeKind
	Source      *Source
	OldSource   *Source
	Endpoint    *Endpoint
	OldEndpoint *Endpoint
}

// Subscribe registers fn to be called after every change is persisted and
// visible, in the order changes happen (the query layer drops an endpoint's
// cached results on EndpointUpdated/EndpointDeleted). fn runs on the
// changing goroutine while further changes wait; it may read the catalog
// but must not change it. The returned function unsubscribes.
func (c *Catalog) Subscribe(fn func(Change)) (cancel func()) {
	c.subsMu.Lock()
	defer c.subsMu.Unlock()
	id := c.nextSub
	c.nextSub++
	c.subs[id] = fn
	return func() {
		c.subsMu.Lock()
		delete(c.subs, id)
		c.subsMu.Unlock()
	}
}

func (c *Catalog) notify(changes []Change) {
	c.subsMu.Lock()
	ids := make([]uint64, 0, len(c.subs))
	for id := range c.subs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	fns := make([]func(Change), len(ids))
	for i, id := range ids {
		fns[i] = c.subs[id]
	}
	c.subsMu.Unlock()
	for _, ch := range changes {
		for _, fn := range fns {
			fn(ch)
		}
	}
}
