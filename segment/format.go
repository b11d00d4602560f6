// Package segment implements Sediment's immutable, columnar segment files:
// the writer, the reader, the page and dictionary codecs, checksums and the
// format version. It knows nothing of sources, HTTP or SQL; the engine feeds
// it dense, time-sorted column data and reads vectors back.
//
// # Layout (format version 1)
//
// A segment holds the events of one source cut into blocks of rows; the
// rows of each block are sorted by timestamp, and blocks usually follow
// each other in time (a compaction that concatenates segments may leave
// blocks whose ranges overlap where late events arrived). Inside a block every column (a field path with one type)
// is a chunk; a chunk is a dictionary unit (optional) and one or more data
// pages, each covering a contiguous range of the block's rows. Every unit a
// reader loads on its own carries a CRC32-C.
//
//	+------------------------------------------------------------------+
//	| header   magic "SDSG" (4) | version u8 | flags u8 | reserved u16  |  8 B
//	+------------------------------------------------------------------+
//	| block 0: for each column present in the block:                    |
//	|            [dictionary unit] data unit (page 0) data unit ...     |
//	| block 1: ...                                                      |
//	+------------------------------------------------------------------+
//	| section units (opaque to this package: index, engine metadata)    |
//	+------------------------------------------------------------------+
//	| footer unit (zstd, or raw when that is smaller): columns, blocks, |
//	|   chunks, pages, sections                                        |
//	+------------------------------------------------------------------+
//	| trailer  footer offset u64 | footer length u32 | version u8 |     |
//	|          reserved (3) | magic "SDSG" (4)                          | 20 B
//	+------------------------------------------------------------------+
//
// A unit is
//
//	+----------------------+-----------+--------------------------------+
//	| payload (n bytes)    | codec u8  | crc32c u32 LE (payload+codec)  |
//	+----------------------+-----------+--------------------------------+
//
// where codec says how the payload is compressed (raw or zstd). Unit
// lengths and offsets in the footer include the 5-byte trailer.
//
// A data page, once decompressed, is
//
//	+-----------------+----------------------------+---------------------+
//	| validity u8     | [bitmap: ceil(rows/8) B,   | values of the rows  |
//	| 0 all present   |  bit r set = row r present,|  that are present,  |
//	| 1 bitmap        |  LSB first]                |  in the chunk's     |
//	|                 |                            |  encoding           |
//	+-----------------+----------------------------+---------------------+
//
// Value encodings (per chunk, in the footer):
//
//	encPlain64   int64/timestamp/float64: 8 B little endian each
//	encDelta     int64/timestamp: zigzag uvarint of each value minus the
//	             previous one (the first minus zero)
//	encDict      uint codes of codeWidth (1, 2 or 4) bytes LE into the
//	             chunk's dictionary unit
//	encBits      bool: one bit per present value, LSB first
//	encBytes     string/array: uvarint length of each value, then all the
//	             value bytes concatenated
//	encUUID      string: 16 B per value; every value of the chunk is a
//	             canonical lower-case UUID text and is restored as such
//	encNone      object presence: no values, validity only
//
// A dictionary unit, decompressed, is a uvarint entry count followed by the
// entries in ascending order: strings as uvarint length + bytes, int64s as
// zigzag uvarint deltas from the previous entry.
//
// The footer is a sequence of uvarints, varints and length-prefixed strings
// (see footer.go for the exact order), compressed as one unit.
//
// # Types
//
// A column is a (path, type) pair. When events disagree on a field's type,
// each type gets its own column with the same path, so nothing is lost; the
// engine decides how queries see the union. Objects are flattened into their
// leaf paths plus an object-presence column (TypeObject); arrays are kept
// whole, one encoded value per row (TypeArray, bytes opaque to this package),
// with the element fields seen listed in the column directory.
//
// # Versioning
//
// The writer always writes FormatLatest; the reader accepts versions in
// [FormatMinSupported, FormatLatest] and reports anything else as corrupt.
// A new encoding or type gets a new number; numbers are never reused.
package segment

// These constants are part of the on-disk format and must not change.
const (
	magic = "SDSG"

	FormatV1           = 1
	FormatLatest       = FormatV1
	FormatMinSupported = FormatV1

	headerSize  = 8
	trailerSize = 20
	// unitTrailerSize is the codec byte plus the CRC32-C.
	unitTrailerSize = 5
)

// Unit codecs.
const (
	codecRaw  = 0
	codecZstd = 1
)

// ColType is a column's physical type. Persisted.
type ColType uint8

const (
	TypeBool      ColType = 1
	TypeInt64     ColType = 2
	TypeFloat64   ColType = 3
	TypeString    ColType = 4
	TypeTimestamp ColType = 5
	TypeObject    ColType = 6
	TypeArray     ColType = 7
)

func (t ColType) String() string {
	switch t {
	case TypeBool:
		return "bool"
	case TypeInt64:
		return "int64"
	case TypeFloat64:
		return "float64"
	case TypeString:
		return "string"
	case TypeTimestamp:
		return "timestamp"
	case TypeObject:
		return "object"
	case TypeArray:
		return "array"
	}
	return "unknown"
}

func (t ColType) valid() bool { return t >= TypeBool && t <= TypeArray }

// Encoding is a chunk's value encoding. Persisted.
type Encoding uint8

const (
	encPlain64 Encoding = 1
	encDelta   Encoding = 2
	encDict    Encoding = 3
	encBits    Encoding = 4
	encBytes   Encoding = 5
	encUUID    Encoding = 6
	encNone    Encoding = 7
)

// Validity kinds at the start of a page.
const (
	validAll    = 0
	validBitmap = 1
)

// Limits checked when decoding, so that a corrupt or hostile file cannot
// make the reader allocate without bound.
const (
	// maxBlockRows bounds rows in one block (and so one page): blocks are
	// cut by the writer at a few hundred thousand rows at most.
	maxBlockRows = 1 << 22
	// MaxColumns bounds the column directory. The writer refuses more; the
	// engine caps the columns of a source's head well below it and never
	// merges segments past it.
	MaxColumns = 1 << 16
	// maxBlocks bounds blocks per segment.
	maxBlocks = 1 << 20
	// maxPagesPerChunk bounds pages of one chunk.
	maxPagesPerChunk = 1 << 16
	// maxUnitSize bounds one unit's decompressed size (a page or a
	// dictionary); pages are cut at a few hundred KiB, a huge single value
	// can make one bigger.
	maxUnitSize = 1 << 30
	// maxFooterSize bounds the decompressed footer.
	maxFooterSize = 1 << 28
	// MaxPathLen bounds a column path (the writer refuses longer ones; the
	// engine drops fields whose path would be longer).
	MaxPathLen = 1 << 14
	// maxSections bounds the section directory.
	maxSections = 64
	// maxStatLen bounds a string min/max kept in the footer.
	maxStatLen = 64
)
