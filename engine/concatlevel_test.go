package engine

import (
	"context"
	"testing"
)

// TestConcatRecompressesOnlyAboveTheDefaultLevel: time-ordered flushes
// (zstd level 1) concatenated at the default compaction level keep their
// units as they are; at a level raised above it (disk over CPU) they are
// compressed again, and the source takes fewer bytes, the same events.
func TestConcatRecompressesOnlyAboveTheDefaultLevel(t *testing.T) {
	evs, _ := edgeEvents(t, 6000, 5)
	store := func(level int) (bytes int64, rows int) {
		dir := t.TempDir()
		e, err := Open(dir, &Options{DisableBackground: true, AckMode: AckBuffered, ZstdLevel: 1, CompactZstdLevel: level, CompactionMinInputs: 2,
			BlockRows: 2048}) // blocks of whole flushes: concatenated, not merged
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		s, _ := e.Shard("concat")
		for off := 0; off < len(evs); off += 2000 {
			if err := s.Append(context.Background(), evs[off:off+2000]); err != nil {
				t.Fatal(err)
			}
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		flushed := segmentBytes(t, dir)
		if n, err := s.Compact(); err != nil || n == 0 {
			t.Fatalf("compact: %d merged, %v", n, err)
		}
		if c := s.stats.concatenated.Load(); c != 1 {
			t.Fatalf("level %d: %d concatenations, want 1", level, c)
		}
		bytes = segmentBytes(t, dir)
		if level <= DefaultCompactZstdLevel && bytes > flushed+flushed/50 {
			t.Errorf("level %d: %d bytes after the concatenation, %d flushed: the units were not copied as they are", level, bytes, flushed)
		}
		info := s.Info()
		if info.Segments != 1 {
			t.Fatalf("level %d: %d segments after compaction, want 1", level, info.Segments)
		}
		return bytes, info.SegmentRows + info.ExpiredRows
	}
	atDefault, rowsDefault := store(DefaultCompactZstdLevel)
	raised, rowsRaised := store(4)
	if rowsDefault != len(evs) || rowsRaised != len(evs) {
		t.Fatalf("rows %d and %d, want %d", rowsDefault, rowsRaised, len(evs))
	}
	// The merged index is written at the compaction level either way
	// (about 2% fewer bytes at level 4 on these events); the flushes'
	// pages compressed again save 5% in all (the data is fixed, so are
	// the sizes).
	if raised > atDefault-atDefault/25 {
		t.Fatalf("level 4: %d bytes against the default's %d: the flushes' units were not compressed again", raised, atDefault)
	}
}
