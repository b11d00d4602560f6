package segment

import (
	"math"
	"slices"
	"strings"

	"github.com/sediment/sediment/internal/varint"
	"github.com/sediment/sediment/internal/vec"
)

// ColumnData is one column's values for one block, dense: one slot per row
// of the block, NULL rows marked in Nulls (nil = none) with zero values in
// their slots. The payload slice used depends on the column type:
//
//	TypeBool                  Bools
//	TypeInt64, TypeTimestamp  Ints
//	TypeFloat64               Floats
//	TypeString, TypeArray     Strs (array values: opaque encoded bytes)
//	TypeObject                none: presence is the complement of Nulls
type ColumnData struct {
	Nulls  vec.Bitset
	Bools  []bool
	Ints   []int64
	Floats []float64
	Strs   []string
	// Codes and Dict may stand in for Strs (TypeString only): row i is
	// Dict[Codes[i]]. A caller that already holds dictionary codes (the
	// in-memory head, a dictionary-encoded input) passes them so the
	// writer need not hash every value again. Dict need not be sorted or
	// minimal.
	Codes []uint32
	Dict  []string
}

// CopyFrom makes d a copy of src in d's own arrays (reused), so that d
// never aliases src's (a later fill of d overwrites its arrays). The
// strings' bytes and the dictionary are shared: read only.
func (d *ColumnData) CopyFrom(src *ColumnData) {
	d.Nulls = append(d.Nulls[:0], src.Nulls...)
	if src.Nulls == nil {
		d.Nulls = nil
	}
	d.Bools = append(d.Bools[:0], src.Bools...)
	d.Ints = append(d.Ints[:0], src.Ints...)
	d.Floats = append(d.Floats[:0], src.Floats...)
	d.Strs = append(d.Strs[:0], src.Strs...)
	d.Codes = append(d.Codes[:0], src.Codes...)
	d.Dict = src.Dict
}

// str returns row i of a string column.
func (c *ColumnData) str(i int) string {
	if c.Dict != nil {
		return c.Dict[c.Codes[i]]
	}
	return c.Strs[i]
}

func (c *ColumnData) present(i int) bool { return c.Nulls == nil || !c.Nulls.Get(i) }

// chunkPlan is the encoding chosen for one chunk and what it needs.
type chunkPlan struct {
	enc      Encoding
	width    uint8    // dictionary code width in bytes, or encHex's width
	dictStrs []string // sorted dictionary (strings)
	dictInts []int64  // sorted dictionary (ints)
	codes    []uint32 // per row code (dense; NULL rows 0)
	present  int
	stats    chunkStats
	version  uint8
	rowsBuf  []int        // scratch: the present rows of a page
	derived  *derivedPlan // encDerived: templates and per-row ids
	scratch  *planScratch
}

type chunkStats struct {
	flags      uint8 // statNum | statMinStr | statMaxStr
	minI, maxI int64
	minF, maxF float64
	minS, maxS string
}

const (
	statNum    = 1 << 0
	statMinStr = 1 << 1
	statMaxStr = 1 << 2
	// statPages (FormatV2, int64, timestamp and float64 chunks): every
	// page record carries its value count and value range.
	statPages = 1 << 3
)

// earlyDistinctRows is how many values planStrings looks at before it
// gives up on a dictionary for a column whose last chunk had nearly all
// values distinct (ids, messages, URLs), when 7/8 of them are distinct
// too, and so are its last earlyDistinctRows (tailDistinct): flushes
// write blocks of a few thousand rows (one per project), whose values it
// would otherwise all put in a map first.
const earlyDistinctRows = 512

// earlyDistinctMaxRows: only chunks of fewer rows give up early. In the
// blocks of 65,536 rows compaction writes, the first 4096 values are a
// small share of the work, and URLs whose first and last values were
// nearly all distinct still took 2% fewer bytes with the dictionaries
// some of their blocks got (peers data, 1M events).
const earlyDistinctMaxRows = 8192

// maxDictEntries is the largest dictionary a chunk gets; past it, values are
// written plainly.
const maxDictEntries = 1 << 16

// planScratch is the memory planChunk reuses from one chunk to the next
// of a writer: the maps that find a chunk's distinct values and the
// per-row codes. A flush or a merge plans every column of every block,
// and allocating these afresh each time was a quarter of the bytes the
// ingest path allocated (and so of its garbage collections). The plan
// and the bytes written are the same with or without it.
type planScratch struct {
	strs  strCodes
	ints  intCodes
	tail  map[string]uint32 // tailDistinct's set
	codes []uint32
	used  []int32
	order []string // distinct values in order of first appearance
	ranks []uint32 // first-appearance code -> sorted dictionary position
	// byValue: sorted dictionary position -> first-appearance code
	byValue []uint32
	// expectDistinct (set by the writer before a plan) says the column's
	// last chunk had nearly all values distinct: the plan gives up on a
	// dictionary after earlyDistinctRows such values rather than 4096.
	// nearlyDistinct (set by the plan) says this chunk had.
	expectDistinct, nearlyDistinct bool
	// The chunk's sorted dictionary: a plan's dictionary serves its
	// chunk's pages only, written before the next plan.
	dictStrs []string
	dictInts []int64
}

// emptyFor returns *buf emptied with room for n elements.
func emptyFor[T any](buf *[]T, n int) []T {
	*buf = slices.Grow((*buf)[:0], n)
	return *buf
}

// orderFor returns an empty slice for a chunk's distinct values, reusing
// the scratch's.
func (sc *planScratch) orderFor() []string {
	if sc == nil {
		return nil
	}
	return sc.order[:0]
}

// rankFor returns a slice of n ranks (contents undefined), reusing the
// scratch's.
func (sc *planScratch) rankFor(n int) []uint32 {
	if sc == nil {
		return make([]uint32, n)
	}
	if cap(sc.ranks) < n {
		sc.ranks = make([]uint32, n)
	}
	return sc.ranks[:n]
}

// byValueFor returns a slice of n codes (contents undefined), reusing the
// scratch's.
func (sc *planScratch) byValueFor(n int) []uint32 {
	if sc == nil {
		return make([]uint32, n)
	}
	if cap(sc.byValue) < n {
		sc.byValue = make([]uint32, n)
	}
	return sc.byValue[:n]
}

// codesFor returns a zeroed slice of rows codes, reusing the scratch's.
func (sc *planScratch) codesFor(rows int) []uint32 {
	if sc == nil {
		return make([]uint32, rows)
	}
	if cap(sc.codes) < rows {
		sc.codes = make([]uint32, rows)
	}
	c := sc.codes[:rows]
	clear(c)
	return c
}

// strTable returns an empty table of string codes for a chunk of rows
// values, reusing the scratch's.
func (sc *planScratch) strTable(rows int) *strCodes {
	if sc == nil {
		return new(strCodes)
	}
	sc.strs.reset(rows)
	return &sc.strs
}

// scratchMapMax is the most entries a scratch map may have held and still
// be reused: clearing and ranging over a map take time in proportion to
// the most it ever held, which a chunk of few distinct values should not
// pay for one of many.
const scratchMapMax = 4096

// reuseMap returns m cleared, or a new map when m is nil or grew large.
func reuseMap[K comparable](m map[K]uint32) map[K]uint32 {
	if m == nil || len(m) > scratchMapMax {
		return make(map[K]uint32)
	}
	clear(m)
	return m
}

// planChunk picks an encoding for a column's values in one block, among
// those the format version has. sc (nil: none) lends it memory; the plan
// uses it until the next planChunk with the same scratch.
func planChunk(t ColType, d *ColumnData, rows int, version uint8, sc *planScratch) *chunkPlan {
	p := &chunkPlan{version: version, scratch: sc, present: d.presentIn(0, rows)}
	switch t {
	case TypeObject:
		p.enc = encNone
	case TypeBool:
		p.enc = encBits
		p.numStats(rows, d, func(i int) int64 {
			if d.Bools[i] {
				return 1
			}
			return 0
		})
	case TypeFloat64:
		p.enc = encPlain64
		first := true
		for i := 0; i < rows; i++ {
			if !d.present(i) {
				continue
			}
			f := d.Floats[i]
			if math.IsNaN(f) {
				continue
			}
			if first || f < p.stats.minF {
				p.stats.minF = f
			}
			if first || f > p.stats.maxF {
				p.stats.maxF = f
			}
			first = false
		}
		if !first {
			p.stats.flags |= statNum
		}
	case TypeInt64, TypeTimestamp:
		p.numStats(rows, d, func(i int) int64 { return d.Ints[i] })
		p.planInts(t, d, rows)
	case TypeString:
		if d.Dict != nil {
			p.planFromCodes(d, rows)
		} else {
			p.planStrings(d, rows)
		}
	case TypeArray:
		p.enc = encBytes
	}
	return p
}

func (p *chunkPlan) numStats(rows int, d *ColumnData, val func(int) int64) {
	first := true
	for i := 0; i < rows; i++ {
		if !d.present(i) {
			continue
		}
		x := val(i)
		if first || x < p.stats.minI {
			p.stats.minI = x
		}
		if first || x > p.stats.maxI {
			p.stats.maxI = x
		}
		first = false
	}
	if !first {
		p.stats.flags |= statNum
	}
}

// intTable returns an empty table of int codes for a chunk of rows
// values, reusing the scratch's.
func (p *chunkPlan) intTable(rows int) *intCodes {
	sc := p.scratch
	if sc == nil {
		return new(intCodes)
	}
	sc.ints.reset(rows)
	return &sc.ints
}

func codeWidth(n int) uint8 {
	switch {
	case n <= 1<<8:
		return 1
	case n <= 1<<16:
		return 2
	}
	return 4
}

func (p *chunkPlan) planInts(t ColType, d *ColumnData, rows int) {
	// Delta for timestamps (sorted) and for anything whose deltas are
	// small; a dictionary when few distinct values recur; else plain.
	// One pass measures the delta bytes and, for int64 columns, gives each
	// row the code of its value in order of first appearance (codes), so
	// that a dictionary, when it wins, needs no second look-up per row.
	var deltaBytes int
	prev := int64(0)
	var seen *intCodes
	var codes []uint32
	if t == TypeInt64 {
		seen = p.intTable(rows)
		codes = p.scratch.codesFor(rows)
	}
	for i := 0; i < rows; i++ {
		if !d.present(i) {
			continue
		}
		x := d.Ints[i]
		deltaBytes += varint.Len(varint.Zigzag(x - prev))
		prev = x
		if seen == nil {
			continue
		}
		c, isNew := seen.code(x)
		if isNew && len(seen.vals) > maxDictEntries {
			seen = nil
			continue
		}
		codes[i] = c
	}
	plainBytes := 8 * p.present
	best, bestBytes := encPlain64, plainBytes
	if deltaBytes < bestBytes {
		best, bestBytes = encDelta, deltaBytes
	}
	if seen != nil && p.present > 0 {
		distinct := len(seen.vals)
		w := codeWidth(distinct)
		dictBytes := int(w)*p.present + 3*distinct
		// Dictionaries also make per-block value lookups cheap, so they win
		// ties and small losses.
		if dictBytes <= bestBytes+bestBytes/4 && distinct <= p.present/2+1 {
			var dict []int64
			if p.scratch != nil {
				dict = emptyFor(&p.scratch.dictInts, distinct)
			} else {
				dict = make([]int64, 0, distinct)
			}
			dict = append(dict, seen.vals...)
			slices.Sort(dict)
			// rank[first-appearance code] = position in the sorted dictionary.
			rank := p.scratch.rankFor(len(dict))
			for i, v := range dict {
				rank[seen.find(v)] = uint32(i)
			}
			for i := 0; i < rows; i++ {
				if d.present(i) {
					codes[i] = rank[codes[i]]
				}
			}
			p.enc, p.width, p.dictInts, p.codes = encDict, w, dict, codes
			return
		}
	}
	p.enc = best
}

// planStrings plans a string chunk given as values. One pass over the
// rows measures the plain size, gives each row the code of its value in
// order of first appearance, and looks at each distinct value once for
// the chunk's range and text shape (both are properties of the set of
// values); once a dictionary stops paying, every later value is looked at
// instead. Stats and plan are the same as looking at every row.
func (p *chunkPlan) planStrings(d *ColumnData, rows int) {
	seen := p.scratch.strTable(rows)
	dictOn := true // false once a dictionary stops paying
	distinct := p.scratch.orderFor()
	codes := p.scratch.codesFor(rows)
	total, counted := 0, 0
	giveUpAt := 4096
	early := p.scratch != nil && p.scratch.expectDistinct && rows < earlyDistinctMaxRows
	if early {
		giveUpAt = earlyDistinctRows
	}
	if early && p.probeDistinct(d, rows) {
		// Distinct at both ends, like the column's last chunk: no value
		// is looked up (issue 14: ids, ray ids and messages were hashed
		// up to their early give-up, most of a flush block's rows).
		dictOn = false
	}
	shape := newTextShape()
	var r strRange
	for i := 0; i < rows; i++ {
		if !d.present(i) {
			continue
		}
		s := d.Strs[i]
		total += len(s) + varint.Len(uint64(len(s)))
		counted++
		if !dictOn {
			shape.add(s)
			r.add(s)
			continue
		}
		c, isNew := seen.code(s, &distinct)
		if isNew {
			shape.add(s)
			r.add(s)
			// Give up on a dictionary once it is clearly not paying: too
			// many entries, or nearly every value distinct so far.
			if len(distinct) > maxDictEntries || (counted >= giveUpAt && len(distinct) > counted*7/8 && p.tailDistinct(d, rows, giveUpAt)) ||
				(counted >= 8192 && len(distinct) > counted/2) {
				dictOn = false
				continue
			}
		}
		codes[i] = c
	}
	if p.scratch != nil {
		p.scratch.order = distinct[:0] // the capacity, for the next chunk
		p.scratch.nearlyDistinct = !dictOn || len(distinct)*8 > counted*7
	}
	// The scratch keeps no caller's strings alive past the plan.
	defer clear(distinct)
	p.setStrRange(&r)
	if dictOn && p.present > 0 {
		dictBytes := 0
		for _, s := range distinct {
			dictBytes += len(s) + 1
		}
		w := codeWidth(len(distinct))
		cost := dictBytes + int(w)*p.present
		if cost < total*3/4 && len(distinct) <= p.present/2+1 {
			// The first-appearance codes sorted by their values give the
			// dictionary, and rank[code] = its position there, without
			// looking a value up again.
			byValue := p.scratch.byValueFor(len(distinct))
			for c := range byValue {
				byValue[c] = uint32(c)
			}
			slices.SortFunc(byValue, func(a, b uint32) int { return strings.Compare(distinct[a], distinct[b]) })
			var dict []string
			if p.scratch != nil {
				dict = emptyFor(&p.scratch.dictStrs, len(distinct))
			} else {
				dict = make([]string, 0, len(distinct))
			}
			rank := p.scratch.rankFor(len(distinct))
			for i, c := range byValue {
				dict = append(dict, distinct[c])
				rank[c] = uint32(i)
			}
			for i := 0; i < rows; i++ {
				if d.present(i) {
					codes[i] = rank[codes[i]]
				}
			}
			p.enc, p.width, p.dictStrs, p.codes = encDict, w, dict, codes
			return
		}
	}
	p.enc, p.width = p.textEncoding(shape)
}

// tailDistinct reports whether the last n present values of the chunk
// are nearly all (7/8) distinct too, when planStrings gives up on a
// dictionary after its first n values (an early give-up, n below 4096):
// a chunk whose values only start out distinct keeps its dictionary.
func (p *chunkPlan) tailDistinct(d *ColumnData, rows, n int) bool {
	if n >= 4096 || p.scratch == nil {
		return true // the long-standing rule: the first 4096 values decide
	}
	p.scratch.tail = reuseMap(p.scratch.tail)
	tail := p.scratch.tail
	counted := 0
	for i := rows - 1; i >= 0 && counted < n; i-- {
		if d.present(i) {
			tail[d.Strs[i]] = 0
			counted++
		}
	}
	return len(tail)*8 > counted*7
}

// distinctProbeRows is how many present values probeDistinct looks at in
// each of three places of a chunk. Chunks whose values repeat enough for
// a dictionary (at most one distinct value in two) show a repeat among so
// many neighbours unless their repeats are far apart: values seen twice
// each, at random places of a chunk of 700, leave all three places
// without a repeat about once in 6,000 chunks.
const distinctProbeRows = 64

// probeDistinct reports whether the present values of the chunk are all
// distinct in each of three runs of distinctProbeRows: its first, its
// middle and its last, for planStrings to write a chunk of a column
// expected to be distinct (planScratch.expectDistinct) without a
// dictionary. Chunks of fewer than 3*distinctProbeRows values are not
// probed.
func (p *chunkPlan) probeDistinct(d *ColumnData, rows int) bool {
	const n = distinctProbeRows
	if p.scratch == nil || p.present < 3*n {
		return false
	}
	p.scratch.tail = reuseMap(p.scratch.tail)
	seen := p.scratch.tail
	defer clear(seen) // the scratch keeps no caller's strings
	// distinctRun reports whether the n present values from row start on
	// (backwards with step -1) are all distinct.
	distinctRun := func(start, step int) bool {
		clear(seen)
		k := 0
		for i := start; i >= 0 && i < rows && k < n; i += step {
			if d.present(i) {
				seen[d.Strs[i]] = 0
				k++
			}
		}
		return len(seen) == k
	}
	return distinctRun(0, 1) && distinctRun(rows/2, 1) && distinctRun(rows-1, -1)
}

// strRange is the smallest and largest of the string values added.
type strRange struct {
	any      bool
	min, max string
}

func (r *strRange) add(s string) {
	if !r.any {
		r.min, r.max, r.any = s, s, true
		return
	}
	// Most values of a chunk lie inside its range, and their first byte
	// usually says so: compare whole strings only when it does not.
	if len(s) == 0 || len(r.min) == 0 || s[0] <= r.min[0] {
		if s < r.min {
			r.min = s
		}
	}
	if len(s) == 0 || len(r.max) == 0 || s[0] >= r.max[0] {
		if s > r.max {
			r.max = s
		}
	}
}

// setStrRange keeps a chunk's string range in its stats. A truncated
// minimum is still a lower bound; a truncated maximum is not an upper
// bound, so a long maximum is simply not kept.
func (p *chunkPlan) setStrRange(r *strRange) {
	if !r.any {
		return
	}
	minS, maxS := r.min, r.max
	if len(minS) > maxStatLen {
		minS = minS[:maxStatLen]
	}
	p.stats.minS = strings.Clone(minS)
	p.stats.flags |= statMinStr
	if len(maxS) <= maxStatLen {
		p.stats.maxS = strings.Clone(maxS)
		p.stats.flags |= statMaxStr
	}
}

// textEncoding is the encoding of string values that do not get a
// dictionary: a binary form when every value has one (and the version
// has it), else plain bytes.
func (p *chunkPlan) textEncoding(shape *textShape) (Encoding, uint8) {
	enc, w := shape.choice()
	if p.version < FormatV2 && enc != encUUID {
		return encBytes, 0
	}
	return enc, w
}

// planFromCodes plans a string chunk whose values come as dictionary
// codes: the block's dictionary is the codes used, sorted; values are
// written as codes when that pays, else as bytes.
func (p *chunkPlan) planFromCodes(d *ColumnData, rows int) {
	var used []int32
	if p.scratch != nil {
		p.scratch.used = slices.Grow(p.scratch.used[:0], len(d.Dict))[:len(d.Dict)]
		used = p.scratch.used
	} else {
		used = make([]int32, len(d.Dict))
	}
	for i := range used {
		used[i] = -1
	}
	total, nused := 0, 0
	for i := 0; i < rows; i++ {
		if d.present(i) {
			c := d.Codes[i]
			if used[c] < 0 {
				used[c] = 0
				nused++
			}
			total += len(d.Dict[c]) + 1
		}
	}
	if nused == 0 {
		p.enc = encBytes
		return
	}
	// The codes used, sorted by their values, give the block's dictionary
	// (a caller's dictionary may repeat values: equal neighbours make one
	// entry) and used[code] = the code's position in it.
	byValue := p.scratch.byValueFor(nused)[:0]
	for c, u := range used {
		if u == 0 {
			byValue = append(byValue, uint32(c))
		}
	}
	slices.SortFunc(byValue, func(a, b uint32) int { return strings.Compare(d.Dict[a], d.Dict[b]) })
	var dict []string
	if p.scratch != nil {
		dict = emptyFor(&p.scratch.dictStrs, nused)
	}
	for _, c := range byValue {
		if s := d.Dict[c]; len(dict) == 0 || dict[len(dict)-1] != s {
			dict = append(dict, s)
		}
		used[c] = int32(len(dict) - 1)
	}
	if p.scratch != nil {
		p.scratch.dictStrs = dict // keep what it grew to
	}
	// Stats from the dictionary, not the rows.
	p.setStrRange(&strRange{any: true, min: dict[0], max: dict[len(dict)-1]})
	dictBytes := 0
	for _, s := range dict {
		dictBytes += len(s) + 1
	}
	w := codeWidth(len(dict))
	if len(dict) > maxDictEntries || dictBytes+int(w)*p.present >= total*3/4 || len(dict) > p.present/2+1 {
		// The values' shape is the shape of the distinct values used.
		shape := newTextShape()
		for _, s := range dict {
			shape.add(s)
		}
		p.enc, p.width = p.textEncoding(shape)
		return
	}
	p.enc, p.width, p.dictStrs = encDict, w, dict
	p.codes = p.scratch.codesFor(rows)
	for i := 0; i < rows; i++ {
		if d.present(i) {
			p.codes[i] = uint32(used[d.Codes[i]])
		}
	}
}

// rowCost estimates the encoded bytes of row i, to cut pages.
func (p *chunkPlan) rowCost(d *ColumnData, i int) int {
	if !d.present(i) {
		return 0
	}
	switch p.enc {
	case encPlain64:
		return 8
	case encDelta:
		return 2
	case encDict:
		return int(p.width)
	case encBytes:
		return len(d.str(i)) + 1
	case encUUID:
		return 16
	case encHex:
		w := int(p.width & hexWidthMask)
		return w + len(d.str(i)) - 2*w + 1
	case encIP:
		if len(d.str(i)) > 15 {
			return 17
		}
		return 5
	case encDerived:
		return derivedRowCost(p.derived, d, i)
	}
	return 0
}

// tinyValues reports whether the chunk's values take at most 2 bytes
// each (see WriterOptions.tinyPageRows).
func (p *chunkPlan) tinyValues() bool {
	switch p.enc {
	case encDelta, encBits, encNone:
		return true
	case encDict:
		return p.width <= 2
	}
	return false
}

// appendPage encodes rows [from, to) of the chunk as a page body.
func (p *chunkPlan) appendPage(dst []byte, t ColType, d *ColumnData, from, to int) []byte {
	n := to - from
	present := d.presentIn(from, to)
	if present == n {
		dst = append(dst, validAll)
	} else {
		dst = append(dst, validBitmap)
		dst = d.appendValidity(dst, from, to)
	}
	switch p.enc {
	case encNone: // the validity says it all
	case encBits:
		dst = appendBitsValues(dst, d, from, to, present)
	case encPlain64:
		dst = appendPlain64Values(dst, t, d, from, to)
	case encDelta:
		dst = appendDeltaValues(dst, d, from, to)
	case encDict:
		dst = appendDictCodes(dst, p.width, p.codes, d, from, to)
	case encBytes:
		dst = appendBytesValues(dst, d, from, to)
	case encUUID:
		dst = appendUUIDValues(dst, d, from, to)
	case encHex, encIP:
		dst = p.appendTextValues(dst, d, from, to)
	case encDerived:
		dst = appendDerivedValues(dst, p.derived, d, from, to)
	}
	return dst
}

// pageStats fills the value count and range of rows [from, to) of an
// int64, timestamp or float64 chunk, or the range of the codes of a
// dictionary-encoded string chunk, into pm (NaN values are left out of a
// float range; a page of NaNs only has the empty range +Inf, -Inf).
func pageStats(t ColType, p *chunkPlan, d *ColumnData, from, to int, pm *pageMeta) {
	pm.present = 0
	pm.minF, pm.maxF = math.Inf(1), math.Inf(-1)
	for i := from; i < to; i++ {
		if !d.present(i) {
			continue
		}
		if t == TypeFloat64 {
			f := d.Floats[i]
			if !math.IsNaN(f) {
				pm.minF, pm.maxF = min(pm.minF, f), max(pm.maxF, f)
			}
		} else {
			var x int64
			if t == TypeString {
				x = int64(p.codes[i])
			} else {
				x = d.Ints[i]
			}
			if pm.present == 0 || x < pm.minI {
				pm.minI = x
			}
			if pm.present == 0 || x > pm.maxI {
				pm.maxI = x
			}
		}
		pm.present++
	}
	pm.hasRange = pm.present > 0 && (t != TypeFloat64 || pm.minF <= pm.maxF)
}
