package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
	"github.com/sediment/sediment/sql/scan"
)

// The columns damage tests read, and how they are compared with the truth.
var damageCols = []scan.Column{
	{Path: "id", Type: vec.String},
	{Path: "timestamp", Type: vec.Timestamp},
	{Path: "metadata.response.status_code", Type: vec.Int64},
	{Path: "project", Type: vec.String},
	{Path: "event_message", Type: vec.String},
}

// answer is what a query over one shard gave.
type answer struct {
	rows     map[string][]any // id → values of damageCols (nil for NULL)
	count    int64            // what the units' Count summed to
	warnings []string
	err      error
}

// queryShard reads every unit of a scan of req (rows, then counts) with a
// warnings collector, as the query services do.
func queryShard(s *Shard, req scan.Request) answer {
	w := &scan.Warnings{}
	c := scan.WithWarnings(context.Background(), w)
	sn := s.Snapshot()
	defer sn.Release()
	a := answer{rows: map[string][]any{}}
	req.Columns = damageCols
	sc, err := sn.Table("edge_logs").Open(c, &req)
	if err != nil {
		a.err = err
		return a
	}
	for _, u := range sc.Units() {
		err := u.Read(c, func(b *vec.Batch) error {
			for i := 0; i < b.Len; i++ {
				vals := make([]any, len(damageCols))
				for k, col := range b.Cols {
					if col.IsNull(i) {
						continue
					}
					switch damageCols[k].Type {
					case vec.String:
						vals[k] = col.StringAt(i)
					default:
						vals[k] = col.Ints[i]
					}
				}
				id := vals[0].(string)
				if _, dup := a.rows[id]; dup {
					return fmt.Errorf("row %s twice", id)
				}
				a.rows[id] = vals
			}
			return nil
		})
		if err != nil {
			a.err = err
			return a
		}
	}
	sc2, err := sn.Table("edge_logs").Open(c, &req)
	if err != nil {
		a.err = err
		return a
	}
	for _, u := range sc2.Units() {
		n, err := u.Count(c)
		if err != nil {
			a.err = err
			return a
		}
		a.count += n
	}
	a.warnings = w.List()
	return a
}

// expected is what a query would answer from undamaged data.
func expected(truth []event.Event, req scan.Request) map[string][]any {
	out := map[string][]any{}
	for i := range truth {
		e := &truth[i]
		if e.Timestamp < req.TimeMin || e.Timestamp > req.TimeMax {
			continue
		}
		vals := make([]any, len(damageCols))
		for k, c := range damageCols {
			if v, ok := refValue(e, c.Path, c.Type); ok {
				vals[k] = v
			}
		}
		if len(req.Filters) == 1 && vals[2] != req.Filters[0].Args[0].Int {
			continue
		}
		out[e.ID] = vals
	}
	return out
}

// checkHonest fails unless a is the right answer, or a subset of it (every
// row exact) that says, in warnings, that it misses data. It returns the
// ids missing.
func checkHonest(t *testing.T, what string, a answer, want map[string][]any) []string {
	t.Helper()
	if a.err != nil {
		t.Fatalf("%s: query failed: %v", what, a.err)
	}
	for id, vals := range a.rows {
		w, ok := want[id]
		if !ok {
			t.Fatalf("%s: row %s is not in the data", what, id)
		}
		if fmt.Sprint(vals) != fmt.Sprint(w) {
			t.Fatalf("%s: row %s is %v, want %v", what, id, vals, w)
		}
	}
	var missing []string
	for id := range want {
		if _, ok := a.rows[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 && len(a.warnings) == 0 {
		t.Fatalf("%s: %d of %d rows missing and no warning", what, len(missing), len(want))
	}
	if a.count != int64(len(want)) && len(a.warnings) == 0 {
		t.Fatalf("%s: count %d, want %d, and no warning", what, a.count, len(want))
	}
	if a.count > int64(len(want)) {
		t.Fatalf("%s: count %d exceeds the %d rows there are", what, a.count, len(want))
	}
	for _, w := range a.warnings {
		if strings.Contains(w, "/data") {
			t.Fatalf("%s: warning names a server path: %s", what, w)
		}
	}
	return missing
}

// damageFixture writes three segments of one source (the first of 300
// events in 5 blocks with an index) and returns the file system, the first
// segment's path and every event.
func damageFixture(t *testing.T) (*vfs.MemFS, string, []event.Event) {
	t.Helper()
	fs := vfs.NewMemFS()
	e := openTestEngine(t, fs, nil)
	s, _ := e.Shard(shardID)
	var truth []event.Event
	base := int64(1_700_000_000_000_000)
	for _, r := range [][2]int{{0, 300}, {300, 500}, {500, 600}} {
		var evs []event.Event
		for i := r[0]; i < r[1]; i++ {
			evs = append(evs, testEvent(i, base+int64(i)*1000))
		}
		if err := s.Append(ctx, evs); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		truth = append(truth, evs...)
	}
	sn := s.Snapshot()
	first := sn.segs[0].path
	sn.Release()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return fs, first, truth
}

func writeFile(t *testing.T, fs *vfs.MemFS, path string, data []byte) {
	t.Helper()
	f, err := fs.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(data)
	f.Sync()
	f.Close()
	fs.SyncDir(filepath.Dir(path))
}

// segmentRegions classifies the byte offsets of a segment file: the block
// each offset of a block's units is in, the index section, and the rest.
type segmentRegions struct {
	size      int64
	blockAt   []int // per offset: block, -1 elsewhere
	blockRows []int
	indexFrom int64 // [indexFrom, indexTo): index units and directory
	indexTo   int64
	footOff   int64
}

func regionsOf(t *testing.T, fs *vfs.MemFS, path string) segmentRegions {
	t.Helper()
	data, _ := vfs.ReadFile(fs, path)
	f, _ := fs.Open(path)
	r, err := segment.Open(f, "x")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rg := segmentRegions{size: int64(len(data)), blockAt: make([]int, len(data))}
	last := int64(0)
	for off := range data {
		b := r.BlockAt(int64(off))
		rg.blockAt[off] = b
		if b >= 0 {
			last = int64(off) + 1
		}
	}
	for b := 0; b < r.NumBlocks(); b++ {
		rg.blockRows = append(rg.blockRows, r.Block(b).Rows)
	}
	rg.footOff = int64(binary.LittleEndian.Uint64(data[len(data)-20:]))
	meta, _ := r.Section(sectionMeta)
	rg.indexFrom, rg.indexTo = last, rg.footOff-int64(len(meta))-5
	return rg
}

// TestSegmentDamageIsNeverSilent flips one bit at offsets across a
// segment file, and cuts it at others. Every answer must be right, or miss
// rows and say so in its warnings (never an error, never a wrong row),
// from the first query on, after a restart, and after the compaction that
// rewrites the segment without its damaged blocks. Index damage loses
// nothing. Today's engine fails the first query and answers later ones
// short without a word.
func TestSegmentDamageIsNeverSilent(t *testing.T) {
	pristine, path, truth := damageFixture(t)
	rg := regionsOf(t, pristine, path)
	good, _ := vfs.ReadFile(pristine, path)
	full := scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime}
	mid := scan.Request{TimeMin: truth[100].Timestamp, TimeMax: truth[450].Timestamp}
	filtered := scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime,
		Filters: []scan.Predicate{{Path: "metadata.response.status_code", Type: vec.Int64, Op: scan.Eq, Args: []scan.Const{{Type: vec.Int64, Int: 500}}}}}

	type tcase struct {
		name string
		data []byte
		off  int64
	}
	var cases []tcase
	step := max(rg.size/160, 1)
	for off := int64(0); off < rg.size; off += step {
		d := slices.Clone(good)
		d[off] ^= 1 << (off % 8)
		cases = append(cases, tcase{fmt.Sprintf("flip@%d", off), d, off})
	}
	for _, off := range []int64{rg.indexFrom + 3, (rg.indexFrom + rg.indexTo) / 2, rg.indexTo - 7, rg.footOff + 5, rg.size - 3} {
		d := slices.Clone(good)
		d[off] ^= 0x10
		cases = append(cases, tcase{fmt.Sprintf("flip@%d", off), d, off})
	}
	for off := int64(0); off < rg.size; off += max(rg.size/12, 1) {
		cases = append(cases, tcase{fmt.Sprintf("cut@%d", off), slices.Clone(good[:off]), -1})
	}
	sawBlock, sawIndex, sawWhole := false, false, false
	for _, tc := range cases {
		fs := pristine.CrashClone()
		writeFile(t, fs, path, tc.data)
		e := openTestEngine(t, fs, nil)
		s, _ := e.Shard(shardID)
		var lostAny bool
		for _, q := range []struct {
			name string
			req  scan.Request
		}{{"full", full}, {"time range", mid}, {"indexed filter", filtered}, {"full again", full}} {
			a := queryShard(s, q.req)
			missing := checkHonest(t, tc.name+" "+q.name, a, expected(truth, q.req))
			lostAny = lostAny || len(missing) > 0
			inIndex := tc.off >= rg.indexFrom && tc.off < rg.indexTo
			if inIndex && (len(missing) > 0 || len(a.warnings) > 0) {
				t.Fatalf("%s %s: index damage lost %d rows (%v)", tc.name, q.name, len(missing), a.warnings)
			}
			if tc.off >= 0 && rg.blockAt[tc.off] >= 0 && len(missing) > 0 {
				b := rg.blockAt[tc.off]
				want := fmt.Sprintf("(block %d)", b)
				if len(a.warnings) != 1 || !strings.Contains(a.warnings[0], want) || !strings.HasPrefix(a.warnings[0], "source edge_logs: ") {
					t.Fatalf("%s %s: warnings %q, want one naming %s", tc.name, q.name, a.warnings, want)
				}
				if q.name == "full" && len(missing) != rg.blockRows[b] {
					t.Fatalf("%s: %d rows missing, the block holds %d", tc.name, len(missing), rg.blockRows[b])
				}
				sawBlock = true
			}
			sawIndex = sawIndex || inIndex
			sawWhole = sawWhole || (tc.off < 0 && len(missing) > 0)
		}
		if !lostAny {
			e.Close()
			continue
		}
		in := s.Info()
		if in.QuarantinedBlocks+in.QuarantinedSegments == 0 || !hasConditionKind(s, ConditionQuarantined) {
			t.Fatalf("%s: rows lost but not counted: %+v %v", tc.name, in, s.Conditions())
		}
		e.Close()
		// After a restart the loss is still said, from its record.
		e2 := openTestEngine(t, fs, nil)
		s2, _ := e2.Shard(shardID)
		if !hasConditionKind(s2, ConditionQuarantined) {
			t.Fatalf("%s: condition gone after a restart", tc.name)
		}
		before := queryShard(s2, full)
		if len(checkHonest(t, tc.name+" after restart", before, expected(truth, full))) == 0 {
			t.Fatalf("%s: the lost rows came back after a restart", tc.name)
		}
		// A compaction rewrites a segment with damaged blocks without them
		// and keeps the original in quarantine/; answers still say so.
		if _, err := s2.Compact(); err != nil {
			t.Fatalf("%s: compact: %v", tc.name, err)
		}
		after := queryShard(s2, full)
		checkHonest(t, tc.name+" after compaction", after, expected(truth, full))
		if len(after.rows) != len(before.rows) || len(after.warnings) == 0 {
			t.Fatalf("%s: after compaction %d rows (%v), before %d", tc.name, len(after.rows), after.warnings, len(before.rows))
		}
		if !fs.Exists(filepath.Join(filepath.Dir(filepath.Dir(path)), "quarantine", filepath.Base(path))) {
			t.Fatalf("%s: the damaged original is not kept in quarantine/", tc.name)
		}
		if err := e2.Check(); err != nil {
			t.Fatalf("%s: after the rewrite, check: %v", tc.name, err)
		}
		e2.Close()
	}
	if !sawBlock || !sawIndex || !sawWhole {
		t.Fatalf("the sweep missed a kind of damage: block %v index %v whole %v", sawBlock, sawIndex, sawWhole)
	}
}

// TestBlockDamageWarningText: the warning names the source, the events,
// the segment and the block, and the error of a caller without a
// collector names no server path.
func TestBlockDamageWarningText(t *testing.T) {
	fs, path, truth := damageFixture(t)
	rg := regionsOf(t, fs, path)
	data, _ := vfs.ReadFile(fs, path)
	off := slices.Index(rg.blockAt, 2)
	for ; rg.blockAt[off] == 2; off += 16 {
		data[off] ^= 0x40 // every unit of block 2
	}
	writeFile(t, fs, path, data)
	e := openTestEngine(t, fs, nil)
	defer e.Close()
	s, _ := e.Shard(shardID)
	// Without a collector the query fails, naming what and where.
	sn := s.Snapshot()
	sc, err := sn.Table("edge_logs").Open(ctx, &scan.Request{Columns: damageCols, TimeMin: scan.MinTime, TimeMax: scan.MaxTime})
	if err != nil {
		t.Fatal(err)
	}
	var rerr error
	for _, u := range sc.Units() {
		if err := u.Read(ctx, func(*vec.Batch) error { return nil }); err != nil {
			rerr = err
			break
		}
	}
	sn.Release()
	var de *DamageError
	if !errors.As(rerr, &de) || !errors.Is(rerr, segment.ErrCorrupt) || strings.Contains(rerr.Error(), "/data") ||
		!strings.Contains(rerr.Error(), "source edge_logs: segments/"+segName(0)+" block 2 is damaged") {
		t.Fatalf("error without a collector: %v", rerr)
	}
	a := queryShard(s, scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime})
	checkHonest(t, "after", a, expected(truth, scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime}))
	want := fmt.Sprintf("source edge_logs: %d events in segment %016x (block 2) are quarantined and not in this answer", rg.blockRows[2], 0)
	if len(a.warnings) != 1 || a.warnings[0] != want {
		t.Fatalf("warnings %q, want %q", a.warnings, want)
	}
	in := s.Info()
	if in.QuarantinedBlocks != 1 || in.QuarantinedEvents != int64(rg.blockRows[2]) || len(in.Lost) != 1 || !in.Lost[0].InUse {
		t.Fatalf("info %+v", in)
	}
	// A query over a time range that misses the block is not warned.
	last := truth[len(truth)-1].Timestamp
	b := queryShard(s, scan.Request{TimeMin: last, TimeMax: last})
	if len(b.rows) != 1 || len(b.warnings) != 0 {
		t.Fatalf("query beside the damage: %d rows, warnings %q", len(b.rows), b.warnings)
	}
}

func TestDamageRecordRoundTrip(t *testing.T) {
	units := []lostUnit{
		{seg: 7, kind: lossBlock, block: 3, rows: 4096, minTime: -5, maxTime: 9, timeKnown: true, found: 1234, cause: "page at offset 99: crc mismatch"},
		{seg: 7, kind: lossSegment, rows: -1, minTime: -1 << 63, maxTime: 1<<63 - 1, found: -1, cause: ""},
	}
	b := encodeDamageRecord(units)
	got, err := decodeDamageRecord(b, 7)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(units) {
		t.Fatalf("got %+v\nwant %+v", got, units)
	}
	for i := range b {
		d := slices.Clone(b)
		d[i] ^= 4
		if _, err := decodeDamageRecord(d, 7); err == nil {
			t.Fatalf("flip at %d not detected", i)
		}
	}
	if empty, err := decodeDamageRecord(encodeDamageRecord(nil), 7); err != nil || len(empty) != 0 {
		t.Fatalf("empty record: %v %v", empty, err)
	}
}

// FuzzDamageRecord: the damage record decoder never panics, allocates in
// proportion to its input, and what it accepts encodes back to itself.
func FuzzDamageRecord(f *testing.F) {
	f.Add(encodeDamageRecord(nil))
	f.Add(encodeDamageRecord([]lostUnit{{seg: 1, kind: lossBlock, block: 3, rows: 64, minTime: 1, maxTime: 2, timeKnown: true, found: 5, cause: "x"}}))
	f.Add(encodeDamageRecord([]lostUnit{{seg: 1, kind: lossSegment, rows: -1, cause: "footer: crc mismatch"}}))
	f.Add([]byte("SDDM\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		units, err := decodeDamageRecord(data, 1)
		if err != nil {
			return
		}
		back, err := decodeDamageRecord(encodeDamageRecord(units), 1)
		if err != nil || fmt.Sprint(back) != fmt.Sprint(units) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, units, back)
		}
	})
}

// TestDamagedDamageRecord: a damage record that fails its checksum loses
// nothing silently. In segments/ it is dropped and its block is found
// damaged again when read; in quarantine/ its segment counts as lost, size
// unknown, and every answer says so.
func TestDamagedDamageRecord(t *testing.T) {
	fs, path, truth := damageFixture(t)
	rg := regionsOf(t, fs, path)
	data, _ := vfs.ReadFile(fs, path)
	for off := slices.Index(rg.blockAt, 1); rg.blockAt[off] == 1; off += 16 {
		data[off] ^= 0x40
	}
	writeFile(t, fs, path, data)
	full := scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime}
	e := openTestEngine(t, fs, nil)
	s, _ := e.Shard(shardID)
	checkHonest(t, "first", queryShard(s, full), expected(truth, full))
	e.Close()
	rec := filepath.Join(filepath.Dir(path), damageName(0))
	flipFile := func(p string) {
		b, err := vfs.ReadFile(fs, p)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 1
		writeFile(t, fs, p, b)
	}
	flipFile(rec)
	e = openTestEngine(t, fs, nil)
	s, _ = e.Shard(shardID)
	if missing := checkHonest(t, "record in segments/ damaged", queryShard(s, full), expected(truth, full)); len(missing) != rg.blockRows[1] {
		t.Fatalf("%d rows missing, want block 1's %d", len(missing), rg.blockRows[1])
	}
	if _, err := s.Compact(); err != nil { // rewrites without block 1
		t.Fatal(err)
	}
	e.Close()
	flipFile(filepath.Join(filepath.Dir(filepath.Dir(path)), "quarantine", damageName(0)))
	e = openTestEngine(t, fs, nil)
	defer e.Close()
	s, _ = e.Shard(shardID)
	a := queryShard(s, full)
	checkHonest(t, "record in quarantine/ damaged", a, expected(truth, full))
	if len(a.warnings) != 1 || !strings.Contains(a.warnings[0], "how many events it held is unknown: its damage record is unreadable") {
		t.Fatalf("warnings %q", a.warnings)
	}
	if in := s.Info(); in.QuarantinedUnknown != 1 || len(in.Warnings) != 1 {
		t.Fatalf("info %+v", in)
	}
}

// hasConditionKind reports whether the shard has a condition of kind k.
func hasConditionKind(s *Shard, k ConditionKind) bool {
	_, ok := hasCondition(s, k)
	return ok
}
