package segment

// chunkPageRanges returns a chunk's pages as ChunkInfo lists them.
func chunkPageRanges(ci ChunkInfo) []PageRange { return ci.Pages }

// timePageRanges returns block b's timestamp pages as TimePages lists them.
func timePageRanges(r *Reader, b int) []PageRange { return r.TimePages(b) }

// chunkPageCount returns how many pages the footer lists for chunk c.
func chunkPageCount(c *chunkMeta) int { return len(c.ranges) }
