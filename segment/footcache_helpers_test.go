package segment

import "fmt"

// testChunk is chunk for tests: the full record of column col's chunk in
// block b (nil when absent), panicking when it cannot be read.
func (r *Reader) testChunk(b, col int) *chunkMeta {
	c, err := r.chunk(b, col)
	if err != nil {
		panic(fmt.Sprintf("block %d column %d: %v", b, col, err))
	}
	return c
}

// testBlock is block for tests, panicking when it cannot be read.
func (r *Reader) testBlock(b int) *blockMeta {
	bm, err := r.block(b)
	if err != nil {
		panic(fmt.Sprintf("block %d: %v", b, err))
	}
	return bm
}

// testPages is Pages for tests, panicking when they cannot be read.
func (r *Reader) testPages(b, col int) PageList {
	l, err := r.Pages(b, col)
	if err != nil {
		panic(fmt.Sprintf("block %d column %d: %v", b, col, err))
	}
	return l
}

// testTimePages is TimePages for tests.
func (r *Reader) testTimePages(b int) PageList { return r.testPages(b, r.tsCol) }
