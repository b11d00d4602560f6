package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sediment/sediment/internal/varint"
)

// Index is an opened index directory. Terms are loaded per field on first
// use and kept; postings are read per lookup. Safe for concurrent use.
type Index struct {
	r      UnitReader
	fields map[fieldKey]*field
	list   []FieldInfo
}

// FieldInfo describes one indexed field.
type FieldInfo struct {
	Path  string
	Kind  Kind
	Terms int
}

type unitRef struct{ off, len int64 }

type field struct {
	FieldInfo
	termsUnit unitRef
	units     []unitRef
	longUnit  int // 0 none, else posting unit index + 1
	longOff   int
	longLen   int

	// mu guards terms and termErr, set once the terms unit was read.
	mu      sync.Mutex
	loaded  bool
	terms   *terms
	termErr error
}

type terms struct {
	ints []int64
	strs []string
	// blob is the terms unit of a string or token field, which every
	// term of strs is a substring of (in term order): a search for a
	// needle inside terms runs over it at once (termsearch.go).
	blob  string
	bools []bool
	pk    []uint8  // posting kind
	unit  []uint32 // bitmap: unit index
	off   []uint32 // bitmap: offset in unit; single: the row
	ln    []uint32
	card  []uint32
}

// Open parses a directory; r reads the units it points to.
func Open(dir []byte, r UnitReader) (*Index, error) {
	ix := &Index{r: r, fields: map[fieldKey]*field{}}
	if len(dir) < 1 {
		return nil, corrupt("empty directory")
	}
	if dir[0] < FormatMinSupported || dir[0] > FormatLatest {
		// The directory sits in a checksummed unit: this is a real version
		// (a newer build wrote it), not damage.
		return nil, fmt.Errorf("%w: version %d (this build reads %d..%d)", ErrUnsupportedVersion, dir[0], FormatMinSupported, FormatLatest)
	}
	d := dir[1:]
	var err error
	next := func() uint64 {
		if err != nil {
			return 0
		}
		x, n := binary.Uvarint(d)
		if n <= 0 {
			err = corrupt("truncated directory")
			return 0
		}
		d = d[n:]
		return x
	}
	nf := next()
	if nf > maxFields {
		return nil, corrupt("too many fields %d", nf)
	}
	for i := uint64(0); i < nf && err == nil; i++ {
		pl := next()
		if err != nil || pl > maxPathLen || pl > uint64(len(d)) {
			return nil, corrupt("bad field path length")
		}
		f := &field{}
		f.Path = string(d[:pl])
		d = d[pl:]
		if len(d) < 1 {
			return nil, corrupt("truncated directory")
		}
		f.Kind = Kind(d[0])
		d = d[1:]
		if f.Kind < kindInt || f.Kind > kindToken {
			return nil, corrupt("field %q: unknown kind %d", f.Path, f.Kind)
		}
		nt := next()
		if nt > maxTerms {
			return nil, corrupt("field %q: %d terms", f.Path, nt)
		}
		f.Terms = int(nt)
		f.termsUnit = unitRef{int64(min(next(), 1<<62)), int64(min(next(), 1<<62))}
		nu := next()
		if nu > uint64(len(d)) {
			return nil, corrupt("field %q: %d posting units", f.Path, nu)
		}
		f.units = make([]unitRef, nu)
		for j := range f.units {
			f.units[j] = unitRef{int64(min(next(), 1<<62)), int64(min(next(), 1<<62))}
		}
		lu := next()
		if lu > nu {
			return nil, corrupt("field %q: long rows unit %d of %d", f.Path, lu, nu)
		}
		f.longUnit = int(lu)
		f.longOff = int(min(next(), maxPostingUnit))
		f.longLen = int(min(next(), maxPostingUnit))
		ix.fields[fieldKey{f.Path, f.Kind}] = f
		ix.list = append(ix.list, f.FieldInfo)
	}
	if err != nil {
		return nil, err
	}
	if len(d) != 0 {
		return nil, corrupt("%d trailing directory bytes", len(d))
	}
	return ix, nil
}

// Fields lists the indexed fields.
func (ix *Index) Fields() []FieldInfo { return ix.list }

// Has reports whether path is indexed with kind.
func (ix *Index) Has(path string, kind Kind) bool {
	_, ok := ix.fields[fieldKey{path, kind}]
	return ok
}

// loadTerms decodes f's terms on first use. A failed read of the unit is
// returned without being kept: it may be a disk or a store that did not
// answer this time (a damaged unit fails the same way again).
func (ix *Index) loadTerms(f *field) (*terms, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.loaded {
		return f.terms, f.termErr
	}
	body, err := ix.r.ReadUnit(f.termsUnit.off, f.termsUnit.len)
	if err != nil {
		return nil, err
	}
	f.terms, f.termErr = decodeTerms(body, f)
	f.loaded = true
	return f.terms, f.termErr
}

func decodeTerms(b []byte, f *field) (*terms, error) {
	n := f.Terms
	if n > len(b) { // every term takes at least one byte
		return nil, corrupt("field %q: %d terms in %d bytes", f.Path, n, len(b))
	}
	t := &terms{pk: make([]uint8, n), unit: make([]uint32, n), off: make([]uint32, n), ln: make([]uint32, n), card: make([]uint32, n)}
	var err error
	var all string // string and token fields: the unit, which b is a suffix of
	next := func() uint64 {
		if err != nil {
			return 0
		}
		x, k := binary.Uvarint(b)
		if k <= 0 {
			err = corrupt("field %q: truncated terms", f.Path)
			return 0
		}
		b = b[k:]
		return x
	}
	switch f.Kind {
	case kindInt:
		t.ints = make([]int64, n)
	case kindString, kindToken:
		t.strs = make([]string, n)
		// One copy of the unit that every term is a substring of, instead
		// of an allocation per term: fewer objects for the collector, and
		// no per-string size-class rounding.
		all = string(b)
		t.blob = all
	case kindBool:
		t.bools = make([]bool, n)
	}
	prev := int64(0)
	for i := 0; i < n && err == nil; i++ {
		switch f.Kind {
		case kindInt:
			prev += varint.Unzigzag(next())
			t.ints[i] = prev
			if i > 0 && t.ints[i] <= t.ints[i-1] {
				return nil, corrupt("field %q: terms not sorted", f.Path)
			}
		case kindString, kindToken:
			l := next()
			if err == nil && l > uint64(len(b)) {
				return nil, corrupt("field %q: term length %d", f.Path, l)
			}
			if err == nil {
				at := len(all) - len(b)
				t.strs[i] = all[at : at+int(l)]
				b = b[l:]
				if i > 0 && t.strs[i] <= t.strs[i-1] {
					return nil, corrupt("field %q: terms not sorted", f.Path)
				}
			}
		case kindBool:
			if len(b) < 1 {
				return nil, corrupt("field %q: truncated terms", f.Path)
			}
			t.bools[i] = b[0] != 0
			b = b[1:]
		}
		if err != nil {
			break
		}
		if len(b) < 1 {
			return nil, corrupt("field %q: truncated terms", f.Path)
		}
		t.pk[i] = b[0]
		b = b[1:]
		switch t.pk[i] {
		case postBitmap:
			u := next()
			if err == nil && u >= uint64(len(f.units)) {
				return nil, corrupt("field %q: posting unit %d of %d", f.Path, u, len(f.units))
			}
			t.unit[i] = uint32(u)
			t.off[i] = uint32(min(next(), maxPostingUnit))
			t.ln[i] = uint32(min(next(), maxPostingUnit))
			t.card[i] = uint32(min(next(), 1<<32-1))
		case postSingle:
			t.off[i] = uint32(min(next(), 1<<32-1))
			t.card[i] = 1
		case postFrequent:
			if f.Kind != kindToken {
				return nil, corrupt("field %q: frequent term in a value field", f.Path)
			}
			t.card[i] = uint32(min(next(), 1<<32-1))
		default:
			return nil, corrupt("field %q: posting kind %d", f.Path, t.pk[i])
		}
	}
	if err != nil {
		return nil, err
	}
	if len(b) != 0 {
		return nil, corrupt("field %q: %d trailing term bytes", f.Path, len(b))
	}
	return t, nil
}

// postingReader reads bitmaps, caching posting units for one lookup.
type postingReader struct {
	ix    *Index
	f     *field
	units map[int][]byte
	// inOrder keeps only the last unit read instead (in cur, number
	// curUnit+1): a merge reads a field's postings in term order, which
	// is the order of the units, so a unit done with is let go rather
	// than held with every other input's to the end of the field.
	inOrder bool
	cur     []byte
	curUnit int
}

func (p *postingReader) bitmap(unit, off, ln int) (*roaring.Bitmap, error) {
	b, err := p.posting(unit, off, ln)
	if err != nil {
		return nil, err
	}
	return decodeBitmap(b)
}

// posting returns the bytes of the serialized bitmap at [off, off+ln) of
// posting unit unit.
func (p *postingReader) posting(unit, off, ln int) ([]byte, error) {
	var body []byte
	ok := false
	switch {
	case p.inOrder:
		body, ok = p.cur, p.curUnit == unit+1
	case p.units == nil:
		p.units = map[int][]byte{}
	default:
		body, ok = p.units[unit]
	}
	if !ok {
		u := p.f.units[unit]
		var err error
		body, err = p.ix.r.ReadUnit(u.off, u.len)
		if err != nil {
			return nil, err
		}
		if p.inOrder {
			p.cur, p.curUnit = body, unit+1
		} else {
			p.units[unit] = body
		}
	}
	if off > len(body) || ln > len(body)-off {
		return nil, corrupt("field %q: posting [%d,+%d) outside unit of %d", p.f.Path, off, ln, len(body))
	}
	return body[off : off+ln], nil
}

// appendTermRows appends the rows of term i, each plus add, to dst,
// ascending; every row must be below below (the rows of the input).
func (p *postingReader) appendTermRows(dst []uint32, t *terms, i int, add, below uint32) ([]uint32, error) {
	switch t.pk[i] {
	case postSingle:
		if t.off[i] >= below {
			return dst, corrupt("field %q: posting row %d past the segment's %d rows", p.f.Path, t.off[i], below)
		}
		return append(dst, t.off[i]+add), nil
	case postFrequent:
		return dst, errFrequent
	}
	b, err := p.posting(int(t.unit[i]), int(t.off[i]), int(t.ln[i]))
	if err != nil {
		return dst, err
	}
	dst, err = appendRoaringRows(dst, b, add, below)
	if err != nil {
		return dst, fmt.Errorf("field %q: %w", p.f.Path, err)
	}
	return dst, nil
}

// decodeBitmap deserializes a roaring bitmap. The roaring decoder trusts
// its input and may panic on malformed bytes; units are checksummed, so
// this only guards against bugs and hostile files.
func decodeBitmap(b []byte) (bm *roaring.Bitmap, err error) {
	defer func() {
		if r := recover(); r != nil {
			bm, err = nil, corrupt("bad bitmap: %v", r)
		}
	}()
	bm = roaring.New()
	if err := bm.UnmarshalBinary(b); err != nil {
		return nil, corrupt("bad bitmap: %v", err)
	}
	return bm, nil
}

func (ix *Index) lookup(path string, kind Kind) (*field, *terms, error) {
	f := ix.fields[fieldKey{path, kind}]
	if f == nil {
		return nil, nil, nil
	}
	t, err := ix.loadTerms(f)
	return f, t, err
}

// lookupOnce is lookup for one pass over a field's terms (a merge reads
// each field of each input once): terms loaded before are used, others
// are decoded for the caller alone and not kept. A compaction that kept
// them held the decoded terms of every field of every input to its end
// (issue 14: 14 MB of a 3M-event ingest's heap), for segments it is
// about to replace.
func (ix *Index) lookupOnce(path string, kind Kind) (*field, *terms, error) {
	f := ix.fields[fieldKey{path, kind}]
	if f == nil {
		return nil, nil, nil
	}
	f.mu.Lock()
	loaded, t, err := f.loaded, f.terms, f.termErr
	f.mu.Unlock()
	if loaded {
		return f, t, err
	}
	body, err := ix.r.ReadUnit(f.termsUnit.off, f.termsUnit.len)
	if err != nil {
		return nil, nil, err
	}
	t, err = decodeTerms(body, f)
	return f, t, err
}

// errFrequent reports postings asked of a frequent token, which has none.
var errFrequent = errors.New("index: frequent term has no postings")

// termRows returns the rows of term i.
func (pr *postingReader) termRows(t *terms, i int) (*roaring.Bitmap, error) {
	switch t.pk[i] {
	case postSingle:
		return roaring.BitmapOf(t.off[i]), nil
	case postFrequent:
		return nil, errFrequent
	}
	return pr.bitmap(int(t.unit[i]), int(t.off[i]), int(t.ln[i]))
}

// union returns the union of the postings of the given term positions.
func (ix *Index) union(f *field, t *terms, pos []int) (*roaring.Bitmap, error) {
	pr := &postingReader{ix: ix, f: f}
	out := roaring.New()
	for _, i := range pos {
		bm, err := pr.termRows(t, i)
		if err != nil {
			return nil, err
		}
		out.Or(bm)
	}
	return out, nil
}

// Match selects the terms of a value field that pred accepts (pred gets an
// int64, a string or a bool, by the field's kind) and returns the union of
// their rows plus the summed cardinality. ok is false when the field is
// not indexed. With rows false only the count is computed (no postings
// are read).
func (ix *Index) Match(path string, kind Kind, pred func(any) bool, rows bool) (bm *roaring.Bitmap, count uint64, ok bool, err error) {
	f, t, err := ix.lookup(path, kind)
	if f == nil || err != nil {
		return nil, 0, false, err
	}
	var pos []int
	for i := 0; i < f.Terms; i++ {
		var v any
		switch kind {
		case kindInt:
			v = t.ints[i]
		case kindString, kindToken:
			v = t.strs[i]
		case kindBool:
			v = t.bools[i]
		}
		if pred(v) {
			pos = append(pos, i)
			count += uint64(t.card[i])
		}
	}
	if !rows {
		return nil, count, true, nil
	}
	bm, err = ix.union(f, t, pos)
	return bm, count, true, err
}

// LookupInt returns the rows whose int field equals v. ok is false when the
// field is not indexed (then nothing can be concluded).
func (ix *Index) LookupInt(path string, v int64) (bm *roaring.Bitmap, ok bool, err error) {
	f, t, err := ix.lookup(path, kindInt)
	if f == nil || err != nil {
		return nil, false, err
	}
	i, found := slices.BinarySearch(t.ints, v)
	if !found {
		return roaring.New(), true, nil
	}
	bm, err = ix.union(f, t, []int{i})
	return bm, true, err
}

// LookupString returns the rows whose string field equals v.
func (ix *Index) LookupString(path, v string) (bm *roaring.Bitmap, ok bool, err error) {
	f, t, err := ix.lookup(path, kindString)
	if f == nil || err != nil {
		return nil, false, err
	}
	i, found := slices.BinarySearch(t.strs, v)
	if !found {
		return roaring.New(), true, nil
	}
	bm, err = ix.union(f, t, []int{i})
	return bm, true, err
}

// maxTermsPerToken bounds how many dictionary terms one needle token may
// expand to; past it the token is not selective enough to be worth the
// postings reads, and the lookup ignores it.
const maxTermsPerToken = 4096

// TextCandidates returns a superset of the rows of a text field that
// contain needle as a substring (case-folded with fold). exact is true when
// the set is exactly those rows (no verification needed). ok is false when
// the index cannot help: the field is not indexed, or the needle has no
// selective token.
func (ix *Index) TextCandidates(path, needle string, fold bool) (bm *roaring.Bitmap, exact, ok bool, err error) {
	f, t, err := ix.lookup(path, kindToken)
	if f == nil || err != nil {
		return nil, false, false, err
	}
	type part struct {
		tok         string
		left, right bool // touches the needle's start / end
	}
	var parts []part
	pos := 0
	Tokenize(needle, func(tok string) {
		i := strings.Index(needle[pos:], tok) + pos
		parts = append(parts, part{tok: tok, left: i == 0, right: i+len(tok) == len(needle)})
		pos = i + len(tok)
	})
	if len(parts) == 0 {
		return nil, false, false, nil
	}
	if fold {
		for i := range parts {
			parts[i].tok = strings.ToLower(parts[i].tok)
		}
	}
	pr := &postingReader{ix: ix, f: f}
	var result *roaring.Bitmap
	skipped := false
	for _, p := range parts {
		if isHexOnly(p.tok) {
			// It may lie inside an opaque token, which the index leaves out.
			skipped = true
			continue
		}
		var match []int
		tooMany := false
		if !fold && !p.left && p.right {
			// Terms starting with the token: a range of the sorted terms.
			lo, _ := slices.BinarySearch(t.strs, p.tok)
			for i := lo; i < len(t.strs) && strings.HasPrefix(t.strs[i], p.tok); i++ {
				match = append(match, i)
				if len(match) > maxTermsPerToken {
					tooMany = true
					break
				}
			}
		} else if !fold && !p.left && !p.right {
			if i, found := slices.BinarySearch(t.strs, p.tok); found {
				match = append(match, i)
			}
		} else if !fold && p.left {
			// Terms holding the token (p.right too) or ending with it:
			// searched for in the terms unit as one block of bytes.
			match, tooMany = t.termsWith(p.tok, !p.right, maxTermsPerToken)
		} else {
			for i, s := range t.strs {
				if fold {
					s = strings.ToLower(s)
				}
				var hit bool
				switch {
				case p.left && p.right:
					hit = strings.Contains(s, p.tok)
				case p.left:
					hit = strings.HasSuffix(s, p.tok)
				case p.right:
					hit = strings.HasPrefix(s, p.tok)
				default:
					hit = s == p.tok
				}
				if hit {
					match = append(match, i)
					if len(match) > maxTermsPerToken {
						tooMany = true
						break
					}
				}
			}
		}
		for _, i := range match {
			if t.pk[i] == postFrequent {
				tooMany = true
				break
			}
		}
		if tooMany {
			skipped = true
			continue
		}
		cand := roaring.New()
		for _, i := range match {
			b, err := pr.termRows(t, i)
			if err != nil {
				return nil, false, false, err
			}
			cand.Or(b)
		}
		if f.longUnit > 0 {
			b, err := pr.bitmap(f.longUnit-1, f.longOff, f.longLen)
			if err != nil {
				return nil, false, false, err
			}
			cand.Or(b)
		}
		if result == nil {
			result = cand
		} else {
			result.And(cand)
		}
	}
	if result == nil {
		return nil, false, false, nil
	}
	onlyTokenChars := len(parts) == 1 && parts[0].left && parts[0].right
	exact = onlyTokenChars && f.longUnit == 0 && !skipped
	return result, exact, true, nil
}

// String describes the index for debugging.
func (ix *Index) String() string {
	var sb strings.Builder
	for _, f := range ix.list {
		fmt.Fprintf(&sb, "%s(%s):%d ", f.Path, f.Kind, f.Terms)
	}
	return sb.String()
}

// ForEachTerm calls fn with each term of a field (int64, string or bool by
// kind) and its rows, in term order (rows nil for a frequent token, whose
// postings are not kept). Used by consistency checks.
func (ix *Index) ForEachTerm(path string, kind Kind, fn func(term any, rows *roaring.Bitmap) error) error {
	f, t, err := ix.lookup(path, kind)
	if f == nil || err != nil {
		return err
	}
	pr := &postingReader{ix: ix, f: f}
	for i := 0; i < f.Terms; i++ {
		var term any
		switch kind {
		case kindInt:
			term = t.ints[i]
		case kindString, kindToken:
			term = t.strs[i]
		case kindBool:
			term = t.bools[i]
		}
		if t.pk[i] == postFrequent {
			if err := fn(term, nil); err != nil {
				return err
			}
			continue
		}
		bm, err := pr.termRows(t, i)
		if err != nil {
			return err
		}
		if bm.GetCardinality() != uint64(t.card[i]) {
			return corrupt("field %q term %d: %d rows, directory says %d", path, i, bm.GetCardinality(), t.card[i])
		}
		if err := fn(term, bm); err != nil {
			return err
		}
	}
	return nil
}

// LongRows returns the rows of a token field holding tokens too long to
// index (nil if none).
func (ix *Index) LongRows(path string) (*roaring.Bitmap, error) {
	f := ix.fields[fieldKey{path, kindToken}]
	if f == nil || f.longUnit == 0 {
		return nil, nil
	}
	pr := &postingReader{ix: ix, f: f}
	return pr.bitmap(f.longUnit-1, f.longOff, f.longLen)
}

// FieldBytes returns the bytes each field's units take (terms and
// postings, trailers included), by "path(kind)".
func (ix *Index) FieldBytes() map[string]int64 {
	out := map[string]int64{}
	for k, f := range ix.fields {
		n := f.termsUnit.len
		for _, u := range f.units {
			n += u.len
		}
		out[k.path+"("+k.kind.String()+")"] = n
	}
	return out
}
