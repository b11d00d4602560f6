package parser

import "sync"

// Allocation helpers for the parser. A query's nodes live and die together,
// so the most common node types are carved from chunks instead of being
// allocated one by one, and lists are gathered on a shared stack and copied
// once into a slice of exactly the right size. This halves parse time on
// Studio-sized queries.

// scratch holds the buffers a parse needs only while it runs (tokens, line
// index, paren matches, list stacks). They are pooled: the AST never points
// into them.
type scratch struct {
	toks       []token
	values     []string
	lineStarts []int32
	match      []int32
	parenStack []int32
	exprStack  []Expr
	itemStack  []*SelectItem
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// maxPooledTokens keeps the buffers of unusually large inputs (over ~50 KB
// of SQL) out of the pool.
const maxPooledTokens = 1 << 14

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

// release returns the buffers to the pool, dropping every reference they
// hold so the pool keeps no query text or nodes alive.
func (s *scratch) release() {
	if cap(s.toks) > maxPooledTokens {
		return
	}
	clear(s.values[:cap(s.values)])
	clear(s.exprStack[:cap(s.exprStack)])
	clear(s.itemStack[:cap(s.itemStack)])
	s.values, s.exprStack, s.itemStack = s.values[:0], s.exprStack[:0], s.itemStack[:0]
	scratchPool.Put(s)
}

// reuse returns buf emptied, or a new slice if buf cannot hold n elements.
func reuse[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, 0, n)
	}
	return buf[:0]
}

// slab hands out pointers to zeroed T values carved from chunks that grow
// from 4 to 64 elements, so small queries waste little.
type slab[T any] struct {
	buf []T
}

func (s *slab[T]) alloc() *T {
	if len(s.buf) == cap(s.buf) {
		n := 2 * cap(s.buf)
		if n < 4 {
			n = 4
		}
		if n > 64 {
			n = 64
		}
		s.buf = make([]T, 0, n)
	}
	s.buf = s.buf[:len(s.buf)+1]
	return &s.buf[len(s.buf)-1]
}

// identRun returns a zeroed slice of n Idents with capacity n (so an append
// by a later rewrite reallocates rather than overwrite a neighbour).
func (p *parser) identRun(n int) []Ident {
	if n > 16 {
		return make([]Ident, n)
	}
	if len(p.identBuf)+n > cap(p.identBuf) {
		p.identBuf = make([]Ident, 0, 64)
	}
	start := len(p.identBuf)
	p.identBuf = p.identBuf[:start+n]
	return p.identBuf[start : start+n : start+n]
}

// exprStack collects list elements; lists nest (an argument list inside an
// argument list), so each list remembers where its elements start.
func (p *parser) finishExprs(start int) []Expr {
	list := make([]Expr, len(p.exprStack)-start)
	copy(list, p.exprStack[start:])
	clear(p.exprStack[start:]) // drop references for the GC
	p.exprStack = p.exprStack[:start]
	return list
}

func (p *parser) finishItems(start int) []*SelectItem {
	list := make([]*SelectItem, len(p.itemStack)-start)
	copy(list, p.itemStack[start:])
	clear(p.itemStack[start:])
	p.itemStack = p.itemStack[:start]
	return list
}
