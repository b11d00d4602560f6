package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/klauspost/compress/zstd"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
)

var (
	decoderOnce sync.Once
	decoder     *zstd.Decoder
)

// sharedDecoder returns the package's zstd decoder; DecodeAll is safe for
// concurrent use and bounded in memory, so a corrupt frame cannot make it
// allocate more than a unit may hold.
func sharedDecoder() *zstd.Decoder {
	decoderOnce.Do(func() {
		d, err := zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(4),
			zstd.WithDecoderMaxMemory(maxUnitSize),
			zstd.IgnoreChecksum(true))
		if err != nil {
			panic(fmt.Sprintf("segment: zstd decoder: %v", err)) // only bad options
		}
		decoder = d
	})
	return decoder
}

// Reader reads one segment file. It is safe for concurrent use.
type Reader struct {
	f       vfs.File
	path    string
	size    int64
	version uint8
	footOff int64 // where the footer unit starts: every other unit ends before it
	ft      *footer
	colIdx  map[colKey]int

	spansOnce sync.Once
	spans     [][2]int64 // per block: first and past-last byte of its units
}

type colKey struct {
	path string
	typ  ColType
}

type dictData struct {
	strs []string
	ints []int64
}

// BlockInfo describes one block.
type BlockInfo struct {
	Rows     int
	FirstRow int // segment-wide number of the block's first row
	MinTime  int64
	MaxTime  int64
}

// ChunkInfo describes one column's data in one block.
type ChunkInfo struct {
	Present int // rows with a value
	// HasNumRange says MinInt/MaxInt (int, timestamp, bool as 0/1) or
	// MinFloat/MaxFloat (float) are set.
	HasNumRange        bool
	MinInt, MaxInt     int64
	MinFloat, MaxFloat float64
	// HasMinStr/HasMaxStr say MinStr/MaxStr are bounds of the strings
	// (MinStr may be a truncated prefix of the smallest value).
	HasMinStr, HasMaxStr bool
	MinStr, MaxStr       string
	// DictEntries is the dictionary size when the chunk is dictionary
	// encoded, else 0.
	DictEntries int
	Pages       []PageRange
}

// PageRange is the row range of one page, relative to its block.
type PageRange struct{ FirstRow, Rows int }

// Open reads and validates the trailer and footer of a segment. path is used
// in error messages only. The Reader takes ownership of f.
func Open(f vfs.File, path string) (*Reader, error) {
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	r := &Reader{f: f, path: path, size: size}
	if size < headerSize+trailerSize+unitTrailerSize {
		return nil, corruptf(path, "file", -1, "size %d too small for a segment", size)
	}
	var hdr [headerSize]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		return nil, corruptf(path, "header", 0, "read: %v", ioCause(err))
	}
	if string(hdr[:4]) != magic {
		return nil, corruptf(path, "header", 0, "bad magic %q", hdr[:4])
	}
	r.version = hdr[4]
	var tr [trailerSize]byte
	trOff := size - trailerSize
	if _, err := f.ReadAt(tr[:], trOff); err != nil {
		return nil, corruptf(path, "trailer", trOff, "read: %v", ioCause(err))
	}
	if r.version < FormatMinSupported || r.version > FormatLatest {
		// Header and trailer agreeing on the version (and the trailer's
		// magic intact) is a real version, not a flipped byte.
		if tr[12] == r.version && string(tr[16:20]) == magic {
			return nil, &VersionError{Path: path, Version: r.version}
		}
		return nil, corruptf(path, "header", 4, "unsupported format version %d (supported %d..%d)", hdr[4], FormatMinSupported, FormatLatest)
	}
	if string(tr[16:20]) != magic {
		return nil, corruptf(path, "trailer", trOff, "bad magic %q", tr[16:20])
	}
	if tr[12] != r.version {
		return nil, corruptf(path, "trailer", trOff, "version %d differs from header version %d", tr[12], r.version)
	}
	footOff := int64(binary.LittleEndian.Uint64(tr[0:]))
	footLen := int64(binary.LittleEndian.Uint32(tr[8:]))
	if !unitInRange(footOff, footLen, trOff) || footOff+footLen != trOff {
		return nil, corruptf(path, "trailer", trOff, "footer unit [%d,+%d) does not end at the trailer", footOff, footLen)
	}
	r.footOff = footOff
	body, err := r.readUnit(footOff, footLen, "footer", maxFooterSize)
	if err != nil {
		return nil, err
	}
	ft, err := decodeFooter(body, footOff, r.version)
	if err != nil {
		return nil, corruptf(path, "footer", footOff, "%v", err)
	}
	r.ft = ft
	r.colIdx = make(map[colKey]int, len(ft.cols))
	for i, c := range ft.cols {
		r.colIdx[colKey{c.Path, c.Type}] = i
	}
	return r, nil
}

// Close closes the file.
func (r *Reader) Close() error {
	dropReader(r)
	return r.f.Close()
}

// Path returns the path the reader was opened with.
func (r *Reader) Path() string { return r.path }

// Size returns the file size in bytes.
func (r *Reader) Size() int64 { return r.size }

// Rows returns the number of rows.
func (r *Reader) Rows() int { return r.ft.rows }

// TimeRange returns the smallest and largest timestamp.
func (r *Reader) TimeRange() (int64, int64) { return r.ft.minTime, r.ft.maxTime }

// Columns returns the column directory. Callers must not modify it.
func (r *Reader) Columns() []ColumnDesc { return r.ft.cols }

// Column returns the index of the (path, type) column, or -1.
func (r *Reader) Column(path string, t ColType) int {
	if i, ok := r.colIdx[colKey{path, t}]; ok {
		return i
	}
	return -1
}

// NumBlocks returns the number of blocks.
func (r *Reader) NumBlocks() int { return len(r.ft.blocks) }

// Block describes block b.
func (r *Reader) Block(b int) BlockInfo {
	bm := &r.ft.blocks[b]
	return BlockInfo{Rows: bm.rows, FirstRow: bm.firstRow, MinTime: bm.minTime, MaxTime: bm.maxTime}
}

func (r *Reader) chunk(b, col int) *chunkMeta {
	bm := &r.ft.blocks[b]
	if col < 0 || col >= len(bm.byCol) || bm.byCol[col] < 0 {
		return nil
	}
	return &bm.chunks[bm.byCol[col]]
}

// Chunk describes column col in block b; ok is false when no row of the
// block has a value in that column.
func (r *Reader) Chunk(b, col int) (ChunkInfo, bool) {
	c := r.chunk(b, col)
	if c == nil {
		return ChunkInfo{}, false
	}
	ci := ChunkInfo{
		Present:     c.present,
		HasNumRange: c.stats.flags&statNum != 0,
		MinInt:      c.stats.minI, MaxInt: c.stats.maxI,
		MinFloat: c.stats.minF, MaxFloat: c.stats.maxF,
		HasMinStr: c.stats.flags&statMinStr != 0, HasMaxStr: c.stats.flags&statMaxStr != 0,
		MinStr: c.stats.minS, MaxStr: c.stats.maxS,
		DictEntries: c.dictEntries,
	}
	ci.Pages = make([]PageRange, len(c.pages))
	for i, p := range c.pages {
		ci.Pages[i] = PageRange{FirstRow: p.firstRow, Rows: p.rows}
	}
	return ci, true
}

// Section returns the bytes of a named section, or nil if there is none.
func (r *Reader) Section(name string) ([]byte, error) {
	for _, s := range r.ft.sections {
		if s.name == name {
			return r.readUnit(s.off, s.len, "section "+name, maxUnitSize)
		}
	}
	return nil, nil
}

// readUnit reads a unit, verifies its CRC and returns its decompressed
// payload in a buffer of its own (never reused, so values may alias it).
func (r *Reader) readUnit(off, ln int64, section string, maxSize int) ([]byte, error) {
	if ln < unitTrailerSize || ln > int64(maxUnitSize) {
		return nil, corruptf(r.path, section, off, "unit length %d", ln)
	}
	buf := make([]byte, ln)
	if n, err := r.f.ReadAt(buf, off); n < len(buf) {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return nil, corruptf(r.path, section, off, "read: %v", ioCause(err))
	}
	n := len(buf) - unitTrailerSize
	codec := buf[n]
	want := binary.LittleEndian.Uint32(buf[n+1:])
	got := crc32.Update(0, castagnoli, buf[:n+1])
	if got != want {
		return nil, corruptf(r.path, section, off, "crc mismatch")
	}
	switch codec {
	case codecRaw:
		return buf[:n:n], nil
	case codecZstd:
		out, err := sharedDecoder().DecodeAll(buf[:n], nil)
		if err != nil {
			return nil, corruptf(r.path, section, off, "zstd: %v", err)
		}
		if len(out) > maxSize {
			return nil, corruptf(r.path, section, off, "unit of %d bytes exceeds %d", len(out), maxSize)
		}
		return out, nil
	}
	return nil, corruptf(r.path, section, off, "unknown codec %d", codec)
}

// cacheMode says how a read uses the shared page and dictionary caches.
type cacheMode uint8

const (
	cacheFill   cacheMode = iota // use cached units, add those read (queries)
	cacheNoFill                  // use cached units, add none (a single pass: compaction)
	cacheBypass                  // read every unit from the file (consistency checks)
)

// page returns a data page's decompressed body, through the page cache.
func (r *Reader) page(off, ln int64, mode cacheMode) ([]byte, error) {
	key := pageKey{r: r, off: off}
	if mode != cacheBypass {
		if b, ok := pages.get(key); ok {
			return b, nil
		}
	}
	body, err := r.readUnit(off, ln, "page", maxUnitSize)
	if err != nil {
		return nil, err
	}
	if mode == cacheFill {
		pages.put(key, body, int64(cap(body))+64)
	}
	return body, nil
}

// dict loads the dictionary of a chunk, through the dictionary cache.
func (r *Reader) dict(b int, c *chunkMeta) (*dictData, error) { return r.dictMode(b, c, cacheFill) }

func (r *Reader) dictMode(b int, c *chunkMeta, mode cacheMode) (*dictData, error) {
	key := dictKey{r: r, b: b, col: c.col}
	if mode != cacheBypass {
		if d, ok := dicts.get(key); ok {
			return d, nil
		}
	}
	body, err := r.readUnit(c.dictOff, c.dictLen, "dictionary", maxUnitSize)
	if err != nil {
		return nil, err
	}
	d, err := decodeDict(body, r.ft.cols[c.col].Type, c.dictEntries)
	if err != nil {
		return nil, corruptf(r.path, "dictionary", c.dictOff, "%v", err)
	}
	if mode == cacheFill {
		dicts.put(key, d, int64(len(body))+16*int64(len(d.strs))+8*int64(len(d.ints))+64)
	}
	return d, nil
}

func decodeDict(body []byte, t ColType, entries int) (*dictData, error) {
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
			prev += unzigzag(db.uvarint())
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

func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// DictStrings returns the sorted dictionary of a dictionary-encoded string
// chunk (nil if the chunk is absent or not dictionary encoded).
func (r *Reader) DictStrings(b, col int) ([]string, error) {
	c := r.chunk(b, col)
	if c == nil || c.enc != encDict || r.ft.cols[col].Type != TypeString {
		return nil, nil
	}
	d, err := r.dict(b, c)
	if err != nil {
		return nil, err
	}
	return d.strs, nil
}

// DictInts returns the sorted dictionary of a dictionary-encoded int chunk.
func (r *Reader) DictInts(b, col int) ([]int64, error) {
	c := r.chunk(b, col)
	if c == nil || c.enc != encDict || r.ft.cols[col].Type == TypeString {
		return nil, nil
	}
	d, err := r.dict(b, c)
	if err != nil {
		return nil, err
	}
	return d.ints, nil
}

// VecType is the vector type ReadColumn produces for a column type: arrays
// come back as String vectors of their encoded bytes, object presence as a
// Bool vector (true where present, NULL where absent).
func VecType(t ColType) vec.Type {
	switch t {
	case TypeBool, TypeObject:
		return vec.Bool
	case TypeInt64:
		return vec.Int64
	case TypeFloat64:
		return vec.Float64
	case TypeTimestamp:
		return vec.Timestamp
	}
	return vec.String
}

// ReadColumn decodes rows [from, to) of column col in block b into dst,
// which is reset. Dictionary-encoded strings come back as Codes+Dict.
// Strings alias buffers owned by nobody else and may be kept. The pages
// read are kept in the page cache.
func (r *Reader) ReadColumn(b, col, from, to int, dst *vec.Vector) error {
	return r.readColumn(b, col, from, to, dst, cacheFill)
}

// ReadColumnOnce is ReadColumn for a reader that reads each page once
// (compaction, consistency checks): it uses cached pages but does not add
// the ones it reads, which would push out those queries read again.
func (r *Reader) ReadColumnOnce(b, col, from, to int, dst *vec.Vector) error {
	return r.readColumn(b, col, from, to, dst, cacheNoFill)
}

func (r *Reader) readColumn(b, col, from, to int, dst *vec.Vector, mode cacheMode) error {
	bm := &r.ft.blocks[b]
	if from < 0 || to > bm.rows || from > to {
		return fmt.Errorf("segment: rows [%d,%d) outside block of %d", from, to, bm.rows)
	}
	t := r.ft.cols[col].Type
	n := to - from
	prepare(dst, VecType(t), n)
	c := r.chunk(b, col)
	if c == nil {
		dst.Nulls = vec.NewBitset(n)
		for i := 0; i < n; i++ {
			dst.Nulls.Set(i)
		}
		return nil
	}
	var dict *dictData
	if c.enc == encDict {
		var err error
		if dict, err = r.dictMode(b, c, mode); err != nil {
			return err
		}
		if t == TypeString {
			dst.Dict = dict.strs
			if dst.Dict == nil {
				dst.Dict = []string{}
			}
			dst.Codes = grow(dst.Codes, n)
			dst.Strs = dst.Strs[:0]
		}
	}
	for pi := range c.pages {
		p := &c.pages[pi]
		lo, hi := max(from, p.firstRow), min(to, p.firstRow+p.rows)
		if lo >= hi {
			continue
		}
		body, err := r.page(p.off, p.len, mode)
		if err != nil {
			return err
		}
		if err := decodePage(body, t, c, p, dict, lo-p.firstRow, hi-p.firstRow, dst, lo-from); err != nil {
			return corruptf(r.path, "page", p.off, "column %q: %v", r.ft.cols[col].Path, err)
		}
	}
	return nil
}

func prepare(v *vec.Vector, t vec.Type, n int) {
	v.Reset(t)
	v.Len = n
	switch t {
	case vec.Bool:
		v.Bools = grow(v.Bools, n)
	case vec.Int64, vec.Timestamp:
		v.Ints = grow(v.Ints, n)
	case vec.Float64:
		v.Floats = grow(v.Floats, n)
	case vec.String:
		v.Strs = grow(v.Strs, n)
	}
}

// grow returns s resized to n zeroed elements, reusing its array when it
// is large enough.
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		s = s[:n]
		clear(s)
		return s
	}
	return make([]T, n)
}

// decodePage writes page rows [lo, hi) into dst starting at dstOff.
func decodePage(body []byte, t ColType, c *chunkMeta, p *pageMeta, dict *dictData, lo, hi int, dst *vec.Vector, dstOff int) error {
	if len(body) < 1 {
		return errShort
	}
	rows := p.rows
	var bitmap []byte
	present := rows
	rest := body[1:]
	switch body[0] {
	case validAll:
	case validBitmap:
		nb := (rows + 7) / 8
		if len(rest) < nb {
			return errShort
		}
		bitmap, rest = rest[:nb], rest[nb:]
		present = 0
		for _, x := range bitmap {
			present += bits.OnesCount8(x)
		}
	default:
		return fmt.Errorf("bad validity kind %d", body[0])
	}
	isPresent := func(r int) bool { return bitmap == nil || bitmap[r>>3]&(1<<(r&7)) != 0 }
	setNull := func(i int) {
		if dst.Nulls == nil {
			dst.Nulls = vec.NewBitset(dst.Len)
		}
		dst.Nulls.Set(i)
	}

	// Value index of the first row we need: present rows before lo.
	k := 0
	if bitmap != nil {
		for r := 0; r < lo; r++ {
			if isPresent(r) {
				k++
			}
		}
	} else {
		k = lo
	}

	switch c.enc {
	case encNone:
		for r := lo; r < hi; r++ {
			if isPresent(r) {
				dst.Bools[dstOff+r-lo] = true
			} else {
				setNull(dstOff + r - lo)
			}
		}
		return nil
	case encBits:
		if len(rest) < (present+7)/8 {
			return errShort
		}
		for r := lo; r < hi; r++ {
			if isPresent(r) {
				dst.Bools[dstOff+r-lo] = rest[k>>3]&(1<<(k&7)) != 0
				k++
			} else {
				setNull(dstOff + r - lo)
			}
		}
		return nil
	case encPlain64:
		if len(rest) < 8*present {
			return errShort
		}
		for r := lo; r < hi; r++ {
			if isPresent(r) {
				u := binary.LittleEndian.Uint64(rest[8*k:])
				if t == TypeFloat64 {
					dst.Floats[dstOff+r-lo] = math.Float64frombits(u)
				} else {
					dst.Ints[dstOff+r-lo] = int64(u)
				}
				k++
			} else {
				setNull(dstOff + r - lo)
			}
		}
		return nil
	case encDelta:
		// Sequential: decode from the page start. The loop reads varints
		// by index into a local slice: a decbuf's reslicing through a
		// pointer costs a GC write barrier per value while GC runs.
		prev := int64(0)
		vi, pos := 0, 0
		for r := 0; r < hi; r++ {
			if !isPresent(r) {
				if r >= lo {
					setNull(dstOff + r - lo)
				}
				continue
			}
			x, n := binary.Uvarint(rest[pos:])
			if n <= 0 {
				return errShort
			}
			pos += n
			prev += unzigzag(x)
			vi++
			if r >= lo {
				dst.Ints[dstOff+r-lo] = prev
			}
		}
		if vi > present {
			return errors.New("delta values exceed present count")
		}
		return nil
	case encDict:
		w := int(c.width)
		if len(rest) < w*present {
			return errShort
		}
		nd := len(dict.strs) + len(dict.ints)
		for r := lo; r < hi; r++ {
			if !isPresent(r) {
				setNull(dstOff + r - lo)
				continue
			}
			var code uint32
			switch w {
			case 1:
				code = uint32(rest[k])
			case 2:
				code = uint32(binary.LittleEndian.Uint16(rest[2*k:]))
			default:
				code = binary.LittleEndian.Uint32(rest[4*k:])
			}
			k++
			if int(code) >= nd {
				return fmt.Errorf("dictionary code %d of %d", code, nd)
			}
			if t == TypeString {
				dst.Codes[dstOff+r-lo] = code
			} else {
				dst.Ints[dstOff+r-lo] = dict.ints[code]
			}
		}
		return nil
	case encUUID:
		if len(rest) < 16*present {
			return errShort
		}
		text := make([]byte, 0, 36*(hi-lo))
		for r := lo; r < hi; r++ {
			if !isPresent(r) {
				setNull(dstOff + r - lo)
				continue
			}
			start := len(text)
			text = appendUUIDText(text, rest[16*k:16*k+16])
			dst.Strs[dstOff+r-lo] = unsafeString(text[start:len(text):len(text)])
			k++
		}
		return nil
	case encBytes:
		// Lengths of all present values, then the bytes.
		lens := make([]uint32, present)
		total := uint64(0)
		pos := 0
		for i := range lens {
			l, n := binary.Uvarint(rest[pos:])
			if n <= 0 || l > uint64(len(rest)) {
				return errShort
			}
			pos += n
			lens[i] = uint32(l)
			total += l
		}
		data := rest[pos:]
		if uint64(len(data)) < total {
			return errShort
		}
		off := uint64(0)
		vi := 0
		for r := 0; r < hi; r++ {
			if !isPresent(r) {
				if r >= lo {
					setNull(dstOff + r - lo)
				}
				continue
			}
			l := uint64(lens[vi])
			if r >= lo {
				dst.Strs[dstOff+r-lo] = unsafeString(data[off : off+l])
			}
			off += l
			vi++
		}
		return nil
	}
	return fmt.Errorf("unknown encoding %d", c.enc)
}

// Check reads every unit of the segment, verifying checksums and that every
// page decodes with the row and value counts the footer gives.
func (r *Reader) Check() error {
	for b := range r.ft.blocks {
		if err := r.CheckBlock(b); err != nil {
			return err
		}
	}
	return r.CheckSections()
}

// CheckBlock reads every unit of block b from the file (not the caches),
// verifying checksums and that every page decodes with the row and value
// counts the footer gives and, for the timestamp column, in order and
// within the block's range.
func (r *Reader) CheckBlock(b int) error {
	var v vec.Vector
	bm := &r.ft.blocks[b]
	for ci := range bm.chunks {
		c := &bm.chunks[ci]
		if err := r.readColumn(b, c.col, 0, bm.rows, &v, cacheBypass); err != nil {
			return err
		}
		nulls := 0
		if v.Nulls != nil {
			nulls = v.Nulls.Count()
		}
		if bm.rows-nulls != c.present {
			return corruptf(r.path, "chunk", c.pages[0].off, "column %q block %d: %d values, footer says %d", r.ft.cols[c.col].Path, b, bm.rows-nulls, c.present)
		}
		if r.ft.cols[c.col].Type == TypeTimestamp && r.ft.cols[c.col].Path == "timestamp" {
			for i := 0; i < bm.rows; i++ {
				ts := v.Ints[i]
				if ts < bm.minTime || ts > bm.maxTime || (i > 0 && ts < v.Ints[i-1]) {
					return corruptf(r.path, "chunk", c.pages[0].off, "block %d: timestamps out of order or outside the block's range", b)
				}
			}
		}
	}
	return nil
}

// CheckSections reads every section unit, verifying its checksum.
func (r *Reader) CheckSections() error {
	for _, s := range r.ft.sections {
		if _, err := r.readUnit(s.off, s.len, "section "+s.name, maxUnitSize); err != nil {
			return err
		}
	}
	return nil
}

// BlockAt returns the block whose units (dictionaries and pages) hold byte
// offset off of the file, or -1 when off is in no block (the header, a
// section, the footer). It places a CorruptError's Offset: damage in a
// block costs that block's rows only.
func (r *Reader) BlockAt(off int64) int {
	r.spansOnce.Do(func() {
		r.spans = make([][2]int64, len(r.ft.blocks))
		for b := range r.ft.blocks {
			lo, hi := int64(-1), int64(-1)
			note := func(o, l int64) {
				if lo < 0 || o < lo {
					lo = o
				}
				hi = max(hi, o+l)
			}
			for _, c := range r.ft.blocks[b].chunks {
				if c.dictEntries > 0 {
					note(c.dictOff, c.dictLen)
				}
				for _, p := range c.pages {
					note(p.off, p.len)
				}
			}
			r.spans[b] = [2]int64{lo, hi}
		}
	})
	for b, sp := range r.spans {
		if sp[0] >= 0 && off >= sp[0] && off < sp[1] {
			return b
		}
	}
	return -1
}

// dataEnd is where units end and the footer begins.
func (r *Reader) dataEnd() int64 { return r.footOff }

// ReadUnit reads back a unit written with Writer.WriteUnit, verifying its
// checksum.
func (r *Reader) ReadUnit(off, length int64) ([]byte, error) {
	if !unitInRange(off, length, r.dataEnd()) {
		return nil, corruptf(r.path, "unit", off, "unit [%d,+%d) out of range", off, length)
	}
	return r.readUnit(off, length, "unit", maxUnitSize)
}

// ReadRows decodes the given rows (block-relative, ascending) of column col
// in block b into dst, compacted: dst row i is rows[i]. Only the pages
// holding those rows are read.
func (r *Reader) ReadRows(b, col int, rows []int32, dst *vec.Vector, scratch *vec.Vector) error {
	t := r.ft.cols[col].Type
	n := len(rows)
	prepare(dst, VecType(t), n)
	c := r.chunk(b, col)
	if c == nil {
		dst.Nulls = vec.NewBitset(n)
		for i := 0; i < n; i++ {
			dst.Nulls.Set(i)
		}
		return nil
	}
	i := 0
	for pi := range c.pages {
		p := &c.pages[pi]
		end := int32(p.firstRow + p.rows)
		if i >= n {
			break
		}
		if rows[i] >= end {
			continue
		}
		j := i
		for j < n && rows[j] < end {
			j++
		}
		lo, hi := int(rows[i]), int(rows[j-1])+1
		if err := r.ReadColumn(b, col, lo, hi, scratch); err != nil {
			return err
		}
		if scratch.Dict != nil && dst.Dict == nil {
			dst.Dict = scratch.Dict
			dst.Codes = grow(dst.Codes, n)
			dst.Strs = dst.Strs[:0]
		}
		for k := i; k < j; k++ {
			src := int(rows[k]) - lo
			if scratch.IsNull(src) {
				if dst.Nulls == nil {
					dst.Nulls = vec.NewBitset(n)
				}
				dst.Nulls.Set(k)
				continue
			}
			switch {
			case scratch.Dict != nil:
				dst.Codes[k] = scratch.Codes[src]
			case scratch.Type == vec.Bool:
				dst.Bools[k] = scratch.Bools[src]
			case scratch.Type == vec.Float64:
				dst.Floats[k] = scratch.Floats[src]
			case scratch.Type == vec.String:
				dst.Strs[k] = scratch.Strs[src]
			default:
				dst.Ints[k] = scratch.Ints[src]
			}
		}
		i = j
	}
	return nil
}

// ColumnBytes returns, per column index, the bytes its units take on disk
// (pages and dictionaries, trailers included).
func (r *Reader) ColumnBytes() []int64 {
	out := make([]int64, len(r.ft.cols))
	for _, b := range r.ft.blocks {
		for _, c := range b.chunks {
			out[c.col] += c.dictLen
			for _, p := range c.pages {
				out[c.col] += p.len
			}
		}
	}
	return out
}

// readUnitRaw reads a unit and verifies its checksum, returning the whole
// unit, its payload and codec without decompressing.
func (r *Reader) readUnitRaw(off, ln int64, section string) (raw, payload []byte, codec byte, err error) {
	if !unitInRange(off, ln, r.dataEnd()) {
		return nil, nil, 0, corruptf(r.path, section, off, "unit [%d,+%d) out of range", off, ln)
	}
	buf := make([]byte, ln)
	if n, err := r.f.ReadAt(buf, off); n < len(buf) {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return nil, nil, 0, corruptf(r.path, section, off, "read: %v", ioCause(err))
	}
	n := len(buf) - unitTrailerSize
	codec = buf[n]
	if crc32.Update(0, castagnoli, buf[:n+1]) != binary.LittleEndian.Uint32(buf[n+1:]) {
		return nil, nil, 0, corruptf(r.path, section, off, "crc mismatch")
	}
	if codec != codecRaw && codec != codecZstd {
		return nil, nil, 0, corruptf(r.path, section, off, "unknown codec %d", codec)
	}
	return buf, buf[:n], codec, nil
}
