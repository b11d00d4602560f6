package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
	"github.com/sediment/sediment/sql/scan"
)

// TestDerivedSearchCountsItsReads: a search of derived text counts what
// it reads (the message's chunk and the chunks it is built from) with the
// scan's other reads, and reads without keeping pages once they are past
// the pass's limit; a newest-first search with a limit over every block
// finds the rows a plain search of the messages finds.
func TestDerivedSearchCountsItsReads(t *testing.T) {
	const n = 40000
	evs := make([]event.Event, n)
	for i := range evs {
		path := fmt.Sprintf("/storage/v1/object/sign/documents/logo-%d.jpg", i*7919%100000)
		status := int64([]int{200, 201, 404}[i%3])
		evs[i] = event.Event{ID: fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i), Timestamp: 1_700_000_000_000_000 + int64(i)*1000,
			Message: fmt.Sprintf("GET | %d | https://x.supabase.co%s", status, path), HasMessage: true,
			Fields: event.ObjectValue(event.Member("status", event.IntValue(status)), event.Member("path", event.StringValue(path)))}
	}
	sn := smallPageSnapshot(t, evs, 1<<20)
	derived := 0
	for _, p := range sn.partList() {
		if p.seg != nil {
			rd := p.seg.r
			for b := 0; b < rd.NumBlocks(); b++ {
				if ci, ok := rd.Chunk(b, rd.Column("event_message", segment.TypeString)); ok && ci.Derived {
					derived++
				}
			}
		}
	}
	if derived < 10 {
		t.Fatalf("%d derived message chunks", derived)
	}
	search := func(needle string) int {
		msgs := scanMessages(t, sn, []scan.Predicate{{Path: "event_message", Type: vec.String, Op: scan.Contains, Args: []scan.Const{{Type: vec.String, Str: needle}}}}, 1000)
		for _, m := range msgs {
			if !strings.Contains(m, needle) {
				t.Errorf("row %q does not match", m)
			}
		}
		got := len(msgs)
		want := 0
		for _, ev := range evs {
			if strings.Contains(ev.Message, needle) {
				want++
			}
		}
		if got != want {
			t.Fatalf("%q: found %d rows, want %d", needle, got, want)
		}
		return got
	}
	if search("logo-246") == 0 || search("logo-2460000") != 0 {
		t.Fatal("wrong rows found")
	}
	var rd *segment.Reader
	for _, p := range sn.partList() {
		if p.seg != nil {
			rd = p.seg.r
		}
	}
	msg := rd.Column("event_message", segment.TypeString)
	refs, err := rd.DerivedRefs(0, msg)
	if err != nil || len(refs) == 0 {
		t.Fatalf("refs %v, %v", refs, err)
	}
	rows := rd.Block(0).Rows
	alone := &passReads{limit: 1 << 40}
	alone.add(rd, 0, msg, 0, rows, nil)
	br := &blockReader{r: rd, b: 0, pass: &passReads{limit: 1 << 40}}
	if searchPassDone(br, msg, 0, rows) {
		t.Fatal("a first search past the limit")
	}
	if got, min := br.pass.bytes.Load(), alone.bytes.Load(); got <= min {
		t.Fatalf("the search counted %d bytes, the message chunk alone %d", got, min)
	}
	br.pass.limit = br.pass.bytes.Load() + 1
	if !searchPassDone(br, msg, 0, rows) {
		t.Fatal("a search past the limit keeps pages")
	}
	if searchPassDone(&blockReader{r: rd, b: 0}, msg, 0, rows) {
		t.Fatal("a scan without a pass reads once")
	}
}
