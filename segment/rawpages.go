package segment

// Pages stored raw. A unit is stored compressed only when compression
// saves enough of its bytes: decompressing costs CPU on every read, and a
// read of one row (a whole record of a rare match reads one row of each
// of ~60 columns) pays for the whole page. Most units must save 1/32;
// pages of two-byte dictionary codes 1/8. Codes of a big dictionary (the
// coordinates and client addresses of platform events: ~6,800 distinct
// values in a block of 65,536 rows) are close to random: zstd saves about
// 12% of their 16 KiB pages and takes ~20 us to decompress one, where a
// raw page is read and checked in ~2 us. Codes that repeat (paths, dates)
// still compress by half or more and stay compressed. The reader needs
// nothing new: raw is a codec every version has.
const (
	defaultMinSaving = 32
	// codePageMinSaving: at 8,192 rows a page, a raw page of two-byte
	// codes costs at most 2 KiB more than its zstd frame, 0.25 bytes a row.
	codePageMinSaving = 8
)

// pageMinSaving returns the share (1/n) of its bytes a data page of the
// chunk must save to be stored compressed.
func (p *chunkPlan) pageMinSaving() int {
	if p.enc == encDict && p.width == 2 {
		return codePageMinSaving
	}
	return defaultMinSaving
}
