package segment

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/sediment/sediment/internal/vfs"
)

// footerFixtures are the segments whose footer lookups
// TestFooterLookupsGolden pins: one per format version. v3types.seg and
// v3edge.seg were written by the version 3 writer with the options of
// writeFooterFixturesV3.
var footerFixtures = []string{"v1", "v2", "v3types", "v3edge"}

// writeFooterFixturesV3 writes testdata/v3types.seg (makeColumns: every column
// type, floats with page ranges) and testdata/v3edge.seg (edge columns:
// derived text, dictionaries of several pages), small pages so that
// chunks have many.
func writeFooterFixturesV3(t *testing.T) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	writeSegment(t, fs, "/d/v3types.seg", makeColumns(600, 9), 200, &WriterOptions{PageBytes: 2048, PageRows: 64, FormatVersion: FormatV3})
	writeSegment(t, fs, "/d/v3edge.seg", makeEdgeColumns(900, 13), 300, &WriterOptions{PageBytes: 4096, PageRows: 128, FormatVersion: FormatV3})
	for _, name := range []string{"v3types", "v3edge"} {
		data, err := vfs.ReadFile(fs, "/d/"+name+".seg")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("testdata/"+name+".seg", data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFooterLookupsGolden renders everything a reader answers from a
// footer (blocks, chunks and their statistics, every page's rows, value
// count and range, where its unit lies, the timestamp pages, which block
// holds a unit, bytes per column) for a segment of every format version
// and compares it with testdata/<name>.footer.txt, written by the reader
// that kept each page as a PageRange and a unit (before the compact page
// directory): the compact form must answer the same.
// SEDIMENT_WRITE_FOOTER_GOLDEN=1 rewrites the fixtures and the renderings.
func TestFooterLookupsGolden(t *testing.T) {
	rewrite := os.Getenv("SEDIMENT_WRITE_FOOTER_GOLDEN") != ""
	if rewrite {
		writeFooterFixturesV3(t)
	}
	for _, name := range footerFixtures {
		t.Run(name, func(t *testing.T) {
			r := openTestdata(t, name+".seg")
			defer r.Close()
			got := renderFooterLookups(r)
			golden := "testdata/" + name + ".footer.txt"
			if rewrite {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
				for i := range min(len(gl), len(wl)) {
					if gl[i] != wl[i] {
						t.Fatalf("%s line %d:\n got %s\nwant %s", golden, i+1, gl[i], wl[i])
					}
				}
				t.Fatalf("%s: %d lines, want %d", golden, len(gl), len(wl))
			}
		})
	}
}

// openTestdata opens testdata/<file> through a memory file system.
func openTestdata(t *testing.T, file string) *Reader {
	t.Helper()
	data, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	if err := vfs.WriteFileSynced(fs, "/d/"+file, data); err != nil {
		t.Fatal(err)
	}
	return openSegment(t, fs, "/d/"+file)
}

// renderFooterLookups writes out what every footer accessor answers.
func renderFooterLookups(r *Reader) string {
	var sb strings.Builder
	minT, maxT := r.TimeRange()
	fmt.Fprintf(&sb, "version %d rows %d time [%d,%d] blocks %d\n", r.Version(), r.Rows(), minT, maxT, r.NumBlocks())
	for i, c := range r.Columns() {
		fmt.Fprintf(&sb, "column %d %q %s elems %v index %d\n", i, c.Path, c.Type, c.Elem, r.Column(c.Path, c.Type))
	}
	fmt.Fprintf(&sb, "column bytes %v\n", r.ColumnBytes())
	for b := range r.NumBlocks() {
		fmt.Fprintf(&sb, "block %d %+v\n", b, r.Block(b))
		for col := range r.Columns() {
			ci, ok := r.Chunk(b, col)
			if !ok {
				continue
			}
			pages := pageRanges(r.testPages(b, col))
			fmt.Fprintf(&sb, " chunk %d present %d num %v [%d,%d] [%v,%v] str %v %v [%q,%q] dict %d stored %d derived %v\n", col,
				ci.Present, ci.HasNumRange, ci.MinInt, ci.MaxInt, ci.MinFloat, ci.MaxFloat, ci.HasMinStr, ci.HasMaxStr, ci.MinStr, ci.MaxStr,
				ci.DictEntries, ci.StoredBytes, ci.Derived)
			c := r.testChunk(b, col)
			for i, p := range pages {
				pm := c.page(i)
				fmt.Fprintf(&sb, "  page %d %+v unit [%d,+%d) block %d meta %d %d %d %v %d %d %v %v\n", i, p, pm.off, pm.len,
					r.BlockAt(pm.off), pm.firstRow, pm.rows, pm.present, pm.hasRange, pm.minI, pm.maxI, pm.minF, pm.maxF)
			}
			if n := chunkPageCount(c); n != len(pages) {
				fmt.Fprintf(&sb, "  %d pages in the chunk, %d listed\n", n, len(pages))
			}
		}
		for i, p := range timePageRanges(r, b) {
			fmt.Fprintf(&sb, " time page %d %+v\n", i, p)
		}
	}
	return sb.String()
}

// timePageRanges returns block b's timestamp pages as TimePages lists them.
func timePageRanges(r *Reader, b int) []PageRange { return pageRanges(r.testTimePages(b)) }

// chunkPageCount returns how many pages the footer lists for chunk c.
func chunkPageCount(c *chunkMeta) int { return c.pages.Len() }

func pageRanges(l PageList) []PageRange {
	var out []PageRange
	for i := range l.Len() {
		out = append(out, l.At(i))
	}
	return out
}
