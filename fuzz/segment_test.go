package fuzz

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
)

// Segment layout facts the harness relies on (segment/format.go): an 8-byte
// header; units of payload | codec u8 | crc32c u32 LE over payload+codec;
// a 20-byte trailer starting with the footer unit's offset (u64) and
// length (u32).
const (
	segHeaderSize   = 8
	segTrailerSize  = 20
	unitTrailerSize = 5
	codecRaw        = 0
	codecZstd       = 1
	codecZstdHist   = 2 // a data page compressed against its chunk's history
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// segSeed is a segment file written by segment.Writer, with where its
// units lie.
type segSeed struct {
	data    []byte
	units   [][2]int // [start, end) of every unit, footer last
	footOff int
	footer  []byte // the footer's payload, decompressed
}

var (
	segSeedsOnce sync.Once
	segSeedsList []*segSeed
)

// segmentSeeds writes segments of each format version: one whose values
// do not compress (so their pages are stored raw and mutations reach the
// page decoders) and one of repetitive log-like values (zstd pages,
// dictionaries, deltas).
func segmentSeeds() []*segSeed {
	segSeedsOnce.Do(func() {
		for _, version := range []uint8{segment.FormatLatest, segment.FormatV1} {
			for _, random := range []bool{true, false} {
				s, err := writeSeedSegment(random, version)
				if err != nil {
					panic(err) // a writer that cannot write a small segment fails every test anyway
				}
				segSeedsList = append(segSeedsList, s)
			}
		}
	})
	return segSeedsList
}

// writeSeedSegment writes 3 blocks of every column type and encoding, with
// NULLs, in format version.
func writeSeedSegment(random bool, version uint8) (*segSeed, error) {
	fs := vfs.NewMemFS()
	if err := fs.MkdirAll("/s"); err != nil {
		return nil, err
	}
	f, err := fs.Create("/s/seed.seg")
	if err != nil {
		return nil, err
	}
	cols := []segment.ColumnDesc{
		{Path: "timestamp", Type: segment.TypeTimestamp},
		{Path: "id", Type: segment.TypeString},
		{Path: "event_message", Type: segment.TypeString},
		{Path: "metadata", Type: segment.TypeObject},
		{Path: "metadata.status", Type: segment.TypeInt64},
		{Path: "metadata.method", Type: segment.TypeString},
		{Path: "metadata.latency", Type: segment.TypeFloat64},
		{Path: "metadata.ok", Type: segment.TypeBool},
		{Path: "metadata.context", Type: segment.TypeArray, Elem: []segment.ElemField{{Path: "host", Type: segment.TypeString}}},
		{Path: "metadata.cf_ray", Type: segment.TypeString},
		{Path: "metadata.ip", Type: segment.TypeString},
		{Path: "metadata.path", Type: segment.TypeString},
	}
	w, err := segment.NewWriter(f, cols, &segment.WriterOptions{PageBytes: 512, ZstdLevel: 1, DictPageBytes: 64, HistoryBytes: 256, FormatVersion: version})
	if err != nil {
		return nil, err
	}
	x := uint64(12345)
	next := func() uint64 { // xorshift: deterministic, incompressible enough
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return x
	}
	methods := []string{"GET", "POST", "PATCH"}
	ts := int64(1752148800000000)
	for _, rows := range []int{40, 64, 17} {
		data := make([]*segment.ColumnData, len(cols))
		for i := range data {
			data[i] = &segment.ColumnData{}
		}
		nulls := vec.NewBitset(rows)
		for r := range rows {
			ts += int64(next() % 1000)
			data[0].Ints = append(data[0].Ints, ts)
			id := fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", uint32(next()), uint16(next()), next()%0x1000, next()%0x1000, next()%(1<<48))
			data[1].Strs = append(data[1].Strs, id)
			msg := fmt.Sprintf("GET /rest/v1/table?id=eq.%d 200", r%7)
			status := int64(200 + 100*(r%4))
			if random {
				msg = fmt.Sprintf("%x %x", next(), next())
				status = int64(next() % 1000)
			}
			absent := r%5 == 3
			if absent {
				nulls.Set(r)
			}
			data[3].Bools = append(data[3].Bools, !absent)
			data[4].Ints = append(data[4].Ints, status)
			data[5].Strs = append(data[5].Strs, methods[r%3])
			data[6].Floats = append(data[6].Floats, float64(next()%100000)/7)
			data[7].Bools = append(data[7].Bools, r%2 == 0)
			arr := event.AppendValue(nil, event.ArrayValue(event.ObjectValue(event.Member("host", event.StringValue(fmt.Sprint("db-", r%3))))))
			data[8].Strs = append(data[8].Strs, string(arr))
			data[9].Strs = append(data[9].Strs, fmt.Sprintf("%016x-%s", next(), methods[r%3][:2]))
			ip := fmt.Sprintf("%d.%d.%d.%d", next()%256, next()%256, next()%256, next()%256)
			if r%4 == 1 {
				ip = fmt.Sprintf("2001:db8::%x", next()%65536)
			}
			data[10].Strs = append(data[10].Strs, ip)
			data[11].Strs = append(data[11].Strs, fmt.Sprintf("/rest/v1/table%d", r%9))
			if !random && version >= segment.FormatV3 {
				// A message of the row's other columns: derived text.
				msg = fmt.Sprintf("%s /rest/v1/table%d?id=eq.%d %d %s", methods[r%3], r%9, r%7, status, ip)
			}
			data[2].Strs = append(data[2].Strs, msg)
		}
		for c := 3; c < len(cols); c++ {
			data[c].Nulls = nulls
		}
		if err := w.WriteBlock(rows, data); err != nil {
			return nil, err
		}
	}
	if err := w.AddSection("extra", []byte("opaque section bytes")); err != nil {
		return nil, err
	}
	if err := w.Finish(); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	data, err := vfs.ReadFile(fs, "/s/seed.seg")
	if err != nil {
		return nil, err
	}
	s := &segSeed{data: data}
	tr := data[len(data)-segTrailerSize:]
	s.footOff = int(binary.LittleEndian.Uint64(tr))
	footLen := int(binary.LittleEndian.Uint32(tr[8:]))
	unit := data[s.footOff : s.footOff+footLen]
	payload, codec := unit[:len(unit)-unitTrailerSize], unit[len(unit)-unitTrailerSize]
	switch codec {
	case codecRaw:
		s.footer = append([]byte(nil), payload...)
	case codecZstd:
		dec, err := zstd.NewReader(nil)
		if err != nil {
			return nil, err
		}
		defer dec.Close()
		if s.footer, err = dec.DecodeAll(payload, nil); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("footer codec %d", codec)
	}
	s.units = findUnits(data[:s.footOff], segHeaderSize)
	s.units = append(s.units, [2]int{s.footOff, s.footOff + footLen})
	return s, nil
}

// findUnits finds the back-to-back units of data from start by their
// checksums: each unit ends at the first position where the CRC of what
// precedes it matches.
func findUnits(data []byte, start int) [][2]int {
	var out [][2]int
	for start < len(data) {
		end := -1
		for e := start + unitTrailerSize; e <= len(data); e++ {
			n := e - 4
			if c := data[n-1]; c != codecRaw && c != codecZstd && c != codecZstdHist {
				continue
			}
			if crc32.Checksum(data[start:n], castagnoli) == binary.LittleEndian.Uint32(data[n:e]) {
				end = e
				break
			}
		}
		if end < 0 {
			return out // not a unit: leave the rest unfixed
		}
		out = append(out, [2]int{start, end})
		start = end
	}
	return out
}

// fixChecksums recomputes the checksum of every unit of a mutated copy of
// a seed (same length), so that the mutation reaches the decoders behind
// the checksum.
func fixChecksums(data []byte, units [][2]int) {
	for _, u := range units {
		n := u[1] - 4
		binary.LittleEndian.PutUint32(data[n:u[1]], crc32.Checksum(data[u[0]:n], castagnoli))
	}
}

// FuzzSegmentOpen: open, check and read every column of any file. Every
// failure must match segment.ErrCorrupt; a segment that passes Check must
// read everywhere; allocations stay within allocLimit. With fix, a
// mutation of a seed of the same length gets its checksums recomputed.
func FuzzSegmentOpen(f *testing.F) {
	seeds := segmentSeeds()
	unitsByLen := map[int][][2]int{}
	for _, s := range seeds {
		f.Add(s.data, false)
		f.Add(s.data, true)
		unitsByLen[len(s.data)] = s.units
	}
	f.Add([]byte("SDSG\x01\x00\x00\x00"), false)
	f.Fuzz(func(t *testing.T, data []byte, fix bool) {
		if len(data) > maxInput {
			t.Skip()
		}
		if units, ok := unitsByLen[len(data)]; ok && fix {
			data = append([]byte(nil), data...)
			fixChecksums(data, units)
		}
		checkAlloc(t, allocLimit(len(data)), func() { exerciseSegment(t, data) })
	})
}

// FuzzSegmentFooter: the footer decoder on any bytes, with real blocks
// behind it. The input is the footer's payload; the harness appends it as
// a raw unit with a good checksum after the blocks of a seed, and the
// trailer, so every input gets past the checksum to the decoder.
func FuzzSegmentFooter(f *testing.F) {
	seeds := segmentSeeds()
	for i, s := range seeds {
		f.Add(uint8(i), s.footer)
	}
	f.Fuzz(func(t *testing.T, which uint8, footer []byte) {
		if len(footer) > maxInput {
			t.Skip()
		}
		s := seeds[int(which)%len(seeds)]
		data := make([]byte, 0, s.footOff+len(footer)+unitTrailerSize+segTrailerSize)
		data = append(data, s.data[:s.footOff]...)
		data = append(data, footer...)
		data = append(data, codecRaw)
		data = binary.LittleEndian.AppendUint32(data, crc32.Checksum(data[s.footOff:], castagnoli))
		tr := append([]byte(nil), s.data[len(s.data)-segTrailerSize:]...)
		binary.LittleEndian.PutUint32(tr[8:], uint32(len(footer)+unitTrailerSize))
		data = append(data, tr...)
		checkAlloc(t, allocLimit(len(data)), func() { exerciseSegment(t, data) })
	})
}

// exerciseSegment opens data as a segment file and reads everything the
// reader offers.
func exerciseSegment(t *testing.T, data []byte) {
	t.Helper()
	fs := vfs.NewMemFS()
	if err := fs.MkdirAll("/s"); err != nil {
		t.Fatal(err)
	}
	w, err := fs.Create("/s/s.seg")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	w.Close()
	file, err := fs.Open("/s/s.seg")
	if err != nil {
		t.Fatal(err)
	}
	r, err := segment.Open(file, "s.seg")
	var ve *segment.VersionError
	if errors.As(err, &ve) {
		// A well-formed header and trailer naming a version this build
		// does not read: not damage, a newer writer's file (refused).
		file.Close()
		return
	}
	if err != nil {
		mustCorrupt(t, "Open", err)
		file.Close()
		return
	}
	defer r.Close()
	checked := r.Check()
	if checked != nil {
		mustCorrupt(t, "Check", checked)
	}
	r.TimeRange()
	r.ColumnBytes()
	cols := r.Columns()
	if r.NumBlocks() > 0 {
		first, last := r.Block(0), r.Block(r.NumBlocks()-1)
		if first.FirstRow != 0 || last.FirstRow+last.Rows != r.Rows() {
			t.Fatalf("blocks cover rows [%d, %d), segment has %d", first.FirstRow, last.FirstRow+last.Rows, r.Rows())
		}
	}
	var v vec.Vector
	for b := range r.NumBlocks() {
		bi := r.Block(b)
		if tp, err := r.TimePages(b); err != nil {
			mustCorrupt(t, "TimePages", err)
		} else {
			checkPages(t, b, -1, bi.Rows, tp)
		}
		for c := range cols {
			if _, ok := r.Chunk(b, c); ok {
				if pl, err := r.Pages(b, c); err != nil {
					mustCorrupt(t, "Pages", err)
				} else {
					checkPages(t, b, c, bi.Rows, pl)
				}
			}
			if err := r.ReadColumn(b, c, 0, bi.Rows, &v); err != nil {
				mustCorrupt(t, "ReadColumn", err)
				if checked == nil {
					t.Fatalf("Check passed but block %d column %d does not read: %v", b, c, err)
				}
			} else if v.Len != bi.Rows {
				t.Fatalf("block %d column %d: %d rows read, block has %d", b, c, v.Len, bi.Rows)
			}
			if bi.Rows > 0 {
				rows := []int32{0, int32(bi.Rows - 1)}
				if bi.Rows == 1 {
					rows = rows[:1]
				}
				if err := r.ReadRows(b, c, rows, &v); err != nil {
					mustCorrupt(t, "ReadRows", err)
				}
				if err := r.ReadRowsOnce(b, c, rows[len(rows)-1:], &v); err != nil {
					mustCorrupt(t, "ReadRowsOnce", err)
				}
			}
			if ci, ok := r.Chunk(b, c); ok && ci.DictEntries > 0 {
				var err error
				if cols[c].Type == segment.TypeString {
					_, err = r.DictStrings(b, c)
				} else {
					_, err = r.DictInts(b, c)
				}
				if err != nil {
					mustCorrupt(t, "Dict", err)
				}
			}
		}
	}
	for _, name := range []string{"extra", "index", "meta"} {
		if _, err := r.Section(name); err != nil {
			mustCorrupt(t, "Section", err)
		}
	}
}

// checkPages checks the pages an opened footer lists for column c of
// block b (-1: the timestamp pages): they continue each other from row 0
// to the block's end (none at all for a column without a chunk), Span
// agrees with At, no page holds more values than rows, and a value range
// comes with values.
func checkPages(t *testing.T, b, c, rows int, pages segment.PageList) {
	t.Helper()
	next := 0
	for i := range pages.Len() {
		p := pages.At(i)
		first, end := pages.Span(i)
		if p.FirstRow != next || p.Rows <= 0 || first != p.FirstRow || end != p.FirstRow+p.Rows {
			t.Fatalf("block %d column %d page %d: %+v (span [%d,%d)) does not continue row %d", b, c, i, p, first, end, next)
		}
		if p.Present > p.Rows || p.HasRange && p.Present <= 0 {
			t.Fatalf("block %d column %d page %d: %+v", b, c, i, p)
		}
		next = end
	}
	if pages.Len() > 0 && next != rows {
		t.Fatalf("block %d column %d: pages cover %d of %d rows", b, c, next, rows)
	}
}

func mustCorrupt(t *testing.T, op string, err error) {
	t.Helper()
	if !errors.Is(err, segment.ErrCorrupt) {
		t.Fatalf("%s: error does not match segment.ErrCorrupt: %v", op, err)
	}
}
