package segment

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
)

// TestReadFromPageStats reads rows of pages whose footer statistics
// decide their values (no value in the page; one value in every row):
// the answers are those of the pages, and the pages are not read (they
// are damaged here, and only a check finds it), while rows of other pages
// of the same columns read as usual.
func TestReadFromPageStats(t *testing.T) {
	const rows = 300 // three pages of 100 rows
	ts := testColumn{desc: ColumnDesc{Path: "timestamp", Type: TypeTimestamp}}
	host := testColumn{desc: ColumnDesc{Path: "host", Type: TypeString}}
	status := testColumn{desc: ColumnDesc{Path: "status", Type: TypeInt64}}
	jwt := testColumn{desc: ColumnDesc{Path: "jwt", Type: TypeString}}
	took := testColumn{desc: ColumnDesc{Path: "took", Type: TypeInt64}}
	for i := 0; i < rows; i++ {
		ts.vals = append(ts.vals, int64(1000+i))
		// Page 0: one host, one status, no jwt, one duration; then
		// varied values.
		if i < 100 {
			host.vals = append(host.vals, "b.example")
			status.vals = append(status.vals, int64(200))
			jwt.vals = append(jwt.vals, nil)
			took.vals = append(took.vals, int64(1_000_000))
		} else {
			host.vals = append(host.vals, fmt.Sprintf("%c.example", 'a'+i%5))
			status.vals = append(status.vals, int64(200+i%7*100))
			if i%3 == 0 {
				jwt.vals = append(jwt.vals, nil)
			} else {
				jwt.vals = append(jwt.vals, fmt.Sprintf("token-%d", i%11))
			}
			took.vals = append(took.vals, int64(i*i))
		}
	}
	cols := []testColumn{ts, host, status, jwt, took}
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	writeSegment(t, fs, "/d/good.seg", cols, rows, &WriterOptions{PageRows: 100})
	r := openSegment(t, fs, "/d/good.seg")
	enc := map[string]Encoding{}
	var firstPages []int64
	for ci := 1; ci < len(cols); ci++ {
		c := r.testChunk(0, ci)
		if c.pages.Len() != 3 {
			t.Fatalf("column %s: %d pages, want 3", cols[ci].desc.Path, c.pages.Len())
		}
		enc[cols[ci].desc.Path] = c.enc
		firstPages = append(firstPages, c.page(0).off)
	}
	r.Close()
	if enc["host"] != encDict || enc["status"] != encDict || enc["took"] == encDict {
		t.Fatalf("encodings %v: the test wants dictionary-encoded host and status, and took not", enc)
	}

	// Damage the first page of every column but the timestamp.
	bad, err := vfs.ReadFile(fs, "/d/good.seg")
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range firstPages {
		bad[off] ^= 0x40
	}
	f, _ := fs.Create("/d/bad.seg")
	f.Write(bad)
	f.Close()
	r = openSegment(t, fs, "/d/bad.seg")
	defer r.Close()

	for _, once := range []bool{false, true} {
		for _, sel := range [][]int32{{3, 50, 99}, {7}, {0, 150, 299}} {
			for ci := 1; ci < len(cols); ci++ {
				var v vec.Vector
				err := r.Read(0, ci, 0, 0, sel, &v, ReadOptions{Once: once})
				if sel[len(sel)-1] >= 100 {
					// A row outside page 0 is read along with those in it,
					// from stats; its own page is intact.
					if err != nil {
						t.Fatalf("column %s rows %v: %v", cols[ci].desc.Path, sel, err)
					}
				} else if err != nil {
					t.Fatalf("column %s rows %v read a damaged page it need not: %v", cols[ci].desc.Path, sel, err)
				}
				for k, row := range sel {
					if got, want := vecValue(&v, k, cols[ci].desc.Type), cols[ci].vals[row]; got != want {
						t.Fatalf("column %s row %d: %v, want %v", cols[ci].desc.Path, row, got, want)
					}
				}
			}
		}
	}
	// A range of rows of page 0 (a scan) is decided by the stats too.
	var v vec.Vector
	if err := r.ReadColumn(0, 1, 10, 20, &v); err != nil {
		t.Fatal(err)
	}
	if v.StringAt(0) != "b.example" || v.StringAt(9) != "b.example" {
		t.Fatalf("range read %q", v.StringAt(0))
	}
	// A check reads every page, and finds the damage.
	if err := r.CheckBlock(0); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("check of the damaged block: %v", err)
	}
}

// vecValue is row k of v as readAll gives values (nil for NULL).
func vecValue(v *vec.Vector, k int, t ColType) any {
	if v.IsNull(k) {
		return nil
	}
	switch t {
	case TypeInt64, TypeTimestamp:
		return v.Ints[k]
	case TypeString:
		return v.StringAt(k)
	}
	return fmt.Sprintf("unexpected type %v", t)
}

// TestSmallDictionariesKept: a read of a few rows decodes a small
// dictionary whole and keeps it in the dictionary cache, even a read that
// keeps no pages (the records of rare matches, built again by the next
// run of the query); a big dictionary is read entry by entry and not kept.
func TestSmallDictionariesKept(t *testing.T) {
	const rows = 4000
	ts := testColumn{desc: ColumnDesc{Path: "timestamp", Type: TypeTimestamp}}
	country := testColumn{desc: ColumnDesc{Path: "country", Type: TypeString}}
	ip := testColumn{desc: ColumnDesc{Path: "ip", Type: TypeString}}
	for i := 0; i < rows; i++ {
		ts.vals = append(ts.vals, int64(i))
		country.vals = append(country.vals, []string{"DE", "FR", "US", "JP", "BR", "IN", "NG", "AU", "CA", "MX"}[i*7%10])
		ip.vals = append(ip.vals, fmt.Sprintf("10.1.%d.%d", i%700/200, i%700%200))
	}
	cols := []testColumn{ts, country, ip}
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	writeSegment(t, fs, "/d/s.seg", cols, rows, nil)
	r := openSegment(t, fs, "/d/s.seg")
	defer r.Close()
	if c := r.testChunk(0, 2); c.enc != encDict || smallDict(c) || !smallDict(r.testChunk(0, 1)) {
		t.Fatalf("the test wants a small dictionary for country and a big one for ip: ip enc %d dict %v", c.enc, c.dict)
	}
	defer SetDictCacheBytes(SetDictCacheBytes(1 << 20))
	DropCaches()
	var v vec.Vector
	for k, col := range []int{2, 1} {
		for _, row := range []int32{17, 3999} {
			if err := r.ReadRowsOnce(0, col, []int32{row}, &v); err != nil {
				t.Fatal(err)
			}
			if got := vecValue(&v, 0, TypeString); got != cols[col].vals[row] {
				t.Fatalf("%s row %d: %v, want %v", cols[col].desc.Path, row, got, cols[col].vals[row])
			}
		}
		if kept := DictCacheBytes(); k == 0 && kept != 0 || k == 1 && kept == 0 {
			t.Fatalf("after reading %s: %d bytes of dictionaries kept", cols[col].desc.Path, kept)
		}
	}
}
