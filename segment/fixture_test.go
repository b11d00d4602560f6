package segment

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/sediment/sediment/internal/vfs"
)

// A format fixture is a segment file in testdata written once by the
// writer of its version, before the next version existed: the reader must
// read it back for as long as the version is supported, and the writer,
// asked for that version, must still write it byte for byte.
type formatFixture struct {
	version         uint8
	rows, blockRows int
	seed            uint64
	// columns makes the fixture's values (rows, seed).
	columns func(n int, seed uint64) []testColumn
}

// The fixtures of versions 3-5 (versions 1 and 2 have their own tests in
// format_test.go and derived_test.go). Each uses pages of 8 KiB and 512 rows at most.
var (
	// testdata/v3.seg: dictionary codes of one and two bytes, derived
	// messages, delta timestamps.
	fixtureV3 = formatFixture{version: FormatV3, rows: 2400, blockRows: 1200, seed: 13, columns: makeEdgeColumns}
	// testdata/v4.seg: as v3, and packed code pages.
	fixtureV4 = formatFixture{version: FormatV4, rows: 2400, blockRows: 1200, seed: 17, columns: makeEdgeColumns}
	// testdata/v5.seg: Kong's access lines as templates with residual
	// pieces (the date, the byte count), rows of no template, a NULL
	// referer.
	fixtureV5 = formatFixture{version: FormatV5, rows: 2400, blockRows: 1200, seed: 19, columns: makeKongColumns}
)

func (f formatFixture) file() string { return fmt.Sprintf("testdata/v%d.seg", f.version) }

func (f formatFixture) values() []testColumn { return f.columns(f.rows, f.seed) }

// checkWrites writes the fixture's values with FormatVersion f.version and
// compares the bytes with the file in testdata. With
// SEDIMENT_WRITE_V<version>_FIXTURE set it (re)writes the file instead: run
// once, by the writer of that version.
func (f formatFixture) checkWrites(t *testing.T) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	opts := WriterOptions{PageBytes: 8192, PageRows: 512, FormatVersion: f.version}
	writeSegment(t, fs, "/d/f.seg", f.values(), f.blockRows, &opts)
	got, err := vfs.ReadFile(fs, "/d/f.seg")
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv(fmt.Sprintf("SEDIMENT_WRITE_V%d_FIXTURE", f.version)) != "" {
		if err := os.WriteFile(f.file(), got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(f.file())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("version %d writer output differs from %s (%d vs %d bytes)", f.version, f.file(), len(got), len(want))
	}
}

// open puts the fixture's file into a memory file system and opens it,
// checking its version.
func (f formatFixture) open(t *testing.T) (vfs.FS, *Reader) {
	data, err := os.ReadFile(f.file())
	if err != nil {
		t.Fatal(err)
	}
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	if err := vfs.WriteFileSynced(fs, "/d/f.seg", data); err != nil {
		t.Fatal(err)
	}
	r := openSegment(t, fs, "/d/f.seg")
	t.Cleanup(func() { r.Close() })
	if r.Version() != f.version {
		t.Fatalf("%s: version %d", f.file(), r.Version())
	}
	return fs, r
}

// checkReadsAndCopies reads every value of the fixture back, whole and
// row by row, checks it, and copies its blocks as compaction does into a
// segment of the latest version, whose values must be the same; it
// returns the copy.
func (f formatFixture) checkReadsAndCopies(t *testing.T) (fixture, copied *Reader) {
	fs, r := f.open(t)
	cols := f.values()
	checkAllValues(t, r, cols)
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	copyAllBlocks(t, fs, r, "/d/copy.seg", nil)
	c := openSegment(t, fs, "/d/copy.seg")
	t.Cleanup(func() { c.Close() })
	if c.Version() != FormatLatest {
		t.Fatalf("version %d after the copy", c.Version())
	}
	checkAllValues(t, c, cols)
	return r, c
}

func TestWriteFixtureV3(t *testing.T) { fixtureV3.checkWrites(t) }
func TestWriteFixtureV4(t *testing.T) { fixtureV4.checkWrites(t) }
func TestWriteFixtureV5(t *testing.T) { fixtureV5.checkWrites(t) }

func TestReadVersion3(t *testing.T) { fixtureV3.checkReadsAndCopies(t) }
func TestReadVersion4(t *testing.T) { fixtureV4.checkReadsAndCopies(t) }

// TestReadVersion5: the messages of testdata/v5.seg are stored with
// residual pieces in every block, and the block copy keeps them so.
func TestReadVersion5(t *testing.T) {
	r, c := fixtureV5.checkReadsAndCopies(t)
	msg := r.Column("event_message", TypeString)
	if residualTemplates(r, msg) < r.NumBlocks() {
		t.Fatalf("messages without residual templates:\n%s", describeTemplates(r, 0, msg))
	}
	if residualTemplates(c, c.Column("event_message", TypeString)) < c.NumBlocks() {
		t.Fatal("the copy lost its residual templates")
	}
}
