package segment

import (
	"fmt"
	"os"
	"reflect"
	"sync"
	"testing"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
)

// setFooterBudgetForTest sets the block directory cache's budget below
// the floor SetFooterCacheBytes keeps, and returns a func restoring it.
func setFooterBudgetForTest(n int64) func() {
	details.mu.Lock()
	old := details.max
	details.max = n
	details.evictLocked(nil)
	details.mu.Unlock()
	return func() {
		details.mu.Lock()
		details.max = old
		details.mu.Unlock()
	}
}

// footerFixture writes a segment of several blocks with every column
// type and small pages (many page records per block) and opens it.
func footerFixture(t testing.TB, name string) (*Reader, []testColumn) {
	t.Helper()
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	cols := makeColumns(2000, 11)
	writeSegment(t, fs, "/d/"+name, cols, 500, &WriterOptions{PageRows: 64})
	r := openSegment(t, fs, "/d/"+name)
	t.Cleanup(func() { r.Close() })
	return r, cols
}

// TestBlockRecordsDecodeAsAtOpen: every block's record, decoded again
// from the footer unit, is what decoding the whole footer gives (for the
// segments of every format version in testdata as well).
func TestBlockRecordsDecodeAsAtOpen(t *testing.T) {
	r, _ := footerFixture(t, "s.seg")
	readers := []*Reader{r}
	for _, name := range []string{"v1.seg", "v2.seg", "v3.seg", "v3types.seg", "v3edge.seg"} {
		data, err := os.ReadFile("testdata/" + name)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		fs := vfs.NewMemFS()
		fs.MkdirAll("/t")
		f, _ := fs.Create("/t/" + name)
		f.Write(data)
		f.Close()
		old := openSegment(t, fs, "/t/"+name)
		defer old.Close()
		readers = append(readers, old)
	}
	if len(readers) < 3 {
		t.Fatalf("only %d segments: testdata fixtures missing", len(readers))
	}
	for _, r := range readers {
		body, err := r.readUnit(r.footOff, r.footLen, "footer", maxFooterSize)
		if err != nil {
			t.Fatal(err)
		}
		if r.ft.blocks[0].rec <= 0 {
			t.Fatalf("%s: block 0's record at %d", r.path, r.ft.blocks[0].rec)
		}
		// The footer's records one after the other, as Open decodes them.
		d := decbuf{b: body[r.ft.blocks[0].rec:]}
		var sc blockScratch
		for b := range r.NumBlocks() {
			want, err := decodeBlock(&d, b, r.ft.cols, r.footOff, r.version, &sc)
			if err != nil || d.err != nil {
				t.Fatalf("%s block %d: %v %v", r.path, b, err, d.err)
			}
			want.firstRow = r.ft.blocks[b].firstRow
			got := r.testBlock(b)
			if !sameBlock(got, &want) {
				t.Fatalf("%s block %d: decoded again differs from the footer's decode", r.path, b)
			}
			// The resident part agrees with the full record.
			for ci := range got.chunks {
				c := &got.chunks[ci]
				ci, ok := r.Chunk(b, c.col)
				want := ChunkInfo{Present: c.present, HasNumRange: c.stats.flags&statNum != 0,
					MinInt: c.stats.minI, MaxInt: c.stats.maxI, MinFloat: c.stats.minF, MaxFloat: c.stats.maxF,
					HasMinStr: c.stats.flags&statMinStr != 0, HasMaxStr: c.stats.flags&statMaxStr != 0,
					MinStr: c.stats.minS, MaxStr: c.stats.maxS, DictEntries: c.dictEntries, StoredBytes: c.stored, Derived: c.enc == encDerived}
				if r.ft.cols[c.col].Type == TypeFloat64 {
					want.MinInt, want.MaxInt = 0, 0
				} else {
					want.MinFloat, want.MaxFloat = 0, 0
				}
				if !ok || !reflect.DeepEqual(ci, want) {
					t.Fatalf("%s block %d column %d: resident %+v, record %+v", r.path, b, c.col, ci, want)
				}
			}
			if r.ft.blocks[b].nchunks != int32(len(got.chunks)) {
				t.Fatalf("%s block %d: %d resident chunks, %d in the record", r.path, b, r.ft.blocks[b].nchunks, len(got.chunks))
			}
		}
	}
}

// sameBlock compares two decoded block records, pages by their values.
func sameBlock(a, b *blockMeta) bool {
	if a.rows != b.rows || a.firstRow != b.firstRow || a.minTime != b.minTime || a.maxTime != b.maxTime ||
		!reflect.DeepEqual(a.byCol, b.byCol) || len(a.chunks) != len(b.chunks) {
		return false
	}
	for i := range a.chunks {
		x, y := a.chunks[i], b.chunks[i]
		if x.pages.Len() != y.pages.Len() {
			return false
		}
		for p := range x.pages.Len() {
			if x.page(p) != y.page(p) {
				return false
			}
		}
		x.pages, y.pages = PageList{}, PageList{}
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

// readBlockValues reads every column of block b, as strings (a compact
// way to compare two reads).
func readBlockValues(r *Reader, b int) (string, error) {
	var v vec.Vector
	var out []byte
	for col := range r.Columns() {
		if err := r.ReadColumn(b, col, 0, r.Block(b).Rows, &v); err != nil {
			return "", err
		}
		for i := range v.Len {
			out = fmt.Appendf(out, "%v|", cellString(&v, i))
		}
		out = append(out, '\n')
	}
	return string(out), nil
}

func cellString(v *vec.Vector, i int) string {
	if v.IsNull(i) {
		return "NULL"
	}
	switch v.Type {
	case vec.Bool:
		return fmt.Sprint(v.Bools[i])
	case vec.Int64, vec.Timestamp:
		return fmt.Sprint(v.Ints[i])
	case vec.Float64:
		return fmt.Sprint(v.Floats[i])
	}
	if v.Dict != nil {
		return v.Dict[v.Codes[i]]
	}
	return string(v.BytesAt(i))
}

// TestFooterCacheEvictsWhileScansRun: scans read every block of a segment
// at once while the block directory cache is emptied again and again
// (and, with a budget of a few blocks, evicts on its own): every read
// gives the values of a read with the cache undisturbed. Run with -race.
func TestFooterCacheEvictsWhileScansRun(t *testing.T) {
	r, _ := footerFixture(t, "s.seg")
	want := make([]string, r.NumBlocks())
	for b := range want {
		var err error
		if want[b], err = readBlockValues(r, b); err != nil {
			t.Fatal(err)
		}
	}
	one := r.testBlock(0)
	defer setFooterBudgetForTest(2 * detailSize(one))()
	loads := FooterMemory().Loads
	stop := make(chan struct{})
	var evictor sync.WaitGroup
	evictor.Add(1)
	go func() {
		defer evictor.Done()
		for {
			select {
			case <-stop:
				return
			default:
				details.dropAll()
			}
		}
	}()
	var scans sync.WaitGroup
	errs := make(chan error, 4)
	for s := range 4 {
		scans.Add(1)
		go func() {
			defer scans.Done()
			for round := range 2 {
				for i := range r.NumBlocks() {
					b := (i + s) % r.NumBlocks()
					got, err := readBlockValues(r, b)
					if err != nil {
						errs <- err
						return
					}
					if got != want[b] {
						errs <- fmt.Errorf("scan %d round %d block %d: values differ", s, round, b)
						return
					}
					if _, err := r.Pages(b, 1); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	scans.Wait()
	close(stop)
	evictor.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if FooterMemory().Loads == loads {
		t.Fatal("no block directory was loaded again: the cache was never emptied under the scans")
	}
}

// TestFooterCacheStaysWithinBudget: reading every block of several
// segments with a budget of a few blocks keeps the cache at its budget
// (evicting), what the reads give does not change, and closing the
// readers leaves the cache empty and the resident count where it was.
func TestFooterCacheStaysWithinBudget(t *testing.T) {
	details.dropAll()
	before := FooterMemory()
	var readers []*Reader
	var wants [][]string
	for i := range 3 {
		r, _ := footerFixture(t, fmt.Sprintf("s%d.seg", i))
		readers = append(readers, r)
		w := make([]string, r.NumBlocks())
		for b := range w {
			var err error
			if w[b], err = readBlockValues(r, b); err != nil {
				t.Fatal(err)
			}
		}
		wants = append(wants, w)
	}
	if FooterMemory().ResidentBytes <= before.ResidentBytes {
		t.Fatalf("resident footer bytes %d after opening 3 segments, %d before", FooterMemory().ResidentBytes, before.ResidentBytes)
	}
	budget := 3 * detailSize(readers[0].testBlock(0))
	defer setFooterBudgetForTest(budget)()
	evictions := FooterMemory().Evictions
	for round := range 2 {
		for i, r := range readers {
			for b := range r.NumBlocks() {
				got, err := readBlockValues(r, b)
				if err != nil {
					t.Fatal(err)
				}
				if got != wants[i][b] {
					t.Fatalf("round %d segment %d block %d: values differ after evictions", round, i, b)
				}
				if st := FooterMemory(); st.CacheBytes > budget {
					t.Fatalf("cache holds %d bytes, budget %d", st.CacheBytes, budget)
				}
			}
		}
	}
	if FooterMemory().Evictions == evictions {
		t.Fatal("nothing evicted reading 3 segments through a cache of 3 blocks")
	}
	for _, r := range readers {
		r.Close()
	}
	if st := FooterMemory(); st.CacheBytes != 0 || st.ResidentBytes != before.ResidentBytes {
		t.Fatalf("after closing: cache %d bytes, resident %d (%d before opening)", st.CacheBytes, st.ResidentBytes, before.ResidentBytes)
	}
}

// FuzzDecodeBlockRecord: any bytes as a block record, against a column
// directory of every type, decode without a panic, and a record that
// decodes has pages covering its rows in every chunk.
func FuzzDecodeBlockRecord(f *testing.F) {
	r, _ := footerFixture(f, "s.seg")
	body, err := r.readUnit(r.footOff, r.footLen, "footer", maxFooterSize)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range r.ft.blocks {
		f.Add(body[s.rec:s.recEnd], r.version)
	}
	f.Add([]byte{1, 0, 0, 0}, uint8(FormatV1))
	f.Add([]byte{}, uint8(FormatV2))
	cols := r.ft.cols
	f.Fuzz(func(t *testing.T, rec []byte, version uint8) {
		version = FormatMinSupported + version%(FormatLatest-FormatMinSupported+1)
		bm, err := decodeBlockRecord(rec, 0, cols, 1<<40, version)
		if err != nil {
			return
		}
		if bm.rows <= 0 || bm.rows > maxBlockRows {
			t.Fatalf("block of %d rows decoded", bm.rows)
		}
		for _, c := range bm.chunks {
			if bm.byCol[c.col] < 0 {
				t.Fatalf("column %d not mapped", c.col)
			}
			end := 0
			for i := range c.pages.Len() {
				first, e := c.pages.Span(i)
				if first != end {
					t.Fatalf("column %d page %d starts at %d, previous ended at %d", c.col, i, first, end)
				}
				end = e
			}
			if end != bm.rows {
				t.Fatalf("column %d pages cover %d of %d rows", c.col, end, bm.rows)
			}
		}
	})
}
