package engine

import (
	"testing"
	"time"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
)

// agedEvent is an event of the given age with one field of its own.
func agedEvent(i int, now time.Time, age time.Duration, field string) event.Event {
	ev := testEvent(i, now.Add(-age).UnixMicro()+int64(i))
	ev.Fields.Kids = append(ev.Fields.Kids, event.Member(field, event.IntValue(int64(i))))
	return ev
}

// TestExpiredRowsShowNowhere stores events past a one-day retention in
// three places retention has not reached yet: a segment wholly expired, a
// segment shared with recent events (its expired blocks), and the head
// shared with recent events. The schema lists none of their own fields,
// Info counts and bounds only the recent events (and says how many
// expired ones are still stored), and a subscriber (a tail) receives only
// the recent events of a batch that mixes both.
func TestExpiredRowsShowNowhere(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	opts := testOptions(vfs.NewMemFS())
	opts.Now = func() time.Time { return now }
	e := openTestEngine(t, opts.FS, opts)
	defer e.Close()
	s, _ := e.Shard(shardID)
	const old = 3 * 24 * time.Hour
	appendAll := func(evs []event.Event) {
		t.Helper()
		if err := s.Append(ctx, evs); err != nil {
			t.Fatal(err)
		}
	}
	var evs []event.Event
	for i := range 64 { // a segment of expired events only
		evs = append(evs, agedEvent(i, now, old, "in_expired_segment"))
	}
	appendAll(evs)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	evs = evs[:0]
	for i := 100; i < 228; i++ { // one segment: two expired blocks, two recent
		if i < 164 {
			evs = append(evs, agedEvent(i, now, old, "in_expired_blocks"))
		} else {
			evs = append(evs, agedEvent(i, now, time.Hour, "recent_segment_field"))
		}
	}
	appendAll(evs)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	sub := s.Subscribe(4)
	defer sub.Close()
	appendAll([]event.Event{ // the head: expired and recent events
		agedEvent(300, now, old, "in_expired_head_rows"),
		agedEvent(301, now, 30*time.Minute, "recent_head_field"),
		agedEvent(302, now, old, "in_expired_head_rows"),
	})
	const recent = 64 + 1
	s.SetRetentionDays(1)

	sn := s.Snapshot()
	schema := sn.Schema()
	sn.Release()
	for _, f := range []string{"in_expired_segment", "in_expired_blocks", "in_expired_head_rows"} {
		if schema.Fields[f] != nil {
			t.Errorf("the schema lists %s, a field of expired events only", f)
		}
	}
	for _, f := range []string{"recent_segment_field", "recent_head_field", "project"} {
		if schema.Fields[f] == nil {
			t.Errorf("the schema misses %s", f)
		}
	}

	in := s.Info()
	cutoff := now.Add(-24 * time.Hour).UnixMicro()
	if in.SegmentRows+in.HeadRows != recent || in.HeadRows != 1 || in.ExpiredRows != 64+64+2 {
		t.Errorf("Info counts %d segment rows, %d head rows, %d expired; want %d recent (1 in the head), %d expired",
			in.SegmentRows, in.HeadRows, in.ExpiredRows, recent, 64+64+2)
	}
	if in.MinTime < cutoff || in.MinTime != now.Add(-time.Hour).UnixMicro()+164 || in.MaxTime != now.Add(-30*time.Minute).UnixMicro()+301 {
		t.Errorf("Info bounds %s .. %s; want the recent events' (cutoff %s)",
			time.UnixMicro(in.MinTime).UTC(), time.UnixMicro(in.MaxTime).UTC(), time.UnixMicro(cutoff).UTC())
	}
	if n := countScan(t, s); n != recent {
		t.Errorf("a scan counts %d, want %d", n, recent)
	}

	appendAll([]event.Event{agedEvent(400, now, old, "x"), agedEvent(401, now, time.Minute, "y")})
	<-sub.C // the batch appended before the retention was set
	got := <-sub.C
	if len(got) != 1 || got[0].ID != agedEvent(401, now, time.Minute, "y").ID {
		var ids []string
		for _, g := range got {
			ids = append(ids, g.ID)
		}
		t.Errorf("the subscriber received %v, want only the recent event", ids)
	}
}
