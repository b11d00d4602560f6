package segment

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
)

// Residual pieces (format version 5): a template piece of a third kind,
// bytes that vary from row to row and are stored with the row. Kong's
// access line
//
//	172.18.0.1 - - [26/Nov/2026:12:22:19 +0000] "GET /auth/v1/user HTTP/1.1" 200 1234 "-" "node"
//
// has two runs that no column of the event carries, the date and the byte
// count; with them as residual pieces R the line is the template
//
//	col(ip) " - - [26/Nov/2026:" R " +0000] \"" col(method) " " col(path) " "
//	col(protocol) "\" " col(status) " " R " \"-\" \"" col(ua) "\""
//
// and a row stores its template id and its residual bytes only. A data
// page of a chunk whose templates have residual pieces holds, after the
// values stored as they are (id 0), the uvarint length of each residual
// value of its present rows (row order, piece order within a row), then
// their bytes (docs/format/segment.md §14).

const (
	// pieceResidual is the footer's kind byte of a residual piece
	// (version 5).
	pieceResidual = 2
	// residualCol is tplPiece.col of a residual piece (a literal has -1,
	// a reference the column).
	residualCol = -2
)

// countResiduals sets t.nres and t.resid from the templates.
func (t *derivedTable) countResiduals() {
	t.nres = make([]uint8, len(t.tpls)+1)
	t.resid = false
	for i, tpl := range t.tpls {
		for _, p := range tpl {
			if p.col == residualCol {
				t.nres[i+1]++
				t.resid = true
			}
		}
	}
}

// derivedPage is a data page of an encDerived chunk split into its parts:
// value k of stored is stored[offs[k]:offs[k+1]], residual value k is
// resid[roffs[k]:roffs[k+1]].
type derivedPage struct {
	tids   []byte // template id per present row, 0: stored as it is
	offs   []uint32
	stored []byte
	roffs  []uint32 // nil when the templates have no residual pieces
	resid  []byte
	// section is the residual section as stored (lengths, then bytes):
	// all that parseDerivedPage finds of it without withResid.
	section []byte
}

// parseDerivedPage splits the values of a data page of an encDerived
// chunk of table t. buf is scratch for the offsets (returned, grown).
// Counts are checked against the page's bytes before anything is
// allocated for them: each value takes at least its length's byte.
// Without withResid the residual values are not split (dp.section only).
func parseDerivedPage(pv *pageView, t *derivedTable, buf []uint32, withResid bool) (derivedPage, []uint32, error) {
	var dp derivedPage
	if pv.present > len(pv.vals) {
		return dp, buf, errShort
	}
	tids, rest := pv.vals[:pv.present], pv.vals[pv.present:]
	nlit, nres := 0, 0
	if !withResid || !t.resid {
		nlit = bytes.Count(tids, []byte{0})
		if nlit > len(rest) {
			return dp, buf, errShort
		}
		buf = growUnset(buf, nlit+1)
		stored, rest, err := splitValues(rest, buf)
		dp.tids, dp.offs, dp.stored, dp.section = tids, buf, stored, rest
		return dp, buf, err
	}
	// One table lookup a row: the residual values of each id, and ids
	// past the templates noted (an error once counted).
	var nresOf [256]uint8
	copy(nresOf[:], t.nres)
	top := uint8(len(t.tpls))
	var maxID uint8
	for _, id := range tids {
		nres += int(nresOf[id])
		maxID = max(maxID, id)
	}
	if maxID > top {
		return dp, buf, fmt.Errorf("template %d of %d", maxID, top)
	}
	nlit = bytes.Count(tids, []byte{0})
	if nlit+nres > len(rest) {
		return dp, buf, errShort
	}
	buf = growUnset(buf, nlit+1+nres+1)
	stored, rest, err := splitValues(rest, buf[:nlit+1])
	if err != nil {
		return dp, buf, err
	}
	dp.tids, dp.offs, dp.stored, dp.section = tids, buf[:nlit+1], stored, rest
	resid, _, err := splitValues(rest, buf[nlit+1:])
	if err != nil {
		return dp, buf, err
	}
	dp.roffs, dp.resid = buf[nlit+1:], resid
	return dp, buf, nil
}

// growUnset returns s with n elements, its contents left as they are
// (the caller sets every one).
func growUnset(s []uint32, n int) []uint32 {
	if cap(s) < n {
		return make([]uint32, n)
	}
	return s[:n]
}

// splitValues reads len(offs)-1 uvarint lengths from b, then their
// bytes: it fills offs (offs[0] = 0) and returns the bytes and what
// follows them.
func splitValues(b []byte, offs []uint32) (vals, rest []byte, err error) {
	pos, total := 0, uint64(0)
	offs[0] = 0
	for k := 1; k < len(offs); k++ {
		l, m := binary.Uvarint(b[pos:])
		if m <= 0 || l > uint64(len(b)) {
			return nil, nil, errShort
		}
		pos += m
		total += l
		if total > uint64(len(b)) {
			return nil, nil, errShort
		}
		offs[k] = uint32(total)
	}
	b = b[pos:]
	if uint64(len(b)) < total {
		return nil, nil, errShort
	}
	return b[:total], b[total:], nil
}

// ---- Writing ----

// templateGap is the bytes between two references of a template (or
// before the first, after the last): a literal (pre), or a residual
// between a literal prefix and suffix that every row of the template
// shares.
type templateGap struct {
	pre, suf string
	resid    bool
}

// templateShape splits tpl into its gaps and its references (piece refs):
// len(gaps) == len(refs)+1. ok is false when a gap has two residuals
// (the writer never makes one).
func templateShape(tpl []tplPiece, gaps []templateGap, refs []int) ([]templateGap, []int, bool) {
	gaps, refs = append(gaps[:0], templateGap{}), refs[:0]
	for _, p := range tpl {
		g := &gaps[len(gaps)-1]
		switch {
		case p.col >= 0:
			refs = append(refs, p.ref)
			gaps = append(gaps, templateGap{})
		case p.col == residualCol:
			if g.resid {
				return gaps, refs, false
			}
			g.resid = true
		case g.resid:
			g.suf += p.lit
		default:
			g.pre += p.lit
		}
	}
	return gaps, refs, true
}

// generalize returns a template of the shape of gen (a template of the
// matching, its refs positions in the row's values) that also gives back
// the row tpl was derived from: each gap where they differ becomes a
// residual between the prefix and suffix they share. ok is false when
// their references differ or the result would have too many pieces.
func (ds *deriveState) generalize(gen, tpl []tplPiece) ([]tplPiece, bool) {
	var ok bool
	if ds.gapsA, ds.refsA, ok = templateShape(gen, ds.gapsA, ds.refsA); !ok {
		return nil, false
	}
	if ds.gapsB, ds.refsB, ok = templateShape(tpl, ds.gapsB, ds.refsB); !ok || len(ds.refsA) != len(ds.refsB) {
		return nil, false
	}
	for i := range ds.refsA {
		if ds.refsA[i] != ds.refsB[i] {
			return nil, false
		}
	}
	changed := false
	var out []tplPiece
	for i, a := range ds.gapsA {
		b := ds.gapsB[i] // a literal: tpl has no residual
		if b.resid {
			return nil, false
		}
		g := a
		if a.resid || a.pre != b.pre {
			g = templateGap{pre: commonPrefix(a.pre, b.pre), resid: true}
			rest := b.pre[len(g.pre):]
			if a.resid {
				g.suf = commonSuffix(a.suf, rest)
			} else {
				g.suf = commonSuffix(a.pre[len(g.pre):], rest)
			}
			changed = changed || !a.resid || g.pre != a.pre || g.suf != a.suf
		}
		if g.pre != "" {
			out = append(out, tplPiece{lit: g.pre, col: -1})
		}
		if g.resid {
			out = append(out, tplPiece{col: residualCol})
		}
		if g.suf != "" {
			out = append(out, tplPiece{lit: g.suf, col: -1})
		}
		if i < len(ds.refsA) {
			out = append(out, tplPiece{col: ds.refsA[i], ref: ds.refsA[i]})
		}
	}
	if !changed || len(out) > maxTemplatePieces {
		return nil, false
	}
	return out, true
}

// commonPrefix is the longest prefix of a and b.
func commonPrefix(a, b string) string {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return a[:i]
		}
	}
	return a[:n]
}

// commonSuffix is the longest suffix of a and b.
func commonSuffix(a, b string) string {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[len(a)-1-i] != b[len(b)-1-i] {
			return a[len(a)-i:]
		}
	}
	return a[len(a)-n:]
}

// relaxInto looks for a residual template of tpls that s fits once its
// residual gaps lose their literal prefix and suffix (each residual then
// runs up to the next reference's value), and generalizes it in place
// with s's bytes in those gaps: the template a derivation of s would give,
// without one (derivations are few per chunk, and the rows of its own a
// block has, such as error lines, use them up). Of the templates that
// fit so, the one with the most references is taken (a residual can
// swallow a reference's value; the template that has it is the better
// one), and it must keep at least half of its literal bytes. It returns
// the template (1-based) s now fits, or 0.
func (ds *deriveState) relaxInto(tpls [][]tplPiece, isRes []bool, s string) int {
	best, bestRefs := -1, -1
	var bestTpl []tplPiece
	for t, tpl := range tpls {
		refs := 0
		for _, p := range tpl {
			if p.col >= 0 {
				refs++
			}
		}
		if !isRes[t] || refs <= bestRefs {
			continue
		}
		// The relaxed template: residual gaps without their literals.
		ds.relaxed = ds.relaxed[:0]
		litBytes := 0
		inGap := false // within a residual gap
		for j, p := range tpl {
			switch {
			case p.col == residualCol:
				// Drop the gap's prefix: the literals just before.
				for len(ds.relaxed) > 0 && ds.relaxed[len(ds.relaxed)-1].col == -1 {
					ds.relaxed = ds.relaxed[:len(ds.relaxed)-1]
				}
				ds.relaxed = append(ds.relaxed, p)
				inGap = true
			case p.col >= 0:
				ds.relaxed = append(ds.relaxed, p)
				inGap = false
			default:
				litBytes += len(p.lit)
				if !inGap && !(j+1 < len(tpl) && tpl[j+1].col == residualCol) {
					ds.relaxed = append(ds.relaxed, p)
				}
			}
		}
		var ok bool
		if ds.spans, ok = matchTemplate(ds.relaxed, s, ds.vals, ds.has, ds.spans[:0]); !ok {
			continue
		}
		// s as a template of literal gaps: the relaxed one with each
		// residual replaced by the bytes it took.
		lits := make([]tplPiece, 0, len(ds.relaxed))
		k := 0
		for _, p := range ds.relaxed {
			if p.col == residualCol {
				if b := s[ds.spans[k]:ds.spans[k+1]]; b != "" {
					lits = append(lits, tplPiece{lit: b, col: -1})
				}
				k += 2
				continue
			}
			lits = append(lits, p)
		}
		g, ok := ds.generalize(tpl, lits)
		if !ok {
			continue
		}
		gl := 0
		for _, p := range g {
			gl += len(p.lit)
		}
		if 2*gl < litBytes {
			continue
		}
		if _, fits := matchTemplate(g, s, ds.vals, ds.has, ds.spans[:0]); !fits {
			continue
		}
		best, bestRefs, bestTpl = t, refs, g
	}
	if best < 0 {
		return 0
	}
	for j := range bestTpl {
		bestTpl[j].lit = strings.Clone(bestTpl[j].lit) // s may alias the caller's memory
	}
	tpls[best] = bestTpl // rows assigned to it are matched again (assignResiduals)
	return best + 1
}

// hasResidual reports whether tpl has a residual piece.
func hasResidual(tpl []tplPiece) bool {
	for _, p := range tpl {
		if p.col == residualCol {
			return true
		}
	}
	return false
}

// assignResiduals gives the rows of a plan whose table has residual
// pieces their residual values: each present row of a residual template
// is matched again (a template generalized after the row was assigned
// may place its residual elsewhere, or not fit it any more), and a row
// without a template (none fitted when it was met, or its own was
// dropped) is tried against the table's templates. Every row assigned is
// one whose assembly gives back its bytes. It sets dp.res, dp.resAt and
// dp.fit. local is the table's templates as matchAll matches them (refs
// are positions in ds.vals).
func (ds *deriveState) assignResiduals(dp *derivedPlan, d *ColumnData, rows int, types []ColType, local [][]tplPiece) {
	t := dp.table
	dp.resAt = make([]int32, rows+1)
	dp.res = dp.res[:0]
	dp.fit = 0
	for r := 0; r < rows; r++ {
		dp.resAt[r] = int32(len(dp.res) / 2)
		if !d.present(r) {
			continue
		}
		tid := int(dp.tids[r])
		if tid > 0 && t.nres[tid] == 0 {
			dp.fit++
			continue
		}
		s := d.str(r)
		ds.rowValues(r, types)
		found := 0
		mark := len(dp.res)
		var ok bool
		if tid > 0 {
			if dp.res, ok = matchTemplate(local[tid-1], s, ds.vals, ds.has, dp.res); ok {
				found = tid
			}
		}
		for k := 0; found == 0 && k < len(local); k++ {
			dp.res = dp.res[:mark]
			if k+1 != tid {
				if dp.res, ok = matchTemplate(local[k], s, ds.vals, ds.has, dp.res); ok {
					found = k + 1
				}
			}
		}
		if found == 0 {
			dp.res = dp.res[:mark]
		} else {
			dp.fit++
		}
		dp.tids[r] = uint8(found)
	}
	dp.resAt[rows] = int32(len(dp.res) / 2)
}

// appendResidualValues writes the residual section of rows [from, to)
// of a plan whose table has residual pieces: the uvarint lengths of the
// rows' residual values, then their bytes.
func appendResidualValues(dst []byte, dp *derivedPlan, d *ColumnData, from, to int) []byte {
	spans := dp.res[2*dp.resAt[from] : 2*dp.resAt[to]]
	for k := 0; k < len(spans); k += 2 {
		dst = binary.AppendUvarint(dst, uint64(spans[k+1]-spans[k]))
	}
	for i := from; i < to; i++ {
		if dp.resAt[i] == dp.resAt[i+1] {
			continue
		}
		s := d.str(i)
		sp := dp.res[2*dp.resAt[i] : 2*dp.resAt[i+1]]
		for k := 0; k < len(sp); k += 2 {
			dst = append(dst, s[sp[k]:sp[k+1]]...)
		}
	}
	return dst
}

// residualRowCost is the encoded bytes of row i's residual values.
func residualRowCost(dp *derivedPlan, i int) int {
	n := 0
	sp := dp.res[2*dp.resAt[i] : 2*dp.resAt[i+1]]
	for k := 0; k < len(sp); k += 2 {
		n += 1 + int(sp[k+1]-sp[k])
	}
	return n
}

// residualEnd returns where the residual piece at tpl[j] ends in s when
// it starts at pos: before the first occurrence of the next piece's
// bytes (the next literal, or the row's value of the next reference), or
// at the end of s when it is the last piece. ok is false when the next
// piece's bytes do not occur.
func residualEnd(tpl []tplPiece, j int, s string, pos int, vals []string, has []bool) (int, bool) {
	if j+1 == len(tpl) {
		return len(s), true
	}
	next := &tpl[j+1]
	v := next.lit
	switch {
	case next.col >= 0:
		if !has[next.ref] {
			return 0, false
		}
		v = vals[next.ref]
	case next.col == residualCol:
		return pos, true // two residuals in a row: the first one is empty
	}
	k := strings.Index(s[pos:], v)
	if k < 0 {
		return 0, false
	}
	return pos + k, true
}
