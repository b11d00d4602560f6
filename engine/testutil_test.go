package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
)

var testProjects = []string{"alpha", "bravo", "charlie"}

// testEvent builds a varied event: nested objects, an array of objects on
// some rows, a field whose type changes between rows, unicode, floats.
func testEvent(i int, ts int64) event.Event {
	status := []int64{200, 200, 200, 201, 404, 500}[i%6]
	meta := []event.Value{
		event.Member("request", event.ObjectValue(
			event.Member("method", event.StringValue([]string{"GET", "POST"}[i%2])),
			event.Member("path", event.StringValue(fmt.Sprintf("/rest/v1/t%d", i%7))),
			event.Member("headers", event.ObjectValue(event.Member("cf_connecting_ip", event.StringValue(fmt.Sprintf("10.0.%d.%d", i%5, i%250))))),
		)),
		event.Member("response", event.ObjectValue(event.Member("status_code", event.IntValue(status)))),
		event.Member("origin_time", event.FloatValue(float64(i)*1.5)),
	}
	if i%5 == 0 {
		meta = append(meta, event.Member("context", event.ArrayValue(
			event.ObjectValue(event.Member("host", event.StringValue("h"+fmt.Sprint(i%3))), event.Member("pid", event.IntValue(int64(i)))),
			event.ObjectValue(event.Member("host", event.StringValue("ü-host"))),
		)))
	}
	if i%4 == 0 {
		meta = append(meta, event.Member("level", event.IntValue(int64(i%3))))
	} else {
		meta = append(meta, event.Member("level", event.StringValue([]string{"info", "error", "warn"}[i%3])))
	}
	if i%9 == 0 {
		meta = append(meta, event.Member("cached", event.BoolValue(i%2 == 0)))
	}
	msg := ""
	if i%11 != 0 {
		msg = fmt.Sprintf("request %d %s done in %dms 日本", i, []string{"GET", "POST"}[i%2], i%97)
	}
	return event.Event{
		ID:         fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i),
		Timestamp:  ts,
		Message:    msg,
		HasMessage: i%11 != 0,
		Fields: event.ObjectValue(
			event.Member("project", event.StringValue(testProjects[i%3])),
			event.Member("metadata", event.ObjectValue(meta...)),
		),
	}
}

// canon sorts object members recursively, so that events compare equal
// regardless of member order.
func canon(v event.Value) event.Value {
	out := v
	if v.Kids != nil {
		out.Kids = make([]event.Value, len(v.Kids))
		for i := range v.Kids {
			out.Kids[i] = canon(v.Kids[i])
		}
		if v.Kind == event.Object {
			slices.SortFunc(out.Kids, func(a, b event.Value) int { return strings.Compare(a.Key, b.Key) })
		}
	}
	return out
}

func eventsEqual(a, b *event.Event) bool {
	return a.ID == b.ID && a.Timestamp == b.Timestamp && a.HasMessage == b.HasMessage &&
		a.Message == b.Message && event.Equal(canon(a.Fields), canon(b.Fields))
}

// readAll returns the shard's events keyed by id, failing on duplicates.
func readAll(t testing.TB, s *Shard) map[string]event.Event {
	t.Helper()
	sn := s.Snapshot()
	defer sn.Release()
	out := map[string]event.Event{}
	err := sn.ForEachEvent(func(e *event.Event) error {
		if _, dup := out[e.ID]; dup {
			return fmt.Errorf("event %s read twice", e.ID)
		}
		out[e.ID] = e.Clone()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func testOptions(fs vfs.FS) *Options {
	return &Options{FS: fs, DisableBackground: true, BlockRows: 64, PageBytes: 512,
		SegmentMaxRows: 1024, CompactionMinInputs: 2, HeadMaxRows: 1 << 30}
}

func openTestEngine(t testing.TB, fs vfs.FS, opts *Options) *Engine {
	t.Helper()
	if opts == nil {
		opts = testOptions(fs)
	}
	e, err := Open("/data", opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// checkClean runs the consistency check on an engine at the end of a test.
func checkClean(t testing.TB, e *Engine) {
	t.Helper()
	if err := e.Check(); err != nil {
		t.Fatalf("consistency check: %v", err)
	}
}
