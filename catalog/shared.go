package catalog

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"time"
)

// Shared is a copy of the catalog that several nodes share (with an
// object store, its catalog object: docs/scale.md). With Options.Shared
// set, every change is made to the shared copy first, by a conditional
// read-modify-write, and then to the local file; SyncShared adopts what
// other nodes changed. The bytes are the catalog file's (FileName), which
// carries its own checksum.
type Shared interface {
	// Update calls mutate with the shared bytes (nil when there are none
	// yet) and stores what it returns only if nobody stored anything in
	// between; otherwise it reads again and calls mutate again. When
	// mutate returns nil bytes and no error, nothing is stored. Update
	// returns the bytes shared once it is done.
	Update(mutate func(cur []byte) ([]byte, error)) ([]byte, error)
	// Read returns the shared bytes (nil: none yet).
	Read() ([]byte, error)
}

// maxChangeIDs bounds the change ids a catalog keeps: a retry comes
// within seconds of its first try, while this many other changes would
// take far longer to be made by hand or by seeding.
const maxChangeIDs = 256

// sharedRetries bounds how often changeShared tries again, with the same
// change id, after the store failed (its answer may have been lost after
// the write happened), and sharedRetryWait is the first wait, doubled
// after each try.
const (
	sharedRetries   = 3
	sharedRetryWait = 100 * time.Millisecond
)

// changeShared is change for a catalog with Options.Shared: fn runs on
// the shared version (adopted first if another node changed it), which
// is stored conditionally, then saved locally, published and notified:
// what another node changed first, then fn's changes.
//
// A change is applied once even when a write's answer is lost (the store
// acted, the connection dropped) and the write is retried: each call has
// an id, recorded in the catalog it writes (change_ids); a try that finds
// its id in the shared version knows an earlier try was stored, and adopts
// that version instead of applying fn again (which would, say, create the
// source a second time). A store failure is retried here a few times with
// the same id; fn's own errors are not.
func (c *Catalog) changeShared(fn func(st *state) ([]Change, error)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := c.opts.NewUUID()
	var base, next *state
	var changes []Change
	var fnErr error
	stored := false // an earlier try of this change is in the shared version
	mutate := func(cur []byte) ([]byte, error) {
		var err error
		if base, err = c.sharedState(cur); err != nil {
			fnErr = err
			return nil, err
		}
		if slices.Contains(base.changeIDs, id) {
			stored, next = true, base
			return nil, nil
		}
		next = base.clone()
		if changes, err = fn(next); err != nil {
			fnErr = err
			return nil, err
		}
		if len(changes) == 0 {
			return nil, nil
		}
		ids := append(slices.Clone(next.changeIDs), id)
		next.changeIDs = ids[max(0, len(ids)-maxChangeIDs):]
		next.reindex()
		return encodeFile(next)
	}
	shared, err := c.opts.Shared.Update(mutate)
	for wait, try := sharedRetryWait, 1; err != nil && fnErr == nil && try <= sharedRetries; wait, try = wait*2, try+1 {
		// The store failed: the write may have happened all the same.
		time.Sleep(wait)
		shared, err = c.opts.Shared.Update(mutate)
	}
	if err != nil {
		return err
	}
	old := c.st.Load()
	if stored {
		// Our change is in the shared version already (with whatever
		// others did since): adopt it.
		if err := c.saveBytes(shared); err != nil {
			return err
		}
		c.st.Store(next)
		c.notify(diffStates(old, next))
		return nil
	}
	if len(changes) == 0 {
		// Nothing of ours; adopt what the others did.
		return c.adoptLocked(shared)
	}
	if err := c.saveBytes(shared); err != nil {
		return err
	}
	c.st.Store(next)
	c.notify(append(diffStates(old, base), changes...))
	return nil
}

// sharedState decodes the shared bytes; nil (none yet) and bytes equal to
// the local file are the local state.
func (c *Catalog) sharedState(cur []byte) (*state, error) {
	if cur == nil || bytes.Equal(cur, c.file) {
		return c.st.Load(), nil
	}
	st, _, err := decodeFile(cur)
	if err != nil {
		return nil, fmt.Errorf("shared catalog: %w", err)
	}
	st.reindex()
	return st, nil
}

// SyncShared brings the local catalog in line with the shared one: when
// there is none yet, the local catalog becomes it (the first node of a
// cluster, or one that had its catalog before it had an object store);
// when it differs, it is adopted (saved locally, published, notified).
// Nodes call it at startup and then every few seconds.
func (c *Catalog) SyncShared() error {
	if c.opts.Shared == nil {
		return nil
	}
	if c.opts.ReadOnly {
		return ErrReadOnly
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cur, err := c.opts.Shared.Read()
	if err != nil {
		return err
	}
	if cur == nil {
		local := c.file
		if local == nil {
			if local, err = encodeFile(c.st.Load()); err != nil {
				return err
			}
		}
		if cur, err = c.opts.Shared.Update(func(cur []byte) ([]byte, error) {
			if cur != nil {
				return nil, nil // another node was first: adopt its
			}
			return local, nil
		}); err != nil {
			return err
		}
	}
	return c.adoptLocked(cur)
}

// adoptLocked makes shared bytes the local catalog. Callers hold c.mu.
func (c *Catalog) adoptLocked(shared []byte) error {
	if shared == nil || bytes.Equal(shared, c.file) {
		return nil
	}
	st, err := c.sharedState(shared)
	if err != nil {
		return err
	}
	old := c.st.Load()
	if err := c.saveBytes(shared); err != nil {
		return err
	}
	c.st.Store(st)
	c.notify(diffStates(old, st))
	return nil
}

// saveBytes writes data as the catalog file, keeping the current one as
// the previous version (as save does).
func (c *Catalog) saveBytes(data []byte) error {
	if c.file != nil && bytes.Equal(c.file, data) {
		return nil
	}
	return c.writeFile(data)
}

// diffStates lists the changes that turn a into b, as Subscribe's
// callbacks expect them.
func diffStates(a, b *state) []Change {
	if a == b {
		return nil
	}
	var out []Change
	for _, s := range b.sources {
		old := a.sourceByToken[s.Token]
		switch {
		case old == nil:
			out = append(out, Change{Kind: SourceCreated, Source: s})
		case !reflect.DeepEqual(old, s):
			out = append(out, Change{Kind: SourceUpdated, Source: s, OldSource: old})
		}
	}
	for _, s := range a.sources {
		if b.sourceByToken[s.Token] == nil {
			out = append(out, Change{Kind: SourceDeleted, OldSource: s})
		}
	}
	for _, e := range b.endpoints {
		old := a.endpointByToken[e.Token]
		switch {
		case old == nil:
			out = append(out, Change{Kind: EndpointCreated, Endpoint: e})
		case !reflect.DeepEqual(old, e):
			out = append(out, Change{Kind: EndpointUpdated, Endpoint: e, OldEndpoint: old})
		}
	}
	for _, e := range a.endpoints {
		if b.endpointByToken[e.Token] == nil {
			out = append(out, Change{Kind: EndpointDeleted, OldEndpoint: e})
		}
	}
	if !reflect.DeepEqual(a.tokens, b.tokens) {
		out = append(out, Change{Kind: TokensChanged})
	}
	return out
}
