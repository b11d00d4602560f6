package segment

import (
	"bytes"
	"errors"
)

// Deciding that no value of an encHex chunk can hold a literal without
// rendering its values. A value is 2w hex digits of the chunk's case,
// then a suffix (often none: a ray id or trace id alone). An occurrence
// of a literal l in a value starts in the digits or in the suffix; the
// part of it in the digits is a prefix of l made of hex digits of that
// case, so whatever of l follows its longest such prefix (its tail) lies
// in the suffix. When no page's suffixes hold any literal's tail, no
// value holds a literal, and the digits (most of a page's bytes once
// rendered) are never rendered. A literal of hex digits alone has an
// empty tail and may lie in the digits: such a search reads the values.

// hexTails returns, per literal, what follows its longest prefix of hex
// digits of one case (upper: 0-9A-F, else 0-9a-f), or nil when some
// literal is hex digits alone (or empty).
func hexTails(lits []string, upper bool) []string {
	class := uint8(hexClassLower)
	if upper {
		class = hexClassUpper
	}
	tails := make([]string, 0, len(lits))
	for _, l := range lits {
		p := 0
		for p < len(l) && hexClass[l[p]]&class != 0 {
			p++
		}
		if p == len(l) {
			return nil
		}
		tails = append(tails, l[p:])
	}
	return tails
}

// hexSuffixesMayHold reports whether a suffix of a value of the pages of
// encHex chunk c (column col of block b) with rows in [from, to) may hold
// one of tails: the pages' suffix bytes, swept as they lie end to end
// (an occurrence across two suffixes makes it say yes, never no wrongly).
// The pages are read as a read of the values would read them; a page
// without suffixes says no at once.
func (r *Reader) hexSuffixesMayHold(b, col int, c *chunkMeta, from, to int, tails []string, mode cacheMode) (bool, error) {
	hist := r.history(c, mode)
	scratch := scratchPool.Get().(*[]uint32)
	defer scratchPool.Put(scratch)
	for pi := pageOf(c.pages, 0, from); pi < c.pages.Len(); pi++ {
		pm := c.page(pi)
		if pm.firstRow >= to {
			break
		}
		if pm.firstRow+pm.rows <= from || pm.present == 0 {
			continue
		}
		may, err := r.hexPageSuffixesHold(&pm, c.width, tails, mode, hist, scratch)
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) && err != errTooBig {
				err = corruptf(r.path, "page", pm.off, "column %q block %d: %v", r.ft.cols[col].Path, b, err)
			}
			return false, err
		}
		if may {
			return true, nil
		}
	}
	return false, nil
}

// hexPageSuffixesHold reports whether the suffix bytes of encHex page pm
// (width byte width) hold one of tails.
func (r *Reader) hexPageSuffixesHold(pm *pageMeta, width uint8, tails []string, mode cacheMode, hist historyOf, scratch *[]uint32) (bool, error) {
	pv, release, err := r.readValuesPage(pm, "encoding 8", mode, hist)
	if err != nil {
		return false, err
	}
	defer release()
	hv, err := parseHex(pv.vals, width, pv.present, *scratch)
	if hv.ends != nil {
		*scratch = hv.ends
	}
	if err != nil {
		return false, err
	}
	if len(hv.ends) == 0 {
		return false, nil // no value has a suffix
	}
	suf := hv.suf[:hv.ends[len(hv.ends)-1]]
	for _, t := range tails {
		if bytes.Contains(suf, stringBytes(t)) {
			return true, nil
		}
	}
	return false, nil
}
