package catalog

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/lql"
)

// MaxNameBytes bounds source and endpoint names (they become SQL table
// names and URL path segments).
const MaxNameBytes = 256

// Source is a named stream of events with its own storage shard
// (docs/compat/logflare.md §5.2). The JSON tags are the catalog file's format.
type Source struct {
	ID    int64  `json:"id"`
	Token string `json:"token"` // UUID; the shard id and the id clients ingest with
	Name  string `json:"name"`  // table name in SQL; not necessarily unique

	Description string `json:"description,omitempty"`
	// RetentionDays is how long events are kept (Logflare's retention_days,
	// alias bigquery_table_ttl); 0 keeps them forever.
	RetentionDays int `json:"retention_days"`
	// DropLQL is an LQL filter: matching events are dropped at ingest
	// (Logflare's drop_lql_string). Empty drops nothing.
	DropLQL string `json:"drop_lql_string,omitempty"`
	// CustomEventMessageKeys, a comma-separated list of field paths (`m.`
	// meaning `metadata.`), rebuilds event_message at ingest as their
	// values joined by " | ". Empty leaves event_message alone.
	CustomEventMessageKeys string `json:"custom_event_message_keys,omitempty"`
	// SortKey is the field (a path, e.g. "project") the source's stored
	// events are ordered by before time, so that a filter on it reads only
	// its value's blocks; "" orders by time only. A low-cardinality string
	// field that queries filter on suits it (engine.Shard.SetSortKey).
	SortKey string `json:"sort_key,omitempty"`
	// MaxDiskBytes caps the bytes of the source's stored segments: past
	// it, its oldest segments (by event time) are deleted, never the newest
	// (engine.Shard.SetMaxDiskBytes). 0 sets no cap.
	MaxDiskBytes int64 `json:"max_disk_bytes,omitempty"`

	InsertedAt time.Time `json:"inserted_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// SourceParams are the fields a create or update sets; nil fields are left
// as they are (their defaults on create).
type SourceParams struct {
	Name                   *string
	Description            *string
	RetentionDays          *int
	DropLQL                *string
	CustomEventMessageKeys *string
	SortKey                *string
	MaxDiskBytes           *int64
}

// Sources returns every source, by id.
func (c *Catalog) Sources() []*Source { return append([]*Source(nil), c.load().sources...) }

// SourceByToken returns the source with token tok (a canonical UUID
// string), or nil.
func (c *Catalog) SourceByToken(tok string) *Source { return c.load().sourceByToken[tok] }

// SourceByName returns the source named name (case-sensitive), or nil.
// When several sources share the name, the one created first (lowest id)
// is returned, always the same one.
func (c *Catalog) SourceByName(name string) *Source { return c.load().sourceByName[name] }

// SourceByID returns the source with id, or nil.
func (c *Catalog) SourceByID(id int64) *Source { return c.load().sourceByID[id] }

// HasSourceName reports whether some source is named name; it fits the SQL
// validator's known-source check.
func (c *Catalog) HasSourceName(name string) bool { return c.load().sourceByName[name] != nil }

// CreateSource adds a source. Name is required. Errors: *ValidationError.
func (c *Catalog) CreateSource(p SourceParams) (*Source, error) {
	var out *Source
	err := c.change(func(st *state) ([]Change, error) {
		now := c.now()
		s := &Source{ID: st.nextSourceID, Token: c.opts.NewUUID(), InsertedAt: now, UpdatedAt: now}
		if err := c.applySourceParams(s, p, true); err != nil {
			return nil, err
		}
		st.nextSourceID++
		st.sources = append(st.sources, s)
		out = s
		return []Change{{Kind: SourceCreated, Source: s}}, nil
	})
	return out, err
}

// UpdateSource changes the fields p sets on the source with token tok.
// Errors: ErrNotFound, *ValidationError.
func (c *Catalog) UpdateSource(tok string, p SourceParams) (*Source, error) {
	var out *Source
	err := c.change(func(st *state) ([]Change, error) {
		i := indexOf(st.sources, func(s *Source) bool { return s.Token == tok })
		if i < 0 {
			return nil, ErrNotFound
		}
		old := st.sources[i]
		s := *old
		if err := c.applySourceParams(&s, p, false); err != nil {
			return nil, err
		}
		s.UpdatedAt = c.now()
		st.sources[i] = &s
		out = &s
		return []Change{{Kind: SourceUpdated, Source: &s, OldSource: old}}, nil
	})
	return out, err
}

// DeleteSource removes the source with token tok and returns it (its
// events are the storage engine's to drop). Errors: ErrNotFound.
func (c *Catalog) DeleteSource(tok string) (*Source, error) {
	var out *Source
	err := c.change(func(st *state) ([]Change, error) {
		i := indexOf(st.sources, func(s *Source) bool { return s.Token == tok })
		if i < 0 {
			return nil, ErrNotFound
		}
		out = st.sources[i]
		st.sources = append(st.sources[:i:i], st.sources[i+1:]...)
		return []Change{{Kind: SourceDeleted, OldSource: out}}, nil
	})
	return out, err
}

// applySourceParams validates p and sets it on s.
func (c *Catalog) applySourceParams(s *Source, p SourceParams, create bool) error {
	fe := fieldErrors{}
	if p.Name != nil {
		s.Name = *p.Name
	}
	if create || p.Name != nil {
		checkName(fe, "name", s.Name)
	}
	if p.Description != nil {
		s.Description = *p.Description
	}
	if p.RetentionDays != nil {
		if *p.RetentionDays < 0 {
			fe.add("retention_days", msgAtLeast("0"))
		}
		s.RetentionDays = *p.RetentionDays
	}
	if p.DropLQL != nil {
		s.DropLQL = strings.TrimSpace(*p.DropLQL)
		if _, err := c.CompileDropLQL(s.DropLQL); err != nil {
			fe.add("drop_lql_string", err.Error())
		}
	}
	if p.CustomEventMessageKeys != nil {
		s.CustomEventMessageKeys = strings.TrimSpace(*p.CustomEventMessageKeys)
	}
	if p.SortKey != nil {
		s.SortKey = strings.TrimSpace(*p.SortKey)
		if err := engine.CheckSortKey(s.SortKey); err != nil {
			fe.add("sort_key", err.Error())
		}
	}
	if p.MaxDiskBytes != nil {
		if *p.MaxDiskBytes < 0 {
			fe.add("max_disk_bytes", msgAtLeast("0"))
		}
		s.MaxDiskBytes = *p.MaxDiskBytes
	}
	return fe.err()
}

// CompileDropLQL parses and compiles a source's drop_lql_string; an empty
// string gives a nil Matcher (drop nothing). Timestamp shorthands (now,
// last@1h, ...) are resolved against the catalog's clock at the time of the
// call.
func (c *Catalog) CompileDropLQL(q string) (*lql.Matcher, error) {
	if strings.TrimSpace(q) == "" {
		return nil, nil
	}
	parsed, err := lql.Parse(q, lql.Options{Now: c.now()})
	if err != nil {
		return nil, err
	}
	if len(parsed.Filters) == 0 {
		return nil, nil
	}
	return lql.Compile(parsed)
}

// checkName validates a source or endpoint name.
func checkName(fe fieldErrors, field, name string) {
	switch {
	case strings.TrimSpace(name) == "":
		fe.add(field, msgBlank)
	case len(name) > MaxNameBytes:
		fe.add(field, "should be at most "+strconv.Itoa(MaxNameBytes)+" character(s)")
	case !utf8.ValidString(name) || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '`' }):
		fe.add(field, "has invalid format")
	}
}

func indexOf[T any](list []*T, pred func(*T) bool) int {
	for i, x := range list {
		if pred(x) {
			return i
		}
	}
	return -1
}
