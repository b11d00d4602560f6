package segment

import (
	"encoding/binary"
	"math"
	"testing"
)

// wantPage is what page(i) must give back for a page added as p: p itself,
// with the value range the footer decoder derives (hasRange) and no range
// for a chunk without page statistics.
func wantPage(p pageMeta, withBounds, float bool) pageMeta {
	if !withBounds {
		p.minI, p.maxI, p.minF, p.maxF = 0, 0, 0, 0
	}
	switch {
	case !withBounds || p.present <= 0:
		p.hasRange = false
	case float:
		p.minI, p.maxI = 0, 0
		p.hasRange = p.minF <= p.maxF
	default:
		p.minF, p.maxF = 0, 0
		p.hasRange = true
	}
	return p
}

// samePage compares pages, floats by their bits (NaN equals itself).
func samePage(a, b pageMeta) bool {
	fa, fb := [2]uint64{math.Float64bits(a.minF), math.Float64bits(a.maxF)}, [2]uint64{math.Float64bits(b.minF), math.Float64bits(b.maxF)}
	a.minF, a.maxF, b.minF, b.maxF = 0, 0, 0, 0
	return a == b && fa == fb
}

// checkDirPages checks every page of chunk c against want, through page,
// At, Span and unit.
func checkDirPages(t *testing.T, c *chunkMeta, want []pageMeta, withBounds, float bool) {
	t.Helper()
	if c.pages.Len() != len(want) {
		t.Fatalf("%d pages, want %d", c.pages.Len(), len(want))
	}
	for i, p := range want {
		w := wantPage(p, withBounds, float)
		got := c.page(i)
		if !samePage(got, w) {
			t.Fatalf("page %d: %+v, want %+v", i, got, w)
		}
		r := c.pages.At(i)
		first, end := c.pages.Span(i)
		if r.FirstRow != w.firstRow || r.Rows != w.rows || r.Present != w.present || r.HasRange != w.hasRange ||
			first != w.firstRow || end != w.firstRow+w.rows {
			t.Fatalf("page %d: At %+v, Span [%d,%d), want %+v", i, r, first, end, w)
		}
		if off, ln := c.pages.unit(i); off != w.off || ln != w.len {
			t.Fatalf("page %d: unit [%d,+%d), want [%d,+%d)", i, off, ln, w.off, w.len)
		}
	}
}

// TestPageDirUnits: units that lie before the directory's base or 4 GiB
// and more beyond it (a valid footer may list them; this package's writer
// never does) and lengths of 4 GiB and more are kept at full width, for
// the writer's chunks (addPage) and the reader's blocks (blockPages); -1
// present, NaN-only float pages and int ranges come back as they went in.
func TestPageDirUnits(t *testing.T) {
	const gib4 = int64(1) << 32
	pages := []pageMeta{
		{firstRow: 0, rows: 10, off: 1 << 20, len: 100, present: 10, minI: -5, maxI: 7},
		{firstRow: 10, rows: 5, off: 1<<20 + 100, len: 50, present: 0},
		{firstRow: 15, rows: 1, off: 4096, len: 20, present: 1, minI: math.MinInt64, maxI: math.MaxInt64},
		{firstRow: 16, rows: 3, off: 1<<20 + gib4, len: gib4 + 9, present: 3, minI: 1, maxI: 1},
	}
	for _, stats := range []bool{false, true} {
		var c chunkMeta
		in := pages
		if stats {
			c.stats.flags = statPages
		} else {
			// The pages of a chunk without statistics, as the writer and
			// the footer decoder give them.
			in = make([]pageMeta, len(pages))
			for i, p := range pages {
				in[i] = pageMeta{firstRow: p.firstRow, rows: p.rows, off: p.off, len: p.len, present: -1}
			}
		}
		for _, p := range in {
			c.addPage(p, TypeInt64)
		}
		if c.pages.d.wide == nil {
			t.Fatal("units beyond 32 bits kept narrow")
		}
		checkDirPages(t, &c, in, stats, false)
	}
	// A block of two chunks, the first without statistics, the second
	// float64 with them; all units narrow.
	floats := []pageMeta{
		{firstRow: 0, rows: 4, off: 900, len: 30, present: 4, minF: -1.5, maxF: 2.25},
		{firstRow: 4, rows: 2, off: 930, len: 30, present: 2, minF: math.Inf(1), maxF: math.Inf(-1)},
		{firstRow: 6, rows: 1, off: 960, len: 30, present: 1, minF: math.Copysign(0, -1), maxF: math.Copysign(0, -1)},
	}
	plain := []pageMeta{
		{firstRow: 0, rows: 7, off: 800, len: 100, present: -1},
	}
	cols := []ColumnDesc{{Path: "b", Type: TypeBool}, {Path: "f", Type: TypeFloat64}}
	chunks := []chunkMeta{{col: 0}, {col: 1, stats: chunkStats{flags: statPages}}}
	chunks[0].pages = PageList{first: 0, n: 1}
	chunks[1].pages = PageList{first: 1, n: 3}
	blockPages(chunks, append(append([]pageMeta{}, plain...), floats...), cols)
	if d := chunks[0].pages.d; d != chunks[1].pages.d || d.wide != nil || d.base != 800 || len(d.bounds) != 3 {
		t.Fatalf("block directory %+v", d)
	}
	checkDirPages(t, &chunks[0], plain, false, false)
	checkDirPages(t, &chunks[1], floats, true, true)
	if r := chunks[1].pages.At(2); math.Signbit(r.MinFloat) != true {
		t.Fatalf("-0 page range %+v", r)
	}
}

// FuzzPageDir: any list of pages (rows, units, counts and ranges drawn
// from the input) comes back from a chunk's directory as it went in.
func FuzzPageDir(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38}, true, false)
	f.Add(make([]byte, 200), false, true)
	f.Add([]byte("\xff\xff\xff\xff\xff\xff\xff\x7f\x00\x00\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d"), true, true)
	f.Fuzz(func(t *testing.T, data []byte, stats, float bool) {
		const rec = 38 // bytes per page drawn from the input
		typ := TypeInt64
		if float {
			typ = TypeFloat64
		}
		var c chunkMeta
		if stats {
			c.stats.flags = statPages
		}
		var want []pageMeta
		next := 0
		for len(data) >= rec && len(want) < maxPagesPerChunk && next <= maxBlockRows {
			rows := int(binary.LittleEndian.Uint16(data)) + 1
			p := pageMeta{firstRow: next, rows: rows, present: -1,
				off: int64(binary.LittleEndian.Uint64(data[2:]) >> 2), len: int64(binary.LittleEndian.Uint32(data[10:])) << (data[14] & 7)}
			if stats {
				p.present = int(data[15]) % (rows + 1)
				if p.present > 0 {
					a, b := binary.LittleEndian.Uint64(data[16:]), binary.LittleEndian.Uint64(data[24:])
					if float {
						p.minF, p.maxF = math.Float64frombits(a), math.Float64frombits(b)
					} else {
						p.minI, p.maxI = int64(min(a, b)), int64(max(a, b))
					}
				}
			}
			data = data[rec:]
			next += rows
			c.addPage(p, typ)
			want = append(want, p)
		}
		checkDirPages(t, &c, want, stats, float)
	})
}
