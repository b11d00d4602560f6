package engine

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
	"github.com/sediment/sediment/sql/scan"
)

// keyedEvent is testEvent with a project that makes a sort key's classes:
// the three test projects (big), many rare ones (each a few rows, for
// mixed blocks) and no project at all on some events.
func keyedEvent(i int, ts int64) event.Event {
	ev := testEvent(i, ts)
	switch {
	case i%50 == 7:
		ev.Fields.Kids = slices.DeleteFunc(slices.Clone(ev.Fields.Kids), func(v event.Value) bool { return v.Key == "project" })
	case i%20 == 3:
		ev.Fields.Kids = slices.Clone(ev.Fields.Kids)
		ev.Fields.Kids[0] = event.Member("project", event.StringValue(fmt.Sprintf("rare-%d", i%97)))
	}
	return ev
}

// appendKeyed appends events [first, first+n) spread over the hour from
// base and flushes them as one segment.
func appendKeyed(t testing.TB, s *Shard, rng *rand.Rand, base int64, first, n int) map[string]event.Event {
	t.Helper()
	want := map[string]event.Event{}
	var batch []event.Event
	for i := first; i < first+n; i++ {
		ev := keyedEvent(i, base+rng.Int64N(3600_000_000))
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

// projectOf returns the project of an event ("" without one).
func projectOf(ev *event.Event) string {
	if v := ev.Fields.Path("project"); v != nil && v.Kind == event.String {
		return v.Str
	}
	return ""
}

// assertClustered fails unless segment sg is ordered by project: its meta
// says so, and the blocks of each big project hold that project only.
// It returns the blocks per key ("" for mixed blocks).
func assertClustered(t testing.TB, sg *segRef) map[string][]int {
	t.Helper()
	if sg.meta.sortKey != "project" || len(sg.meta.blocks) != sg.r.NumBlocks() {
		t.Fatalf("segment %d: meta sort key %q, %d block entries for %d blocks", sg.id, sg.meta.sortKey, len(sg.meta.blocks), sg.r.NumBlocks())
	}
	blocks := map[string][]int{}
	for b, bk := range sg.meta.blocks {
		k := ""
		if bk.single {
			k = bk.key
		}
		blocks[k] = append(blocks[k], b)
	}
	for _, p := range testProjects {
		if len(blocks[p]) == 0 {
			t.Fatalf("segment %d: no block of project %s: %v", sg.id, p, blocks)
		}
	}
	if len(blocks[""]) == 0 {
		t.Fatalf("segment %d: the rare projects and the events without one should share mixed blocks: %v", sg.id, blocks)
	}
	for k := range blocks {
		if k != "" && !slices.Contains(testProjects, k) {
			t.Fatalf("segment %d: a rare project (%s) has blocks of its own", sg.id, k)
		}
	}
	return blocks
}

// TestSortKeyFlushAndCompaction: with a sort key, a flush writes one key's
// rows per block (in time order) and the rest in mixed blocks; compaction
// merges the blocks of each key into fewer, full ones; every event reads
// back, the consistency check (which verifies the blocks' keys) passes,
// and a query on one project reads only that project's blocks.
func TestSortKeyFlushAndCompaction(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.SortKey = "project"
	opts.BlockRows = 1024 // flushed blocks are too small to copy
	opts.SegmentMaxRows = 4096
	opts.CompactionMinInputs = 4
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ := e.Shard(shardID)
	rng := rand.New(rand.NewPCG(3, 4))
	const base = 1_700_000_000_000_000
	want := map[string]event.Event{}
	for k := 0; k < 4; k++ {
		maps.Copy(want, appendKeyed(t, s, rng, base, k*400, 400))
	}
	sn := s.Snapshot()
	for _, sg := range sn.segs {
		blocks := assertClustered(t, sg)
		// 400 events: about 120 of each project, one block each.
		for _, p := range testProjects {
			if len(blocks[p]) != 1 {
				t.Fatalf("flushed segment %d: project %s in blocks %v", sg.id, p, blocks[p])
			}
		}
	}
	sn.Release()
	checkClean(t, e)

	if n, err := s.Compact(); err != nil || n != 4 {
		t.Fatalf("compaction merged %d: %v", n, err)
	}
	if s.stats.concatenated.Load() != 0 {
		t.Fatal("blocks of 120 rows against 1024 should be merged, not copied")
	}
	sn = s.Snapshot()
	defer sn.Release()
	if len(sn.segs) != 1 {
		t.Fatalf("%d segments after compaction", len(sn.segs))
	}
	sg := sn.segs[0]
	blocks := assertClustered(t, sg)
	for _, p := range testProjects {
		// About 480 rows, from four flushed blocks: one block.
		if len(blocks[p]) != 1 {
			t.Fatalf("project %s in blocks %v after the merge", p, blocks[p])
		}
	}
	assertEvents(t, s, want)
	checkClean(t, e)

	// project = bravo reads the bravo blocks only; its answer is right.
	req := scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime, Columns: []scan.Column{{Path: "id", Type: vec.String}},
		Filters: []scan.Predicate{{Path: "project", Type: vec.String, Op: scan.Eq, Args: []scan.Const{str("bravo")}}}}
	for _, noIndex := range []bool{false, true} {
		req.NoIndex = noIndex
		sc, err := sn.Table("t").Open(ctx, &req)
		if err != nil {
			t.Fatal(err)
		}
		if units := len(sc.Units()); !noIndex && units != len(blocks["bravo"]) {
			t.Fatalf("project = bravo: %d units, want bravo's %d blocks", units, len(blocks["bravo"]))
		}
		got := runScan(t, sn.Table("t"), &req)
		n := 0
		for _, ev := range want {
			if projectOf(&ev) == "bravo" {
				n++
				if _, ok := got[ev.ID]; !ok {
					t.Fatalf("noIndex=%v: bravo event %s missing", noIndex, ev.ID)
				}
			}
		}
		if len(got) != n {
			t.Fatalf("noIndex=%v: %d rows, want %d", noIndex, len(got), n)
		}
	}
}

// TestSortKeyMergesTimeOrderedSegments: segments written before a source
// had a sort key (time order, meta version 1) are read and merged with
// segments ordered by the key, by block copy and by a full merge, across
// a restart; their rows go to mixed blocks, the keyed ones stay clustered.
func TestSortKeyMergesTimeOrderedSegments(t *testing.T) {
	for _, tc := range []struct {
		name      string
		blockRows int
		concat    bool
	}{{"merge", 1024, false}, {"copy", 64, true}} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMemFS()
			opts := testOptions(fs)
			opts.BlockRows = tc.blockRows
			opts.SegmentMaxRows = 4096 // 1,200 rows are enough to merge
			opts.CompactionMinInputs = 4
			e := openTestEngine(t, fs, opts)
			s, _ := e.Shard(shardID)
			rng := rand.New(rand.NewPCG(5, 6))
			const base = 1_700_000_000_000_000
			want := map[string]event.Event{}
			for k := 0; k < 2; k++ {
				maps.Copy(want, appendKeyed(t, s, rng, base, k*300, 300))
			}
			if err := s.SetSortKey("project"); err != nil {
				t.Fatal(err)
			}
			for k := 2; k < 4; k++ {
				maps.Copy(want, appendKeyed(t, s, rng, base, k*300, 300))
			}
			e.Close()
			// The key is not persisted by the engine (the server sets it
			// from the catalog on every start).
			opts.SortKey = "project"
			e = openTestEngine(t, fs, opts)
			defer e.Close()
			s, _ = e.Shard(shardID)
			sn := s.Snapshot()
			keys := []string{}
			for _, sg := range sn.segs {
				keys = append(keys, sg.meta.sortKey)
			}
			sn.Release()
			slices.Sort(keys)
			if slices.Compare(keys, []string{"", "", "project", "project"}) != 0 {
				t.Fatalf("segments' sort keys %q", keys)
			}
			if n, err := s.Compact(); err != nil || n != 4 {
				t.Fatalf("compaction merged %d: %v", n, err)
			}
			if got := s.stats.concatenated.Load() == 1; got != tc.concat {
				t.Fatalf("concatenated %v, want %v", got, tc.concat)
			}
			sn = s.Snapshot()
			defer sn.Release()
			sg := sn.segs[0]
			blocks := assertClustered(t, sg)
			mixedRows := 0
			for _, b := range blocks[""] {
				mixedRows += sg.r.Block(b).Rows
			}
			if mixedRows < 600 {
				t.Fatalf("the 600 rows of time-ordered segments should be in mixed blocks; %d rows are", mixedRows)
			}
			assertEvents(t, s, want)
			checkClean(t, e)
		})
	}
}

// TestSortKeyRetentionRewrite: retention rewrites a segment ordered by a
// key into one ordered by the key, without the expired rows.
func TestSortKeyRetentionRewrite(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.SortKey = "project"
	opts.BlockRows = 128
	now := time.UnixMicro(1_700_000_000_000_000 + 4*86400_000_000)
	opts.Now = func() time.Time { return now }
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ := e.Shard(shardID)
	var batch []event.Event
	want := map[string]event.Event{}
	for i := 0; i < 800; i++ {
		// Over four days: half of the rows are older than two days.
		ev := keyedEvent(i, 1_700_000_000_000_000+int64(i)*432_000_000)
		batch = append(batch, ev)
		if ev.Timestamp >= now.Add(-48*time.Hour).UnixMicro() {
			want[ev.ID] = ev
		}
	}
	if err := s.Append(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	s.SetRetentionDays(2)
	if n, err := s.ApplyRetention(); err != nil || n != 1 {
		t.Fatalf("retention rewrote %d: %v", n, err)
	}
	sn := s.Snapshot()
	defer sn.Release()
	assertClustered(t, sn.segs[0])
	assertEvents(t, s, want)
	checkClean(t, e)
}

// TestSortKeyScanMatchesReference runs the scan reference cases over
// segments and a head ordered by project.
func TestSortKeyScanMatchesReference(t *testing.T) {
	testScanMatchesReference(t, func(t *testing.T, maxTerms int) (*Engine, *Shard, []event.Event) {
		e, s, all := scanFixture(t, maxTerms)
		if err := s.SetSortKey("project"); err != nil {
			t.Fatal(err)
		}
		// Merged by key: the fixture's segments become one, clustered.
		if _, err := s.Compact(); err != nil {
			t.Fatal(err)
		}
		return e, s, all
	}, 64)
}

func TestCheckSortKey(t *testing.T) {
	for _, ok := range []string{"", "project", "metadata.project_ref", "m_1.x"} {
		if err := CheckSortKey(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"timestamp", ".project", "project.", "a..b", "pro ject", "proj-ect", string(make([]byte, segment.MaxPathLen+1))} {
		if err := CheckSortKey(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := (&Options{SortKey: "a b"}).withDefaults(); err == nil {
		t.Error("Options with an invalid sort key accepted")
	}
}

// TestSegMetaVersions: meta version 1 (written before sort keys, and
// still for time-ordered segments) and version 2 decode; damaged ones do
// not.
func TestSegMetaVersions(t *testing.T) {
	v1 := segMeta{walLast: 7, created: 1234, replaces: []uint64{3, 4}}
	b := v1.encode()
	if b[0] != metaV1 {
		t.Fatalf("time-ordered meta written as version %d", b[0])
	}
	// The bytes a build before sort keys wrote.
	if old := []byte{1, 7, 0xa4, 0x13, 2, 3, 4}; string(old) != string(b) {
		t.Fatalf("version 1 bytes changed: %x", b)
	}
	v2 := segMeta{walLast: 7, created: -5, sortKey: "project", blocks: []blockKey{{single: true, key: "a"}, {}, {single: true, key: ""}}}
	for _, m := range []segMeta{v1, v2} {
		got, err := decodeSegMeta(m.encode())
		if err != nil || fmt.Sprint(got) != fmt.Sprint(m) {
			t.Fatalf("round trip of %+v: %+v, %v", m, got, err)
		}
	}
	long := v2
	long.blocks = []blockKey{{single: true, key: string(make([]byte, maxMetaKeyLen+1))}}
	if got, err := decodeSegMeta(long.encode()); err != nil || got.blocks[0].single {
		t.Fatalf("a key value too long to record: %+v, %v", got.blocks, err)
	}
	enc := v2.encode()
	badKind := segMeta{sortKey: "p", blocks: []blockKey{{}}}.encode()
	badKind[len(badKind)-1] = 9
	for _, bad := range [][]byte{nil, {3}, enc[:len(enc)-1], badKind, {2, 0, 0, 0, 0}} {
		if _, err := decodeSegMeta(bad); err == nil {
			t.Errorf("%x decoded", bad)
		}
	}
}

// FuzzSegMeta: the meta decoder never panics, allocates in proportion to
// its input, and what it accepts encodes back to what it decodes to.
func FuzzSegMeta(f *testing.F) {
	f.Add(segMeta{walLast: 7, created: 1234, replaces: []uint64{3, 4}}.encode())
	f.Add(segMeta{sortKey: "project", blocks: []blockKey{{single: true, key: "a"}, {}}}.encode())
	f.Add([]byte{2, 0, 0, 0, 1, 'p', 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeSegMeta(data)
		if err != nil {
			return
		}
		back, err := decodeSegMeta(m.encode())
		if err != nil || fmt.Sprint(back) != fmt.Sprint(m) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, m, back)
		}
	})
}

func TestSlabOf(t *testing.T) {
	const m = int64(1_000_000_000_000)
	h := slabFirst
	for _, tc := range []struct {
		age  int64
		slab int
	}{{0, 5}, {h - 1, 5}, {h, 4}, {4*h - 1, 4}, {4 * h, 3}, {16 * h, 2}, {64 * h, 1}, {256*h - 1, 1}, {256 * h, 0}, {1 << 50, 0}} {
		if got := slabOf(m-tc.age, m); got != tc.slab {
			t.Errorf("age %d h: slab %d, want %d", tc.age/h, got, tc.slab)
		}
		if tc.slab > 0 && slabOf(slabStart(tc.slab, m), m) != tc.slab || tc.slab > 0 && slabOf(slabStart(tc.slab, m)-1, m) != tc.slab-1 {
			t.Errorf("slab %d starts at age %d", tc.slab, m-slabStart(tc.slab, m))
		}
	}
}

// TestPlanKeys: big keys get a class per slab piece, pieces too small
// join the next older one (the oldest the next newer), small keys are
// mixed; classes come key by key, oldest first, mixed last.
func TestPlanKeys(t *testing.T) {
	m := minKeyBlockRows
	counts := map[string]*slabCounts{
		"b": {0, 0, 0, 5 * m, 0, 2 * m},     // two pieces
		"a": {m / 2, 3 * m, 0, 0, m / 4, m}, // oldest joins 3m; m/4 joins... the newest is m: closed alone
		"c": {0, 0, 0, 0, 1, m / 2},         // too small: mixed
		"d": {0, 0, 0, 0, 0, m - 1},         // too small: mixed
		"e": {m, 0, 0, 0, 0, 1},             // the newest piece is too small: joins the oldest
	}
	p := planKeys(counts, slabCounts{7}, 0)
	var got []string
	for _, c := range p.classes {
		got = append(got, fmt.Sprintf("%s:%d", map[bool]string{true: "mixed", false: c.key}[c.mixed], c.rows))
	}
	want := []string{
		fmt.Sprintf("a:%d", m/2+3*m+m/4), fmt.Sprintf("a:%d", m),
		fmt.Sprintf("b:%d", 5*m), fmt.Sprintf("b:%d", 2*m),
		fmt.Sprintf("e:%d", m+1),
		fmt.Sprintf("mixed:%d", 7+1+m/2+m-1),
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("classes %v\nwant    %v", got, want)
	}
	if fmt.Sprint(*p.slabs["a"]) != "[0 0 0 0 0 1]" || fmt.Sprint(*p.slabs["b"]) != "[2 2 2 2 2 3]" || fmt.Sprint(*p.slabs["e"]) != "[4 4 4 4 4 4]" {
		t.Fatalf("slab classes a %v b %v e %v", *p.slabs["a"], *p.slabs["b"], *p.slabs["e"])
	}
	if p.slabs["c"] != nil || p.classOf("c", true, 5) != 5 || p.classOf("", false, 0) != 5 || fmt.Sprint(*p.mixed) != "[5 5 5 5 5 5]" {
		t.Fatal("small keys and rows without a key are mixed")
	}
}

// TestSortKeySlabs: a segment over a day cuts each key's rows at the
// slab edges counted back from its newest row, by flush and by merge, so
// that a query over the last hour reads one small block per key.
func TestSortKeySlabs(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.SortKey = "project"
	opts.BlockRows = 4096
	opts.SegmentMaxRows = 1 << 16
	opts.CompactionMinInputs = 2
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ := e.Shard(shardID)
	const base = 1_700_000_000_000_000
	const span, n = 24 * 3600_000_000, 18000 // a day; two segments over all of it
	want := map[string]event.Event{}
	for part := 0; part < 2; part++ {
		var batch []event.Event
		for i := 0; i < n; i++ {
			if (i/7)%2 != part {
				continue
			}
			ev := keyedEvent(i, base+int64(i)*span/n)
			batch = append(batch, ev)
			want[ev.ID] = ev
		}
		if err := s.Append(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string) {
		sn := s.Snapshot()
		defer sn.Release()
		for _, sg := range sn.segs {
			_, maxT := sg.r.TimeRange()
			blocks := assertClustered(t, sg)
			// The mixed rows too: in time order, cut at slab edges (pieces
			// of too few rows joined).
			if len(blocks[""]) < 2 {
				t.Fatalf("%s: mixed rows in %d block", what, len(blocks[""]))
			}
			for i, b := range blocks[""][1:] {
				if sg.r.Block(b).MinTime < sg.r.Block(blocks[""][i]).MaxTime {
					t.Fatalf("%s: mixed block %d before the one before it", what, b)
				}
			}
			for _, p := range testProjects {
				// Slabs of the last 1, 4, 16 and 64 hours: 4 blocks, in
				// time order, each within its slab.
				if len(blocks[p]) != 4 {
					t.Fatalf("%s: segment %d: project %s in %d blocks, want 4", what, sg.id, p, len(blocks[p]))
				}
				for i, b := range blocks[p] {
					bi := sg.r.Block(b)
					if slabOf(bi.MinTime, maxT) != slabOf(bi.MaxTime, maxT) || slabOf(bi.MaxTime, maxT) != numSlabs-4+i {
						t.Fatalf("%s: project %s block %d spans slabs %d..%d", what, p, b, slabOf(bi.MinTime, maxT), slabOf(bi.MaxTime, maxT))
					}
				}
			}
		}
	}
	check("flush")
	if n, err := s.Compact(); err != nil || n != 2 || s.stats.concatenated.Load() != 0 {
		t.Fatalf("compaction merged %d (%d by copy): %v", n, s.stats.concatenated.Load(), err)
	}
	check("merge")
	assertEvents(t, s, want)
	checkClean(t, e)
}

// TestSortKeyFlushBlocks: a flush gives blocks of their own to the key
// values with at least 1/32 of the head's rows only; the rest share mixed
// blocks, so that a query over the freshest minutes of every key value
// reads a few blocks per flushed segment, not one per key value.
func TestSortKeyFlushBlocks(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.SortKey = "project"
	opts.BlockRows = 8192
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ := e.Shard(shardID)
	var batch []event.Event
	want := map[string]event.Event{}
	project := func(i int) string {
		switch {
		case i%10 < 4:
			return "big-a" // 40%
		case i%10 < 7:
			return "big-b" // 30%
		case i%100 < 10 || i%100 == 17:
			return "mid" // 4%: over 1/32
		}
		return fmt.Sprintf("small-%02d", i%26) // 26% over 26 values
	}
	for i := 0; i < 4000; i++ {
		ev := testEvent(i, 1_700_000_000_000_000+int64(i)*1000)
		ev.Fields.Kids = slices.Clone(ev.Fields.Kids)
		ev.Fields.Kids[0] = event.Member("project", event.StringValue(project(i)))
		batch = append(batch, ev)
		want[ev.ID] = ev
	}
	if err := s.Append(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	sn := s.Snapshot()
	defer sn.Release()
	var keys []string
	for _, bk := range sn.segs[0].meta.blocks {
		keys = append(keys, map[bool]string{true: bk.key, false: "(mixed)"}[bk.single])
	}
	if fmt.Sprint(keys) != "[big-a big-b mid (mixed)]" {
		t.Fatalf("flushed blocks %v", keys)
	}
	assertEvents(t, s, want)
	checkClean(t, e)
}

// TestSortKeyCompactionWaits: merges by key rewrite every row, so a shard
// with a sort key merges small segments once they make a quarter of
// SegmentMaxRows (or 4 times CompactionMinInputs segments), not as soon
// as there are CompactionMinInputs of them.
func TestSortKeyCompactionWaits(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.SortKey = "project"
	opts.SegmentMaxRows = 4000 // a quarter: 1,000 rows
	opts.CompactionMinInputs = 2
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ := e.Shard(shardID)
	rng := rand.New(rand.NewPCG(8, 9))
	compact := func() int {
		n, err := s.Compact()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for k := 0; k < 4; k++ {
		appendKeyed(t, s, rng, 1_700_000_000_000_000, k*200, 200)
		if n := compact(); n != 0 {
			t.Fatalf("after %d segments of 200 rows: merged %d", k+1, n)
		}
	}
	appendKeyed(t, s, rng, 1_700_000_000_000_000, 800, 200)
	if n := compact(); n != 5 {
		t.Fatalf("1,000 rows in 5 segments: merged %d", n)
	}
	// A quiet source: 8 segments of 10 rows are merged too.
	for k := 0; k < 8; k++ {
		appendKeyed(t, s, rng, 1_800_000_000_000_000, 1000+k*10, 10)
	}
	if n := compact(); n != 8 {
		t.Fatalf("8 small segments: merged %d", n)
	}
	checkClean(t, e)
}

// TestSortKeyKeptAcrossReopen: a shard given its sort key by SetSortKey
// (as the server gives each source its catalog's) keeps it when the
// engine opens again, before anything sets it: flushes of replayed heads
// and merges that run first (or in a tool that opens the engine without a
// catalog) stay ordered by the key. A key cleared since (its newest
// segment in time order) stays cleared.
func TestSortKeyKeptAcrossReopen(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.BlockRows = 1024
	opts.SegmentMaxRows = 4096
	opts.CompactionMinInputs = 4
	rng := rand.New(rand.NewPCG(5, 6))
	const base = 1_700_000_000_000_000
	e := openTestEngine(t, fs, opts)
	s, _ := e.Shard(shardID)
	if err := s.SetSortKey("project"); err != nil {
		t.Fatal(err)
	}
	want := map[string]event.Event{}
	for k := 0; k < 2; k++ {
		maps.Copy(want, appendKeyed(t, s, rng, base, k*400, 400))
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e = openTestEngine(t, fs, opts)
	s, _ = e.Shard(shardID)
	if got := s.SortKey(); got != "project" {
		t.Fatalf("reopened shard's sort key %q, want project (its segments')", got)
	}
	for k := 2; k < 4; k++ {
		maps.Copy(want, appendKeyed(t, s, rng, base, k*400, 400))
	}
	if n, err := s.Compact(); err != nil || n != 4 {
		t.Fatalf("compaction merged %d: %v", n, err)
	}
	sn := s.Snapshot()
	if len(sn.segs) != 1 {
		t.Fatalf("%d segments after compaction", len(sn.segs))
	}
	assertClustered(t, sn.segs[0])
	sn.Release()
	assertEvents(t, s, want)

	// The key cleared: the next segments are in time order, and so is
	// what the shard writes after the next opening.
	if err := s.SetSortKey(""); err != nil {
		t.Fatal(err)
	}
	maps.Copy(want, appendKeyed(t, s, rng, base, 1600, 400))
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ = e.Shard(shardID)
	if got := s.SortKey(); got != "" {
		t.Fatalf("reopened shard's sort key %q after it was cleared", got)
	}
	assertEvents(t, s, want)
}
