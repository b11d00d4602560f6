package segment

import (
	"slices"
	"testing"

	"github.com/sediment/sediment/internal/vfs"
)

// writeFetched writes cols as a segment in blocks of blockRows, a column
// at a time with a fetcher (as a flush does, reusing one buffer for every
// column), and returns the columns the writer fetched to derive text, in
// order of the calls.
func writeFetched(t *testing.T, fs vfs.FS, name string, cols []testColumn, blockRows int, opts *WriterOptions) []int {
	t.Helper()
	f, w := newTestWriter(t, fs, name, cols, opts)
	var fetched []int
	for from := 0; from < len(cols[0].vals); from += blockRows {
		to := min(from+blockRows, len(cols[0].vals))
		fill := func(ci int, d *ColumnData) bool { return fillTestColumn(&cols[ci], from, to, d) }
		var ts, cur ColumnData
		fill(0, &ts)
		fetch := func(ci int, d *ColumnData) (bool, error) {
			fetched = append(fetched, ci)
			return fill(ci, d), nil
		}
		if err := w.BeginBlockFrom(to-from, &ts, fetch); err != nil {
			t.Fatal(err)
		}
		for ci := range cols {
			d := &cur
			if !fill(ci, d) {
				d = nil
			}
			if err := w.WriteColumn(ci, d); err != nil {
				t.Fatal(err)
			}
			// The caller reuses its buffer: spoil what the writer saw.
			for i := range cur.Strs {
				cur.Strs[i] = "spoiled"
			}
		}
		if err := w.EndBlock(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return fetched
}

// TestDeriveHintsCarryOver: the second of two segments written with the
// same DeriveHints derives the message in every block as the first did,
// reads back the same values, and fetches only the columns the message's
// templates use (the first fetched every string and int64 column to
// sample them); the bytes of the message are no larger.
func TestDeriveHintsCarryOver(t *testing.T) {
	cols := makeEdgeColumns(1200, 11)
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	hints := NewDeriveHints()
	opts := WriterOptions{DeriveHints: hints}
	first := writeFetched(t, fs, "/d/a.seg", cols, 400, &opts)
	second := writeFetched(t, fs, "/d/b.seg", cols, 400, &opts)
	none := writeFetched(t, fs, "/d/c.seg", cols, 400, nil)
	a, b, c := openSegment(t, fs, "/d/a.seg"), openSegment(t, fs, "/d/b.seg"), openSegment(t, fs, "/d/c.seg")
	defer a.Close()
	defer b.Close()
	defer c.Close()
	msg := b.Column("event_message", TypeString)
	for _, r := range []*Reader{a, b, c} {
		if n := derivedBlocks(r, msg); n != r.NumBlocks() {
			t.Fatalf("event_message derived in %d of %d blocks", n, r.NumBlocks())
		}
		checkAllValues(t, r, cols)
	}
	if !slices.Equal(first, none) {
		t.Fatalf("empty hints changed the fetches: %v, without hints %v", first, none)
	}
	refs := b.testChunk(0, msg).derived.cols
	for _, ci := range second {
		if !slices.Contains(refs, ci) {
			t.Fatalf("second writer fetched column %q, not one of the message's references %v (fetched %v)", cols[ci].desc.Path, refs, second)
		}
	}
	if len(second) >= len(first) {
		t.Fatalf("second writer fetched %d columns, first %d", len(second), len(first))
	}
	if got, was := b.ColumnBytes()[msg], c.ColumnBytes()[msg]; got > was {
		t.Fatalf("event_message: %d bytes with hints, %d without", got, was)
	}
}

// TestDeriveHintsStale: hints naming columns a segment does not have, or
// columns that do not make the message, cost a search of the block, not
// the derivation: the message is derived in every block all the same.
func TestDeriveHintsStale(t *testing.T) {
	cols := makeEdgeColumns(1200, 12)
	for name, refs := range map[string][]colKey{
		"missing":   {{"metadata.gone", TypeString}},
		"unrelated": {{"metadata.response.origin_time", TypeInt64}},
	} {
		t.Run(name, func(t *testing.T) {
			fs := vfs.NewMemFS()
			fs.MkdirAll("/d")
			hints := NewDeriveHints()
			hints.cols["event_message"] = deriveHint{refs: refs, wait: deriveRetryBlocks}
			writeFetched(t, fs, "/d/a.seg", cols, 400, &WriterOptions{DeriveHints: hints})
			r := openSegment(t, fs, "/d/a.seg")
			defer r.Close()
			msg := r.Column("event_message", TypeString)
			if n := derivedBlocks(r, msg); n != r.NumBlocks() {
				t.Fatalf("event_message derived in %d of %d blocks", n, r.NumBlocks())
			}
			checkAllValues(t, r, cols)
			if got := hints.cols["event_message"].refs; len(got) == 0 || slices.Equal(got, refs) {
				t.Fatalf("hints after the writer: %v", got)
			}
		})
	}
}
