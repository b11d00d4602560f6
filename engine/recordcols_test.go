package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
	"github.com/sediment/sediment/sql/scan"
)

// TestRecordsWithEmptyObjects rebuilds records whose objects are empty,
// nested in empty ones, or hold values, from the head and from a segment:
// an object's presence column is read only for rows with nothing under it,
// and the records are the events' own metadata either way.
func TestRecordsWithEmptyObjects(t *testing.T) {
	// Objects under an absent one, an object that is a string in another
	// event, and empty objects three deep.
	obj := event.ObjectValue
	str := event.StringValue
	m := event.Member
	// Members in path order, as the record builder writes them.
	metas := []event.Value{
		obj(m("request", obj(m("sb", obj()))), m("response", obj(m("status", str("200"))))),
		obj(m("request", obj(m("sb", obj(m("jwt", obj(m("role", str("anon")))))))), m("response", obj())),
		obj(m("request", obj())),
		obj(m("response", obj(m("status", str("404"))))),
		obj(m("request", obj(m("method", str("GET")), m("sb", obj(m("jwt", obj())))))),
		obj(m("request", obj(m("method", str("POST"))))),
		obj(m("request", obj(m("sb", obj(m("jwt", obj(m("apikey", obj())))))))),
		obj(m("request", obj(m("sb", str("flat"))))),
		obj(m("request", obj(m("sb", obj(m("jwt", obj(m("apikey", obj(m("role", str("service")))))))))), m("response", obj())),
	}
	s, evs, want := storeMetadataEvents(t, 200, func(i int) event.Value { return metas[i%len(metas)] })
	check := func(where string) {
		sn := s.Snapshot()
		defer sn.Release()
		sc, times, refs := scanRecordRefs(t, sn)
		defer sc.Close()
		if len(refs) != len(evs) {
			t.Fatalf("%s: %d rows, want %d", where, len(refs), len(evs))
		}
		// One record at a time (a rare match per block), then all at once.
		for k := range refs {
			got := make([]string, 1)
			if err := sc.Materialize(context.Background(), "metadata", true, refs[k:k+1], got); err != nil {
				t.Fatal(err)
			}
			if got[0] != want[times[k]] {
				t.Fatalf("%s: record at %d: %s, want %s", where, times[k], got[0], want[times[k]])
			}
		}
		// Read again, not taken from the records the reads above kept.
		segment.DropCaches()
		all := make([]string, len(refs))
		if err := sc.Materialize(context.Background(), "metadata", true, refs, all); err != nil {
			t.Fatal(err)
		}
		for k := range refs {
			if all[k] != want[times[k]] {
				t.Fatalf("%s: record at %d read with the others: %s, want %s", where, times[k], all[k], want[times[k]])
			}
		}
	}
	check("head")
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	check("segment")
}

// TestRecordsWithCopiedColumns: records whose metadata holds a value
// twice under two names (the client address as cf_connecting_ip and
// x_real_ip, absent from some events) read back whole from the head and
// from a segment, where the two columns are one chunk stored once and a
// record read reads it once (sameColumns maps the copy to the first).
func TestRecordsWithCopiedColumns(t *testing.T) {
	obj := event.ObjectValue
	str := event.StringValue
	m := event.Member
	s, evs, want := storeMetadataEvents(t, 300, func(i int) event.Value {
		headers := obj(m("accept", str("*/*")))
		if i%7 != 3 {
			ip := str(fmt.Sprintf("client %d", i%6)) // few: a dictionary
			headers = obj(m("accept", str("*/*")), m("cf_connecting_ip", ip), m("x_real_ip", ip))
		}
		return obj(m("request", obj(m("headers", headers))))
	})
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	sn := s.Snapshot()
	defer sn.Release()
	shared := 0
	for _, p := range sn.partList() {
		if p.seg == nil {
			continue
		}
		rd := p.seg.r
		a := rd.Column("metadata.request.headers.cf_connecting_ip", segment.TypeString)
		b := rd.Column("metadata.request.headers.x_real_ip", segment.TypeString)
		cols := []colRef{{path: "a", typ: segment.TypeString, idx: a}, {path: "b", typ: segment.TypeString, idx: b}}
		for blk := 0; blk < rd.NumBlocks(); blk++ {
			if copyOf := sameColumns(&blockReader{r: rd, b: blk}, cols, make([]bool, 2)); copyOf != nil && copyOf[1] == 0 {
				shared++
			}
		}
	}
	if shared == 0 {
		t.Fatal("no block stores the two address columns once")
	}
	sc, times, refs := scanRecordRefs(t, sn)
	defer sc.Close()
	if len(refs) != len(evs) {
		t.Fatalf("%d rows, want %d", len(refs), len(evs))
	}
	for k := 0; k < len(refs); k += 13 {
		got := make([]string, 1)
		if err := sc.Materialize(context.Background(), "metadata", true, refs[k:k+1], got); err != nil {
			t.Fatal(err)
		}
		if got[0] != want[times[k]] {
			t.Fatalf("record at %d: %s, want %s", times[k], got[0], want[times[k]])
		}
	}
	segment.DropCaches() // read again, not taken from the kept records
	all := make([]string, len(refs))
	if err := sc.Materialize(context.Background(), "metadata", true, refs, all); err != nil {
		t.Fatal(err)
	}
	for k := range refs {
		if all[k] != want[times[k]] {
			t.Fatalf("record at %d read with the others: %s, want %s", times[k], all[k], want[times[k]])
		}
	}
}

// scanRecordRefs scans every row of table src for its timestamp and a
// reference to its metadata record, which the open scan (the caller
// closes it) materialises.
func scanRecordRefs(t *testing.T, sn *Snapshot) (sc scan.Scan, times, refs []int64) {
	t.Helper()
	req := &scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime,
		Columns: []scan.Column{{Path: "timestamp", Type: vec.Timestamp}, {Path: "metadata", Kind: scan.Record}}}
	sc, err := sn.Table("src").Open(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range sc.Units() {
		if err := u.Read(context.Background(), func(b *vec.Batch) error {
			b.ForEach(func(i int) {
				times = append(times, b.Cols[0].Ints[i])
				refs = append(refs, b.Cols[1].Ints[i])
			})
			return nil
		}); err != nil {
			sc.Close()
			t.Fatal(err)
		}
	}
	return sc, times, refs
}

// countingReader counts the reads of each column path.
type countingReader struct {
	colReader
	reads map[string]int
}

func (c *countingReader) read(col colRef, a, z int, rows []int32, dst *vec.Vector) error {
	c.reads[col.path]++
	return c.colReader.read(col, a, z, rows, dst)
}

// TestRecordPresenceStopsAtAbsentObject: a record without
// metadata.request.sb reads the presence column of sb and none of the
// objects under it (they cannot be present where sb is absent), while a
// record with an empty sb.jwt reads the presence of sb, sb.jwt and
// sb.jwt.apikey, found absent, and not that of its payload.
func TestRecordPresenceStopsAtAbsentObject(t *testing.T) {
	obj := event.ObjectValue
	str := event.StringValue
	m := event.Member
	metas := []event.Value{
		obj(m("request", obj(m("method", str("GET"))))),
		obj(m("request", obj(m("method", str("GET")), m("sb", obj(m("jwt", obj())))))),
		obj(m("request", obj(m("sb", obj(m("jwt", obj(m("apikey", obj(m("payload", obj(m("role", str("anon"))))))))))))),
	}
	s, _, _ := storeMetadataEvents(t, 90, func(i int) event.Value { return metas[i%len(metas)] })
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	sn := s.Snapshot()
	defer sn.Release()
	var seg *segRef
	for _, p := range sn.partList() {
		if p.seg != nil {
			seg = p.seg
		}
	}
	if seg == nil {
		t.Fatal("no segment")
	}
	var cols []colRef
	for _, c := range segColumns(seg) {
		if hasPrefixPath(c.path, "metadata") {
			cols = append(cols, c)
		}
	}
	objects := presenceOrder(cols)
	for _, tc := range []struct {
		row       int32
		read, not []string
	}{
		{row: 0, read: []string{"metadata.request.sb"},
			not: []string{"metadata", "metadata.request", "metadata.request.sb.jwt", "metadata.request.sb.jwt.apikey", "metadata.request.sb.jwt.apikey.payload"}},
		{row: 1, read: []string{"metadata.request.sb", "metadata.request.sb.jwt", "metadata.request.sb.jwt.apikey"},
			not: []string{"metadata", "metadata.request", "metadata.request.sb.jwt.apikey.payload"}},
		{row: 2, not: []string{"metadata", "metadata.request", "metadata.request.sb", "metadata.request.sb.jwt", "metadata.request.sb.jwt.apikey", "metadata.request.sb.jwt.apikey.payload"}},
	} {
		cr := &countingReader{colReader: &blockReader{r: seg.r, b: 0}, reads: map[string]int{}}
		vecs := make([]vec.Vector, len(cols))
		if err := readRecordColumns(cr, cols, objects, []int32{tc.row}, vecs); err != nil {
			t.Fatal(err)
		}
		for _, p := range tc.read {
			if cr.reads[p] != 1 {
				t.Errorf("row %d: presence of %s read %d times, want once", tc.row, p, cr.reads[p])
			}
		}
		for _, p := range tc.not {
			if cr.reads[p] != 0 {
				t.Errorf("row %d: presence of %s read, want no read", tc.row, p)
			}
		}
		rb := newRecordBuilder(cols, vecs, "metadata")
		v, err := rb.build(0)
		if err != nil {
			t.Fatal(err)
		}
		want := metas[int(tc.row)%len(metas)]
		if got, w := string(appendBQJSON(nil, &v, true)), string(appendBQJSON(nil, &want, true)); got != w {
			t.Errorf("row %d: %s, want %s", tc.row, got, w)
		}
	}
}

// storeMetadataEvents appends n test events, a millisecond apart, whose
// metadata is meta(i), to the one shard of a new engine (closed when the
// test ends), and returns the shard, the events, and each event's
// metadata as the BigQuery JSON a record read gives, by timestamp.
func storeMetadataEvents(t *testing.T, n int, meta func(i int) event.Value) (*Shard, []event.Event, map[int64]string) {
	t.Helper()
	e := openTestEngine(t, vfs.NewMemFS(), nil)
	t.Cleanup(func() { e.Close() })
	s, err := e.Shard("src")
	if err != nil {
		t.Fatal(err)
	}
	evs := make([]event.Event, n)
	want := make(map[int64]string, n)
	for i := range evs {
		md := meta(i)
		evs[i] = testEvent(i, int64(1_700_000_000_000_000+i*1000))
		evs[i].Fields = event.ObjectValue(event.Member("metadata", md))
		want[evs[i].Timestamp] = string(appendBQJSON(nil, &md, true))
	}
	if err := s.Append(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	return s, evs, want
}
