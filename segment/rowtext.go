package segment

// Texts callers derive from single rows of a segment (the JSON of a
// record a query returns), kept in a third cache next to the pages and
// dictionaries, bounded by bytes and evicting the least recently used.
//
// A search for a rare word returns records scattered over a hundred
// blocks; rebuilding each reads one page of every column under it (60 of
// a platform event), and the pages of all of them together outgrow the
// page cache: the same search run again (a dashboard's refresh, Studio
// polling its logs page) found none of them cached and decompressed them
// all again (issue 14's Q5 at 10M events: ~900 pages and ~300
// dictionary pages per run, 15 MB). The records themselves take a
// hundredth of that. Segments are immutable, so a text derived from a
// row never goes stale; it goes when its reader closes or the budget
// needs room.
//
// The budget is a share of the page cache's (SetPageCacheBytes sets both):
// what the texts hold is memory the pages would otherwise take.

// rowTextShare: the texts take 1/rowTextShare of the page cache budget
// (2 MiB of the default 32: Q5's 95 records and their candidates' values
// take ~0.4 MB).
const rowTextShare = 16

// rowTextOverhead is what a kept text costs besides its bytes and its
// tag's: the list element, the entry and the map slot.
const rowTextOverhead = 160

var rowTexts = newLRU[rowTextKey, string](DefaultPageCacheBytes / rowTextShare)

type rowTextKey struct {
	r   *Reader
	row int
	tag string
}

// RowText returns the text kept for row (segment-wide) of the reader
// under tag, if the cache holds it.
func (r *Reader) RowText(row int, tag string) (string, bool) {
	return rowTexts.get(rowTextKey{r: r, row: row, tag: tag})
}

// KeepRowText keeps text as what row (segment-wide) of the reader gives
// under tag: a caller that derives the same text from the row again may
// take it from RowText instead. The text must be a function of the
// segment's rows only (they never change) and of the tag.
func (r *Reader) KeepRowText(row int, tag, text string) {
	rowTexts.put(rowTextKey{r: r, row: row, tag: tag}, text, int64(len(text)+len(tag))+rowTextOverhead)
}

// RowTextBytes returns the bytes the cache of row texts holds.
func RowTextBytes() int64 { return rowTexts.bytes() }
