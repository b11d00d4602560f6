package segment

import (
	"bytes"
	"os"
	"testing"

	"github.com/sediment/sediment/internal/vfs"
)

// v5Fixture is testdata/v5.seg: makeKongColumns(v5FixtureRows,
// v5FixtureSeed) in blocks of v5FixtureBlockRows, written by the version 5
// writer with v5FixtureOptions: Kong's access lines as templates with
// residual pieces (the date, the byte count), rows of no template, a
// NULL referer.
const (
	v5FixtureRows      = 2400
	v5FixtureSeed      = 19
	v5FixtureBlockRows = 1200
)

var v5FixtureOptions = WriterOptions{PageBytes: 8192, PageRows: 512, FormatVersion: FormatV5}

// TestWriteFixtureV5 (re)writes testdata/v5.seg when
// SEDIMENT_WRITE_V5_FIXTURE is set; it was run once by the version 5
// writer. Otherwise it checks that FormatVersion 5 still writes the
// same bytes.
func TestWriteFixtureV5(t *testing.T) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	opts := v5FixtureOptions
	writeSegment(t, fs, "/d/v5.seg", makeKongColumns(v5FixtureRows, v5FixtureSeed), v5FixtureBlockRows, &opts)
	got, err := vfs.ReadFile(fs, "/d/v5.seg")
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("SEDIMENT_WRITE_V5_FIXTURE") != "" {
		if err := os.WriteFile("testdata/v5.seg", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile("testdata/v5.seg")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("version 5 writer output differs from testdata/v5.seg (%d vs %d bytes)", len(got), len(want))
	}
}

// TestReadVersion5: testdata/v5.seg reads back every value, whole and
// row by row, its messages stored with residual pieces; compaction's
// block copy keeps them, values unchanged.
func TestReadVersion5(t *testing.T) {
	data, err := os.ReadFile("testdata/v5.seg")
	if err != nil {
		t.Fatal(err)
	}
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	if err := vfs.WriteFileSynced(fs, "/d/v5.seg", data); err != nil {
		t.Fatal(err)
	}
	r := openSegment(t, fs, "/d/v5.seg")
	defer r.Close()
	if r.Version() != FormatV5 {
		t.Fatalf("version %d", r.Version())
	}
	msg := r.Column("event_message", TypeString)
	if residualTemplates(r, msg) < r.NumBlocks() {
		t.Fatalf("messages without residual templates:\n%s", describeTemplates(r, 0, msg))
	}
	cols := makeKongColumns(v5FixtureRows, v5FixtureSeed)
	checkAllValues(t, r, cols)
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	copyAllBlocks(t, fs, r, "/d/copy.seg", nil)
	c := openSegment(t, fs, "/d/copy.seg")
	defer c.Close()
	if residualTemplates(c, msg) < c.NumBlocks() {
		t.Fatal("the copy lost its residual templates")
	}
	checkAllValues(t, c, cols)
}
