package segment

import (
	"bytes"
	"os"
	"testing"

	"github.com/sediment/sediment/internal/vfs"
)

// v3Fixture is testdata/v3.seg: makeEdgeColumns(v3FixtureRows,
// v3FixtureSeed) in blocks of v3FixtureBlockRows, written by the version 3
// writer (before version 4 existed) with v3FixtureOptions: dictionary
// codes of one and two bytes, derived messages, delta timestamps.
const (
	v3FixtureRows      = 2400
	v3FixtureSeed      = 13
	v3FixtureBlockRows = 1200
)

var v3FixtureOptions = WriterOptions{PageBytes: 8192, PageRows: 512, FormatVersion: FormatV3}

// TestWriteFixtureV3 (re)writes testdata/v3.seg when
// SEDIMENT_WRITE_V3_FIXTURE is set; it was run once by the version 3
// writer. Otherwise it checks that FormatVersion 3 still writes the
// same bytes.
func TestWriteFixtureV3(t *testing.T) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	opts := v3FixtureOptions
	writeSegment(t, fs, "/d/v3.seg", makeEdgeColumns(v3FixtureRows, v3FixtureSeed), v3FixtureBlockRows, &opts)
	got, err := vfs.ReadFile(fs, "/d/v3.seg")
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("SEDIMENT_WRITE_V3_FIXTURE") != "" {
		if err := os.WriteFile("testdata/v3.seg", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile("testdata/v3.seg")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("version 3 writer output differs from testdata/v3.seg (%d vs %d bytes)", len(got), len(want))
	}
}

// TestReadVersion3: testdata/v3.seg, written by the version 3 writer,
// reads back every value, whole and row by row; compaction's block copy
// writes its blocks again in the latest version, values unchanged.
func TestReadVersion3(t *testing.T) {
	data, err := os.ReadFile("testdata/v3.seg")
	if err != nil {
		t.Fatal(err)
	}
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	if err := vfs.WriteFileSynced(fs, "/d/v3.seg", data); err != nil {
		t.Fatal(err)
	}
	old := openSegment(t, fs, "/d/v3.seg")
	defer old.Close()
	if old.Version() != FormatV3 {
		t.Fatalf("version %d", old.Version())
	}
	cols := makeEdgeColumns(v3FixtureRows, v3FixtureSeed)
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
