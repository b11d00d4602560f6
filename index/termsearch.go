package index

import (
	"sort"
	"strings"
	"unsafe"

	"github.com/sediment/sediment/internal/bytesearch"
)

// Finding the terms of a token field that hold a needle token anywhere
// (a needle token touching both ends of the needle may lie inside any
// term: "rareprobe" in "xq7rareprobe") or end with it. Calling
// strings.Contains on every term costs a call and a setup per term, and a
// field of log messages holds hundreds of thousands of them. The terms
// are substrings, in term order, of the terms unit they were decoded
// from (terms.blob): one packed-pair search over the unit stops only
// where the needle is, and a binary search on the terms' places in the
// unit says which term an occurrence falls in. The bytes between terms
// (lengths, posting references) may hold the needle too, or an
// occurrence may run from a term into them: such an occurrence lies in
// no term and is passed over.

// termsWith returns, in ascending order, the positions of the terms that
// contain tok (suffix: that end with it), and tooMany when more than
// limit do (then the positions found so far, limit+1 of them). tok is not
// empty.
func (t *terms) termsWith(tok string, suffix bool, limit int) (match []int, tooMany bool) {
	hit := func(s string) bool {
		if suffix {
			return strings.HasSuffix(s, tok)
		}
		return strings.Contains(s, tok)
	}
	n := len(t.strs)
	if n == 0 {
		return nil, false
	}
	// Term 0 on its own: it may be empty, and an empty substring's data
	// pointer says nothing of its place. Every later term is longer than
	// nothing (terms ascend strictly, so only the first may be empty).
	if hit(t.strs[0]) {
		if match = append(match, 0); len(match) > limit {
			return match, true
		}
	}
	blob := t.blob
	if len(blob) == 0 || n == 1 {
		return t.termsWithLinear(match, 1, hit, limit)
	}
	base := uintptr(unsafe.Pointer(unsafe.StringData(blob)))
	start := func(i int) int { return int(uintptr(unsafe.Pointer(unsafe.StringData(t.strs[i]))) - base) }
	if s, e := start(1), start(n-1)+len(t.strs[n-1]); s < 0 || e > len(blob) || s > e {
		// Not substrings of blob (never so for decoded terms).
		return t.termsWithLinear(match, 1, hit, limit)
	}
	h := unsafe.Slice(unsafe.StringData(blob), len(blob))
	f := bytesearch.NewFinder(tok, h[:min(len(h), termSampleBytes)])
	for pos := start(1); pos < len(h); {
		k := f.Index(h[pos:])
		if k < 0 {
			break
		}
		p := pos + k
		// The last term (of 1..n-1) starting at or before p.
		i := sort.Search(n-1, func(j int) bool { return start(j+1) > p })
		if i == 0 {
			pos = p + 1
			continue
		}
		s := t.strs[i]
		end := start(i) + len(s)
		if p+len(tok) > end {
			pos = p + 1 // not inside term i: a match across its end
			continue
		}
		if !suffix || strings.HasSuffix(s, tok) {
			match = append(match, i)
			if len(match) > limit {
				return match, true
			}
		}
		pos = end // term i is decided
	}
	return match, false
}

// termSampleBytes is how much of a terms unit chooses the byte pair a
// search compares (bytesearch.NewFinder samples windows of it).
const termSampleBytes = 64 << 10

// termsWithLinear is termsWith's loop over every term from from on,
// appending to match.
func (t *terms) termsWithLinear(match []int, from int, hit func(string) bool, limit int) ([]int, bool) {
	for i := from; i < len(t.strs); i++ {
		if hit(t.strs[i]) {
			match = append(match, i)
			if len(match) > limit {
				return match, true
			}
		}
	}
	return match, false
}
