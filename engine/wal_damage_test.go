package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
)

const otherShard = "22222222-3333-4444-8555-666666666666"

// walRecordSpans lists a clean log file's records: start offset, length
// and the ids of their events.
type walRecordSpan struct {
	off, n int
	ids    []string
}

func walRecords(t *testing.T, data []byte) []walRecordSpan {
	t.Helper()
	var out []walRecordSpan
	for off := walHeaderSize; off < len(data); {
		evs, n, err := decodeWALRecord(data[off:])
		if err != nil {
			t.Fatalf("fixture log: %v", err)
		}
		r := walRecordSpan{off: off, n: n}
		for _, e := range evs {
			r.ids = append(r.ids, e.ID)
		}
		out = append(out, r)
		off += n
	}
	return out
}

// walFixture leaves, as a crash would, two sources with events only in
// their logs: shardID with a sealed file of three records and a newest
// file of three, and otherShard with one record.
func walFixture(t *testing.T) (*vfs.MemFS, map[string]event.Event, []string) {
	t.Helper()
	fs := vfs.NewMemFS()
	e := openTestEngine(t, fs, nil)
	s, _ := e.Shard(shardID)
	want := appendRange(t, s, 0, 100, 1_700_000_000_000_000)
	if err := s.requestRotate(); err != nil { // sealed, not written out
		t.Fatal(err)
	}
	for k, v := range appendRange(t, s, 100, 200, 1_700_000_000_000_000) {
		want[k] = v
	}
	o, _ := e.Shard(otherShard)
	var evs []event.Event
	for i := 0; i < 50; i++ {
		evs = append(evs, testEvent(1000+i, 1_700_000_000_000_000+int64(i)))
	}
	if err := o.Append(ctx, evs); err != nil {
		t.Fatal(err)
	}
	img := fs.CrashClone()
	e.Close()
	dir := filepath.Join("/data/sources", shardID, "wal")
	names, _ := img.List(dir)
	slices.Sort(names)
	if len(names) != 2 {
		t.Fatalf("log files %v", names)
	}
	return img, want, []string{filepath.Join(dir, names[0]), filepath.Join(dir, names[1])}
}

// TestWALDamageIsIsolated flips one bit at offsets across both log files
// of a source, and cuts them at others. Startup always succeeds; the other
// source serves and takes events; the damaged one serves every record
// that reads (before and after the damage) and, when anything could not
// be read, refuses events, raises wal_damaged and says what repairs it. A
// flip in the last record of the newest file is damage, never a torn tail.
// The repair drops only the damaged record and counts its events. Today
// every one of these cases stops the whole engine from opening, or (in
// the last record) drops it silently.
func TestWALDamageIsIsolated(t *testing.T) {
	pristine, truth, files := walFixture(t)
	type tcase struct {
		name  string
		file  int
		data  []byte
		off   int // flipped byte, -1 for a cut
		cutAt int
	}
	var cases []tcase
	spans := map[int][]walRecordSpan{}
	for fi, p := range files {
		good, _ := vfs.ReadFile(pristine, p)
		spans[fi] = walRecords(t, good)
		offs := []int{0, 3, 4, 6}
		for _, r := range spans[fi] {
			offs = append(offs, r.off, r.off+2, r.off+4, r.off+7, r.off+8, r.off+9, r.off+12, r.off+r.n/2, r.off+r.n-1)
		}
		for off := walHeaderSize; off < len(good); off += max(len(good)/60, 1) {
			offs = append(offs, off)
		}
		for _, off := range offs {
			d := slices.Clone(good)
			d[off] ^= 1 << (off % 8)
			cases = append(cases, tcase{fmt.Sprintf("file%d flip@%d", fi, off), fi, d, off, -1})
		}
		for _, r := range spans[fi] {
			for _, cut := range []int{r.off + 3, r.off + r.n/2} {
				cases = append(cases, tcase{fmt.Sprintf("file%d cut@%d", fi, cut), fi, slices.Clone(good[:cut]), -1, cut})
			}
		}
	}
	recordOf := func(fi, off int) *walRecordSpan {
		for i := range spans[fi] {
			if r := &spans[fi][i]; off >= r.off && off < r.off+r.n {
				return r
			}
		}
		return nil
	}
	for _, tc := range cases {
		fs := pristine.CrashClone()
		writeFile(t, fs, files[tc.file], tc.data)
		e, err := Open("/data", testOptions(fs.CrashClone()))
		if err != nil {
			t.Fatalf("%s: startup failed: %v", tc.name, err)
		}
		// The other source serves and takes events.
		o, _ := e.Shard(otherShard)
		if n := len(readAll(t, o)); n != 50 {
			t.Fatalf("%s: other source has %d events", tc.name, n)
		}
		if err := o.Append(ctx, []event.Event{testEvent(2000, 1)}); err != nil {
			t.Fatalf("%s: other source refuses events: %v", tc.name, err)
		}
		s, _ := e.Shard(shardID)
		got := readAll(t, s)
		var missing []string
		for id, w := range truth {
			g, ok := got[id]
			if !ok {
				missing = append(missing, id)
				continue
			}
			if !eventsEqual(&g, &w) {
				t.Fatalf("%s: event %s changed", tc.name, id)
			}
		}
		if len(got) > len(truth)-len(missing) {
			t.Fatalf("%s: %d events read, %d known", tc.name, len(got), len(truth))
		}
		damaged := hasConditionKind(s, ConditionWALDamaged)
		appendErr := s.Append(ctx, []event.Event{testEvent(2001, 1)})
		switch {
		case tc.off >= 0:
			if s.Info().WALBytesCut != 0 {
				t.Fatalf("%s: a flipped bit was cut as a torn tail", tc.name)
			}
			if r := recordOf(tc.file, tc.off); len(missing) > 0 && (r == nil || len(missing) != len(r.ids)) {
				t.Fatalf("%s: %d events missing, not one record's", tc.name, len(missing))
			}
			if len(missing) > 0 && (!damaged || !errors.Is(appendErr, ErrWALDamaged)) {
				t.Fatalf("%s: %d events missing, condition %v, append %v", tc.name, len(missing), damaged, appendErr)
			}
			if len(missing) == 0 && (damaged || appendErr != nil) {
				t.Fatalf("%s: nothing lost but read-only (%v)", tc.name, appendErr)
			}
		case tc.file == 1: // the newest file cut: a torn tail
			if damaged || appendErr != nil || len(missing) == 0 {
				t.Fatalf("%s: torn tail: missing %d, condition %v, append %v", tc.name, len(missing), damaged, appendErr)
			}
		default: // a sealed file cut: damage
			if !damaged || !errors.Is(appendErr, ErrWALDamaged) {
				t.Fatalf("%s: cut sealed file: condition %v, append %v", tc.name, damaged, appendErr)
			}
		}
		for _, c := range s.Conditions() {
			if strings.Contains(c.Detail, "/data") || (c.Kind == ConditionWALDamaged && !strings.Contains(c.Detail, "--repair-wal")) {
				t.Fatalf("%s: condition detail %q", tc.name, c.Detail)
			}
		}
		e.Close()
		if !damaged {
			continue
		}
		// The repair keeps what replay read and drops the rest, counted.
		opts := testOptions(fs)
		opts.RepairWAL = true
		e2, err := Open("/data", opts)
		if err != nil {
			t.Fatalf("%s: repair: %v", tc.name, err)
		}
		s2, _ := e2.Shard(shardID)
		if n := len(readAll(t, s2)); n != len(got) {
			t.Fatalf("%s: after repair %d events, read-only view had %d", tc.name, n, len(got))
		}
		in := s2.Info()
		if in.WALRecordsDropped == 0 || hasConditionKind(s2, ConditionWALDamaged) {
			t.Fatalf("%s: repair: %+v %v", tc.name, in, s2.Conditions())
		}
		if r := recordOf(tc.file, tc.off); tc.off >= 0 && r != nil && tc.off >= r.off+walRecHeaderSize+8 && in.WALEventsDropped != int64(len(missing)) {
			t.Fatalf("%s: repair says %d events dropped, %d were", tc.name, in.WALEventsDropped, len(missing))
		}
		if err := s2.Append(ctx, []event.Event{testEvent(2001, 1)}); err != nil {
			t.Fatalf("%s: append after repair: %v", tc.name, err)
		}
		if q, _ := fs.List(filepath.Join("/data/sources", shardID, "quarantine")); !slices.Contains(q, filepath.Base(files[tc.file])) {
			t.Fatalf("%s: the damaged log is not kept in quarantine/: %v", tc.name, q)
		}
		checkClean(t, e2)
		e2.Close()
	}
}

// TestWALTornTailShapes: what a write interrupted by a crash or a power
// loss leaves at the end of the newest log file is cut (a record cut
// short; a length prefix with zero-filled bytes after it; zeros from a
// sector boundary on); a complete last record that fails its checksum for
// any other reason is damage, reported with its file and offset.
func TestWALTornTailShapes(t *testing.T) {
	fs := vfs.NewMemFS()
	e := openTestEngine(t, fs, nil)
	s, _ := e.Shard(shardID)
	want := appendRange(t, s, 0, 100, 1_700_000_000_000_000)
	img := fs.CrashClone()
	e.Close()
	p := walPath(t, img)
	good, _ := vfs.ReadFile(img, p)
	var tailEvents []event.Event
	for i := range 8 {
		tailEvents = append(tailEvents, testEvent(900+i, int64(i)))
	}
	rec, _ := encodeWALRecord(nil, nil, tailEvents)
	withTail := func(tail []byte) []byte { return append(slices.Clone(good), tail...) }
	zeroFrom := func(r []byte, from int) []byte {
		r = slices.Clone(r)
		clear(r[from:])
		return r
	}
	// The offset in rec of the first sector boundary past its header.
	aligned := (len(good)+walRecHeaderSize+511)/512*512 - len(good)
	if aligned >= len(rec) {
		t.Fatalf("fixture: record of %d bytes crosses no sector boundary", len(rec))
	}
	flipped := slices.Clone(rec)
	flipped[len(flipped)-3] ^= 0x08
	unaligned := zeroFrom(rec, aligned+1)
	unaligned[aligned] = 0x5a
	for _, tc := range []struct {
		name string
		data []byte
		torn bool
	}{
		{"record cut short", withTail(rec[:len(rec)/2]), true},
		{"header cut short", withTail(rec[:5]), true},
		{"length prefix then zeros", withTail(zeroFrom(rec, 4)), true},
		{"all zeros", withTail(make([]byte, len(rec))), true},
		{"zeros from a sector boundary", withTail(zeroFrom(rec, aligned)), true},
		{"a flipped bit in the last record", withTail(flipped), false},
		{"zeros not from a sector boundary", withTail(unaligned), false},
	} {
		fsc := img.CrashClone()
		writeFile(t, fsc, p, tc.data)
		ro := testOptions(fsc)
		ro.ReadOnly = true
		er := openTestEngine(t, fsc, ro)
		err := er.Check()
		er.Close()
		e2 := openTestEngine(t, fsc, nil)
		s2, _ := e2.Shard(shardID)
		got := readAll(t, s2)
		in := s2.Info()
		if tc.torn {
			if err != nil || len(in.WALDamage) != 0 || in.WALBytesCut != int64(len(tc.data)-len(good)) {
				t.Fatalf("%s: check %v, damage %v, cut %d", tc.name, err, in.WALDamage, in.WALBytesCut)
			}
			assertEvents(t, s2, want)
		} else {
			var wce *WALCorruptError
			if !errors.As(err, &wce) || wce.File != walRel(p) || wce.Offset != int64(len(good)) {
				t.Fatalf("%s: check says %v", tc.name, err)
			}
			if in.WALBytesCut != 0 || len(in.WALDamage) != 1 || !in.WALDamage[0].Tail || len(got) != len(want) {
				t.Fatalf("%s: cut %d, damage %v, %d events", tc.name, in.WALBytesCut, in.WALDamage, len(got))
			}
			if err := s2.Append(ctx, []event.Event{testEvent(5, 5)}); !errors.Is(err, ErrWALDamaged) {
				t.Fatalf("%s: append %v", tc.name, err)
			}
		}
		e2.Close()
	}
}

// TestWALLengthFlipIsRecovered: a flipped bit in a record's length field
// loses nothing: the record framed by its neighbours checks out, and the
// repair writes the right length.
func TestWALLengthFlipIsRecovered(t *testing.T) {
	var data []byte
	var n int
	for i := range 3 {
		data, _ = encodeWALRecord(data, nil, []event.Event{testEvent(i, int64(i))})
		if i == 0 {
			n = len(data)
		}
	}
	data = append([]byte{walMagic[0], walMagic[1], walMagic[2], walMagic[3], walVersion, 0, 0, 0}, data...)
	for _, bit := range []uint{0, 5, 13, 30} {
		d := slices.Clone(data)
		binary.LittleEndian.PutUint32(d[walHeaderSize:], binary.LittleEndian.Uint32(d[walHeaderSize:])^(1<<bit))
		evs, err := DecodeWAL(d)
		var wce *WALCorruptError
		if len(evs) != 3 || !errors.As(err, &wce) || !wce.Recovered {
			t.Fatalf("bit %d: %d events, %v", bit, len(evs), err)
		}
		fixed, rep, err := RepairWALBytes(d)
		if err != nil || rep.BytesDropped != 0 || rep.EventsKept != 3 || !slices.Equal(fixed, data) {
			t.Fatalf("bit %d: repair %v %+v", bit, err, rep)
		}
	}
	_ = n
}

// FuzzWALRepair: the repair never panics, and what it writes replays clean
// with every event the damaged file's replay read.
func FuzzWALRepair(f *testing.F) {
	one := EncodeWALRecord([]event.Event{testEvent(1, 1)}, true)
	two := append(slices.Clone(one), EncodeWALRecord([]event.Event{testEvent(2, 2), testEvent(3, 3)}, false)...)
	f.Add(one)
	f.Add(two)
	f.Add(two[:len(two)-4])
	bad := slices.Clone(two)
	bad[walHeaderSize+12] ^= 1
	f.Add(bad)
	f.Add([]byte("SDWL\x02\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			t.Skip()
		}
		evs, _ := DecodeWAL(data)
		fixed, rep, err := RepairWALBytes(data)
		if err != nil || rep == nil {
			return
		}
		back, err := DecodeWAL(fixed)
		if err != nil || len(back) != len(evs) || rep.EventsKept != len(evs) {
			t.Fatalf("repaired file: %v, %d events, replay of the damaged one read %d", err, len(back), len(evs))
		}
	})
}
