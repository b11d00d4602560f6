package segment

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/sediment/sediment/internal/vfs"
)

// unitBytes returns, per column of block b, its dictionary units and its
// page units as stored (payload, codec and checksum).
func unitBytes(t *testing.T, r *Reader, b int) (dicts, pages map[int][][]byte) {
	t.Helper()
	bm, err := r.block(b)
	if err != nil {
		t.Fatal(err)
	}
	dicts, pages = map[int][][]byte{}, map[int][][]byte{}
	for _, c := range bm.chunks {
		for _, d := range c.dict {
			raw, _, _, err := r.readUnitRaw(d.off, d.len, "dictionary")
			if err != nil {
				t.Fatal(err)
			}
			dicts[c.col] = append(dicts[c.col], raw)
		}
		for i := range c.pages.Len() {
			pm := c.page(i)
			raw, _, _, err := r.readUnitRaw(pm.off, pm.len, "page")
			if err != nil {
				t.Fatal(err)
			}
			pages[c.col] = append(pages[c.col], raw)
		}
	}
	return dicts, pages
}

// TestCopyBlockRecompressesAsWriteColumn: a block of a level 1 segment
// copied with recompress into a level 3 writer reads back the same, and
// its units are compressed as WriteColumn compresses them at level 3:
// dictionary pages and pages of codes at lightLevel and pages of UUIDs
// at level 1 (the same units a direct level 3 write of the values
// stores), other pages at level 3.
func TestCopyBlockRecompressesAsWriteColumn(t *testing.T) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	cols := makeColumns(6000, 11)
	// A dictionary large enough for levels to store it differently.
	hosts := testColumn{desc: ColumnDesc{Path: "metadata.host", Type: TypeString}}
	for i := range 6000 {
		hosts.vals = append(hosts.vals, fmt.Sprintf("edge-%d.%s.example.net", i*7919%600, []string{"fra", "iad", "sin"}[i*7919%600%3]))
	}
	cols = append(cols, hosts)
	writeSegment(t, fs, "/d/fast.seg", cols, 3000, &WriterOptions{ZstdLevel: 1})
	writeSegment(t, fs, "/d/direct.seg", cols, 3000, &WriterOptions{ZstdLevel: 3})
	fast := openSegment(t, fs, "/d/fast.seg")
	defer fast.Close()
	direct := openSegment(t, fs, "/d/direct.seg")
	defer direct.Close()

	f, err := fs.Create("/d/copy.seg")
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(f, fast.Columns(), &WriterOptions{ZstdLevel: 3})
	if err != nil {
		t.Fatal(err)
	}
	for b := 0; b < fast.NumBlocks(); b++ {
		if err := w.CopyBlock(fast, b, identityMap(len(fast.Columns())), true); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cp := openSegment(t, fs, "/d/copy.seg")
	defer cp.Close()
	checkAllValues(t, cp, cols)
	if err := cp.Check(); err != nil {
		t.Fatal(err)
	}

	id := cp.Column("id", TypeString)
	method := cp.Column("metadata.host", TypeString)
	message := cp.Column("event_message", TypeString)
	if id < 0 || method < 0 || message < 0 {
		t.Fatal("test columns missing")
	}
	recompressed := 0
	for b := 0; b < cp.NumBlocks(); b++ {
		if cp.testChunk(b, id).enc != encUUID || cp.testChunk(b, method).enc != encDict {
			t.Fatalf("block %d: encodings %d, %d", b, cp.testChunk(b, id).enc, cp.testChunk(b, method).enc)
		}
		cpDicts, cpPages := unitBytes(t, cp, b)
		dDicts, dPages := unitBytes(t, direct, b)
		_, fPages := unitBytes(t, fast, b)
		if !equalUnits(cpPages[id], dPages[id]) {
			t.Errorf("block %d: UUID pages differ from a level 3 write's", b)
		}
		if len(cpDicts[method]) == 0 || !equalUnits(cpDicts[method], dDicts[method]) {
			t.Errorf("block %d: dictionary units differ from a level 3 write's", b)
		}
		if !equalUnits(cpPages[method], dPages[method]) {
			t.Errorf("block %d: pages of codes differ from a level 3 write's", b)
		}
		if !equalUnits(cpPages[message], fPages[message]) {
			recompressed++
		}
	}
	if recompressed == 0 {
		t.Error("text pages copied at level 1")
	}
}

func equalUnits(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
