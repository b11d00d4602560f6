package remote

import (
	"fmt"
	"sync"

	"github.com/sediment/sediment/segment"
)

// heldParts are the head parts a query node keeps from ingest nodes'
// answers (UnsealedPart.Keep), per node and source, so that the next ask
// sends their names instead of their bytes and the parts stay open: a
// query then costs the ingest node the rows its heads gained since (see
// engine/headparts.go), not its whole heads. A part's name stands for
// the same rows for as long as the node lists it, so a held part is
// never stale; the node's next answer lists what it still has, and the
// rest is let go. At most max bytes are held across nodes and sources;
// past that, parts are used for the answer and not kept.
type heldParts struct {
	mu    sync.Mutex
	max   int64
	bytes int64
	sets  map[heldKey]map[string]*heldPart
}

type heldKey struct{ node, shard string }

type heldPart struct {
	data []byte
	r    *segment.Reader
}

// have returns what is held for key, as a map the caller may keep: the
// parts an ask's answer may name as held.
func (h *heldParts) have(key heldKey) map[string]*heldPart {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]*heldPart, len(h.sets[key]))
	for name, p := range h.sets[key] {
		out[name] = p
	}
	return out
}

// resolve fills the parts of ans the node sent by name from had (what
// was held when the ask was made), opens the parts to keep, and makes
// the answer's held and kept parts what is held for key.
func (h *heldParts) resolve(key heldKey, ans *Unsealed, had map[string]*heldPart) error {
	next := map[string]*heldPart{}
	for i := range ans.Parts {
		p := &ans.Parts[i]
		switch {
		case p.Held:
			hp := had[p.Name]
			if hp == nil {
				return fmt.Errorf("%w: the node named part %s as held by this node, which does not hold it", ErrBadUnsealed, p.Name)
			}
			p.Data, p.r = hp.data, hp.r
			next[p.Name] = hp
		case p.Keep:
			r, err := segment.Open(newBytesFile(p.Data), p.Name)
			if err != nil {
				continue // reported where the answer's parts are opened
			}
			p.r = r
			next[p.Name] = &heldPart{data: p.Data, r: r}
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sets == nil {
		h.sets = map[heldKey]map[string]*heldPart{}
	}
	old := h.sets[key]
	for name, p := range old {
		if next[name] != p {
			h.bytes -= int64(len(p.data))
		}
	}
	keep := make(map[string]*heldPart, len(next))
	for name, p := range next {
		if old[name] == p {
			keep[name] = p
			continue
		}
		if h.bytes+int64(len(p.data)) > h.max {
			continue
		}
		h.bytes += int64(len(p.data))
		keep[name] = p
	}
	if len(keep) == 0 {
		delete(h.sets, key)
	} else {
		h.sets[key] = keep
	}
	return nil
}

// held returns the parts and bytes held.
func (h *heldParts) held() (parts int, bytes int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, set := range h.sets {
		parts += len(set)
	}
	return parts, h.bytes
}
