package search

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sediment/sediment/internal/recovered"
	"github.com/sediment/sediment/sql/scan"
)

// explodingTable is a real table whose scans panic when opened.
type explodingTable struct{ scan.Table }

func (explodingTable) Open(context.Context, *scan.Request) (scan.Scan, error) {
	var m map[string]int
	m["scan"]++ // a bug: assignment to a nil map
	return nil, nil
}

// TestSearchPanicIsLoggedOnce: a panic under a search fails that search
// with a *recovered.Error and is logged once, with its stack.
func TestSearchPanicIsLoggedOnce(t *testing.T) {
	var logs bytes.Buffer
	s := New(Options{Now: func() time.Time { return fixtureNow }, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	sh := fixtureShard(t)
	sn := sh.Snapshot()
	defer sn.Release()
	tbl := explodingTable{sn.Table("fixture")}
	p, err := s.Prepare(context.Background(), tbl, Request{LQL: "upstream"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Run(context.Background(), tbl, p)
	if pe := recovered.As(err); pe == nil || !strings.Contains(pe.Error(), "nil map") {
		t.Fatalf("got %v, want the panic as the search's error", err)
	}
	out := logs.String()
	if strings.Count(out, "search panicked") != 1 || !strings.Contains(out, "panic_test.go") {
		t.Fatalf("want one log line with the stack:\n%s", out)
	}
	// The searcher goes on.
	if _, err := s.Search(context.Background(), sh, "fixture", Request{LQL: "upstream"}); err != nil {
		t.Fatal(err)
	}
}
