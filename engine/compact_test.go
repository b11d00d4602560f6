package engine

import (
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
)

// appendOverlapping appends n events numbered from first whose timestamps
// are spread at random over the hour from base (µs), flushes them as one
// segment and returns them: segments written this way over the same hour
// overlap in time, as when clients send events from the last hour.
func appendOverlapping(t testing.TB, s *Shard, rng *rand.Rand, base int64, first, n int) map[string]event.Event {
	t.Helper()
	want := map[string]event.Event{}
	var batch []event.Event
	for i := first; i < first+n; i++ {
		ev := testEvent(i, base+rng.Int64N(3600_000_000))
		batch = append(batch, ev)
		want[ev.ID] = ev
	}
	if err := s.Append(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	return want
}

// assertSortedBlocks fails unless every segment of the shard holds its
// rows in time order block after block: what a merge must produce.
func assertMergedSegmentSorted(t testing.TB, sg *segRef) {
	t.Helper()
	r := sg.r
	for b := 1; b < r.NumBlocks(); b++ {
		if r.Block(b).MinTime < r.Block(b-1).MaxTime {
			t.Fatalf("segment %d: block %d starts at %d before block %d ends at %d", sg.id, b, r.Block(b).MinTime, b-1, r.Block(b-1).MaxTime)
		}
	}
}

// TestCompactionMergesSegmentsCutDifferently is the shape of issue 11's
// crash: segments whose blocks overlap in time (made by concatenating
// segments that overlapped, as compaction does with late events), written
// with small blocks, merged row by row by a server running with larger
// blocks. The merge must read each input block by block: an input's rows
// are not used in row order when its blocks overlap.
func TestCompactionMergesSegmentsCutDifferently(t *testing.T) {
	fs := vfs.NewMemFS()
	rng := rand.New(rand.NewPCG(11, 1))
	const base, halfHour = 1_700_000_000_000_000, 1800_000_000
	want := map[string]event.Event{}

	// Written with 64-row blocks: groups of four overlapping segments
	// concatenate into segments of 512 rows whose 8 blocks all overlap.
	small := testOptions(fs)
	small.SegmentMaxRows = 1024
	small.CompactionMinInputs = 4
	e := openTestEngine(t, fs, small)
	s, _ := e.Shard(shardID)
	next := 0
	for g := 0; g < 3; g++ {
		for k := 0; k < 4; k++ {
			// Each group's hour overlaps the next one's by half.
			maps.Copy(want, appendOverlapping(t, s, rng, base+int64(g)*halfHour, next, 128))
			next += 128
		}
		if n, err := s.Compact(); err != nil || n != 4 {
			t.Fatalf("group %d: first compaction merged %d: %v", g, n, err)
		}
	}
	if got := s.stats.concatenated.Load(); got != 3 {
		t.Fatalf("%d concatenations, want 3", got)
	}
	// And one segment cut at 100 rows, flushed by a third configuration.
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	odd := testOptions(fs)
	odd.BlockRows = 100
	e = openTestEngine(t, fs, odd)
	s, _ = e.Shard(shardID)
	maps.Copy(want, appendOverlapping(t, s, rng, base+halfHour, next, 250))
	next += 250
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	// Served with 1024-row blocks: the inputs average 64 rows a block, too
	// small to copy, so they are merged row by row.
	large := testOptions(fs)
	large.BlockRows = 1024
	large.SegmentMaxRows = 8192
	e = openTestEngine(t, fs, large)
	defer e.Close()
	s, _ = e.Shard(shardID)
	n, err := s.Compact()
	if err != nil || n != 4 {
		t.Fatalf("merge of differently cut segments merged %d: %v", n, err)
	}
	sn := s.Snapshot()
	if len(sn.segs) != 1 || sn.segs[0].r.Rows() != next {
		t.Fatalf("after the merge: %d segments", len(sn.segs))
	}
	assertMergedSegmentSorted(t, sn.segs[0])
	sn.Release()
	assertEvents(t, s, want)
	checkClean(t, e)
}

// TestRestartCycleOverDifferentlyCutDataDir is issue 11's crash loop: a
// data directory written with small blocks and segments through kill -9
// cycles (acknowledged events left in the write-ahead log, compactions
// that concatenated overlapping segments), then served with the default
// options. Each start must compact it, keep every acknowledged event
// exactly once, and start again after another kill.
func TestRestartCycleOverDifferentlyCutDataDir(t *testing.T) {
	fs := vfs.NewMemFS()
	rng := rand.New(rand.NewPCG(11, 3))
	const base, tenMinutes = 1_700_000_000_000_000, 600_000_000
	want := map[string]event.Event{}
	next := 0
	written := func(opts *Options, cycle int) {
		e := openTestEngine(t, fs, opts)
		s, _ := e.Shard(shardID)
		for k := 0; k < 4; k++ {
			maps.Copy(want, appendOverlapping(t, s, rng, base+int64(cycle)*tenMinutes, next, 96))
			next += 96
		}
		if _, err := s.Compact(); err != nil {
			t.Fatal(err)
		}
		// Acknowledged but not flushed: only in the write-ahead log.
		maps.Copy(want, appendRange(t, s, next, next+50, base+int64(cycle)*tenMinutes))
		next += 50
		fs = fs.CrashClone() // kill -9: e is abandoned, not closed
	}
	for cycle := 0; cycle < 4; cycle++ {
		opts := testOptions(fs)
		opts.BlockRows = 32
		opts.SegmentMaxRows = 1024
		opts.CompactionMinInputs = 4
		written(opts, cycle)
	}
	for restart := 0; restart < 3; restart++ {
		e, err := Open("/data", &Options{FS: fs})
		if err != nil {
			t.Fatalf("restart %d: %v", restart, err)
		}
		s, err := e.Shard(shardID)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Compact(); err != nil {
			t.Fatalf("restart %d: compaction: %v", restart, err)
		}
		assertEvents(t, s, want)
		checkClean(t, e)
		if restart == 0 {
			sn := s.Snapshot()
			if len(sn.segs) != 1 {
				t.Fatalf("after the first restart's compaction: %d segments", len(sn.segs))
			}
			assertMergedSegmentSorted(t, sn.segs[0])
			sn.Release()
		}
		fs = fs.CrashClone()
	}
}

// overlappingSegments opens an engine (closed when the test ends) whose
// shard holds segs segments of rows events each from appendOverlapping
// (seeded with seed), and returns the shard and a snapshot of them.
func overlappingSegments(t *testing.T, seed uint64, segs, rows int) (*Shard, *Snapshot) {
	t.Helper()
	fs := vfs.NewMemFS()
	rng := rand.New(rand.NewPCG(seed, 2))
	opts := testOptions(fs)
	opts.SegmentMaxRows = 4096
	opts.CompactionMinInputs = 4
	e := openTestEngine(t, fs, opts)
	t.Cleanup(func() { e.Close() })
	s, _ := e.Shard(shardID)
	for k := 0; k < segs; k++ {
		appendOverlapping(t, s, rng, 1_700_000_000_000_000, k*rows, rows)
	}
	sn := s.Snapshot()
	t.Cleanup(sn.Release)
	return s, sn
}

// TestMergeReadsOnlyTheRowsItUses checks that merging inputs whose blocks
// overlap reads, for each output block and column, only the rows that go
// into it: the memory of a merge is bounded by its block size, however
// widely an input's rows for one output block are spread over the input.
func TestMergeReadsOnlyTheRowsItUses(t *testing.T) {
	s, sn := overlappingSegments(t, 11, 8, 128)
	ms, err := newMergeSource(sn.segs, noCutoff, "", s.opts.BlockRows)
	if err != nil {
		t.Fatal(err)
	}
	const blockRows = 100
	cols := ms.columns()
	var d segment.ColumnData
	for from := 0; from < ms.rows(); from += blockRows {
		to := min(from+blockRows, ms.rows())
		for ci := range cols {
			ms.rowsRead = 0
			if _, err := ms.fillColumn(ci, from, to, &d); err != nil {
				t.Fatal(err)
			}
			if ms.rowsRead > to-from {
				t.Fatalf("block [%d,%d) column %s: read %d rows for %d", from, to, cols[ci].Path, ms.rowsRead, to-from)
			}
		}
	}
}

// TestSteadyIngestOfSpreadTimestamps is issue 11's first shape under one
// configuration: small heads (as a small memory limit makes them) whose
// events spread over the last hour, compacted as they come. Concatenated
// segments then have blocks that overlap in time, and a later merge takes
// them with newer flushes.
func TestSteadyIngestOfSpreadTimestamps(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.BlockRows = 2048
	opts.SegmentMaxRows = 65536
	opts.CompactionMinInputs = 4
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ := e.Shard(shardID)
	rng := rand.New(rand.NewPCG(11, 4))
	want := map[string]event.Event{}
	merges := 0
	for round := 0; round < 24; round++ {
		n := 300 + rng.IntN(200)
		maps.Copy(want, appendOverlapping(t, s, rng, 1_700_000_000_000_000, round*1000, n))
		concat := s.stats.concatenated.Load()
		k, err := s.Compact()
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if k > 0 && s.stats.concatenated.Load() == concat {
			merges++
		}
	}
	if s.stats.concatenated.Load() == 0 || merges == 0 {
		t.Fatalf("%d concatenations, %d merges: the shape needs both", s.stats.concatenated.Load(), merges)
	}
	assertEvents(t, s, want)
	checkClean(t, e)
}
