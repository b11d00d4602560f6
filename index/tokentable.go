package index

import "hash/maphash"

// tokenTable maps the terms of a token field being built to their
// postings. It stands in for a map[string]*postings on AddText's path,
// which looks up every token of every message (issue 14: the map's
// lookups were 47% of AddText): the hash comes from one maphash.String
// call per token, a probe reads 8-byte slots (a tag of the hash and the
// term's number) and compares a term's bytes only when the tags agree, and
// the terms themselves sit in two dense slices that Write walks in order.
type tokenTable struct {
	// slots is open addressing, linear probing, a power of two long, at
	// most half full: 0 is an empty slot, else the hash's high 32 bits
	// above the term's number plus 1.
	slots []uint64
	keys  []string
	posts []*postings
}

// tokenSeed seeds the hash of every token table: the table's layout
// stays inside the builder, so one seed for the process will do.
var tokenSeed = maphash.MakeSeed()

// hashToken is the hash a tokenTable files tok under.
func hashToken(tok string) uint64 { return maphash.String(tokenSeed, tok) }

// minTokenSlots is the slots of a table's first allocation.
const minTokenSlots = 1024

// len returns the number of terms.
func (t *tokenTable) len() int { return len(t.keys) }

// get returns the postings of tok, whose hash is h (nil: not a term yet).
func (t *tokenTable) get(tok string, h uint64) *postings {
	if len(t.slots) == 0 {
		return nil
	}
	mask := uint64(len(t.slots) - 1)
	tag := h >> 32
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return nil
		}
		if s>>32 == tag {
			if k := uint32(s) - 1; t.keys[k] == tok {
				return t.posts[k]
			}
		}
	}
}

// put files key (not a term yet, hash h) with postings p. The table
// keeps key as it is: the caller gives it a string of its own.
func (t *tokenTable) put(key string, h uint64, p *postings) {
	if 2*(len(t.keys)+1) > len(t.slots) {
		t.grow()
	}
	t.keys = append(t.keys, key)
	t.posts = append(t.posts, p)
	t.place(h, uint32(len(t.keys)))
}

// place puts the slot of term number n (from 1), hash h, in the first
// empty slot of its probe sequence.
func (t *tokenTable) place(h uint64, n uint32) {
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = h>>32<<32 | uint64(n)
}

// grow doubles the slots and files every term again (hashes are not
// kept: growing is rare next to lookups).
func (t *tokenTable) grow() {
	n := max(minTokenSlots, 2*len(t.slots))
	t.slots = make([]uint64, n)
	for k, key := range t.keys {
		t.place(hashToken(key), uint32(k+1))
	}
}
