package index

import (
	"hash/maphash"
	"math/bits"
)

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
	// short holds, by term number, packShort of the terms of at most
	// maxShort bytes (0 for longer ones): most tokens are that short, and
	// such a term is compared as one integer, without reading its bytes.
	short []uint64
}

// tokenSeed seeds the hash of every token table: the table's layout
// stays inside the builder, so one seed for the process will do.
var tokenSeed = maphash.MakeSeed()

// maxShort is the longest token packShort packs.
const maxShort = 7

// packShort packs the bytes of a string of at most maxShort bytes, and its
// length plus one above them, into an integer that no other string shares
// (and that is not 0, which marks a longer term in tokenTable.short).
func packShort(s string) uint64 {
	x := uint64(len(s)+1) << 56
	for i := 0; i < len(s); i++ {
		x |= uint64(s[i]) << (8 * i)
	}
	return x
}

// hashToken is the hash a tokenTable files tok under: for a short token a
// multiply-fold of its packed bytes (a maphash.String call was a sixth of
// AddText), else maphash.
func hashToken(tok string) uint64 {
	if len(tok) <= maxShort {
		return hashShort(packShort(tok))
	}
	return maphash.String(tokenSeed, tok)
}

// hashShort mixes a packShort value: the high and the low half of its
// 128-bit product with an odd constant, folded.
func hashShort(x uint64) uint64 {
	hi, lo := bits.Mul64(x^shortSeed, 0x9E3779B97F4A7C15)
	return hi ^ lo
}

// shortSeed varies hashShort from process to process, as tokenSeed does
// maphash's.
var shortSeed = maphash.Comparable(tokenSeed, 0)

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

// getShort is get for a token of at most maxShort bytes, x being its
// packShort and h its hash. It repeats get's probe loop rather than
// sharing it through a comparison callback: it compares packed integers
// instead of strings, on the flush's hottest loop, where a call per probe
// costs.
func (t *tokenTable) getShort(x, h uint64) *postings {
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
			if k := uint32(s) - 1; t.short[k] == x {
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
	short := uint64(0)
	if len(key) <= maxShort {
		short = packShort(key)
	}
	t.short = append(t.short, short)
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
