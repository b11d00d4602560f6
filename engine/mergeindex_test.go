package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/index"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
)

// tokenEvents returns n events of segment seg for a source ordered by
// project: messages with a word every row has, words of a few rows, one
// word per row, long tokens (recurring and not), hex ids the index leaves
// out, a word frequent in the first segment only, and rows with no
// message.
func tokenEvents(seg, n int, ts int64) []event.Event {
	out := make([]event.Event, n)
	for i := range out {
		k := seg*n + i
		ev := event.Event{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", k), Timestamp: ts + int64(k)*1000,
			Fields: event.ObjectValue(event.Member("project", event.StringValue(fmt.Sprintf("p%d", k%5))))}
		if k%13 != 0 {
			words := []string{"request", fmt.Sprintf("w%d", k%17), fmt.Sprintf("u%d", k), fmt.Sprintf("%016x", uint64(k)*2654435761)}
			if k%7 == 0 {
				words = append(words, strings.Repeat("long", 17)+fmt.Sprint(k%3))
			}
			if k%5 == 0 {
				words = append(words, strings.Repeat("z", 70)+fmt.Sprint(k))
			}
			if k%3 == 0 { // a long hex token: a long row
				words = append(words, strings.Repeat(fmt.Sprintf("%016x", uint64(k)), 5))
			}
			if seg == 0 && i%2 == 0 {
				words = append(words, "burst")
			}
			ev.Message, ev.HasMessage = strings.Join(words, " "), true
		}
		out[i] = ev
	}
	return out
}

// TestCompactionMergesTokenIndexes: a merge by sort key takes the token
// index of the merged segment from its inputs' indexes, and that index is
// the one indexing the merged column's values gives: the same terms, the
// same rows for each, the same frequent tokens and long rows (and the
// consistency check, which recomputes postings from the column, passes).
func TestCompactionMergesTokenIndexes(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.SortKey, opts.BlockRows, opts.SegmentMaxRows = "project", 4096, 8192
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ := e.Shard("src")
	const segs, rows = 8, 300
	for k := 0; k < segs; k++ {
		if err := s.Append(ctx, tokenEvents(k, rows, 1_700_000_000_000_000)); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	// "burst", frequent in the first segment only, was found in its values
	// as the merge read them (index.TextRecovery), not read again after.
	compactMergingTokenIndexes(t, s, segs)
	checkClean(t, e)
}

// compactMergingTokenIndexes compacts the shard's segs segments into one
// and checks that its event_message token index was merged from the
// inputs' indexes, with the rows of tokens to recover found as the merge
// read the values (none read again after), and that it is the index the
// merged column's values give. It returns the merged index.
func compactMergingTokenIndexes(t *testing.T, s *Shard, segs int) *index.Index {
	t.Helper()
	if n, err := s.Compact(); err != nil || n != segs {
		t.Fatalf("compacted %d segments (%v), want %d", n, err, segs)
	}
	if got := s.stats.textIndexMerges.Load(); got != 1 {
		t.Fatalf("%d text fields merged from the inputs' indexes, want 1", got)
	}
	if got := s.stats.textValuesReread.Load(); got != 0 {
		t.Fatalf("%d inputs' text values read again after the merge, want 0", got)
	}
	segsNow := s.snapshotSegs(t)
	if len(segsNow) != 1 {
		t.Fatalf("%d segments after compaction, want 1", len(segsNow))
	}
	got, err := segsNow[0].index()
	if err != nil || got == nil {
		t.Fatalf("merged index: %v", err)
	}
	assertSameTokenIndex(t, got, referenceTokenIndex(t, segsNow[0], "event_message"), "event_message")
	return got
}

// TestCompactionRecoversTokensAsItMerges: a token frequent in one input
// (no postings kept there) but not in the merged segment gets its rows
// from that input's values as the merge reads them to write the column,
// not from a second read of the input after: the index is the one
// indexing the merged column gives.
func TestCompactionRecoversTokensAsItMerges(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.SortKey, opts.BlockRows, opts.SegmentMaxRows = "project", 4096, 16384
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ := e.Shard("src")
	// 12,000 rows merged: frequent past 93 rows (1/128 of them); in a
	// segment of 3,000, past 64. "rare" is in 80 rows of the first
	// segment and 10 of the second.
	const segs, rows = 4, 3000
	for k := 0; k < segs; k++ {
		evs := tokenEvents(k, rows, 1_700_000_000_000_000)
		tagged := 0
		for i := range evs {
			if evs[i].HasMessage && tagged < []int{80, 10, 0, 0}[k] {
				evs[i].Message += " rare"
				tagged++
			}
		}
		if err := s.Append(ctx, evs); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	got := compactMergingTokenIndexes(t, s, segs)
	var rare uint64
	if err := got.ForEachTerm("event_message", index.KindToken, func(term any, rows *roaring.Bitmap) error {
		if term.(string) == "rare" && rows != nil {
			rare = rows.GetCardinality()
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if rare != 90 {
		t.Fatalf("rare: %d rows with postings, want 90", rare)
	}
	checkClean(t, e)
}

// TestCompactionIndexesTokensWithoutInputIndex: an input whose index has
// no tokens of the text field (written while the field was not a text
// field) makes the merge index the field's values instead.
func TestCompactionIndexesTokensWithoutInputIndex(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.SortKey, opts.BlockRows, opts.SegmentMaxRows = "project", 4096, 8192
	opts.TextIndexPaths = []string{"other"}
	e := openTestEngine(t, fs, opts)
	s, _ := e.Shard("src")
	if err := s.Append(ctx, tokenEvents(0, 300, 1_700_000_000_000_000)); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	e.Close()
	opts.TextIndexPaths = nil
	e = openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ = e.Shard("src")
	for k := 1; k < 8; k++ {
		if err := s.Append(ctx, tokenEvents(k, 300, 1_700_000_000_000_000)); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.Compact(); err != nil || n != 8 {
		t.Fatalf("compacted %d segments (%v), want 8", n, err)
	}
	if got := s.stats.textIndexMerges.Load(); got != 0 {
		t.Fatalf("%d text fields merged, want 0: an input has no token index", got)
	}
	sg := s.snapshotSegs(t)[0]
	got, err := sg.index()
	if err != nil || got == nil {
		t.Fatalf("index: %v", err)
	}
	assertSameTokenIndex(t, got, referenceTokenIndex(t, sg, "event_message"), "event_message")
	checkClean(t, e)
}

// snapshotSegs returns the shard's published segments.
func (s *Shard) snapshotSegs(t *testing.T) []*segRef {
	t.Helper()
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]*segRef(nil), s.segs...)
}

// referenceTokenIndex indexes the tokens of a segment's column from its
// values, as a flush does.
func referenceTokenIndex(t *testing.T, sg *segRef, path string) *index.Index {
	t.Helper()
	r := sg.r
	col := r.Column(path, segment.TypeString)
	b := index.NewBuilder(nil)
	var v vec.Vector
	for bl := 0; bl < r.NumBlocks(); bl++ {
		bi := r.Block(bl)
		if err := r.ReadColumnOnce(bl, col, 0, bi.Rows, &v); err != nil {
			t.Fatal(err)
		}
		b.AddText(path, uint32(bi.FirstRow), &v)
	}
	u := &memUnits{}
	dir, err := b.Write(u)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.Open(dir, u)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// assertSameTokenIndex compares two token fields term by term: the same
// terms, frequent in both or with the same rows in both, the same long
// rows.
func assertSameTokenIndex(t *testing.T, got, want *index.Index, path string) {
	t.Helper()
	terms := func(ix *index.Index) map[string]*roaring.Bitmap {
		out := map[string]*roaring.Bitmap{}
		if err := ix.ForEachTerm(path, index.KindToken, func(term any, rows *roaring.Bitmap) error {
			if rows == nil {
				rows = roaring.BitmapOf(1 << 31) // frequent
			}
			out[term.(string)] = rows
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	g, w := terms(got), terms(want)
	if len(g) != len(w) {
		t.Fatalf("%d terms, want %d", len(g), len(w))
	}
	frequent := 0
	for term, wr := range w {
		gr := g[term]
		if gr == nil || !gr.Equals(wr) {
			t.Fatalf("term %q: rows %v, want %v", term, gr, wr)
		}
		if wr.Contains(1 << 31) {
			frequent++
		}
	}
	if frequent == 0 || len(w) < 100 {
		t.Fatalf("%d terms, %d frequent: the data should have many, some frequent", len(w), frequent)
	}
	gl, err := got.LongRows(path)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := want.LongRows(path)
	if err != nil {
		t.Fatal(err)
	}
	if wl == nil || wl.IsEmpty() {
		t.Fatal("no long rows: the data should have some")
	}
	if gl == nil || !gl.Equals(wl) {
		t.Fatalf("long rows %v, want %v", gl, wl)
	}
}

// memUnits keeps index units in memory.
type memUnits struct{ data []byte }

func (m *memUnits) WriteUnit(p []byte) (int64, int64, error) {
	off := int64(len(m.data))
	m.data = append(m.data, p...)
	return off, int64(len(p)), nil
}

func (m *memUnits) ReadUnit(off, n int64) ([]byte, error) { return m.data[off : off+n], nil }

// TestConcatenationWithTokensNotIndexedEverywhere: segments copied into
// one by compaction, where one was written while the text field's tokens
// were indexed and the next while they were not (the setting changed in
// between): the copied segment's index must not keep the first one's
// token field, which would claim the second one's tokens absent.
func TestConcatenationWithTokensNotIndexedEverywhere(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	e := openTestEngine(t, fs, opts)
	s, _ := e.Shard(shardID)
	appendRange(t, s, 0, 100, 1_700_000_000_000_000)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	e.Close()
	opts.TextIndexPaths = []string{"other"}
	e = openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ = e.Shard(shardID)
	appendRange(t, s, 100, 200, 1_700_000_000_000_000)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Compact(); err != nil || n != 2 {
		t.Fatalf("compacted %d: %v", n, err)
	}
	if s.stats.concatenated.Load() != 1 {
		t.Fatal("the segments were merged row by row, not copied")
	}
	checkClean(t, e)
}
