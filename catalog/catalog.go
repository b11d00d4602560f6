package catalog

import (
	"encoding/json"
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

// FileName is the catalog's file in the data directory.
const FileName = "catalog.json"

// Versions of the catalog file. The writer always writes FormatLatest; the
// reader accepts FormatMinSupported..FormatLatest.
const (
	FormatV1           = 1
	FormatLatest       = FormatV1
	FormatMinSupported = FormatV1
)

// ErrCorrupt is wrapped by the error Open returns for a catalog file that
// cannot be read back (bad JSON, unknown version, inconsistent entries).
var ErrCorrupt = errors.New("catalog: corrupt")

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
	path string

	// mu serialises changes: clone, edit, persist, publish, notify.
	mu sync.Mutex
	st atomic.Pointer[state]

	validateSQL atomic.Pointer[func(string) error]

	subsMu  sync.Mutex
	subs    map[uint64]func(Change)
	nextSub uint64
}

// state is one immutable version of the catalog. Changes work on a clone.
type state struct {
	nextSourceID, nextEndpointID, nextTokenID int64

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

// fileData is the catalog file: explicit JSON names, a format version.
type fileData struct {
	Format         int            `json:"format"`
	NextSourceID   int64          `json:"next_source_id"`
	NextEndpointID int64          `json:"next_endpoint_id"`
	NextTokenID    int64          `json:"next_token_id"`
	Sources        []*Source      `json:"sources"`
	Endpoints      []*Endpoint    `json:"endpoints"`
	AccessTokens   []*AccessToken `json:"access_tokens"`
}

// Open loads the catalog of data directory dir (creating the directory if
// needed; a missing file is an empty catalog).
func Open(dir string, opts *Options) (*Catalog, error) {
	o := opts.withDefaults()
	if err := o.FS.MkdirAll(dir); err != nil {
		return nil, err
	}
	c := &Catalog{opts: o, path: filepath.Join(dir, FileName), subs: map[uint64]func(Change){}}
	st := &state{nextSourceID: 1, nextEndpointID: 1, nextTokenID: 1}
	if o.FS.Exists(c.path) {
		data, err := vfs.ReadFile(o.FS, c.path)
		if err != nil {
			return nil, fmt.Errorf("read catalog: %w", err)
		}
		if st, err = decodeState(data); err != nil {
			return nil, fmt.Errorf("catalog %s: %w", c.path, err)
		}
	}
	st.reindex()
	c.st.Store(st)
	return c, nil
}

func decodeState(data []byte) (*state, error) {
	var f fileData
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if f.Format < FormatMinSupported || f.Format > FormatLatest {
		return nil, fmt.Errorf("%w: format version %d (this build reads %d..%d)", ErrCorrupt, f.Format, FormatMinSupported, FormatLatest)
	}
	st := &state{
		nextSourceID: f.NextSourceID, nextEndpointID: f.NextEndpointID, nextTokenID: f.NextTokenID,
		sources: f.Sources, endpoints: f.Endpoints, tokens: f.AccessTokens,
	}
	seenTok := map[string]bool{}
	seenID := map[string]bool{}
	checkID := func(kind string, id, next int64, token string) error {
		key := fmt.Sprintf("%s/%d", kind, id)
		if id <= 0 || id >= next || seenID[key] {
			return fmt.Errorf("%w: %s id %d duplicated or out of range (next %d)", ErrCorrupt, kind, id, next)
		}
		seenID[key] = true
		if kind == "access token" {
			return nil // identified by id; the secret is stored hashed
		}
		if _, err := uuid.Parse(token); err != nil || seenTok[token] {
			return fmt.Errorf("%w: %s %d: bad or duplicated token", ErrCorrupt, kind, id)
		}
		seenTok[token] = true
		return nil
	}
	for _, s := range st.sources {
		if s == nil {
			return nil, fmt.Errorf("%w: null source", ErrCorrupt)
		}
		if err := checkID("source", s.ID, st.nextSourceID, s.Token); err != nil {
			return nil, err
		}
	}
	names := map[string]bool{}
	for _, e := range st.endpoints {
		if e == nil {
			return nil, fmt.Errorf("%w: null endpoint", ErrCorrupt)
		}
		if err := checkID("endpoint", e.ID, st.nextEndpointID, e.Token); err != nil {
			return nil, err
		}
		if names[e.Name] {
			return nil, fmt.Errorf("%w: endpoint name %q duplicated", ErrCorrupt, e.Name)
		}
		names[e.Name] = true
	}
	for _, t := range st.tokens {
		if t == nil {
			return nil, fmt.Errorf("%w: null access token", ErrCorrupt)
		}
		if err := checkID("access token", t.ID, st.nextTokenID, ""); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// save writes st as the catalog file, atomically and durably.
func (c *Catalog) save(st *state) error { return c.saveAs(st, c.path) }

// saveAs writes st as a catalog file at path, atomically and durably.
func (c *Catalog) saveAs(st *state, path string) error {
	f := fileData{
		Format:         FormatLatest,
		NextSourceID:   st.nextSourceID,
		NextEndpointID: st.nextEndpointID,
		NextTokenID:    st.nextTokenID,
		Sources:        st.sources,
		Endpoints:      st.endpoints,
		AccessTokens:   st.tokens,
	}
	data, err := json.MarshalIndent(&f, "", "  ")
	if err != nil {
		return err
	}
	if err := vfs.WriteFileAtomic(c.opts.FS, path, append(data, '\n')); err != nil {
		return fmt.Errorf("write catalog: %w", err)
	}
	return nil
}

// change runs fn on a clone of the current state; if fn reports changes,
// the clone is persisted, published and the changes notified, in that order.
// Nothing is published when fn or the write fails.
func (c *Catalog) change(fn func(st *state) ([]Change, error)) error {
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
