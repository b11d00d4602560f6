package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/sediment/sediment/internal/vec"
)

// Derived text (encDerived, format version 3): a text column whose values
// are assembled from other columns of the same rows — a log line rendered
// from fields the event also carries, "GET | 200 | 1.2.3.4 | <ray> | <url>
// | <ua>" — is stored as one template id per value. A template, kept in the
// footer with its chunk, is a list of pieces: literal bytes, or the value
// of another column of the same row (a string column's value, an int64
// column's value in canonical decimal). Values no template gives back byte
// for byte have id 0 and are stored as they are.
//
// A read of the column reads the columns its templates refer to, for the
// same rows, and assembles the values; a referenced column never is
// derived itself in the same block (the writer keeps to that and the
// footer decoder checks it), so a read goes one level deep at most.

// Kinds of a template piece in the footer (pieceResidual, version 5, in
// residual.go).
const (
	pieceLiteral = 0
	pieceColumn  = 1
)

// tplPiece is one piece of a template: literal bytes, the value of a
// referenced column, or a residual (bytes stored with the row).
type tplPiece struct {
	lit string
	col int // the referenced column (directory index), -1 for a literal, residualCol
	ref int // position of col in derivedTable.cols
}

// derivedTable is the templates of an encDerived chunk and the columns
// they refer to.
type derivedTable struct {
	tpls  [][]tplPiece
	cols  []int     // distinct referenced columns, in order of first use
	types []ColType // their types (TypeString or TypeInt64)
	// nres[id] is the residual pieces of template id (nres[0] = 0), and
	// resid whether any template has one (countResiduals).
	nres  []uint8
	resid bool
}

// appendFooter writes the table in the footer (format.go: after the
// chunk's history): ntemplates, then per template npieces, then per
// piece a kind byte and a literal (uvarint length + bytes), a column
// index (uvarint), or nothing more (a residual).
func (t *derivedTable) appendFooter(e *encbuf) {
	e.uvarint(uint64(len(t.tpls)))
	for _, tpl := range t.tpls {
		e.uvarint(uint64(len(tpl)))
		for _, p := range tpl {
			switch {
			case p.col == residualCol:
				e.byte1(pieceResidual)
			case p.col < 0:
				e.byte1(pieceLiteral)
				e.str(p.lit)
			default:
				e.byte1(pieceColumn)
				e.uvarint(uint64(p.col))
			}
		}
	}
}

// decodeDerivedTable reads a chunk's table from the footer of a file of
// the given version. own is the chunk's column; references must name
// other string or int64 columns; residual pieces need version 5.
func decodeDerivedTable(d *decbuf, own int, cols []ColumnDesc, version uint8) (*derivedTable, error) {
	n := d.count("templates", maxTemplates, 3)
	if d.err != nil {
		return nil, nil
	}
	if n == 0 {
		return nil, errors.New("derived column without templates")
	}
	t := &derivedTable{tpls: make([][]tplPiece, n)}
	for i := range t.tpls {
		np := d.count("template pieces", maxTemplatePieces, 2)
		if d.err != nil {
			return nil, nil
		}
		if np == 0 {
			return nil, fmt.Errorf("template %d has no pieces", i+1)
		}
		tpl := make([]tplPiece, np)
		for j := range tpl {
			switch kind := d.byte1(); kind {
			case pieceLiteral:
				tpl[j] = tplPiece{lit: d.str(maxTemplateLiteral), col: -1}
			case pieceColumn:
				col := d.uvarint()
				if d.err != nil {
					return nil, nil
				}
				if col >= uint64(len(cols)) || int(col) == own {
					return nil, fmt.Errorf("template %d refers to column %d", i+1, col)
				}
				ct := cols[col].Type
				if ct != TypeString && ct != TypeInt64 {
					return nil, fmt.Errorf("template %d refers to a %s column", i+1, ct)
				}
				ref := t.refOf(int(col), ct)
				if ref >= maxTemplateRefs {
					return nil, fmt.Errorf("templates refer to more than %d columns", maxTemplateRefs)
				}
				tpl[j] = tplPiece{col: int(col), ref: ref}
			case pieceResidual:
				if version < FormatV5 {
					return nil, fmt.Errorf("template %d: residual piece in format version %d", i+1, version)
				}
				tpl[j] = tplPiece{col: residualCol}
			default:
				if d.err != nil {
					return nil, nil
				}
				return nil, fmt.Errorf("template %d: piece kind %d", i+1, kind)
			}
		}
		t.tpls[i] = tpl
	}
	t.countResiduals()
	return t, nil
}

// refOf returns the position of column col among the table's references,
// adding it.
func (t *derivedTable) refOf(col int, ct ColType) int {
	for k, c := range t.cols {
		if c == col {
			return k
		}
	}
	t.cols = append(t.cols, col)
	t.types = append(t.types, ct)
	return len(t.cols) - 1
}

// remap returns the table with its column references mapped through
// colMap (a block copied into another directory).
func (t *derivedTable) remap(colMap []int) (*derivedTable, error) {
	out := &derivedTable{tpls: make([][]tplPiece, len(t.tpls))}
	for i, tpl := range t.tpls {
		nt := make([]tplPiece, len(tpl))
		for j, p := range tpl {
			nt[j] = p
			if p.col >= 0 {
				if p.col >= len(colMap) || colMap[p.col] < 0 {
					return nil, fmt.Errorf("segment: column %d a derived column refers to has no place", p.col)
				}
				nt[j].col = colMap[p.col]
				nt[j].ref = out.refOf(nt[j].col, t.types[p.ref])
			}
		}
		out.tpls[i] = nt
	}
	out.countResiduals()
	return out, nil
}

// checkDerivedRefs checks that no derived chunk of a block refers to a
// column that is derived in the same block (a read goes one level deep).
func checkDerivedRefs(b *blockMeta) error {
	for ci := range b.chunks {
		c := &b.chunks[ci]
		if c.derived == nil {
			continue
		}
		for _, col := range c.derived.cols {
			if k := b.byCol[col]; k >= 0 && b.chunks[k].enc == encDerived {
				return fmt.Errorf("derived column %d refers to derived column %d", c.col, col)
			}
		}
	}
	return nil
}

// ---- Writing ----

// ColumnFetcher gives a writer the values of column ci for the rows of the
// block being written: the same values WriteColumn is (or was) given for
// that column. It fills d (the writer's, reused between calls) and says
// whether any row has a value; false leaves d unused. The writer calls it
// while it writes another column, to store that one against ci's values
// (encDerived).
type ColumnFetcher func(ci int, d *ColumnData) (present bool, err error)

// Choices of the writer (not part of the format).
const (
	// minDerivedAvgLen is the mean value length a text chunk needs before
	// the writer looks for templates: short values gain little.
	minDerivedAvgLen = 6
	// minRefLen is the shortest value a template takes from another
	// column while deriving one: shorter ones match by chance.
	minRefLen = 3
	// minRefBytes is the fewest bytes a template must take from other
	// columns (in the row it is derived from) to be kept, unless it is a
	// whole copy of one column's value.
	minRefBytes = 8
	// maxDeriveLen is the longest value a template is derived from (the
	// search is linear in its length times the references).
	maxDeriveLen = 4096
	// sampleRowsForRefs is how many rows of a block find the referenced
	// columns.
	sampleRowsForRefs = 32
	// maxDerivations bounds the templates derived per chunk (each costs a
	// search of its value).
	maxDerivations = 128
	// minDerivedFitDiv: at least 1/minDerivedFitDiv of the present values
	// must fit a template. A read of a derived chunk reads the columns it
	// refers to as well, which only rows that fit pay back (a log line
	// with its own timestamp text fits a template only within a second).
	minDerivedFitDiv = 2
	// clearWinDiv, clearWinFitSlack and trialEvery: a column whose
	// templates stored in at most 1/clearWinDiv of the bytes of its text
	// in the last trial skips the trial in the next blocks while the
	// share of its rows that fit a template stays within clearWinFitSlack
	// of what it was then, and is tried again every trialEvery blocks
	// (trialText keeps to trialEvery too).
	clearWinDiv      = 2
	clearWinFitSlack = 0.02
	trialEvery       = 8
	// deriveRetryBlocks is how many blocks a column that gained nothing
	// from templates waits (doubling each time) before it is tried again.
	deriveRetryBlocks = 8
)

// deriveState is what a writer keeps for encDerived from block to block.
type deriveState struct {
	memo       map[int]*deriveMemo // by candidate column
	byPath     map[colKey]int      // the writer's columns (colIndex)
	refd       []bool              // columns of the block some derived chunk refers to
	derived    []bool              // columns of the block that are derived
	refs       []ColumnData        // fetched values of the referenced columns
	refPresent []bool
	probe      ColumnData
	nums       [][24]byte // decimal text of int references, per reference
	vals       []string   // the references' values in the current row
	has        []bool     // whether each reference has a value in the row
	spans      []uint32   // scratch for matchTemplate's residual spans when they are not kept
	relaxed    []tplPiece // relaxInto's template
	// generalize's scratch
	gapsA, gapsB []templateGap
	refsA, refsB []int
	block        int // blocks begun

	// The block's sample (sampleBlock): rows, and the string and int64
	// columns with a value there (as text, "" for none).
	sampledBlock int
	sample       []int
	sampleCols   []int
	sampleVals   [][]string
}

// deriveMemo remembers, per column, what the last attempt found.
type deriveMemo struct {
	cols   []int // referenced columns found (nil: look again)
	hinted bool  // cols came from DeriveHints, not tried in this writer yet
	// clearWin: the last trial found the templates' bytes at most
	// 1/clearWinDiv of the text's, with winFit of the present rows fitting
	// a template; trialSkips counts the blocks since that trial.
	clearWin   bool
	winFit     float64
	trialSkips int
	skipUntil  int // no attempt before this block
	wait       int // blocks to wait after the next attempt that gains nothing
}

// beginBlock resets the per-block marks.
func (ds *deriveState) beginBlock(ncols int) {
	ds.block++
	ds.refd = grow(ds.refd, ncols)
	ds.derived = grow(ds.derived, ncols)
}

// derivedPlan is what an encDerived chunk plan carries.
type derivedPlan struct {
	table *derivedTable
	tids  []uint8 // per row (dense): the template, 0 = stored as it is
	fit   int     // present rows with a template
	// With residual pieces (assignResiduals): row i's residual values are
	// the spans res[2k:2k+2] (start, end in its value) for k in
	// [resAt[i], resAt[i+1]).
	res   []uint32
	resAt []int32
}

// tryDerive turns the plan of a text chunk (p.enc encBytes, encHex or
// encIP) into encDerived when its values come from other columns of the block and
// that makes the chunk smaller.
func (w *Writer) tryDerive(ci int, p *chunkPlan, d *ColumnData, rows int) error {
	ds := &w.derive
	if w.version < FormatV3 || w.opts.NoDerivedText || w.fetch == nil || ds.refd[ci] || p.present == 0 {
		return nil
	}
	total := 0
	for i := 0; i < rows; i++ {
		if d.present(i) {
			total += len(d.str(i))
		}
	}
	if total < minDerivedAvgLen*p.present {
		return nil
	}
	if ds.memo == nil {
		ds.memo = map[int]*deriveMemo{}
	}
	m := ds.memo[ci]
	if m == nil {
		m = w.opts.DeriveHints.seed(ci, w.cols, w.colIndex())
		if m == nil {
			m = &deriveMemo{wait: deriveRetryBlocks}
		}
		ds.memo[ci] = m
	}
	if ds.block < m.skipUntil {
		return nil
	}
	gained := false
	defer func() {
		if !gained {
			m.skipUntil = ds.block + m.wait
			m.wait = min(2*m.wait, 1024)
			m.cols, m.clearWin = nil, false
		} else {
			m.wait = deriveRetryBlocks
		}
		m.hinted = false
	}()
	for {
		found := m.cols == nil
		if found {
			cols, err := w.findRefs(ci, d, rows)
			if err != nil || cols == nil {
				return err
			}
			m.cols = cols
		}
		var err error
		if gained, err = w.deriveFrom(ci, p, d, rows, m.cols); err != nil || gained {
			return err
		}
		// Columns a hint named that no longer serve: search this block's
		// own rows rather than wait (a stale hint costs a search).
		if found || !m.hinted {
			return nil
		}
		m.cols, m.hinted = nil, false
	}
}

// deriveFrom turns the plan of a text chunk into encDerived over the
// columns refCols when that makes the chunk smaller, and reports whether
// it did.
func (w *Writer) deriveFrom(ci int, p *chunkPlan, d *ColumnData, rows int, refCols []int) (bool, error) {
	ds := &w.derive
	// Fetch the referenced columns; one derived itself meanwhile (it was
	// written before) cannot be referred to.
	cols := make([]int, 0, len(refCols))
	for _, c := range refCols {
		if !ds.derived[c] {
			cols = append(cols, c)
		}
	}
	if len(cols) == 0 {
		return false, nil
	}
	ds.refs = growCols(ds.refs, len(cols))
	ds.refPresent = grow(ds.refPresent, len(cols))
	for k, c := range cols {
		ok, err := w.fetch(c, &ds.refs[k])
		if err != nil {
			return false, err
		}
		ds.refPresent[k] = ok
	}
	dp := ds.matchAll(d, rows, cols, w.cols, w.version >= FormatV5)
	if dp == nil || dp.fit*minDerivedFitDiv < p.present {
		return false, nil
	}
	// Keep it only when rows of the middle of the block (past the rows
	// most templates were derived from) store smaller so. A column whose
	// templates won clearly in the last block and fit as many rows now
	// skips the trial (two compressions of trialRows rows), but for one
	// block in trialEvery.
	m := ds.memo[ci]
	fit := float64(dp.fit) / float64(p.present)
	if m.clearWin && fit >= m.winFit-clearWinFitSlack && m.trialSkips < trialEvery-1 {
		m.trialSkips++
		p.enc, p.width, p.derived = encDerived, 0, dp
	} else {
		enc, width := p.enc, p.width
		n := min(rows, trialRows)
		from := (rows - n) / 2
		plain := w.storedSize(p, d, from, from+n)
		p.enc, p.width, p.derived = encDerived, 0, dp
		derived := w.storedSize(p, d, from, from+n)
		if derived >= plain {
			p.enc, p.width, p.derived = enc, width, nil
			m.clearWin = false
			return false, nil
		}
		m.clearWin, m.winFit, m.trialSkips = derived*clearWinDiv <= plain, fit, 0
	}
	ds.derived[ci] = true
	for _, c := range dp.table.cols {
		ds.refd[c] = true
	}
	return true, nil
}

// colIndex returns the writer's columns by path and type (built once).
func (w *Writer) colIndex() map[colKey]int {
	if w.derive.byPath == nil {
		w.derive.byPath = make(map[colKey]int, len(w.cols))
		for i, c := range w.cols {
			w.derive.byPath[colKey{c.Path, c.Type}] = i
		}
	}
	return w.derive.byPath
}

// growCols returns s with n elements, keeping their buffers.
func growCols(s []ColumnData, n int) []ColumnData {
	if cap(s) < n {
		s = append(s[:cap(s)], make([]ColumnData, n-cap(s))...)
	}
	return s[:n]
}

// storedSize is what a unit of rows [from, to) of the chunk takes as p
// plans it: compressed, or raw when that is not smaller (writeUnit's
// rule).
func (w *Writer) storedSize(p *chunkPlan, d *ColumnData, from, to int) int {
	w.scratch = p.appendPage(w.scratch[:0], TypeString, d, from, to)
	w.comp = w.enc.EncodeAll(w.scratch, w.comp[:0])
	if len(w.comp) < len(w.scratch)-len(w.scratch)/32 {
		return len(w.comp)
	}
	return len(w.scratch)
}

// findRefs looks for the columns whose values the values of column ci
// are made of, on the block's sampled rows (sampleBlock). It returns the
// columns the sample's templates use, most used first, or nil.
func (w *Writer) findRefs(ci int, d *ColumnData, rows int) ([]int, error) {
	ds := &w.derive
	if err := w.sampleBlock(rows); err != nil {
		return nil, err
	}
	var cands []int     // positions in ds.sampleCols
	var vals [][]string // their sampled values
	for k, c := range ds.sampleCols {
		if c != ci && !ds.derived[c] {
			cands = append(cands, k)
			vals = append(vals, ds.sampleVals[k])
		}
	}
	if len(cands) == 0 {
		return nil, nil
	}
	row := make([]string, len(cands))
	// A candidate that is itself assembled from others (a URL from its
	// host, path and query) is referred to whole: deriveTemplate takes
	// the longest value, so the URL rather than its pieces, and the URL
	// then stays stored as text (a derived chunk never refers to a derived
	// one). Taking the pieces instead, so that the URL could be derived
	// too, saved 8.8 B/event on the peers benchmark (1M events) but made
	// every read of the URL an assembly from three columns: Q3, an
	// anchored regex on the URL, took 7.0 ms of CPU instead of 5.2
	// (docs/format/segment.md §12).
	uses := make([]int, len(cands))
	for j, r := range ds.sample {
		if !d.present(r) {
			continue
		}
		for k := range cands {
			row[k] = vals[k][j]
		}
		for _, p := range deriveTemplate(d.str(r), row) {
			if p.col >= 0 {
				uses[p.col]++
			}
		}
	}
	var out []int
	for len(out) < maxTemplateRefs {
		best := -1
		for k, u := range uses {
			if u > 0 && (best < 0 || u > uses[best]) {
				best = k
			}
		}
		if best < 0 {
			break
		}
		out = append(out, ds.sampleCols[cands[best]])
		uses[best] = 0
	}
	return out, nil
}

// sampleBlock fetches, once per block, the values of every string and
// int64 column in sampleRowsForRefs rows spread over the block: what
// findRefs searches, for every column it looks at in the block.
func (w *Writer) sampleBlock(rows int) error {
	ds := &w.derive
	if ds.sampledBlock == ds.block {
		return nil
	}
	ds.sampledBlock = ds.block
	n := min(rows, sampleRowsForRefs)
	ds.sample = ds.sample[:0]
	for j := 0; j < n; j++ {
		ds.sample = append(ds.sample, (2*j+1)*rows/(2*n))
	}
	ds.sampleCols, ds.sampleVals = ds.sampleCols[:0], ds.sampleVals[:0]
	defer func() { ds.probe = ColumnData{} }() // hold nothing of the caller's past this call
	for c, desc := range w.cols {
		if desc.Type != TypeString && desc.Type != TypeInt64 {
			continue
		}
		ok, err := w.fetch(c, &ds.probe)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		vs := make([]string, n)
		useful := false
		for j, r := range ds.sample {
			if !ds.probe.present(r) {
				continue
			}
			var s string
			if desc.Type == TypeInt64 {
				s = strconv.FormatInt(ds.probe.Ints[r], 10)
			} else {
				s = ds.probe.str(r)
				if len(s) > maxDeriveLen {
					continue
				}
				s = strings.Clone(s)
			}
			if len(s) >= minRefLen {
				vs[j] = s
				useful = true
			}
		}
		if useful {
			ds.sampleCols = append(ds.sampleCols, c)
			ds.sampleVals = append(ds.sampleVals, vs)
		}
	}
	return nil
}

// deriveTemplate returns a template that gives s back from vals (the
// candidate references' values in s's row; "" for none), its pieces'
// col being indexes into vals, or nil. At each position it takes the
// longest value that s continues with, else a literal byte.
func deriveTemplate(s string, vals []string) []tplPiece {
	if len(s) > maxDeriveLen {
		return nil
	}
	var tpl []tplPiece
	lit, refBytes := 0, 0 // start of the pending literal
	for i := 0; i < len(s); {
		best := -1
		for k, v := range vals {
			if len(v) >= minRefLen && s[i] == v[0] && (best < 0 || len(v) > len(vals[best])) && strings.HasPrefix(s[i:], v) {
				best = k
			}
		}
		if best < 0 {
			i++
			continue
		}
		if lit < i {
			if i-lit > maxTemplateLiteral {
				return nil
			}
			tpl = append(tpl, tplPiece{lit: s[lit:i], col: -1})
		}
		tpl = append(tpl, tplPiece{col: best})
		refBytes += len(vals[best])
		i += len(vals[best])
		lit = i
		if len(tpl) >= maxTemplatePieces-1 {
			break
		}
	}
	if lit < len(s) {
		if len(s)-lit > maxTemplateLiteral {
			return nil
		}
		tpl = append(tpl, tplPiece{lit: s[lit:], col: -1})
	}
	// A template takes enough from other columns not to be a chance
	// match, or is a whole copy of one (an address in two headers).
	copied := len(tpl) == 1 && tpl[0].col >= 0
	if refBytes < minRefBytes && !copied || len(tpl) > maxTemplatePieces {
		return nil
	}
	for j := range tpl {
		tpl[j].lit = strings.Clone(tpl[j].lit) // s may alias the caller's memory
	}
	return tpl
}

// matchTemplate reports whether tpl gives s back with the row's values
// (vals[k], has[k]: reference k's value, and whether it has one), and
// appends to spans the start and end in s of each residual piece.
func matchTemplate(tpl []tplPiece, s string, vals []string, has []bool, spans []uint32) ([]uint32, bool) {
	pos := 0
	for j := range tpl {
		p := &tpl[j]
		v := p.lit
		switch {
		case p.col == residualCol:
			end, ok := residualEnd(tpl, j, s, pos, vals, has)
			if !ok {
				return spans, false
			}
			spans = append(spans, uint32(pos), uint32(end))
			pos = end
			continue
		case p.col >= 0:
			if !has[p.ref] {
				return spans, false
			}
			v = vals[p.ref]
		}
		if !strings.HasPrefix(s[pos:], v) {
			return spans, false
		}
		pos += len(v)
	}
	return spans, pos == len(s)
}

// rowValues sets ds.vals and ds.has to the references' values in row r.
func (ds *deriveState) rowValues(r int, types []ColType) {
	for k := range ds.vals {
		d := &ds.refs[k]
		ds.has[k] = ds.refPresent[k] && d.present(r)
		if !ds.has[k] {
			ds.vals[k] = ""
			continue
		}
		if types[k] == TypeInt64 {
			ds.vals[k] = unsafeString(strconv.AppendInt(ds.nums[k][:0], d.Ints[r], 10))
		} else {
			ds.vals[k] = d.str(r)
		}
	}
}

// matchAll gives every present row of d a template (deriving templates
// from rows that fit none, within maxDerivations), drops templates that
// serve a single row, and returns the plan, or nil when no row fits. With
// residuals (format version 5), a row that fits no template but has the
// shape of one (the same references in the same order) generalizes it:
// the gaps where they differ become residual pieces.
func (ds *deriveState) matchAll(d *ColumnData, rows int, cols []int, descs []ColumnDesc, residuals bool) *derivedPlan {
	types := make([]ColType, len(cols))
	for k, c := range cols {
		types[k] = descs[c].Type
	}
	ds.vals = grow(ds.vals, len(cols))
	ds.has = grow(ds.has, len(cols))
	if cap(ds.nums) < len(cols) {
		ds.nums = make([][24]byte, len(cols))
	}
	ds.nums = ds.nums[:len(cols)]
	var tpls [][]tplPiece
	var uses []int
	var isRes []bool // per template: has residual pieces
	anyRes := false
	tids := make([]uint8, rows)
	last, derivations := 0, 0
	// try reports whether template t (1-based) fits s.
	try := func(t int, s string) bool {
		var ok bool
		ds.spans, ok = matchTemplate(tpls[t-1], s, ds.vals, ds.has, ds.spans[:0])
		return ok
	}
	for r := 0; r < rows; r++ {
		if !d.present(r) {
			continue
		}
		s := d.str(r)
		ds.rowValues(r, types)
		found := 0
		// Templates without residuals first: a residual template fits
		// the rows of the one it generalized as well, at a cost per row.
		for pass := 0; pass < 2 && found == 0 && (pass == 0 || anyRes); pass++ {
			res := pass == 1
			if last > 0 && isRes[last-1] == res && try(last, s) {
				found = last
				break
			}
			for t := range tpls {
				if t+1 != last && isRes[t] == res && try(t+1, s) {
					found = t + 1
					break
				}
			}
		}
		if found == 0 && anyRes && derivations >= maxDerivations {
			// Derivations used up (by rows of their own, such as error
			// lines): a row of a residual template's shape whose residual
			// bytes run past the template's prefix or suffix (the hour of
			// a date changed) generalizes it without one.
			found = ds.relaxInto(tpls, isRes, s)
		}
		if found == 0 && derivations < maxDerivations && len(tpls) < maxTemplates {
			derivations++
			if tpl := deriveTemplate(s, ds.vals); tpl != nil { // vals are "" where has is false
				for j := range tpl {
					if tpl[j].col >= 0 {
						tpl[j].ref = tpl[j].col
					}
				}
				if residuals {
					found = ds.generalizeInto(&tpls, &uses, &isRes, tpl, s)
					anyRes = anyRes || found > 0
				}
				if found == 0 && len(tpls) < maxTemplates {
					tpls = append(tpls, tpl)
					uses = append(uses, 0)
					isRes = append(isRes, false)
					found = len(tpls)
				}
			}
		}
		if found > 0 {
			uses[found-1]++
			last = found
		}
		tids[r] = uint8(found)
	}
	// Templates serving one row cost more footer than they save.
	remap := make([]uint8, len(tpls)+1)
	table := &derivedTable{}
	var kept [][]tplPiece
	for t, tpl := range tpls {
		if uses[t] < 2 {
			continue
		}
		nt := make([]tplPiece, len(tpl))
		for j, p := range tpl {
			nt[j] = p
			if p.col >= 0 {
				nt[j].col = cols[p.ref]
				nt[j].ref = table.refOf(nt[j].col, types[p.ref])
			}
		}
		table.tpls = append(table.tpls, nt)
		kept = append(kept, tpl)
		remap[t+1] = uint8(len(table.tpls))
	}
	if len(table.tpls) == 0 {
		return nil
	}
	table.countResiduals()
	fit := 0
	for r, t := range tids {
		tids[r] = remap[t]
		if tids[r] != 0 {
			fit++
		}
	}
	dp := &derivedPlan{table: table, tids: tids, fit: fit}
	if table.resid {
		ds.assignResiduals(dp, d, rows, types, kept)
		if dp.fit == 0 {
			return nil
		}
	}
	return dp
}

// generalizeInto fits s (whose derived template is tpl) to a template of
// tpls of its shape: a residual template of that shape is generalized in
// place, else a plain one is generalized into a new template (the plain
// one keeps its rows). It returns the template (1-based) s now fits, or
// 0.
func (ds *deriveState) generalizeInto(tpls *[][]tplPiece, uses *[]int, isRes *[]bool, tpl []tplPiece, s string) int {
	for pass := 0; pass < 2; pass++ {
		res := pass == 0
		for t, cand := range *tpls {
			if (*isRes)[t] != res {
				continue
			}
			g, ok := ds.generalize(cand, tpl)
			if !ok {
				continue
			}
			if _, fits := matchTemplate(g, s, ds.vals, ds.has, ds.spans[:0]); !fits {
				continue
			}
			if res {
				(*tpls)[t] = g // rows assigned to it are matched again (assignResiduals)
				return t + 1
			}
			if len(*tpls) >= maxTemplates {
				return 0
			}
			*tpls = append(*tpls, g)
			*uses = append(*uses, 0)
			*isRes = append(*isRes, true)
			return len(*tpls)
		}
	}
	return 0
}

// appendDerivedValues writes the values of rows [from, to) of an
// encDerived chunk: the template id of each present row, then the
// lengths and bytes of those stored as they are (id 0).
func appendDerivedValues(dst []byte, dp *derivedPlan, d *ColumnData, from, to int) []byte {
	for i := from; i < to; i++ {
		if d.present(i) {
			dst = append(dst, dp.tids[i])
		}
	}
	for i := from; i < to; i++ {
		if d.present(i) && dp.tids[i] == 0 {
			dst = binary.AppendUvarint(dst, uint64(len(d.str(i))))
		}
	}
	for i := from; i < to; i++ {
		if d.present(i) && dp.tids[i] == 0 {
			dst = append(dst, d.str(i)...)
		}
	}
	if dp.table.resid {
		dst = appendResidualValues(dst, dp, d, from, to)
	}
	return dst
}

// derivedRowCost is the encoded bytes of present row i.
func derivedRowCost(dp *derivedPlan, d *ColumnData, i int) int {
	if dp.tids[i] != 0 {
		if dp.table.resid {
			return 1 + residualRowCost(dp, i)
		}
		return 1
	}
	return len(d.str(i)) + 2
}

// ---- Reading ----

// derivedScratch holds the referenced columns' vectors of one read.
type derivedScratch struct {
	vecs []vec.Vector
	ends []uint32
}

var derivedScratchPool = sync.Pool{New: func() any { return new(derivedScratch) }}

// readDerivedRefs reads, for a read of rows [from, to) (rows nil) or of
// rows of block b, the columns chunk c's templates refer to, into
// out.refs. release gives the vectors back once the read is done.
func (r *Reader) readDerivedRefs(b int, c *chunkMeta, from, to int, rows []int32, ctl readCtl, out *pageOut) (release func(), err error) {
	sc := derivedScratchPool.Get().(*derivedScratch)
	release = func() {
		for i := range sc.vecs {
			v := &sc.vecs[i]
			v.Dict, v.Strs, v.Nulls = nil, nil, nil // pin nothing while pooled
		}
		out.refs, out.derivedEnds = nil, nil
		derivedScratchPool.Put(sc)
	}
	t := c.derived
	if cap(sc.vecs) < len(t.cols) {
		sc.vecs = make([]vec.Vector, len(t.cols))
	}
	sc.vecs = sc.vecs[:len(t.cols)]
	ctl.reuse = true // the references are the read's own scratch
	for k, col := range t.cols {
		if rows != nil {
			err = r.readRowsInto(b, col, rows, &sc.vecs[k], ctl)
		} else {
			err = r.readColumnInto(b, col, from, to, &sc.vecs[k], ctl)
		}
		if err != nil {
			release()
			return func() {}, err
		}
	}
	out.refs = sc.vecs
	out.derivedEnds = &sc.ends
	return release, nil
}

var errDerivedRefs = errors.New("derived column read without its referenced columns")

// decodeDerived reads an encDerived page: the rows sel wants, assembled
// from the templates and out.refs (row out.off+i of each reference is the
// row of sel's i-th).
func decodeDerived(pv *pageView, c *chunkMeta, sel rowSel, out *pageOut) error {
	t := c.derived
	if t == nil || out.refs == nil || len(out.refs) != len(t.cols) {
		return errDerivedRefs
	}
	pg, buf, err := parseDerivedPage(pv, t, *out.derivedEnds, true)
	*out.derivedEnds = buf
	if err != nil {
		return err
	}
	tids := pg.tids
	n := sel.n()
	var refsBuf [maxTemplateRefs]derivedRef
	refs := refsBuf[:len(t.cols)]
	for k := range refs {
		refs[k].prepare(&out.refs[k], t.types[k])
	}
	// Room for the rows at once (growing from a fresh vector doubled it a
	// dozen times for a page's rows): a template's literal bytes and 8
	// bytes a value, a guess that errs low, for each row wanted.
	per := 0
	for _, p := range t.tpls[0] {
		per += max(len(p.lit), 8)
	}
	out.reserve(n*per + 16)
	dst := out.dst
	rk := ranker{bitmap: pv.bitmap}
	// Values stored as they are, and residual values, among tids[:kAt].
	kAt, litsBefore, resBefore := 0, 0, 0
	for i := 0; i < n; i++ {
		row := sel.at(i)
		j := out.off + i
		if !pv.has(row) {
			out.null(j)
			continue
		}
		k := rk.rank(row)
		for ; kAt < k; kAt++ {
			if tids[kAt] == 0 {
				litsBefore++
			} else if t.resid {
				resBefore += int(t.nres[tids[kAt]])
			}
		}
		tid := int(tids[k])
		if tid == 0 {
			dst.Bytes = append(dst.Bytes, pg.stored[pg.offs[litsBefore]:pg.offs[litsBefore+1]]...)
		} else {
			if tid > len(t.tpls) {
				return fmt.Errorf("template %d of %d", tid, len(t.tpls))
			}
			tpl := t.tpls[tid-1]
			rv := resBefore // the row's next residual value
			for pi := range tpl {
				p := &tpl[pi] // not a copy: the loop runs per piece of every row
				if p.col < 0 {
					if p.col == residualCol {
						dst.Bytes = appendPiece(dst.Bytes, unsafeString(pg.resid[pg.roffs[rv]:pg.roffs[rv+1]]))
						rv++
						continue
					}
					dst.Bytes = appendPiece(dst.Bytes, p.lit)
					continue
				}
				r := &refs[p.ref]
				if j < r.n && (r.nulls == nil || !r.nulls.Get(j)) { // the common cases, inline
					if j+1 < len(r.offs) {
						dst.Bytes = appendPiece(dst.Bytes, unsafeString(r.bytes[r.offs[j]:r.offs[j+1]]))
						continue
					}
					if j < len(r.codes) { // a dictionary's value (a method, a path, a user agent)
						dst.Bytes = appendPiece(dst.Bytes, r.dict[r.codes[j]])
						continue
					}
					if j < len(r.ints) && uint64(r.ints[j]) < uint64(len(smallDecimals)) { // a status code
						d := &smallDecimals[r.ints[j]]
						dst.Bytes = appendPiece(dst.Bytes, unsafeString(d[:d[3]]))
						continue
					}
				}
				var ok bool
				if dst.Bytes, ok = refs[p.ref].appendValue(dst.Bytes, j); !ok {
					return fmt.Errorf("template %d: column %d has no value in the row", tid, p.col)
				}
			}
		}
		if err := out.endStr(j); err != nil {
			return err
		}
	}
	return nil
}

// derivedRef is a referenced column's vector as decodeDerived reads it:
// the Bytes+Offs form straight, an int64 column's values as decimal text
// (the last one rendered kept: status codes repeat), any other form
// through the vector.
type derivedRef struct {
	v     *vec.Vector
	bytes []byte
	offs  []uint32   // Bytes+Offs form, not constant
	n     int        // rows of v
	nulls vec.Bitset // v's
	codes []uint32   // dictionary form, not constant
	dict  []string
	ints  []int64 // an int64 column, not constant
	last  int64
	text  [20]byte // decimal text of last, textN bytes (0: none yet)
	textN int
}

// prepare points r at vector v of a column of type t.
func (r *derivedRef) prepare(v *vec.Vector, t ColType) {
	*r = derivedRef{v: v, n: v.Len, nulls: v.Nulls}
	switch {
	case v.Const:
	case t == TypeInt64:
		r.ints = v.Ints
	case v.Dict != nil:
		r.codes, r.dict = v.Codes, v.Dict
	case len(v.Offs) > 0:
		r.bytes, r.offs = v.Bytes, v.Offs
	}
}

// appendValue appends row j's value, or reports that the row has none.
func (r *derivedRef) appendValue(dst []byte, j int) ([]byte, bool) {
	v := r.v
	if j >= v.Len || v.Nulls != nil && v.IsNull(j) {
		return dst, false
	}
	switch {
	case j+1 < len(r.offs):
		return append(dst, r.bytes[r.offs[j]:r.offs[j+1]]...), true
	case j < len(r.codes):
		return appendPiece(dst, r.dict[r.codes[j]]), true
	case j < len(r.ints):
		x := r.ints[j]
		if uint64(x) < uint64(len(smallDecimals)) {
			d := &smallDecimals[x]
			return appendPiece(dst, unsafeString(d[:d[3]])), true
		}
		if r.textN == 0 || x != r.last {
			r.last, r.textN = x, len(strconv.AppendInt(r.text[:0], x, 10))
		}
		return appendPiece(dst, unsafeString(r.text[:r.textN])), true
	case v.Type == vec.Int64:
		return strconv.AppendInt(dst, v.IntAt(j), 10), true
	}
	return append(dst, v.BytesAt(j)...), true
}

// smallDecimals[x] is x in decimal for x below 1000 (a status code, a
// port): up to three digits, then their count.
var smallDecimals = func() (t [1000][4]byte) {
	for x := range t {
		s := strconv.Itoa(x)
		copy(t[x][:3], s)
		t[x][3] = byte(len(s))
	}
	return t
}()

// appendPiece appends s to dst. A piece of up to 16 bytes (a separator,
// a method, an address, a ray id) is stored as one or two 8-byte words
// when dst has room: cheaper than a call of memmove for so few bytes, and
// a message is mostly such pieces.
func appendPiece(dst []byte, s string) []byte {
	n, l := len(dst), len(s)
	if l > 16 || cap(dst)-n < 16 {
		return append(dst, s...)
	}
	d := dst[n : n+16]
	if l >= 8 {
		binary.LittleEndian.PutUint64(d, load64(s))
		binary.LittleEndian.PutUint64(d[l-8:], load64(s[l-8:]))
	} else {
		for i := 0; i < l; i++ {
			d[i] = s[i]
		}
	}
	return dst[:n+l]
}

// load64 is the first 8 bytes of s, little-endian (one load: the compiler
// combines them).
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
