package engine

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
)

// TestAppendBatchStoresWhatAppendStores: events encoded into a Batch one at
// a time, from buffers reused between events, are stored (and replayed
// from the log) exactly as Append stores them; the batch is reusable once
// AppendBatch returns.
func TestAppendBatchStoresWhatAppendStores(t *testing.T) {
	fs := vfs.NewMemFS()
	e := openTestEngine(t, fs, nil)
	s, _ := e.Shard(shardID)
	want := map[string]event.Event{}
	b := e.NewBatch()
	for round := 0; round < 3; round++ {
		b.Reset()
		for i := 0; i < 50; i++ {
			ev := testEvent(round*50+i, int64(1_700_000_000_000_000+round*50+i))
			want[ev.ID] = ev
			// The batch copies: clobber what the event points to.
			scratch := ev.Clone()
			b.Add(&scratch)
			scratch.Fields.Kids[0].Key = "clobbered"
		}
		if b.Len() != 50 || b.Bytes() <= 0 {
			t.Fatalf("batch holds %d events, %d bytes", b.Len(), b.Bytes())
		}
		if err := s.AppendBatch(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	assertEvents(t, s, want)
	e.Close()
	// Replayed from the log.
	e = openTestEngine(t, fs, nil)
	defer e.Close()
	s, _ = e.Shard(shardID)
	assertEvents(t, s, want)
}

// TestAppendBatchRefusesForeignBatch: a batch made for an engine with
// another field cap is refused, not stored uncapped.
func TestAppendBatchRefusesForeignBatch(t *testing.T) {
	e := openTestEngine(t, vfs.NewMemFS(), nil)
	defer e.Close()
	opts := testOptions(vfs.NewMemFS())
	opts.MaxEventFields = 5
	other := openTestEngine(t, vfs.NewMemFS(), opts)
	defer other.Close()
	s, _ := e.Shard(shardID)
	b := other.NewBatch()
	ev := testEvent(1, 1)
	b.Add(&ev)
	if err := s.AppendBatch(ctx, b); !errors.Is(err, errForeignBatch) {
		t.Fatalf("foreign batch: %v", err)
	}
	if n := len(readAll(t, s)); n != 0 {
		t.Fatalf("%d events stored", n)
	}
}

// TestBatchCapsFields: Add cuts an event to MaxEventFields, the cut is
// counted when the batch is stored, and the caller's event is unchanged.
func TestBatchCapsFields(t *testing.T) {
	opts := testOptions(vfs.NewMemFS())
	opts.MaxEventFields = 4
	e := openTestEngine(t, vfs.NewMemFS(), opts)
	defer e.Close()
	s, _ := e.Shard(shardID)
	var kids []event.Value
	for i := range 10 {
		kids = append(kids, event.Member(fmt.Sprintf("f%d", i), event.IntValue(int64(i))))
	}
	wide := event.Event{ID: "wide", Timestamp: 5, Fields: event.ObjectValue(kids...)}
	b := e.NewBatch()
	b.Add(&wide)
	if len(wide.Fields.Kids) != 10 {
		t.Fatal("Add changed the caller's event")
	}
	if err := s.AppendBatch(ctx, b); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, s)["wide"]
	if n := len(got.Fields.Kids); n != 4 {
		t.Fatalf("stored %d fields, want 4", n)
	}
	if d := s.FieldDrops(); d.EventsOverCap != 1 || d.FieldsOverCap != 6 {
		t.Fatalf("field drops %+v", d)
	}
}

// TestAppendBatchPublishes: subscribers get the events of a batch.
func TestAppendBatchPublishes(t *testing.T) {
	e := openTestEngine(t, vfs.NewMemFS(), nil)
	defer e.Close()
	s, _ := e.Shard(shardID)
	sub := s.Subscribe(4)
	defer sub.Close()
	b := e.NewBatch()
	evs := []event.Event{testEvent(1, 10), testEvent(2, 20)}
	for i := range evs {
		b.Add(&evs[i])
	}
	if err := s.AppendBatch(ctx, b); err != nil {
		t.Fatal(err)
	}
	got := <-sub.C
	if len(got) != 2 || !eventsEqual(&got[0], &evs[0]) || !eventsEqual(&got[1], &evs[1]) {
		t.Fatalf("subscriber got %+v", got)
	}
}

// TestLargeBatchIsSeveralRecords: a batch larger than a chunk is logged as
// several records, written together; replay reads every event back.
func TestLargeBatchIsSeveralRecords(t *testing.T) {
	fs := vfs.NewMemFS()
	e := openTestEngine(t, fs, nil)
	s, _ := e.Shard(shardID)
	b := e.NewBatch()
	want := map[string]event.Event{}
	pad := make([]byte, 3000)
	for i := range pad {
		pad[i] = 'a' + byte(i%26)
	}
	for i := 0; b.Bytes() < 3*batchChunkBytes; i++ {
		ev := testEvent(i, int64(1_700_000_000_000_000+i))
		ev.Message, ev.HasMessage = string(pad), true
		want[ev.ID] = ev
		b.Add(&ev)
	}
	if err := s.AppendBatch(ctx, b); err != nil {
		t.Fatal(err)
	}
	if len(b.chunks) < 3 {
		t.Fatalf("%d chunks for %d bytes", len(b.chunks), b.Bytes())
	}
	records := 0
	data, err := vfs.ReadFile(fs, walPath(t, fs))
	if err != nil {
		t.Fatal(err)
	}
	for off := walHeaderSize; off < len(data); records++ {
		_, n, err := decodeWALRecord(data[off:])
		if err != nil {
			t.Fatal(err)
		}
		off += n
	}
	if records != len(b.chunks) {
		t.Fatalf("%d records in the log, want one per chunk (%d)", records, len(b.chunks))
	}
	e.Close()
	e = openTestEngine(t, fs, nil)
	defer e.Close()
	s, _ = e.Shard(shardID)
	assertEvents(t, s, want)
}

// TestLogRecordsOfSplitRequests: the records the committer writes for a
// head's part of a group are, in order, whole requests' own records and
// records of the ranges of split requests, each holding exactly its
// events; ranges built one after another (their scratch growing) keep
// their bytes.
func TestLogRecordsOfSplitRequests(t *testing.T) {
	e := openTestEngine(t, vfs.NewMemFS(), nil)
	defer e.Close()
	reqs := make([]*appendReq, 3)
	next := 0
	for i := range reqs {
		b := e.NewBatch()
		for range 40 {
			ev := testEvent(next, int64(1_700_000_000_000_000+next))
			next++
			b.Add(&ev)
		}
		b.rec = b.appendRecords(nil)
		reqs[i] = &appendReq{rec: b.rec, batch: b}
	}
	plan := &stagePlan{pieces: [][]eventRange{{
		{reqs[0], 0, 40}, {reqs[1], 0, 13}, {reqs[2], 0, 40}, {reqs[1], 13, 29}, {reqs[1], 29, 40},
	}}}
	recs, _ := plan.logRecords(nil, nil, 0)
	if len(recs) != len(plan.pieces[0]) {
		t.Fatalf("%d records for %d pieces", len(recs), len(plan.pieces[0]))
	}
	for k, er := range plan.pieces[0] {
		evs, n, err := decodeWALRecord(recs[k])
		if err != nil || n != len(recs[k]) {
			t.Fatalf("record %d: %v (%d of %d bytes)", k, err, n, len(recs[k]))
		}
		if len(evs) != er.to-er.from {
			t.Fatalf("record %d holds %d events, want %d", k, len(evs), er.to-er.from)
		}
		for j := range evs {
			want, _, err := event.DecodeEvent(er.req.batch.Event(er.from + j))
			if err != nil {
				t.Fatal(err)
			}
			if evs[j].ID != want.ID || evs[j].Timestamp != want.Timestamp {
				t.Fatalf("record %d event %d is %s, want %s", k, j, evs[j].ID, want.ID)
			}
		}
	}
}
