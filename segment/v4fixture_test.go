package segment

import (
	"bytes"
	"os"
	"testing"

	"github.com/sediment/sediment/internal/vfs"
)

// v4Fixture is testdata/v4.seg: makeEdgeColumns(v4FixtureRows,
// v4FixtureSeed) in blocks of v4FixtureBlockRows, written by the version 4
// writer (before version 5 existed) with v4FixtureOptions: dictionary
// codes of one and two bytes, packed code pages, derived messages, delta
// timestamps.
const (
	v4FixtureRows      = 2400
	v4FixtureSeed      = 17
	v4FixtureBlockRows = 1200
)

var v4FixtureOptions = WriterOptions{PageBytes: 8192, PageRows: 512, FormatVersion: FormatV4}

// TestWriteFixtureV4 (re)writes testdata/v4.seg when
// SEDIMENT_WRITE_V4_FIXTURE is set; it was run once by the version 4
// writer. Otherwise it checks that FormatVersion 4 still writes the
// same bytes.
func TestWriteFixtureV4(t *testing.T) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	opts := v4FixtureOptions
	writeSegment(t, fs, "/d/v4.seg", makeEdgeColumns(v4FixtureRows, v4FixtureSeed), v4FixtureBlockRows, &opts)
	got, err := vfs.ReadFile(fs, "/d/v4.seg")
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("SEDIMENT_WRITE_V4_FIXTURE") != "" {
		if err := os.WriteFile("testdata/v4.seg", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile("testdata/v4.seg")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("version 4 writer output differs from testdata/v4.seg (%d vs %d bytes)", len(got), len(want))
	}
}

// TestReadVersion4: testdata/v4.seg, written by the version 4 writer,
// reads back every value, whole and row by row; compaction's block copy
// writes its blocks again in the latest version, values unchanged.
func TestReadVersion4(t *testing.T) {
	data, err := os.ReadFile("testdata/v4.seg")
	if err != nil {
		t.Fatal(err)
	}
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	if err := vfs.WriteFileSynced(fs, "/d/v4.seg", data); err != nil {
		t.Fatal(err)
	}
	old := openSegment(t, fs, "/d/v4.seg")
	defer old.Close()
	if old.Version() != FormatV4 {
		t.Fatalf("version %d", old.Version())
	}
	cols := makeEdgeColumns(v4FixtureRows, v4FixtureSeed)
	checkAllValues(t, old, cols)
	if err := old.Check(); err != nil {
		t.Fatal(err)
	}
	copyAllBlocks(t, fs, old, "/d/new.seg", nil)
	r := openSegment(t, fs, "/d/new.seg")
	defer r.Close()
	if r.Version() != FormatLatest {
		t.Fatalf("version %d after the copy", r.Version())
	}
	checkAllValues(t, r, cols)
}
