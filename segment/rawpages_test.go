package segment

import (
	"testing"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
)

// TestTwoByteCodePagesRawWhenRandom: in a block of platform events, the
// pages of two-byte codes of a big dictionary whose codes are close to
// random (coordinates, client addresses) are stored raw, those of codes
// that repeat (paths) compressed, and both read back.
func TestTwoByteCodePagesRawWhenRandom(t *testing.T) {
	descs, data := recordColumns()
	fs := vfs.NewMemFS()
	if err := fs.MkdirAll("/d"); err != nil {
		t.Fatal(err)
	}
	f, err := fs.Create("/d/c.seg")
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(f, descs, &WriterOptions{ZstdLevel: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteBlock(benchBlockRows, data); err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := openSegment(t, fs, "/d/c.seg")
	defer r.Close()
	for _, tc := range []struct {
		path string
		raw  bool
	}{{"metadata.request.cf.latitude", true}, {"metadata.request.headers.cf_connecting_ip", true}, {"metadata.request.path", false}} {
		col := r.Column(tc.path, TypeString)
		c := r.testChunk(0, col)
		if c == nil || c.enc != encDict || c.width != 2 {
			t.Fatalf("%s: not two-byte dictionary codes", tc.path)
		}
		raw := 0
		for i := range c.pages.Len() {
			u := c.page(i)
			_, _, codec, err := r.readUnitRaw(u.off, u.len, "page")
			if err != nil {
				t.Fatal(err)
			}
			if codec == codecRaw {
				raw++
			}
		}
		// Random codes: most pages raw (zstd saves ~12% of them); codes
		// that repeat: none.
		if tc.raw && raw*2 < c.pages.Len() || !tc.raw && raw > 0 {
			t.Errorf("%s: %d of %d pages raw, want most: %v", tc.path, raw, c.pages.Len(), tc.raw)
		}
		var v vec.Vector
		rows := []int32{0, 777, benchBlockRows - 1}
		if err := r.ReadRows(0, col, rows, &v); err != nil {
			t.Fatal(err)
		}
		for k, row := range rows {
			d := data[col]
			want, null := "", !d.present(int(row))
			if !null {
				want = d.Strs[row]
			}
			if v.IsNull(k) != null || !null && v.StringAt(k) != want {
				t.Errorf("%s row %d: %q (null %v), want %q (null %v)", tc.path, row, v.StringAt(k), v.IsNull(k), want, null)
			}
		}
	}
}
