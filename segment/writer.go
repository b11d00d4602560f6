package segment

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriterOptions tune how a segment is written. The zero value means
// defaults.
type WriterOptions struct {
	// PageBytes is the target encoded size of a data page before
	// compression: a page ends at the row where its values reach it, or
	// at PageRows rows. Wide text columns (messages, URLs) end their pages
	// by size, narrow ones (timestamps, numbers, dictionary codes) by row
	// count, so that a read of a few rows decompresses a page of at most
	// about PageBytes per column. Smaller pages let such reads decompress
	// less; larger pages compress better (see HistoryBytes). Default
	// DefaultPageBytes.
	PageBytes int
	// ZstdLevel is the klauspost/compress zstd level: 1 fastest, 2 default,
	// 3 better, 4 best. Default 1.
	ZstdLevel int
	// PageRows caps the rows of a page whatever their size (default
	// DefaultPageRows): the newest rows of a block, which most queries
	// want, then sit in a small last page even for narrow columns
	// (timestamps, dictionary codes) that would otherwise fill a block's
	// worth of rows per page, and a read of one row of every column (a
	// whole record) decompresses a few KiB of each narrow one.
	PageRows int
	// DictPageBytes is the target size of a dictionary page (format
	// version 2): a read of one entry decompresses one page. Default
	// DefaultDictPageBytes.
	DictPageBytes int
	// HistoryBytes, when positive, gives each chunk of plain bytes cut
	// into several pages a history (format version 2): a sample of its
	// values of about that size, which its pages are compressed against,
	// so that small pages compress about as well as big ones (64 KiB pages
	// with 32 KiB histories take the bytes of 256 KiB pages). The price:
	// such pages decompress about half as fast (klauspost/compress decodes
	// frames with a dictionary without its assembly loop). 0 (the default)
	// writes none.
	HistoryBytes int
	// FormatVersion is the format version to write, FormatMinSupported to
	// FormatLatest (default FormatLatest). Writing an older version serves
	// tests and files meant for an older Sediment.
	FormatVersion uint8
	// NoDerivedText turns derived text (encDerived, format version 3) off:
	// no chunk is stored as templates over other columns. Reading such a
	// chunk reads and assembles the columns it refers to, about twice the
	// CPU of decompressing it as text when a scan reads all of it (a regex
	// over every message); this trades those bytes back for that CPU.
	NoDerivedText bool
	// DeriveHints (nil: none), shared by the writers of one source, let
	// a writer start derived text from what earlier ones learned and
	// leave what it learns at Finish (see DeriveHints).
	DeriveHints *DeriveHints

	// tinyPageRows caps the rows of pages of tiny values (dictionary codes
	// of 2 bytes, deltas, bits): DefaultTinyPageRows when PageRows is the
	// default, else PageRows. Scans of such columns (a GROUP BY on codes)
	// would pay for many small pages, and one of their pages is small
	// anyway.
	tinyPageRows int
	// codePageRows caps the rows of pages of one-byte dictionary codes
	// and of deltas: DefaultCodePageRows when PageRows is the default,
	// else PageRows.
	codePageRows int
}

// Defaults of WriterOptions.
const (
	DefaultPageBytes = 128 << 10
	// DefaultPageRows was 8192 until records of platform events, about 90
	// columns each, were read one at a time (a rare match, every field):
	// 2048 makes such a read decompress 28% less for 0.2% more bytes, with
	// pages of tiny values kept at DefaultTinyPageRows, so that scans of
	// dictionary codes read as many pages as before (docs/format/segment.md
	// §3.4).
	DefaultPageRows     = 2048
	DefaultTinyPageRows = 8192
	// DefaultCodePageRows: pages of one-byte dictionary codes (the
	// countries, status codes, hosts, methods of a record: about 30 of
	// the columns of a platform event) end at 2048 rows, not 8192 like the
	// other tiny values: a whole record decompresses a quarter of each,
	// for about 0.5% more bytes. Two-byte codes (paths, IP addresses),
	// which GROUP BY scans read whole, keep 8192. Pages of deltas
	// (timestamps) end there too: a record's timestamp cost ~50 us of
	// decompression at 8192 rows, ~15 us at 2048, for 0.1 byte a row.
	// (codePageRows applies to both.)
	DefaultCodePageRows  = 2048
	DefaultDictPageBytes = 16 << 10
)

func (o *WriterOptions) withDefaults() WriterOptions {
	out := WriterOptions{PageBytes: DefaultPageBytes, ZstdLevel: 1, PageRows: DefaultPageRows,
		DictPageBytes: DefaultDictPageBytes, FormatVersion: FormatLatest, tinyPageRows: DefaultTinyPageRows,
		codePageRows: DefaultCodePageRows}
	if o != nil {
		if o.PageBytes > 0 {
			out.PageBytes = o.PageBytes
		}
		if o.PageRows > 0 {
			out.PageRows, out.tinyPageRows, out.codePageRows = o.PageRows, o.PageRows, o.PageRows
		}
		if o.ZstdLevel >= 1 && o.ZstdLevel <= 4 {
			out.ZstdLevel = o.ZstdLevel
		}
		if o.DictPageBytes > 0 {
			out.DictPageBytes = o.DictPageBytes
		}
		if o.HistoryBytes > 0 {
			out.HistoryBytes = min(o.HistoryBytes, maxHistoryBytes)
		}
		if o.FormatVersion >= FormatMinSupported && o.FormatVersion <= FormatLatest {
			out.FormatVersion = o.FormatVersion
		}
		out.NoDerivedText = o.NoDerivedText
		out.DeriveHints = o.DeriveHints
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
	// histEncoders pool, per level, the encoders writers compress pages
	// against a history with (one writer at a time: the history is the
	// encoder's state).
	histEncoders [5]sync.Pool
)

// histEncoder returns an encoder of level compressing against hist.
func histEncoder(level int, hist []byte) *zstd.Encoder {
	if e, ok := histEncoders[level].Get().(*zstd.Encoder); ok {
		if err := e.ResetWithOptions(nil, zstd.WithEncoderDictRaw(historyDictID, hist)); err == nil {
			return e
		}
	}
	e, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.EncoderLevel(level)),
		zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(1<<20),
		zstd.WithLowerEncoderMem(true), // as encoderFor's
		zstd.WithZeroFrames(true),
		zstd.WithEncoderCRC(false),
		zstd.WithEncoderDictRaw(historyDictID, hist))
	if err != nil {
		panic(fmt.Sprintf("segment: zstd encoder: %v", err)) // only bad options
	}
	return e
}

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
			// History buffers of the window plus a block (1.1 MiB) instead
			// of twice the window: the same output (units are compressed
			// whole, EncodeAll), 2.4 MB less held by the flush and
			// compaction levels' encoders.
			zstd.WithLowerEncoderMem(true),
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
	// light and fastest compress the units that gain (almost) nothing
	// from a level above lightLevel (dictionary pages) or 1 (see
	// pageEncoder).
	light, fastest *zstd.Encoder
	version        uint8

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
	// packScratch holds a page of packed codes (writeCodePage).
	packScratch []byte
	// same keeps the block's dictionary chunks, to store a copy of one
	// once (samecols.go); from a pool, given back by Finish.
	same *sameChunks
	err  error

	hist    []byte        // the history of the chunk being written
	histEnc *zstd.Encoder // compresses against hist

	plan planScratch // what planChunk reuses, column after column

	textTrials []textTrial // by column: trialText's last trial
	// nearlyDistinct, by column: its last chunk's values were nearly all
	// distinct (planScratch.expectDistinct).
	nearlyDistinct []bool

	fetch  ColumnFetcher // the current block's other columns (nil: none)
	derive deriveState   // encDerived's memory from block to block
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
	w.light = encoderFor(min(w.opts.ZstdLevel, lightLevel))
	w.fastest = encoderFor(1)
	w.version = w.opts.FormatVersion
	hdr := []byte{magic[0], magic[1], magic[2], magic[3], w.version, 0, 0, 0}
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
	return w.writeUnitWith(payload, compress, w.enc, nil)
}

// writeUnitWith is writeUnit compressing with enc, or with histEnc
// (against the chunk's history, codec 2) when it is not nil.
func (w *Writer) writeUnitWith(payload []byte, compress bool, enc, histEnc *zstd.Encoder) (int64, int64) {
	return w.writeUnitSaving(payload, compress, enc, histEnc, defaultMinSaving)
}

// writeUnitSaving is writeUnitWith storing the payload compressed only
// when that saves at least 1/minSaving of its bytes.
func (w *Writer) writeUnitSaving(payload []byte, compress bool, enc, histEnc *zstd.Encoder, minSaving int) (int64, int64) {
	codec := byte(codecRaw)
	body := payload
	if compress && len(payload) > 64 {
		zc := byte(codecZstd)
		if histEnc != nil {
			w.comp = histEnc.EncodeAll(payload, w.comp[:0])
			zc = codecZstdHistory
		} else {
			w.comp = enc.EncodeAll(payload, w.comp[:0])
		}
		if len(w.comp) < len(payload)-len(payload)/minSaving {
			codec, body = zc, w.comp
		}
	}
	return w.putUnit(body, codec)
}

// putUnit writes body as a unit of the codec it is stored in.
func (w *Writer) putUnit(body []byte, codec byte) (int64, int64) {
	off := w.off
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
	fetch := func(ci int, d *ColumnData) (bool, error) {
		if data[ci] == nil {
			return false, nil
		}
		d.CopyFrom(data[ci])
		return true, nil
	}
	if err := w.BeginBlockFrom(rows, data[w.tsCol], fetch); err != nil {
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
	return w.BeginBlockFrom(rows, ts, nil)
}

// BeginBlockFrom is BeginBlock with a fetcher of the block's columns:
// while writing a text column, the writer may fetch others to store it as
// templates over their values (encDerived, format version 3). fetch (nil:
// none) is used until EndBlock.
func (w *Writer) BeginBlockFrom(rows int, ts *ColumnData, fetch ColumnFetcher) error {
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
	w.fetch = fetch
	w.derive.beginBlock(len(w.cols))
	if w.same != nil {
		w.same.reset()
	}
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
	t := w.cols[ci].Type
	if len(w.nearlyDistinct) < len(w.cols) {
		w.nearlyDistinct = make([]bool, len(w.cols))
	}
	w.plan.expectDistinct, w.plan.nearlyDistinct = w.nearlyDistinct[ci], false
	p := planChunk(t, d, rows, w.version, &w.plan)
	w.nearlyDistinct[ci] = w.plan.nearlyDistinct
	if p.present == 0 {
		return nil
	}
	if t == TypeString && (p.enc == encBytes || p.enc == encHex || p.enc == encIP) {
		if err := w.tryDerive(ci, p, d, rows); err != nil {
			w.cur, w.curCols = nil, nil
			return fmt.Errorf("segment: column %q: %w", w.cols[ci].Path, err)
		}
	}
	if p.enc == encHex || p.enc == encIP {
		w.trialText(ci, p, t, d, rows)
	}
	cm := chunkMeta{col: ci, enc: p.enc, width: p.width, present: p.present, stats: p.stats}
	if p.derived != nil {
		cm.derived = p.derived.table
	}
	sameable := p.enc == encDict && t == TypeString && w.version >= FormatV4
	var sum [sha256.Size]byte
	if sameable {
		if w.same == nil {
			w.same = getSameChunks()
		}
		sum = w.same.digest(p, d, rows)
		if same, ok := w.same.find(p, sum); ok {
			// A copy of a column written before in the block: its units.
			same.col = ci
			bm.chunks = append(bm.chunks, same)
			return w.err
		}
	}
	if p.enc == encDict {
		cm.dictEntries = len(p.dictStrs) + len(p.dictInts)
		w.writeDict(p, &cm)
	}
	pageStatsOn := w.version >= FormatV2 && (t == TypeInt64 || t == TypeTimestamp || t == TypeFloat64 ||
		t == TypeString && p.enc == encDict)
	if pageStatsOn {
		cm.stats.flags |= statPages
	}
	var histEnc *zstd.Encoder
	if p.enc == encBytes && w.version >= FormatV2 && w.opts.HistoryBytes > 0 {
		histEnc = w.writeHistory(p, d, rows, &cm)
	}
	pageEnc := w.pageEncoder(p)
	// Cut pages by estimated encoded size, never more of them than a
	// reader accepts (huge values in a huge block).
	minPageRows := (rows + maxPagesPerChunk - 1) / maxPagesPerChunk
	pageRows := w.opts.PageRows
	if p.tinyValues() {
		pageRows = w.opts.tinyPageRows
		if p.enc == encDict && p.width == 1 || p.enc == encDelta {
			pageRows = w.opts.codePageRows
		}
	}
	from, size := 0, 0
	for r := 0; r < rows; r++ {
		size += p.rowCost(d, r)
		if ((size >= w.opts.PageBytes || r+1-from >= pageRows) && r+1-from >= minPageRows) || r == rows-1 {
			w.scratch = p.appendPage(w.scratch[:0], t, d, from, r+1)
			var off, ln int64
			if p.enc == encDict {
				off, ln = w.writeCodePage(p, d, from, r+1, w.scratch, pageEnc)
			} else {
				off, ln = w.writeUnitSaving(w.scratch, true, pageEnc, histEnc, p.pageMinSaving())
			}
			pm := pageMeta{firstRow: from, rows: r + 1 - from, off: off, len: ln, present: -1}
			if pageStatsOn {
				pageStats(t, p, d, from, r+1, &pm)
			}
			cm.addPage(pm, t)
			from, size = r+1, 0
		}
	}
	if sameable && w.err == nil {
		w.same.add(cm, sum)
	}
	bm.chunks = append(bm.chunks, cm)
	return w.err
}

// lightLevel is the highest zstd level dictionary pages are compressed
// at. Measured on the segments compaction writes at level 3 (700,000
// platform edge events, BenchmarkStoreCPU): level 2 takes 1.3% more bytes
// for dictionary pages than level 3 (0.05 bytes an event; 0.25 on the
// peers data at 1M events), for a third less of their compression CPU.
// The index's units (WriteUnit) stay at the writer's level: at level 2
// they took 1.6% more bytes, 0.2-0.35 bytes an event.
const lightLevel = 2

// pageEncoder returns the encoder of a chunk's pages: the writer's own,
// but level 1 for UUIDs in binary (16 random bytes a value: level 3 took
// 0.08% fewer bytes than level 1, for 4.5 times its CPU), and at most
// lightLevel for pages of dictionary codes (compaction at level 3 of
// 700,000 edge events ordered by project, BenchmarkStoreCPU: 88.88 bytes
// an event with code pages at level 3, 88.92 at level 2, 89.25 at level 1;
// at level 3 they took 36% of compaction's compression CPU).
func (w *Writer) pageEncoder(p *chunkPlan) *zstd.Encoder {
	switch p.enc {
	case encUUID:
		return w.fastest
	case encDict:
		return w.light
	}
	return w.enc
}

// writeHistory writes the history of a chunk of plain bytes whose values
// fill several pages, and returns the encoder that compresses its pages
// against it (nil: the chunk has no history). The history is values
// sampled evenly over the chunk, about HistoryBytes of them.
func (w *Writer) writeHistory(p *chunkPlan, d *ColumnData, rows int, cm *chunkMeta) *zstd.Encoder {
	total := 0
	for r := 0; r < rows; r++ {
		total += p.rowCost(d, r)
	}
	if total < 2*w.opts.PageBytes {
		return nil // one page, or about: nothing to share
	}
	// Every step-th present value, from the middle of the first step.
	step := max(1, total/w.opts.HistoryBytes)
	w.hist = w.hist[:0]
	k := 0
	for r := 0; r < rows && len(w.hist) < w.opts.HistoryBytes; r++ {
		if !d.present(r) {
			continue
		}
		if k%step == step/2 {
			s := d.str(r)
			w.hist = append(w.hist, s[:min(len(s), w.opts.HistoryBytes-len(w.hist))]...)
		}
		k++
	}
	if len(w.hist) == 0 {
		return nil
	}
	cm.histOff, cm.histLen = w.writeUnit(w.hist, true)
	return w.histEncoderFor(w.hist)
}

// histEncoderFor sets the writer's history encoder to compress against
// hist (which must not change while it is used).
func (w *Writer) histEncoderFor(hist []byte) *zstd.Encoder {
	if w.histEnc == nil {
		w.histEnc = histEncoder(w.opts.ZstdLevel, hist)
	} else if err := w.histEnc.ResetWithOptions(nil, zstd.WithEncoderDictRaw(historyDictID, hist)); err != nil {
		w.histEnc = histEncoder(w.opts.ZstdLevel, hist)
	}
	return w.histEnc
}

// trialRows is how many rows trialText compresses each way.
const trialRows = 2048

// trialText keeps a binary text encoding only if the first rows of the
// chunk compress smaller with it than as plain bytes: values that repeat
// (the IP addresses of a few clients) compress better as text, where zstd
// finds the repeats whole. A column whose binary form won clearly in its
// last trial (the same form) skips the trial in the next blocks, but for
// one in trialEvery.
func (w *Writer) trialText(ci int, p *chunkPlan, t ColType, d *ColumnData, rows int) {
	if len(w.textTrials) < len(w.cols) {
		w.textTrials = make([]textTrial, len(w.cols))
	}
	tt := &w.textTrials[ci]
	if tt.clearWin && tt.enc == p.enc && tt.width == p.width && tt.skips < trialEvery-1 {
		tt.skips++
		return
	}
	n := min(rows, trialRows)
	// What a unit of the page would take: compressed, or raw when that is
	// not smaller (writeUnit's rule).
	stored := func() int {
		w.scratch = p.appendPage(w.scratch[:0], t, d, 0, n)
		w.comp = w.enc.EncodeAll(w.scratch, w.comp[:0])
		if len(w.comp) < len(w.scratch)-len(w.scratch)/32 {
			return len(w.comp)
		}
		return len(w.scratch)
	}
	binarySize := stored()
	enc, width := p.enc, p.width
	p.enc, p.width = encBytes, 0
	plainSize := stored()
	*tt = textTrial{enc: enc, width: width, clearWin: binarySize*textClearWinDen <= plainSize*textClearWinNum}
	if binarySize < plainSize {
		p.enc, p.width = enc, width
	}
}

// A binary text form wins a trial clearly when its rows take at most
// textClearWinNum/textClearWinDen of their bytes as plain text.
const textClearWinNum, textClearWinDen = 4, 5

// textTrial is what trialText remembers of a column's last trial.
type textTrial struct {
	enc      Encoding
	width    uint8
	clearWin bool
	skips    int // blocks since the trial
}

// writeDict writes a dictionary-encoded chunk's dictionary: one unit in
// version 1, pages of about DictPageBytes in version 2.
func (w *Writer) writeDict(p *chunkPlan, cm *chunkMeta) {
	if w.version == FormatV1 {
		w.scratch = p.appendDict(w.scratch[:0])
		off, ln := w.writeUnit(w.scratch, true)
		cm.dict = []dictPageMeta{{entries: cm.dictEntries, off: off, len: ln}}
		return
	}
	from, size := 0, 0
	for i := 0; i < cm.dictEntries; i++ {
		size += p.dictEntryBytes(i)
		if size >= w.opts.DictPageBytes || i == cm.dictEntries-1 {
			w.scratch = p.appendDictPage(w.scratch[:0], from, i+1)
			off, ln := w.writeUnitWith(w.scratch, true, w.light, nil)
			cm.dict = append(cm.dict, dictPageMeta{first: from, entries: i + 1 - from, off: off, len: ln})
			from, size = i+1, 0
		}
	}
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
	w.cur, w.curCols, w.fetch = nil, nil, nil
	if !ok {
		return errors.New("segment: block without its timestamp column (block abandoned)")
	}
	// Chunks in column order, as a reader of the footer expects them.
	slices.SortFunc(bm.chunks, func(a, b chunkMeta) int { return a.col - b.col })
	w.addBlock(*bm)
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
	if w.same != nil {
		putSameChunks(w.same)
		w.same = nil
	}
	footer := w.encodeFooter()
	off, ln := w.writeUnit(footer, true)
	var tr [trailerSize]byte
	binary.LittleEndian.PutUint64(tr[0:], uint64(off))
	binary.LittleEndian.PutUint32(tr[8:], uint32(ln))
	tr[12] = w.version
	copy(tr[16:], magic)
	w.write(tr[:])
	if w.err != nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		return err
	}
	w.opts.DeriveHints.learn(w.derive.memo, w.cols, w.derive.block)
	if w.histEnc != nil {
		histEncoders[w.opts.ZstdLevel].Put(w.histEnc)
		w.histEnc, w.hist = nil, nil
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
// this writer's level (worth it when r was written at a faster level). A
// block of a segment in another format version is written again instead
// (decoded and encoded as WriteBlock would), so that compaction turns old
// segments into the version this writer writes.
func (w *Writer) CopyBlock(r *Reader, b int, colMap []int, recompress bool) error {
	if w.cur != nil {
		return errors.New("segment: a block is still open")
	}
	if w.err != nil {
		return w.err
	}
	src, err := r.block(b)
	if err != nil {
		return err
	}
	for _, c := range src.chunks {
		if c.col >= len(colMap) || colMap[c.col] < 0 || colMap[c.col] >= len(w.cols) {
			return fmt.Errorf("segment: copied column %d has no place", c.col)
		}
		if w.cols[colMap[c.col]].Type != r.ft.cols[c.col].Type {
			return fmt.Errorf("segment: copied column %q changes type", r.ft.cols[c.col].Path)
		}
	}
	if r.version != w.version {
		return w.rewriteBlock(r, b, colMap)
	}
	bm := blockMeta{rows: src.rows, firstRow: w.rows, minTime: src.minTime, maxTime: src.maxTime}
	// hist is the history of the chunk being copied, for recompressing
	// its pages.
	var hist []byte
	// copyUnit copies a unit, or recompresses it with enc (nil: copied as
	// it is, as units a writer compresses at level 1 whatever its level:
	// the input cannot have used a faster one).
	copyUnit := func(off, ln int64, section string, enc *zstd.Encoder) (int64, int64, error) {
		raw, payload, codec, err := r.readUnitRaw(off, ln, section)
		if err != nil {
			return 0, 0, err
		}
		if recompress && enc != nil && (codec == codecZstd || codec == codecZstdHistory && hist != nil) {
			if claimed, lies := frameSizeLies(payload); lies {
				return 0, 0, corruptf(r.path, section, off, "zstd frame of %d bytes claims %d", len(payload), claimed)
			}
			var plain []byte
			var histEnc *zstd.Encoder
			if codec == codecZstdHistory {
				plain, err = decodeWithHistory(payload, nil, hist)
				histEnc = w.histEncoderFor(hist)
			} else {
				plain, err = sharedDecoder().DecodeAll(payload, nil)
			}
			if err != nil {
				return 0, 0, corruptf(r.path, section, off, "zstd: %v", err)
			}
			noff, nln := w.writeUnitWith(plain, true, enc, histEnc)
			return noff, nln, w.err
		}
		noff := w.off
		w.write(raw)
		return noff, w.off - noff, w.err
	}
	// Chunks of a block may share units (samecols.go): each is copied once.
	copied := map[int64]pageUnit{}
	copyOnce := func(off, ln int64, section string, enc *zstd.Encoder) (int64, int64, error) {
		if u, ok := copied[off]; ok {
			return u.off, u.len, nil
		}
		noff, nln, err := copyUnit(off, ln, section, enc)
		if err == nil {
			copied[off] = pageUnit{off: noff, len: nln}
		}
		return noff, nln, err
	}
	for _, c := range src.chunks {
		nc := c
		nc.col = colMap[c.col]
		if c.derived != nil {
			var err error
			if nc.derived, err = c.derived.remap(colMap); err != nil {
				return err
			}
		}
		hist = nil
		if c.histOff > 0 {
			if recompress {
				var err error
				if hist, err = r.readUnit(c.histOff, c.histLen, "history", maxHistoryBytes); err != nil {
					return err
				}
			}
			off, ln, err := copyUnit(c.histOff, c.histLen, "history", w.enc)
			if err != nil {
				return err
			}
			nc.histOff, nc.histLen = off, ln
		}
		// The units at the levels WriteColumn compresses them at:
		// dictionary pages and pages of codes at lightLevel at most
		// (writeDict, pageEncoder), pages of UUIDs at level 1, others at
		// the writer's level. A unit at level 1 is copied as it is: the
		// input cannot have used a faster one.
		dictEnc, pageEnc := w.light, w.enc
		switch c.enc {
		case encUUID:
			pageEnc = w.fastest
		case encDict:
			pageEnc = w.light
		}
		if dictEnc == w.fastest {
			dictEnc = nil
		}
		if pageEnc == w.fastest {
			pageEnc = nil
		}
		nc.dict = make([]dictPageMeta, len(c.dict))
		for i, d := range c.dict {
			off, ln, err := copyOnce(d.off, d.len, "dictionary", dictEnc)
			if err != nil {
				return err
			}
			nc.dict[i] = d
			nc.dict[i].off, nc.dict[i].len = off, ln
		}
		nc.pages = PageList{}
		for i := range c.pages.Len() {
			pm := c.page(i)
			off, ln, err := copyOnce(pm.off, pm.len, "page", pageEnc)
			if err != nil {
				return err
			}
			pm.off, pm.len = off, ln
			nc.addPage(pm, r.ft.cols[c.col].Type)
		}
		bm.chunks = append(bm.chunks, nc)
	}
	slices.SortFunc(bm.chunks, func(a, b chunkMeta) int { return a.col - b.col })
	w.addBlock(bm)
	return w.err
}

// addBlock records a finished block.
func (w *Writer) addBlock(bm blockMeta) {
	if len(w.blocks) == 0 || bm.minTime < w.minTime {
		w.minTime = bm.minTime
	}
	if len(w.blocks) == 0 || bm.maxTime > w.maxTime {
		w.maxTime = bm.maxTime
	}
	w.blocks = append(w.blocks, bm)
	w.rows += bm.rows
}

// rewriteBlock decodes block b of r, a column at a time, and writes it as
// a new block (pages, dictionaries and encodings of this writer's
// version).
func (w *Writer) rewriteBlock(r *Reader, b int, colMap []int) error {
	src, err := r.block(b)
	if err != nil {
		return err
	}
	var v vec.Vector
	var ts ColumnData
	tsIn := r.Column("timestamp", TypeTimestamp)
	if tsIn < 0 {
		return corruptf(r.path, "footer", -1, "no timestamp column")
	}
	if err := r.readColumn(b, tsIn, 0, src.rows, &v, cacheNoFill); err != nil {
		return err
	}
	columnDataOf(&v, TypeTimestamp, &ts)
	// This writer's columns as r's, for the writer to fetch.
	inv := make([]int, len(w.cols))
	for i := range inv {
		inv[i] = -1
	}
	for rc, wc := range colMap {
		if wc >= 0 && wc < len(inv) {
			inv[wc] = rc
		}
	}
	fetch := func(ci int, d *ColumnData) (bool, error) {
		rc := inv[ci]
		if rc < 0 {
			return false, nil
		}
		if c, err := r.chunk(b, rc); c == nil || err != nil {
			return false, err
		}
		var fv vec.Vector // d aliases it: a vector of its own
		if err := r.readColumn(b, rc, 0, src.rows, &fv, cacheNoFill); err != nil {
			return false, err
		}
		columnDataOf(&fv, r.ft.cols[rc].Type, d)
		return true, nil
	}
	if err := w.BeginBlockFrom(src.rows, &ts, fetch); err != nil {
		return err
	}
	var d ColumnData
	for _, c := range src.chunks {
		t := r.ft.cols[c.col].Type
		if err := r.readColumn(b, c.col, 0, src.rows, &v, cacheNoFill); err != nil {
			w.cur, w.curCols = nil, nil
			return err
		}
		columnDataOf(&v, t, &d)
		if err := w.WriteColumn(colMap[c.col], &d); err != nil {
			return err
		}
	}
	return w.EndBlock()
}

// columnDataOf makes a decoded column writable again (d aliases v).
func columnDataOf(v *vec.Vector, t ColType, d *ColumnData) {
	*d = ColumnData{Nulls: v.Nulls}
	switch t {
	case TypeBool, TypeObject:
		d.Bools = v.Bools
	case TypeInt64, TypeTimestamp:
		d.Ints = v.Ints
	case TypeFloat64:
		d.Floats = v.Floats
	default:
		if v.Dict != nil {
			d.Codes, d.Dict = v.Codes, v.Dict
			return
		}
		d.Strs = make([]string, v.Len)
		for i := range d.Strs {
			d.Strs[i] = v.StringAt(i)
		}
	}
}
