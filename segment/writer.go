package segment

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/sediment/sediment/internal/vfs"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriterOptions tune how a segment is written. The zero value means
// defaults.
type WriterOptions struct {
	// PageBytes is the target encoded size of a data page before
	// compression. Smaller pages let a query that needs a few rows
	// decompress less; larger pages compress better. Default 1 MiB (pages also
	// stop at PageRows rows).
	PageBytes int
	// ZstdLevel is the klauspost/compress zstd level: 1 fastest, 2 default,
	// 3 better, 4 best. Default 1.
	ZstdLevel int
	// PageRows caps the rows of a page whatever their size (default 8192):
	// the newest rows of a block, which most queries want, then sit in a
	// small last page even for narrow columns (timestamps, dictionary
	// codes) that would otherwise fill a block's worth of rows per page.
	PageRows int
}

func (o *WriterOptions) withDefaults() WriterOptions {
	out := WriterOptions{PageBytes: 1 << 20, ZstdLevel: 1, PageRows: 8192}
	if o != nil {
		if o.PageBytes > 0 {
			out.PageBytes = o.PageBytes
		}
		if o.PageRows > 0 {
			out.PageRows = o.PageRows
		}
		if o.ZstdLevel >= 1 && o.ZstdLevel <= 4 {
			out.ZstdLevel = o.ZstdLevel
		}
	}
	return out
}

// ColumnDesc names a column: a field path and a physical type. For array
// columns, Elem lists the element field paths and types seen (relative to
// the element; an empty path is a scalar element).
type ColumnDesc struct {
	Path string
	Type ColType
	Elem []ElemField
}

// ElemField is a field of an array column's elements.
type ElemField struct {
	Path string
	Type ColType
}

var (
	encodersMu sync.Mutex
	encoders   [5]*zstd.Encoder
)

// encoderFor returns the shared encoder of a level; EncodeAll is safe for
// concurrent use, so one per level serves every writer.
func encoderFor(level int) *zstd.Encoder {
	encodersMu.Lock()
	defer encodersMu.Unlock()
	if encoders[level] == nil {
		e, err := zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstd.EncoderLevel(level)),
			zstd.WithEncoderConcurrency(2),
			// Units are pages of ~PageBytes and dictionaries: a small
			// window loses almost nothing and spares the 8 MiB-per-encoder
			// history buffers of the default.
			zstd.WithWindowSize(1<<20),
			zstd.WithZeroFrames(true),
			zstd.WithEncoderCRC(false)) // units carry their own CRC32-C
		if err != nil {
			panic(fmt.Sprintf("segment: zstd encoder: %v", err)) // only bad options
		}
		encoders[level] = e
	}
	return encoders[level]
}

// Writer writes one segment file. Use it from one goroutine: WriteBlock for
// each block in time order, AddSection for each section, then Finish.
type Writer struct {
	f    vfs.File
	bw   *bufio.Writer
	off  int64
	opts WriterOptions
	enc  *zstd.Encoder

	cols     []ColumnDesc
	blocks   []blockMeta
	cur      *blockMeta // the block being written (BeginBlock..EndBlock)
	curCols  []bool     // columns of cur written so far
	sections []sectionMeta
	rows     int
	minTime  int64
	maxTime  int64
	tsCol    int

	scratch []byte
	comp    []byte
	err     error
}

// NewWriter starts a segment in f (which must be empty) with the given
// column directory. One column must be ("timestamp", TypeTimestamp).
func NewWriter(f vfs.File, cols []ColumnDesc, opts *WriterOptions) (*Writer, error) {
	w := &Writer{f: f, bw: bufio.NewWriterSize(f, 1<<20), opts: opts.withDefaults(), cols: cols, tsCol: -1}
	// Refuse what the reader would reject: a file written here must read
	// back.
	if len(cols) > MaxColumns {
		return nil, fmt.Errorf("segment: %d columns exceeds %d", len(cols), MaxColumns)
	}
	for i, c := range cols {
		if c.Path == "timestamp" && c.Type == TypeTimestamp {
			w.tsCol = i
		}
		if !c.Type.valid() {
			return nil, fmt.Errorf("segment: column %q: invalid type %d", c.Path, c.Type)
		}
		if len(c.Path) > MaxPathLen {
			return nil, fmt.Errorf("segment: column path of %d bytes exceeds %d", len(c.Path), MaxPathLen)
		}
		if len(c.Elem) > MaxColumns {
			return nil, fmt.Errorf("segment: column %q: %d array element fields exceeds %d", c.Path, len(c.Elem), MaxColumns)
		}
		for _, e := range c.Elem {
			if len(e.Path) > MaxPathLen || !e.Type.valid() {
				return nil, fmt.Errorf("segment: column %q: bad array element field (%d-byte path, type %d)", c.Path, len(e.Path), e.Type)
			}
		}
	}
	if w.tsCol < 0 {
		return nil, errors.New("segment: no timestamp column")
	}
	w.enc = encoderFor(w.opts.ZstdLevel)
	hdr := []byte{magic[0], magic[1], magic[2], magic[3], FormatLatest, 0, 0, 0}
	w.write(hdr)
	return w, w.err
}

func (w *Writer) write(p []byte) {
	if w.err != nil {
		return
	}
	n, err := w.bw.Write(p)
	w.off += int64(n)
	w.err = err
}

// writeUnit compresses payload (when that pays) and writes it as a unit,
// returning its offset and length.
func (w *Writer) writeUnit(payload []byte, compress bool) (int64, int64) {
	off := w.off
	codec := byte(codecRaw)
	body := payload
	if compress && len(payload) > 64 {
		w.comp = w.enc.EncodeAll(payload, w.comp[:0])
		if len(w.comp) < len(payload)-len(payload)/32 {
			codec, body = codecZstd, w.comp
		}
	}
	crc := crc32.Update(0, castagnoli, body)
	crc = crc32.Update(crc, castagnoli, []byte{codec})
	w.write(body)
	var tr [unitTrailerSize]byte
	tr[0] = codec
	binary.LittleEndian.PutUint32(tr[1:], crc)
	w.write(tr[:])
	return off, w.off - off
}

// WriteBlock writes one block: rows rows of every column (data[i] is
// column i; nil means no value in the block), sorted by timestamp. It is
// BeginBlock, WriteColumn for each column, EndBlock.
func (w *Writer) WriteBlock(rows int, data []*ColumnData) error {
	if len(data) != len(w.cols) {
		return fmt.Errorf("segment: block has %d columns, directory %d", len(data), len(w.cols))
	}
	if err := w.BeginBlock(rows, data[w.tsCol]); err != nil {
		return err
	}
	for ci, d := range data {
		if err := w.WriteColumn(ci, d); err != nil {
			return err
		}
	}
	return w.EndBlock()
}

// BeginBlock starts a block of rows rows whose timestamps are ts (sorted,
// one in every row). The columns follow with WriteColumn, the timestamp
// column among them, in any order, so that a caller holds one column in
// memory at a time; EndBlock closes the block.
func (w *Writer) BeginBlock(rows int, ts *ColumnData) error {
	if w.err != nil {
		return w.err
	}
	if w.cur != nil {
		return errors.New("segment: BeginBlock inside a block")
	}
	if rows <= 0 || rows > maxBlockRows {
		return fmt.Errorf("segment: block of %d rows (1..%d)", rows, maxBlockRows)
	}
	if ts == nil || len(ts.Ints) < rows || (ts.Nulls != nil && ts.Nulls.Any()) {
		return errors.New("segment: block without a timestamp in every row")
	}
	for i := 1; i < rows; i++ {
		if ts.Ints[i] < ts.Ints[i-1] {
			return fmt.Errorf("segment: block rows not sorted by timestamp at row %d", i)
		}
	}
	w.cur = &blockMeta{rows: rows, firstRow: w.rows, minTime: ts.Ints[0], maxTime: ts.Ints[rows-1]}
	w.curCols = make([]bool, len(w.cols))
	return nil
}

// WriteColumn writes column ci of the current block; d nil (or all NULL)
// leaves the column out of the block. Data that does not fit the column
// (too few values, codes outside the dictionary) is an error that abandons
// the block; the segment stays writable.
func (w *Writer) WriteColumn(ci int, d *ColumnData) error {
	if w.err != nil {
		return w.err
	}
	bm := w.cur
	if bm == nil {
		return errors.New("segment: WriteColumn outside a block")
	}
	if ci < 0 || ci >= len(w.cols) || w.curCols[ci] {
		return fmt.Errorf("segment: column %d written twice or out of range", ci)
	}
	w.curCols[ci] = true
	if d == nil {
		return nil
	}
	rows := bm.rows
	if err := checkColumnData(w.cols[ci].Type, d, rows); err != nil {
		w.cur, w.curCols = nil, nil
		return fmt.Errorf("segment: column %q: %w", w.cols[ci].Path, err)
	}
	if ci == w.tsCol {
		if (d.Nulls != nil && d.Nulls.Any()) || d.Ints[0] != bm.minTime || d.Ints[rows-1] != bm.maxTime {
			w.cur, w.curCols = nil, nil
			return errors.New("segment: timestamp column differs from the block's timestamps")
		}
	}
	p := planChunk(w.cols[ci].Type, d, rows)
	if p.present == 0 {
		return nil
	}
	cm := chunkMeta{col: ci, enc: p.enc, width: p.width, present: p.present, stats: p.stats}
	if p.enc == encDict {
		w.scratch = p.appendDict(w.scratch[:0])
		cm.dictEntries = len(p.dictStrs) + len(p.dictInts)
		cm.dictOff, cm.dictLen = w.writeUnit(w.scratch, true)
	}
	// Cut pages by estimated encoded size, never more of them than a
	// reader accepts (huge values in a huge block).
	minPageRows := (rows + maxPagesPerChunk - 1) / maxPagesPerChunk
	from, size := 0, 0
	for r := 0; r < rows; r++ {
		size += p.rowCost(d, r)
		if ((size >= w.opts.PageBytes || r+1-from >= w.opts.PageRows) && r+1-from >= minPageRows) || r == rows-1 {
			w.scratch = p.appendPage(w.scratch[:0], w.cols[ci].Type, d, from, r+1)
			off, ln := w.writeUnit(w.scratch, true)
			cm.pages = append(cm.pages, pageMeta{firstRow: from, rows: r + 1 - from, off: off, len: ln})
			from, size = r+1, 0
		}
	}
	bm.chunks = append(bm.chunks, cm)
	return w.err
}

// EndBlock finishes the current block.
func (w *Writer) EndBlock() error {
	if w.err != nil {
		return w.err
	}
	bm := w.cur
	if bm == nil {
		return errors.New("segment: EndBlock outside a block")
	}
	ok := w.curCols[w.tsCol]
	w.cur, w.curCols = nil, nil
	if !ok {
		return errors.New("segment: block without its timestamp column (block abandoned)")
	}
	// Chunks in column order, as a reader of the footer expects them.
	slices.SortFunc(bm.chunks, func(a, b chunkMeta) int { return a.col - b.col })
	if len(w.blocks) == 0 || bm.minTime < w.minTime {
		w.minTime = bm.minTime
	}
	if len(w.blocks) == 0 || bm.maxTime > w.maxTime {
		w.maxTime = bm.maxTime
	}
	w.blocks = append(w.blocks, *bm)
	w.rows += bm.rows
	return w.err
}

func checkColumnData(t ColType, d *ColumnData, rows int) error {
	need := func(n int) error {
		if n < rows {
			return fmt.Errorf("%d values for %d rows", n, rows)
		}
		return nil
	}
	switch t {
	case TypeBool:
		return need(len(d.Bools))
	case TypeInt64, TypeTimestamp:
		return need(len(d.Ints))
	case TypeFloat64:
		return need(len(d.Floats))
	case TypeString, TypeArray:
		if d.Dict != nil {
			if t != TypeString {
				return errors.New("dictionary codes for a non-string column")
			}
			if err := need(len(d.Codes)); err != nil {
				return err
			}
			for i := 0; i < rows; i++ {
				if d.present(i) && int(d.Codes[i]) >= len(d.Dict) {
					return fmt.Errorf("row %d: code %d outside a dictionary of %d", i, d.Codes[i], len(d.Dict))
				}
			}
			return nil
		}
		return need(len(d.Strs))
	}
	return nil
}

// AddSection stores an opaque named byte section (e.g. the index) in the
// segment, compressed, under its own checksum.
func (w *Writer) AddSection(name string, data []byte) error {
	if w.cur != nil {
		return errors.New("segment: a block is still open")
	}
	if len(w.sections) >= maxSections {
		return errors.New("segment: too many sections")
	}
	off, ln := w.writeUnit(data, true)
	w.sections = append(w.sections, sectionMeta{name: name, off: off, len: ln})
	return w.err
}

// Finish writes the footer and trailer, flushes and syncs the file. It
// does not close it.
func (w *Writer) Finish() error {
	if w.cur != nil {
		return errors.New("segment: a block is still open")
	}
	if w.err != nil {
		return w.err
	}
	if len(w.blocks) == 0 {
		return errors.New("segment: no blocks")
	}
	footer := w.encodeFooter()
	off, ln := w.writeUnit(footer, true)
	var tr [trailerSize]byte
	binary.LittleEndian.PutUint64(tr[0:], uint64(off))
	binary.LittleEndian.PutUint32(tr[8:], uint32(ln))
	tr[12] = FormatLatest
	copy(tr[16:], magic)
	w.write(tr[:])
	if w.err != nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		return err
	}
	return w.f.Sync()
}

// Size returns the bytes written so far.
func (w *Writer) Size() int64 { return w.off }

// Rows returns the rows written so far.
func (w *Writer) Rows() int { return w.rows }

// WriteUnit stores an opaque payload (compressed when that pays) as a unit
// of its own and returns its position, for structures such as the index
// that point into the segment themselves. Read it back with
// Reader.ReadUnit.
func (w *Writer) WriteUnit(payload []byte) (off, length int64, err error) {
	off, length = w.writeUnit(payload, true)
	return off, length, w.err
}

// CopyBlock appends block b of r to the segment as it is: every unit of
// the block is copied (checksums verified on the way), so nothing is
// decoded and re-planned. colMap maps r's column indexes to this writer's
// directory. With recompress, each unit's payload is compressed again at
// this writer's level (worth it when r was written at a faster level).
func (w *Writer) CopyBlock(r *Reader, b int, colMap []int, recompress bool) error {
	if w.cur != nil {
		return errors.New("segment: a block is still open")
	}
	if w.err != nil {
		return w.err
	}
	src := &r.ft.blocks[b]
	bm := blockMeta{rows: src.rows, firstRow: w.rows, minTime: src.minTime, maxTime: src.maxTime}
	copyUnit := func(off, ln int64, section string) (int64, int64, error) {
		raw, payload, codec, err := r.readUnitRaw(off, ln, section)
		if err != nil {
			return 0, 0, err
		}
		if recompress && codec == codecZstd {
			plain, err := sharedDecoder().DecodeAll(payload, nil)
			if err != nil {
				return 0, 0, corruptf(r.path, section, off, "zstd: %v", err)
			}
			noff, nln := w.writeUnit(plain, true)
			return noff, nln, w.err
		}
		noff := w.off
		w.write(raw)
		return noff, w.off - noff, w.err
	}
	for _, c := range src.chunks {
		if c.col >= len(colMap) || colMap[c.col] < 0 || colMap[c.col] >= len(w.cols) {
			return fmt.Errorf("segment: copied column %d has no place", c.col)
		}
		nc := c
		nc.col = colMap[c.col]
		if w.cols[nc.col].Type != r.ft.cols[c.col].Type {
			return fmt.Errorf("segment: copied column %q changes type", r.ft.cols[c.col].Path)
		}
		if c.dictEntries > 0 {
			off, ln, err := copyUnit(c.dictOff, c.dictLen, "dictionary")
			if err != nil {
				return err
			}
			nc.dictOff, nc.dictLen = off, ln
		}
		nc.pages = make([]pageMeta, len(c.pages))
		for i, p := range c.pages {
			off, ln, err := copyUnit(p.off, p.len, "page")
			if err != nil {
				return err
			}
			nc.pages[i] = pageMeta{firstRow: p.firstRow, rows: p.rows, off: off, len: ln}
		}
		bm.chunks = append(bm.chunks, nc)
	}
	slices.SortFunc(bm.chunks, func(a, b chunkMeta) int { return a.col - b.col })
	if len(w.blocks) == 0 || bm.minTime < w.minTime {
		w.minTime = bm.minTime
	}
	if len(w.blocks) == 0 || bm.maxTime > w.maxTime {
		w.maxTime = bm.maxTime
	}
	w.blocks = append(w.blocks, bm)
	w.rows += src.rows
	return w.err
}
