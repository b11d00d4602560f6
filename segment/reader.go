package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"sync"
	"sync/atomic"
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

// histDecoders pools the decoders of codec 2 units: each decodes one
// unit at a time, against the history of that unit's chunk.
var histDecoders sync.Pool // of *zstd.Decoder

// decodeWithHistory decompresses a codecZstdHistory payload into dst.
func decodeWithHistory(src, dst, hist []byte) ([]byte, error) {
	d, _ := histDecoders.Get().(*zstd.Decoder)
	if d == nil {
		var err error
		d, err = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(maxUnitSize),
			zstd.IgnoreChecksum(true),
			zstd.WithDecoderDictRaw(historyDictID, hist))
		if err != nil {
			panic(fmt.Sprintf("segment: zstd decoder: %v", err)) // only bad options
		}
	} else if err := d.ResetWithOptions(nil, zstd.WithDecoderDictDelete(), zstd.WithDecoderDictRaw(historyDictID, hist)); err != nil {
		return nil, err
	}
	out, err := d.DecodeAll(src, dst)
	histDecoders.Put(d)
	return out, err
}

// Reader reads one segment file. It is safe for concurrent use.
type Reader struct {
	f       vfs.File
	path    string
	size    int64
	version uint8
	footOff int64 // where the footer unit starts: every other unit ends before it
	footLen int64
	ft      *footer // the resident part of the footer
	colIdx  map[colKey]int
	tsCol   int // the ("timestamp", TypeTimestamp) column, -1 if none

	// details holds, per block, its full footer record while the block
	// directory cache has it (footcache.go).
	details []atomic.Pointer[blockDetail]
	// body holds the decompressed footer unit while the cache has it.
	body atomic.Pointer[blockDetail]
	// resident is what the reader adds to FooterStats.ResidentBytes.
	resident int64
	// closed is set by Close, under the block directory cache's lock.
	closed bool
}

type colKey struct {
	path string
	typ  ColType
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
	// StoredBytes is what the chunk's units take in the file (pages,
	// dictionary, history).
	StoredBytes int64
	// Derived says the chunk is derived text (encDerived): a read of it
	// reads the columns it refers to as well.
	Derived bool
}

// PageRange describes one data page of a chunk: its row range, relative
// to its block, and (format version 2: int64, timestamp, float64 and
// dictionary-encoded string columns) how many of its rows have a value and
// the range of those values, so that a scan can skip pages and a
// newest-first read can find the newest rows of a block whose rows are not
// in time order.
type PageRange struct {
	FirstRow, Rows int
	// Present is the number of rows with a value, -1 when unknown.
	Present int
	// HasRange says MinInt/MaxInt (int64, timestamp; for a
	// dictionary-encoded string chunk, the codes: indexes into its sorted
	// dictionary) or MinFloat/MaxFloat (float64, NaN left out) bound the
	// page's values.
	HasRange           bool
	MinInt, MaxInt     int64
	MinFloat, MaxFloat float64
}

// Open reads and validates the trailer and footer of a segment. path is used
// in error messages only. The Reader takes ownership of f.
func Open(f vfs.File, path string) (*Reader, error) {
	size, err := f.Size()
	if err != nil {
		return nil, &ReadError{Path: path, Offset: -1, Section: "file", Err: err}
	}
	r := &Reader{f: f, path: path, size: size}
	if size < headerSize+trailerSize+unitTrailerSize {
		return nil, corruptf(path, "file", -1, "size %d too small for a segment", size)
	}
	var hdr [headerSize]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		return nil, readFailed(path, "header", 0, err)
	}
	if string(hdr[:4]) != magic {
		return nil, corruptf(path, "header", 0, "bad magic %q", hdr[:4])
	}
	r.version = hdr[4]
	var tr [trailerSize]byte
	trOff := size - trailerSize
	if _, err := f.ReadAt(tr[:], trOff); err != nil {
		return nil, readFailed(path, "trailer", trOff, err)
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
	r.footOff, r.footLen = footOff, footLen
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
	r.tsCol = r.Column("timestamp", TypeTimestamp)
	r.details = make([]atomic.Pointer[blockDetail], len(ft.blocks))
	r.resident = ft.memSize() + 8*int64(len(r.details)) + int64(len(r.colIdx))*48
	details.resident.Add(r.resident)
	return r, nil
}

// Close closes the file.
func (r *Reader) Close() error {
	dropReader(r)
	if details.dropReader(r) {
		details.resident.Add(-r.resident)
	}
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

// chunk returns the full footer record of column col's chunk in block b
// (nil when the block has none), from the block directory cache or
// decoded again from the footer.
func (r *Reader) chunk(b, col int) (*chunkMeta, error) {
	if col < 0 || col >= len(r.ft.cols) || r.ft.chunkSumOf(b, col) == nil {
		return nil, nil
	}
	bm, err := r.block(b)
	if err != nil {
		return nil, err
	}
	i := bm.byCol[col]
	if i < 0 {
		// The record decoded again lacks a chunk the open found: the
		// footer unit is not the one the open read.
		return nil, corruptf(r.path, "footer", r.footOff, "block %d: column %d: %v", b, col, errFooterChanged)
	}
	return &bm.chunks[i], nil
}

// Chunk describes column col in block b; ok is false when no row of the
// block has a value in that column. It reads only what the open segment
// keeps resident (Pages gives the chunk's pages).
func (r *Reader) Chunk(b, col int) (ChunkInfo, bool) {
	if col < 0 || col >= len(r.ft.cols) {
		return ChunkInfo{}, false
	}
	c := r.ft.chunkSumOf(b, col)
	if c == nil {
		return ChunkInfo{}, false
	}
	ci := ChunkInfo{
		Present:     int(c.present),
		HasNumRange: c.flags&statNum != 0,
		HasMinStr:   c.flags&statMinStr != 0, HasMaxStr: c.flags&statMaxStr != 0,
		MinStr: c.minStr(r.ft), MaxStr: c.maxStr(r.ft),
		DictEntries: int(c.dictEntries),
		StoredBytes: c.stored,
		Derived:     c.enc == encDerived,
	}
	if r.ft.cols[col].Type == TypeFloat64 {
		ci.MinFloat, ci.MaxFloat = math.Float64frombits(c.lo), math.Float64frombits(c.hi)
	} else {
		ci.MinInt, ci.MaxInt = int64(c.lo), int64(c.hi)
	}
	return ci, true
}

// Pages lists the data pages of column col's chunk in block b (empty when
// the block has none): Pages.At(i) describes page i. The list is a view of
// the block's directory (footcache.go), which a read of a block not in
// the cache decodes from the footer again: an error is that read's.
func (r *Reader) Pages(b, col int) (PageList, error) {
	c, err := r.chunk(b, col)
	if c == nil || err != nil {
		return PageList{}, err
	}
	return c.pages, nil
}

// Version returns the file's format version.
func (r *Reader) Version() uint8 { return r.version }

// TimePages returns the pages of the timestamp column in block b, with
// their time ranges (format version 2; version 1 pages have no range);
// empty when the block has no timestamp column.
func (r *Reader) TimePages(b int) (PageList, error) {
	return r.Pages(b, r.tsCol)
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
	body, pooled, err := r.readUnitBuf(off, ln, section, maxSize, false, nil)
	if pooled {
		panic("segment: readUnitBuf returned a pooled buffer when asked not to") // a bug, not input
	}
	return body, err
}

// historyOf returns the history a codec 2 unit is decoded against (nil:
// the unit may not have that codec).
type historyOf func() ([]byte, error)

// readUnitBuf reads a unit, verifies its CRC and decompresses it (codec 2
// against the history hist returns). The bytes read from the file go
// through a pooled buffer; with pool, the payload may be one too (pooled
// says so), for the caller to give back with putBuf once nothing refers
// to it.
func (r *Reader) readUnitBuf(off, ln int64, section string, maxSize int, pool bool, hist historyOf) (body []byte, pooled bool, err error) {
	if ln < unitTrailerSize || ln > int64(maxUnitSize) {
		return nil, false, corruptf(r.path, section, off, "unit length %d", ln)
	}
	buf := getBuf(int(ln))
	if n, err := r.f.ReadAt(buf, off); n < len(buf) {
		putBuf(buf)
		return nil, false, readFailed(r.path, section, off, err)
	}
	n := len(buf) - unitTrailerSize
	codec := buf[n]
	want := binary.LittleEndian.Uint32(buf[n+1:])
	got := crc32.Update(0, castagnoli, buf[:n+1])
	if got != want {
		putBuf(buf)
		return nil, false, corruptf(r.path, section, off, "crc mismatch")
	}
	switch codec {
	case codecRaw:
		if pool {
			return buf[:n], true, nil // cap kept: putBuf knows it by its class
		}
		out := make([]byte, n)
		copy(out, buf)
		putBuf(buf)
		return out, false, nil
	case codecZstd, codecZstdHistory:
		if claimed, lies := frameSizeLies(buf[:n]); lies {
			putBuf(buf)
			return nil, false, corruptf(r.path, section, off, "zstd frame of %d bytes claims %d", n, claimed)
		}
		var h []byte
		if codec == codecZstdHistory {
			if hist == nil {
				putBuf(buf)
				return nil, false, corruptf(r.path, section, off, "codec %d outside a chunk with a history", codec)
			}
			if h, err = hist(); err != nil {
				putBuf(buf)
				var ce *CorruptError
				if errors.As(err, &ce) {
					// The page cannot be read: say so at the page, whose
					// block is what is lost.
					return nil, false, corruptf(r.path, section, off, "history: %v", ce.Err)
				}
				return nil, false, err
			}
		}
		var dst []byte
		if pool {
			// The frame header says how big the payload is: decode into a
			// pooled buffer of that size (bounded: a corrupt size is
			// refused, and the decoder never grows past maxUnitSize).
			var h zstd.Header
			if h.Decode(buf[:n]) == nil && h.HasFCS && h.FrameContentSize <= uint64(maxSize) {
				dst = getBuf(int(h.FrameContentSize))[:0]
				pooled = true
			}
		}
		var out []byte
		if h != nil {
			out, err = decodeWithHistory(buf[:n], dst, h)
		} else {
			out, err = sharedDecoder().DecodeAll(buf[:n], dst)
		}
		putBuf(buf)
		if pooled && (err != nil || cap(out) != cap(dst)) {
			putBuf(dst) // grown (a lying header) or failed: dst is ours again
			pooled = false
		}
		if err != nil {
			return nil, false, corruptf(r.path, section, off, "zstd: %v", err)
		}
		if len(out) > maxSize {
			if pooled {
				putBuf(out)
			}
			return nil, false, corruptf(r.path, section, off, "unit of %d bytes exceeds %d", len(out), maxSize)
		}
		return out, pooled, nil
	}
	putBuf(buf)
	return nil, false, corruptf(r.path, section, off, "unknown codec %d", codec)
}

// cacheMode says how a read uses the shared page and dictionary caches.
type cacheMode uint8

const (
	cacheFill   cacheMode = iota // use cached units, add those read (queries)
	cacheNoFill                  // use cached units, add none (a single pass: compaction, scans of much data)
	cacheBypass                  // read every unit from the file (consistency checks)
)

// page returns a unit's decompressed body (a data page or a dictionary
// page), through the page cache. pooled says the body is a pooled buffer
// the caller gives back (putBuf) once decoded; a cached body is never
// given back.
func (r *Reader) page(off, ln int64, section string, mode cacheMode, hist historyOf) (body []byte, pooled bool, err error) {
	key := pageKey{r: r, off: off}
	if mode != cacheBypass {
		if b, ok := pages.get(key); ok {
			return b, false, nil
		}
	}
	body, pooled, err = r.readUnitBuf(off, ln, section, maxUnitSize, true, hist)
	if err != nil {
		return nil, false, err
	}
	if mode == cacheFill && pages.put(key, body, int64(cap(body))+64) {
		pooled = false // the cache owns it now
	}
	return body, pooled, nil
}

// memoPage is page for a read of n rows of data page p of column col:
// through ctl's memo when it has one, which keeps a page read for a few of
// its rows.
func (r *Reader) memoPage(p *pageMeta, col, n int, ctl readCtl, hist historyOf) (body []byte, pooled bool, err error) {
	if ctl.memo == nil || ctl.mode == cacheBypass {
		return r.page(p.off, p.len, "page", ctl.mode, hist)
	}
	if body, ok := ctl.memo.get(r, p.off); ok {
		return body, false, nil
	}
	if !memoWants(n, p.rows) || !ctl.memo.keeps(r.ft.cols[col].Path) {
		return r.page(p.off, p.len, "page", ctl.mode, hist)
	}
	key := pageKey{r: r, off: p.off}
	if body, ok := pages.get(key); ok {
		return body, false, nil // the page cache keeps it already
	}
	// A buffer of the page's own size, not a pooled one: a pooled buffer
	// is of a power-of-two class, and a page just over 128 KiB (a page of
	// URLs) would have been decoded into 256 KiB, then copied for the
	// memo to hold no more than the page.
	if body, _, err = r.readUnitBuf(p.off, p.len, "page", maxUnitSize, false, hist); err != nil {
		return nil, false, err
	}
	if ctl.mode == cacheFill && pages.put(key, body, int64(cap(body))+64) {
		return body, false, nil // the cache owns it now
	}
	ctl.memo.put(r, p.off, body) // when the memo is full, the collector takes it
	return body, false, nil
}

// stringBytes returns the bytes of s without copying: read only.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// DictStrings returns the sorted dictionary of a dictionary-encoded string
// chunk (nil if the chunk is absent or not dictionary encoded).
func (r *Reader) DictStrings(b, col int) ([]string, error) {
	c, err := r.chunk(b, col)
	if c == nil || err != nil || c.enc != encDict || r.ft.cols[col].Type != TypeString {
		return nil, err
	}
	d, err := r.dict(b, c)
	if err != nil {
		return nil, err
	}
	return d.strs, nil
}

// DictInts returns the sorted dictionary of a dictionary-encoded int chunk.
func (r *Reader) DictInts(b, col int) ([]int64, error) {
	c, err := r.chunk(b, col)
	if c == nil || err != nil || c.enc != encDict || r.ft.cols[col].Type == TypeString {
		return nil, err
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
// which is reset. Dictionary-encoded strings come back as Codes+Dict,
// other strings as Bytes+Offs (copies: nothing aliases a page buffer);
// both may be kept. The pages read are kept in the page cache.
func (r *Reader) ReadColumn(b, col, from, to int, dst *vec.Vector) error {
	return r.readColumn(b, col, from, to, dst, cacheFill)
}

// ReadColumnOnce is ReadColumn for a reader that reads each page once
// (compaction, consistency checks, a scan of much data): it uses cached
// pages but does not add the ones it reads, which would push out those
// queries read again.
func (r *Reader) ReadColumnOnce(b, col, from, to int, dst *vec.Vector) error {
	return r.readColumn(b, col, from, to, dst, cacheNoFill)
}

// ReadOptions say how a read uses the page cache and its destination.
type ReadOptions struct {
	// Once reads without adding the pages read to the page cache (a
	// single pass over much data).
	Once bool
	// Reuse says dst is the caller's own scratch vector, never handed on
	// (a predicate's column): the buffer its strings are copied into is
	// kept and reused, so that strings read into it before are
	// overwritten.
	Reuse bool
	// Memo, when set, keeps the pages read for a few of their rows and
	// answers later reads of those pages through it (see UnitMemo).
	Memo *UnitMemo
}

// readCtl is how one read goes: its use of the caches, whether its
// destination is reused scratch, and the memo it goes through (or nil).
type readCtl struct {
	mode  cacheMode
	reuse bool
	memo  *UnitMemo
}

func (o ReadOptions) mode() cacheMode {
	if o.Once {
		return cacheNoFill
	}
	return cacheFill
}

// Read is ReadColumn of rows [from, to) when rows is nil, else ReadRows of
// rows, with opts.
func (r *Reader) Read(b, col, from, to int, rows []int32, dst *vec.Vector, opts ReadOptions) error {
	ctl := readCtl{mode: opts.mode(), reuse: opts.Reuse, memo: opts.Memo}
	if rows != nil {
		return r.readRowsInto(b, col, rows, dst, ctl)
	}
	return r.readColumnInto(b, col, from, to, dst, ctl)
}

func (r *Reader) readColumn(b, col, from, to int, dst *vec.Vector, mode cacheMode) error {
	return r.readColumnInto(b, col, from, to, dst, readCtl{mode: mode})
}

func (r *Reader) readColumnInto(b, col, from, to int, dst *vec.Vector, ctl readCtl) error {
	mode := ctl.mode
	bm := &r.ft.blocks[b]
	if from < 0 || to > bm.rows || from > to {
		return fmt.Errorf("segment: rows [%d,%d) outside block of %d", from, to, bm.rows)
	}
	t := r.ft.cols[col].Type
	n := to - from
	prepare(dst, VecType(t), n, ctl.reuse)
	c, err := r.chunk(b, col)
	if err != nil {
		return err
	}
	if c == nil {
		setAllNull(dst, n)
		return nil
	}
	out := pageOut{dst: dst}
	if c.enc == encDerived {
		release, err := r.readDerivedRefs(b, c, from, to, nil, ctl, &out)
		if err != nil {
			return err
		}
		defer release()
	}
	if c.enc == encDict {
		dict, err := r.dictMode(b, c, mode)
		if err != nil {
			return err
		}
		out.dict = dict
		if t == TypeString {
			toCodes(dst, dict.strs, n)
		}
	}
	hist := r.history(c, mode)
	reserved := false
	for pi := pageOf(c.pages, 0, from); pi < c.pages.Len(); pi++ {
		if first, _ := c.pages.Span(pi); first >= to {
			break
		}
		pm := c.page(pi)
		p := &pm
		lo, hi := max(from, p.firstRow), min(to, p.firstRow+p.rows)
		if lo >= hi {
			continue
		}
		out.off = lo - from
		if err := r.decodeFrom(b, col, c, p, rowSel{lo: lo - p.firstRow, hi: hi - p.firstRow}, &out, ctl, hist); err != nil {
			return err
		}
		if done := hi - from; !reserved && len(dst.Offs) > 0 && done < n && len(dst.Bytes) > 0 {
			// Strings of the rows left, at the rate of the first page: one
			// allocation for the rest of a read of many pages.
			rest := int64(len(dst.Bytes)) * int64(n-done) / int64(done)
			out.reserve(int(rest + rest/8))
			reserved = true
		}
	}
	return nil
}

// history returns the history unit of chunk c, read once for the pages of
// one read, through the page cache (the pages of a block share it).
func (r *Reader) history(c *chunkMeta, mode cacheMode) historyOf {
	if c.histOff == 0 {
		return nil
	}
	var body []byte
	return func() ([]byte, error) {
		if body != nil {
			return body, nil
		}
		key := pageKey{r: r, off: c.histOff}
		if mode != cacheBypass {
			if b, ok := pages.get(key); ok {
				body = b
				return b, nil
			}
		}
		b, err := r.readUnit(c.histOff, c.histLen, "history", maxHistoryBytes)
		if err == nil && mode == cacheFill {
			pages.put(key, b, int64(cap(b))+64)
		}
		body = b
		return b, err
	}
}

// decodeFrom reads page p of chunk c and decodes the rows sel wants, the
// history (if any) through hist.
func (r *Reader) decodeFrom(b, col int, c *chunkMeta, p *pageMeta, sel rowSel, out *pageOut, ctl readCtl, hist historyOf) error {
	var err error
	done := false
	if ctl.mode != cacheBypass { // a check reads every page
		done, err = decodeFromStats(p, r.ft.cols[col].Type, c, sel, out)
	}
	if !done {
		var body []byte
		var pooled bool
		if body, pooled, err = r.memoPage(p, col, sel.n(), ctl, hist); err != nil {
			return err
		}
		var pv pageView
		if pv, err = parsePage(body, p.rows, r.version); err == nil {
			err = decodePage(&pv, r.ft.cols[col].Type, c, sel, out)
		}
		if pooled {
			putBuf(body)
		}
	}
	var ce *CorruptError
	if err != nil && !errors.As(err, &ce) && err != errTooBig {
		err = corruptf(r.path, "page", p.off, "column %q block %d: %v", r.ft.cols[col].Path, b, err)
	}
	return err
}

// prepare resets v to n rows of vector type t. Strings start in
// Bytes+Offs form, with an empty Bytes (reuse: the old one's capacity).
func prepare(v *vec.Vector, t vec.Type, n int, reuse bool) {
	keep := v.Bytes[:0]
	v.Reset(t)
	if reuse {
		v.Bytes = keep
	}
	v.Len = n
	switch t {
	case vec.Bool:
		v.Bools = grow(v.Bools, n)
	case vec.Int64, vec.Timestamp:
		v.Ints = grow(v.Ints, n)
	case vec.Float64:
		v.Floats = grow(v.Floats, n)
	case vec.String:
		v.Offs = grow(v.Offs, n+1)
	}
}

// toCodes switches a prepared String vector to dictionary codes.
func toCodes(v *vec.Vector, dict []string, n int) {
	v.Dict = dict
	if v.Dict == nil {
		v.Dict = []string{}
	}
	v.Codes = grow(v.Codes, n)
	v.Offs = v.Offs[:0]
}

func setAllNull(v *vec.Vector, n int) {
	v.Nulls = vec.NewBitset(n)
	for i := 0; i < n; i++ {
		v.Nulls.Set(i)
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
	// The block's directory, if not cached, from the file: the reads
	// below find it in the block directory cache.
	var bm *blockMeta
	var err error
	if d := r.details[b].Load(); d != nil {
		bm = &d.bm
	} else if bm, err = r.loadBlock(b, cacheBypass); err != nil {
		return err
	}
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
			return corruptf(r.path, "chunk", c.page(0).off, "column %q block %d: %d values, footer says %d", r.ft.cols[c.col].Path, b, bm.rows-nulls, c.present)
		}
		if r.ft.cols[c.col].Type == TypeTimestamp && r.ft.cols[c.col].Path == "timestamp" {
			for i := 0; i < bm.rows; i++ {
				ts := v.Ints[i]
				if ts < bm.minTime || ts > bm.maxTime || (i > 0 && ts < v.Ints[i-1]) {
					return corruptf(r.path, "chunk", c.page(0).off, "block %d: timestamps out of order or outside the block's range", b)
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
	for b := range r.ft.blocks {
		sp := r.ft.blocks[b].span
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

// ReadRows decodes the given rows (block-relative, in any order, repeats
// allowed; ascending is cheapest) of column col in block b into dst,
// compacted: dst row i is rows[i]. Only the pages
// holding those rows are read, and of a dictionary-encoded chunk not in
// the dictionary cache, when the rows are few, only the dictionary pages
// holding their entries: such strings come back as Bytes+Offs instead of
// codes. The pages read are kept in the page cache.
func (r *Reader) ReadRows(b, col int, rows []int32, dst *vec.Vector) error {
	return r.readRows(b, col, rows, dst, cacheFill)
}

// ReadRowsOnce is ReadRows without adding the pages read to the cache.
func (r *Reader) ReadRowsOnce(b, col int, rows []int32, dst *vec.Vector) error {
	return r.readRows(b, col, rows, dst, cacheNoFill)
}

func (r *Reader) readRows(b, col int, rows []int32, dst *vec.Vector, mode cacheMode) error {
	return r.readRowsInto(b, col, rows, dst, readCtl{mode: mode})
}

func (r *Reader) readRowsInto(b, col int, rows []int32, dst *vec.Vector, ctl readCtl) error {
	mode := ctl.mode
	bm := &r.ft.blocks[b]
	t := r.ft.cols[col].Type
	n := len(rows)
	for i, x := range rows {
		if x < 0 || int(x) >= bm.rows {
			return fmt.Errorf("segment: row %d outside the block of %d rows", x, bm.rows)
		}
		if i > 0 && x <= rows[i-1] {
			return r.readRowsAnyOrder(b, col, rows, dst, ctl)
		}
	}
	prepare(dst, VecType(t), n, ctl.reuse)
	c, err := r.chunk(b, col)
	if err != nil {
		return err
	}
	if c == nil {
		setAllNull(dst, n)
		return nil
	}
	valueTag := "" // set: the values read are kept (rowvalues.go)
	if keepsRowValues(c, t, n, bm.rows, mode) {
		valueTag = rowValueTag(col)
		if r.rowValuesKept(bm.firstRow, valueTag, rows, dst) {
			return nil
		}
	}
	out := pageOut{dst: dst}
	if c.enc == encDerived {
		release, err := r.readDerivedRefs(b, c, 0, 0, rows, ctl, &out)
		if err != nil {
			return err
		}
		defer release()
	}
	if c.enc == encDict {
		look, err := r.newDictLookup(b, c, mode)
		if err != nil {
			return err
		}
		switch {
		case look.full != nil:
			out.dict = look.full
		case n*8 <= c.dictEntries:
			// Few rows of a big dictionary: read the entries they use.
			out.look = look
			defer look.release()
		default:
			if out.dict, err = r.dictMode(b, c, mode); err != nil {
				return err
			}
		}
		if out.dict != nil && t == TypeString {
			toCodes(dst, out.dict.strs, n)
		}
	}
	i := 0
	hist := r.history(c, mode)
	for pi := 0; i < n; pi++ {
		// The page of the next row wanted: a few rows of a block touch a
		// few of its pages, found without describing the others.
		if pi = pageOf(c.pages, pi, int(rows[i])); pi >= c.pages.Len() {
			break
		}
		pm := c.page(pi)
		p := &pm
		end := int32(p.firstRow + p.rows)
		j := i
		for j < n && rows[j] < end {
			j++
		}
		out.off = i
		if err := r.decodeFrom(b, col, c, p, rowSel{list: rows[i:j], base: p.firstRow}, &out, ctl, hist); err != nil {
			return err
		}
		i = j
	}
	if valueTag != "" && i == n {
		r.keepRowValues(bm.firstRow, valueTag, rows, dst)
	}
	return nil
}

// pageOf returns the first page of pages at or after page from whose rows
// end after row (a row of the pages' block), or pages.Len() when none
// does. Pages continue each other in row order, so their ends ascend.
func pageOf(pages PageList, from, row int) int {
	lo, hi := from, pages.Len()
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if _, end := pages.Span(m); end > row {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// readRowsAnyOrder reads rows that are not strictly ascending: the
// distinct rows in ascending order, then each requested row from them.
func (r *Reader) readRowsAnyOrder(b, col int, rows []int32, dst *vec.Vector, ctl readCtl) error {
	uniq := slices.Clone(rows)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	var tmp vec.Vector
	ctl.reuse = false
	if err := r.readRowsInto(b, col, uniq, &tmp, ctl); err != nil {
		return err
	}
	n := len(rows)
	prepare(dst, tmp.Type, n, false)
	if tmp.Dict != nil {
		toCodes(dst, tmp.Dict, n)
	}
	for i, x := range rows {
		k, _ := slices.BinarySearch(uniq, x)
		if tmp.IsNull(k) {
			if dst.Nulls == nil {
				dst.Nulls = vec.NewBitset(n)
			}
			dst.Nulls.Set(i)
		}
		switch {
		case tmp.Dict != nil:
			dst.Codes[i] = tmp.Codes[k]
		case tmp.Type == vec.String:
			dst.Bytes = append(dst.Bytes, tmp.BytesAt(k)...)
			dst.Offs[i+1] = uint32(len(dst.Bytes))
		case tmp.Type == vec.Bool:
			dst.Bools[i] = tmp.Bools[k]
		case tmp.Type == vec.Float64:
			dst.Floats[i] = tmp.Floats[k]
		default:
			dst.Ints[i] = tmp.Ints[k]
		}
	}
	return nil
}

// ColumnBytes returns, per column index, the bytes its units take on disk
// (pages, dictionaries and histories, trailers included).
func (r *Reader) ColumnBytes() []int64 {
	out := make([]int64, len(r.ft.cols))
	for _, c := range r.ft.chunks {
		out[c.col] += c.stored
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
		return nil, nil, 0, readFailed(r.path, section, off, err)
	}
	n := len(buf) - unitTrailerSize
	codec = buf[n]
	if crc32.Update(0, castagnoli, buf[:n+1]) != binary.LittleEndian.Uint32(buf[n+1:]) {
		return nil, nil, 0, corruptf(r.path, section, off, "crc mismatch")
	}
	if codec != codecRaw && codec != codecZstd && (codec != codecZstdHistory || r.version < FormatV2) {
		return nil, nil, 0, corruptf(r.path, section, off, "unknown codec %d", codec)
	}
	return buf, buf[:n], codec, nil
}
