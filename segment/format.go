// Package segment implements Sediment's immutable, columnar segment files:
// the writer, the reader, the page and dictionary codecs, checksums and the
// format version. It knows nothing of sources, HTTP or SQL; the engine feeds
// it dense, time-sorted column data and reads vectors back.
//
// # Layout (format version 3)
//
// A segment holds the events of one source cut into blocks of rows; the
// rows of each block are sorted by timestamp, and blocks usually follow
// each other in time (a compaction that concatenates segments may leave
// blocks whose ranges overlap where late events arrived). Inside a block
// every column (a field path with one type) is a chunk; a chunk is zero or
// more dictionary pages and one or more data pages, each data page
// covering a contiguous range of the block's rows. Every unit a reader
// loads on its own carries a CRC32-C.
//
//	+------------------------------------------------------------------+
//	| header   magic "SDSG" (4) | version u8 | flags u8 | reserved u16  |  8 B
//	+------------------------------------------------------------------+
//	| block 0: for each column present in the block:                    |
//	|            [dictionary pages] [history] data page 0, page 1, ...  |
//	| block 1: ...                                                      |
//	+------------------------------------------------------------------+
//	| section units (opaque to this package: index, engine metadata)    |
//	+------------------------------------------------------------------+
//	| footer unit (zstd, or raw when that is smaller): columns, blocks, |
//	|   chunks, dictionary pages, data pages with their row ranges and  |
//	|   (numeric columns) value ranges, sections                        |
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
//	             chunk's dictionary; (v4) in a page whose validity byte
//	             has validPacked: a u8 bit count b, then the codes in b
//	             bits each, LSB first
//	encBits      bool: one bit per present value, LSB first
//	encBytes     string/array: uvarint length of each value, then all the
//	             value bytes concatenated
//	encUUID      string: 16 B per value; every value of the chunk is a
//	             canonical lower-case UUID text and is restored as such
//	encNone      object presence: no values, validity only
//	encHex       (v2) string: every value is 2w hex digits of one case
//	             then any suffix: w bytes per value, then the suffixes as
//	             in encBytes
//	encIP        (v2) string: every value is an IP address in canonical
//	             text: a kind byte (4 or 6) per value, then the 4- or
//	             16-byte addresses
//	encDerived   (v3) string: a template id u8 per value, then, of the
//	             values with id 0, the uvarint lengths and the bytes as
//	             in encBytes; id t > 0 is the concatenation of template
//	             t's pieces (literals from the footer, and the values of
//	             other columns of the same row, int64 in decimal): see
//	             enc_derived.go; v5: then, when a template has residual
//	             pieces, the uvarint lengths and the bytes of the rows'
//	             residual values (residual.go)
//
// A version 2 chunk of plain bytes (encBytes) cut into several pages may
// have a history unit: a sample of its values, which each of its pages is
// compressed against (a zstd raw dictionary, unit codec 2), so that small
// pages compress about as well as big ones.
//
// A version 2 dictionary is cut into dictionary pages, so that one entry
// is read without the others. A string dictionary page, decompressed, is
// the end offset (u32 LE) of each of its entries, then the entries' bytes
// concatenated; an int64 dictionary page is 8 bytes LE per entry. Entries
// ascend across the pages. (Version 1 has one dictionary unit: a uvarint
// entry count, then strings as uvarint length + bytes, int64s as zigzag
// uvarint deltas from the previous entry.)
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
// The writer writes FormatLatest unless told to write an older supported
// version (WriterOptions.FormatVersion); the reader accepts versions in
// [FormatMinSupported, FormatLatest], and every decoder takes the version
// it decodes. A newer version it does not read is a VersionError, anything
// else unreadable is corrupt. A new encoding or type gets a new number;
// numbers are never reused.
package segment

// These constants are part of the on-disk format and must not change.
const (
	magic = "SDSG"

	// FormatV1 is the first format: one dictionary unit per chunk, row
	// ranges per page.
	FormatV1 = 1
	// FormatV2 adds dictionary pages (entries read one by one), value
	// counts and value ranges per page of numeric columns, and the
	// encodings encHex and encIP.
	FormatV2 = 2
	// FormatV3 adds encDerived: a text column stored as templates over
	// other columns of the same rows.
	FormatV3 = 3
	// FormatV4 adds bit-packed dictionary codes: a data page of an
	// encDict chunk may hold its codes in as many bits as the dictionary
	// needs, stored raw (validPacked), so that a read of one row neither
	// decompresses the page nor widens the codes to bytes.
	FormatV4 = 4
	// FormatV5 adds residual pieces to encDerived templates: bytes that
	// vary per row (a date, a byte count), stored with the chunk's rows
	// after the values stored as they are (segment/residual.go).
	FormatV5           = 5
	FormatLatest       = FormatV5
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
	// codecZstdHistory (FormatV2, data pages only): a zstd frame
	// compressed with its chunk's history unit as a raw dictionary (ID
	// historyDictID): a small page compresses about as well as a big one.
	codecZstdHistory = 2
)

// historyDictID is the dictionary ID frames of codecZstdHistory carry.
const historyDictID = 1

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
	encHex     Encoding = 8  // FormatV2
	encIP      Encoding = 9  // FormatV2
	encDerived Encoding = 10 // FormatV3
)

// Validity kinds at the start of a page. In version 4, a page of an
// encDict chunk may set validPacked in the same byte: its values are
// bit-packed codes (packedcodes.go), not codes of the chunk's width.
const (
	validAll    = 0
	validBitmap = 1
	validPacked = 0x80
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
	// maxDictPages bounds the dictionary pages of one chunk (the writer
	// cuts at most maxDictEntries entries into pages of several entries).
	maxDictPages = 1 << 16
	// maxHexBytes bounds the binary width of an encHex value (64 hex
	// digits: a SHA-256).
	maxHexBytes = 32
	// maxHistoryBytes bounds a history unit (the writer samples a few
	// dozen KiB).
	maxHistoryBytes = 1 << 20
	// maxTemplates bounds the templates of an encDerived chunk: a
	// template id is one byte, 0 meaning "stored as it is".
	maxTemplates = 255
	// maxTemplatePieces bounds the pieces of one template (the writer
	// derives a template from one value, at most a few dozen fields).
	maxTemplatePieces = 64
	// maxTemplateLiteral bounds one literal piece of a template.
	maxTemplateLiteral = 1 << 10
	// maxTemplateRefs bounds the distinct columns an encDerived chunk
	// refers to (each is read with it).
	maxTemplateRefs = 16
)
