package search

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sediment/sediment/event"
)

func tailDocs(from, n int) []string {
	docs := make([]string, n)
	for i := range docs {
		docs[i] = fixtureRow(from + i).json()
	}
	return docs
}

// receive reads one batch or fails after a while.
func receive(t *testing.T, tl *Tail) []event.Event {
	t.Helper()
	select {
	case b, ok := <-tl.Batches():
		if !ok {
			t.Fatal("tail closed")
		}
		return b
	case <-time.After(10 * time.Second):
		t.Fatal("no batch delivered")
	}
	return nil
}

func TestTailFilters(t *testing.T) {
	sh, err := openEngine(t).Shard("fixture")
	if err != nil {
		t.Fatal(err)
	}
	// Events stored before the tail starts are not delivered.
	if err := sh.Append(context.Background(), parseEvents(t, tailDocs(0, 10), fixtureNow)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		lql  string
		pred func(r row) bool
	}{
		{"", func(row) bool { return true }},
		{"m.response.status_code:500", func(r row) bool { return r.status == 500 }},
		{"m.response.status_code:>=404 -project:alpha", func(r row) bool { return r.status >= 404 && r.project != "alpha" }},
		{"~upstream s:m.level c:count(*)", func(r row) bool { return r.status == 500 }},
		{"POST m.level:NULL", func(r row) bool { return r.method == "POST" && r.level == "" }},
		// t: clauses do not restrict a tail.
		{"t:last@1m m.request.method:GET", func(r row) bool { return r.method == "GET" }},
	} {
		t.Run(tc.lql, func(t *testing.T) {
			m, err := ParseTailFilter(tc.lql, fixtureNow)
			if err != nil {
				t.Fatal(err)
			}
			tl := NewTail(sh, m, 16)
			defer tl.Close()
			const from, n = 10, 100
			if err := sh.Append(context.Background(), parseEvents(t, tailDocs(from, n), fixtureNow)); err != nil {
				t.Fatal(err)
			}
			var got []string
			for seen := 0; seen < n; {
				b := receive(t, tl)
				seen += len(b)
				tl.Each(b, func(e *event.Event) error {
					got = append(got, e.ID)
					return nil
				})
			}
			var exp []string
			for i := from; i < from+n; i++ {
				if r := fixtureRow(i); tc.pred(r) {
					exp = append(exp, r.id)
				}
			}
			if !slices.Equal(got, exp) {
				t.Fatalf("got %v\nwant %v", got, exp)
			}
			if d := tl.Dropped(); d != 0 {
				t.Fatalf("dropped %d", d)
			}
		})
	}
}

func TestTailFilterErrors(t *testing.T) {
	for _, q := range []string{`"open`, "m.x:>NULL", "~(", "c:nope(x)"} {
		_, err := ParseTailFilter(q, fixtureNow)
		var re *RequestError
		if !errors.As(err, &re) {
			t.Errorf("%q: got %v, want a RequestError", q, err)
		}
	}
}

// TestTailDrops: a reader that does not keep up loses whole batches, the
// writer is not held up, and Dropped reports each loss once.
func TestTailDrops(t *testing.T) {
	sh, err := openEngine(t).Shard("fixture")
	if err != nil {
		t.Fatal(err)
	}
	tl := NewTail(sh, nil, 2)
	defer tl.Close()
	for b := 0; b < 5; b++ {
		// Each Append commits as one group: one batch for the tail.
		if err := sh.Append(context.Background(), parseEvents(t, tailDocs(b*10, 10), fixtureNow)); err != nil {
			t.Fatal(err)
		}
	}
	if d := tl.Dropped(); d != 30 {
		t.Fatalf("dropped %d, want 30", d)
	}
	if d := tl.Dropped(); d != 0 {
		t.Fatalf("dropped again %d", d)
	}
	first := receive(t, tl)
	if first[0].ID != fixtureRow(0).id || len(first) != 10 {
		t.Fatalf("first batch starts with %s (%d events)", first[0].ID, len(first))
	}
	// Each stops at the callback's error.
	calls := 0
	stop := fmt.Errorf("stop")
	if err := tl.Each(first, func(*event.Event) error { calls++; return stop }); err != stop || calls != 1 {
		t.Fatalf("Each: %v after %d calls", err, calls)
	}
	receive(t, tl)
	tl.Close()
	if _, ok := <-tl.Batches(); ok {
		t.Fatal("batches still open after Close")
	}
	tl.Close() // twice is fine
}

// TestTailEndsWithShard: closing the engine closes every tail.
func TestTailEndsWithShard(t *testing.T) {
	e := openEngine(t)
	sh, err := e.Shard("fixture")
	if err != nil {
		t.Fatal(err)
	}
	tl := NewTail(sh, nil, 4)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case _, ok := <-tl.Batches():
		if ok {
			t.Fatal("unexpected batch")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("tail not closed by the engine")
	}
}
