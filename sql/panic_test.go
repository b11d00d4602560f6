package sql_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/internal/recovered"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql"
	"github.com/sediment/sediment/sql/parser"
	"github.com/sediment/sediment/sql/scan"
)

// A bug inside a query (here: a table that panics) must fail that query
// with an error carrying the stack, whether it panics on the query's own
// goroutine or on a scan worker, and never take the process down.

type panickyTable struct {
	scan.Table
	where string // "open" or "read"
}

func (t panickyTable) Open(ctx context.Context, req *scan.Request) (scan.Scan, error) {
	if t.where == "open" {
		panicInOpen()
	}
	sc, err := t.Table.Open(ctx, req)
	if err != nil {
		return nil, err
	}
	return panickyScan{sc}, nil
}

func panicInOpen() { panic("table open exploded") }

type panickyScan struct{ scan.Scan }

func (s panickyScan) Units() []scan.Unit {
	us := s.Scan.Units()
	out := make([]scan.Unit, len(us))
	for i, u := range us {
		out[i] = panickyUnit{u}
	}
	return out
}

type panickyUnit struct{ scan.Unit }

func (u panickyUnit) Read(ctx context.Context, emit func(*vec.Batch) error) error {
	return u.Unit.Read(ctx, func(b *vec.Batch) error {
		var empty []int64
		_ = empty[len(b.Cols)] // index out of range, on a scan worker
		return emit(b)
	})
}

func (u panickyUnit) Count(ctx context.Context) (int64, error) {
	var empty []int64
	return empty[1], nil
}

type panickyCatalog struct {
	db    *testDB
	where string
	snaps []*engine.Snapshot
}

func (c *panickyCatalog) Table(name string) (scan.Table, error) {
	sn := c.db.sources[name].Snapshot()
	c.snaps = append(c.snaps, sn)
	return panickyTable{sn.Table(name), c.where}, nil
}

func TestPanicFailsTheQueryWithItsStack(t *testing.T) {
	db := supabaseDB(t)
	for _, tc := range []struct{ where, query, frame string }{
		{"open", "select id from `cloudflare.logs.prod`", "panicInOpen"},
		{"read", "select id from `cloudflare.logs.prod` where id > 'e'", "panickyUnit.Read"},
		{"read", "select count(*) from `cloudflare.logs.prod`", "panickyUnit.Count"},
	} {
		t.Run(tc.where+"/"+tc.frame, func(t *testing.T) {
			pq, err := parser.Validate(tc.query, parser.ValidateOptions{KnownSource: func(string) bool { return true }})
			if err != nil {
				t.Fatal(err)
			}
			cat := &panickyCatalog{db: db, where: tc.where}
			defer func() {
				for _, s := range cat.snaps {
					s.Release()
				}
			}()
			_, err = sql.Run(context.Background(), pq, cat, sql.Options{Now: fixedNow, Workers: 2})
			pe := recovered.As(err)
			if pe == nil {
				t.Fatalf("got %v, want a recovered panic", err)
			}
			if !strings.Contains(string(pe.Stack), tc.frame) {
				t.Errorf("stack does not show %s:\n%s", tc.frame, pe.Stack)
			}
		})
	}
}
