package segment

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sediment/sediment/internal/varint"
)

// dictData is a whole decoded dictionary: the form a scan wants, which
// evaluates a predicate once per entry and keeps rows as codes.
type dictData struct {
	strs []string
	ints []int64
}

// dict loads the whole dictionary of a chunk, through the dictionary
// cache.
func (r *Reader) dict(b int, c *chunkMeta) (*dictData, error) { return r.dictMode(b, c, cacheFill) }

func (r *Reader) dictMode(b int, c *chunkMeta, mode cacheMode) (*dictData, error) {
	key := dictKey{r: r, b: b, col: c.col}
	if mode != cacheBypass {
		if d, ok := dicts.get(key); ok {
			return d, nil
		}
	}
	t := r.ft.cols[c.col].Type
	var d *dictData
	var size int64
	if r.version == FormatV1 {
		u := &c.dict[0]
		body, err := r.readUnit(u.off, u.len, "dictionary", maxUnitSize)
		if err != nil {
			return nil, err
		}
		if d, err = decodeDictV1(body, t, c.dictEntries); err != nil {
			return nil, corruptf(r.path, "dictionary", u.off, "%v", err)
		}
		size = int64(len(body))
	} else {
		d = &dictData{}
		if t == TypeString {
			d.strs = make([]string, 0, c.dictEntries)
		} else {
			d.ints = make([]int64, 0, c.dictEntries)
		}
		for i := range c.dict {
			u := &c.dict[i]
			// Entries alias the page: it must not be a pooled buffer.
			body, ok := []byte(nil), false
			if mode != cacheBypass {
				body, ok = pages.get(pageKey{r: r, off: u.off})
			}
			if !ok {
				var err error
				if body, err = r.readUnit(u.off, u.len, "dictionary", maxUnitSize); err != nil {
					return nil, err
				}
			}
			if err := d.appendPage(body, t, u.entries); err != nil {
				return nil, corruptf(r.path, "dictionary", u.off, "%v", err)
			}
			size += int64(len(body))
		}
	}
	if mode == cacheFill || mode == cacheNoFill && smallDict(c) {
		dicts.put(key, d, size+16*int64(len(d.strs))+8*int64(len(d.ints))+64)
	}
	return d, nil
}

// Small dictionaries: a single unit of at most smallDictEntries entries
// and smallDictBytes stored, such as those of countries, status codes or
// hosts. Every read keeps them in the dictionary cache, a single pass over
// much data too, and a read of a few rows decodes them whole rather than
// entry by entry: a record of platform events holds a few dozen such
// columns, each of which cost a read of its dictionary page every time the
// record was built, and they take little to keep.
const (
	smallDictEntries = 256
	smallDictBytes   = 8 << 10
)

// smallDict reports whether chunk c's dictionary is small.
func smallDict(c *chunkMeta) bool {
	return len(c.dict) == 1 && c.dictEntries <= smallDictEntries && c.dict[0].len <= smallDictBytes
}

// decodeDictV1 decodes a version 1 dictionary unit.
func decodeDictV1(body []byte, t ColType, entries int) (*dictData, error) {
	db := decbuf{b: body}
	n := db.count("dictionary entries", maxBlockRows, 1)
	if db.err == nil && n != entries {
		return nil, fmt.Errorf("dictionary has %d entries, footer says %d", n, entries)
	}
	d := &dictData{}
	if t == TypeString {
		d.strs = make([]string, n)
		for i := range d.strs {
			l := db.uvarint()
			s := db.bytes(l)
			if db.err != nil {
				break
			}
			d.strs[i] = unsafeString(s)
			if i > 0 && d.strs[i] <= d.strs[i-1] {
				return nil, errors.New("dictionary not sorted")
			}
		}
	} else {
		d.ints = make([]int64, n)
		prev := int64(0)
		for i := range d.ints {
			prev += varint.Unzigzag(db.uvarint())
			d.ints[i] = prev
			if i > 0 && d.ints[i] <= d.ints[i-1] && db.err == nil {
				return nil, errors.New("dictionary not sorted")
			}
		}
	}
	if db.err != nil {
		return nil, db.err
	}
	return d, nil
}

// appendPage adds the entries of a version 2 dictionary page, checking
// its layout and that entries keep ascending.
func (d *dictData) appendPage(body []byte, t ColType, entries int) error {
	if t != TypeString {
		if len(body) != 8*entries {
			return fmt.Errorf("dictionary page of %d bytes for %d entries", len(body), entries)
		}
		for k := 0; k < entries; k++ {
			x := int64(binary.LittleEndian.Uint64(body[8*k:]))
			if n := len(d.ints); n > 0 && x <= d.ints[n-1] {
				return errors.New("dictionary not sorted")
			}
			d.ints = append(d.ints, x)
		}
		return nil
	}
	p, err := parseDictPage(body, entries)
	if err != nil {
		return err
	}
	pos, off := 0, 0
	for k := 0; k < entries; k++ {
		l, m := binary.Uvarint(p.lens[pos:])
		if m <= 0 || l > uint64(len(p.data)-off) {
			return errShort
		}
		pos += m
		s := unsafeString(p.data[off : off+int(l)])
		off += int(l)
		if n := len(d.strs); n > 0 && s <= d.strs[n-1] {
			return errors.New("dictionary not sorted")
		}
		d.strs = append(d.strs, s)
	}
	if off != len(p.data) {
		return fmt.Errorf("dictionary page has %d bytes after its entries", len(p.data)-off)
	}
	return nil
}

// dictPage is a version 2 string dictionary page: the uvarint lengths of
// its entries, then their bytes.
type dictPage struct {
	lens    []byte
	data    []byte
	entries int
}

func parseDictPage(body []byte, entries int) (dictPage, error) {
	// The bytes start after entries varints.
	start, ok := varintsEnd(body, entries)
	if !ok {
		return dictPage{}, fmt.Errorf("dictionary page of %d bytes for %d entries", len(body), entries)
	}
	return dictPage{lens: body[:start], data: body[start:], entries: entries}, nil
}

// entry returns entry k.
func (p *dictPage) entry(k int) ([]byte, error) {
	pos, off := 0, uint64(0)
	for i := 0; ; i++ {
		l, m := binary.Uvarint(p.lens[pos:])
		if m <= 0 || l > uint64(len(p.data))-off {
			return nil, fmt.Errorf("dictionary entry %d: %w", i, errShort)
		}
		if i == k {
			return p.data[off : off+l], nil
		}
		pos += m
		off += l
	}
}

// dictLookup reads single dictionary entries of one chunk, decompressing
// only the dictionary page that holds each (a version 2 dictionary not in
// the dictionary cache), or from the whole dictionary.
type dictLookup struct {
	r    *Reader
	c    *chunkMeta
	mode cacheMode
	full *dictData // the whole dictionary, when that is what is used
	// The page last read: its index, body, and whether the body is a
	// pooled buffer to give back.
	pi     int
	body   []byte
	pooled bool
}

// newDictLookup prepares entry reads of chunk c of block b: from the whole
// dictionary when it is cached, small (read whole, and kept), or the
// version has no pages.
func (r *Reader) newDictLookup(b int, c *chunkMeta, mode cacheMode) (*dictLookup, error) {
	l := &dictLookup{r: r, c: c, mode: mode, pi: -1}
	if mode != cacheBypass {
		if d, ok := dicts.get(dictKey{r: r, b: b, col: c.col}); ok {
			l.full = d
			return l, nil
		}
	}
	if r.version == FormatV1 || mode != cacheBypass && smallDict(c) {
		d, err := r.dictMode(b, c, mode)
		if err != nil {
			return nil, err
		}
		l.full = d
	}
	return l, nil
}

// load makes the page holding entry code current.
func (l *dictLookup) load(code uint32) (int, error) {
	c := l.c
	pi := l.pi
	if pi < 0 || int(code) < c.dict[pi].first || int(code) >= c.dict[pi].first+c.dict[pi].entries {
		lo, hi := 0, len(c.dict)
		for lo < hi { // the last page whose first entry is <= code
			m := (lo + hi) / 2
			if c.dict[m].first <= int(code) {
				lo = m + 1
			} else {
				hi = m
			}
		}
		pi = lo - 1
		u := &c.dict[pi]
		l.release()
		body, pooled, err := l.r.page(u.off, u.len, "dictionary", l.mode, nil)
		if err != nil {
			return 0, err
		}
		l.pi, l.body, l.pooled = pi, body, pooled
	}
	return int(code) - c.dict[pi].first, nil
}

// str returns string entry code. The bytes are valid until the next call
// or release.
func (l *dictLookup) str(code uint32) ([]byte, error) {
	if l.full != nil {
		return stringBytes(l.full.strs[code]), nil
	}
	k, err := l.load(code)
	if err != nil {
		return nil, err
	}
	p, err := parseDictPage(l.body, l.c.dict[l.pi].entries)
	if err == nil {
		var e []byte
		if e, err = p.entry(k); err == nil {
			return e, nil
		}
	}
	return nil, corruptf(l.r.path, "dictionary", l.c.dict[l.pi].off, "%v", err)
}

// int returns int entry code.
func (l *dictLookup) int(code uint32) (int64, error) {
	if l.full != nil {
		return l.full.ints[code], nil
	}
	k, err := l.load(code)
	if err != nil {
		return 0, err
	}
	if len(l.body) != 8*l.c.dict[l.pi].entries {
		return 0, corruptf(l.r.path, "dictionary", l.c.dict[l.pi].off, "dictionary page of %d bytes for %d entries", len(l.body), l.c.dict[l.pi].entries)
	}
	return int64(binary.LittleEndian.Uint64(l.body[8*k:])), nil
}

// release gives back the current page's buffer.
func (l *dictLookup) release() {
	if l.pooled {
		putBuf(l.body)
	}
	l.body, l.pooled, l.pi = nil, false, -1
}
