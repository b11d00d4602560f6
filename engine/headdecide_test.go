package engine

import (
	"fmt"
	"testing"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/sql/scan"
)

// TestHeadChunkDecidedBySummary: a head chunk whose rows all hold a value
// of the filtered column, with only dictionary codes the filter accepts,
// passes that filter without its rows being read (and IS NOT NULL the
// same with a value in every row); chunks with other codes or a missing
// value are evaluated. Answers and counts equal the reference either way.
func TestHeadChunkDecidedBySummary(t *testing.T) {
	const chunk = 64
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.HeadChunkRows = chunk
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ := e.Shard(shardID)
	base := int64(1_700_000_000_000_000)
	var all []event.Event
	for i := 0; i < 3*chunk; i++ {
		// Chunk 0: project alpha, metadata and a level everywhere. Chunk
		// 1: alpha and bravo. Chunk 2: alpha, no metadata in every
		// fifth row.
		project := "alpha"
		if i/chunk == 1 && i%2 == 1 {
			project = "bravo"
		}
		members := []event.Value{event.Member("project", event.StringValue(project))}
		if i/chunk != 2 || i%5 != 0 {
			members = append(members, event.Member("metadata", event.ObjectValue(
				event.Member("level", event.StringValue([]string{"info", "warn"}[i%2])))))
		}
		all = append(all, event.Event{ID: fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i), Timestamp: base + int64(i)*1000,
			Fields: event.ObjectValue(members...)})
	}
	if err := s.Append(ctx, all); err != nil {
		t.Fatal(err)
	}
	alpha := scan.Predicate{Path: "project", Type: vec.String, Op: scan.Eq, Args: []scan.Const{str("alpha")}}
	// NOT IN: chunks 0 and 2 are pruned (no row passes), chunk 1 read.
	notAlpha := scan.Predicate{Path: "project", Type: vec.String, Op: scan.In, Not: true, Args: []scan.Const{str("alpha")}}
	hasMeta := scan.Predicate{Path: "metadata", Type: vec.RowRef, Op: scan.IsNotNull}
	hasLevel := scan.Predicate{Path: "metadata.level", Type: vec.String, Op: scan.IsNotNull}
	cases := []struct {
		name    string
		filters []scan.Predicate
		decided []bool // per chunk: every filter decided by the summary
	}{
		{"project", []scan.Predicate{alpha}, []bool{true, false, true}},
		{"not project", []scan.Predicate{notAlpha}, []bool{false}},
		{"metadata present", []scan.Predicate{hasMeta}, []bool{true, true, false}},
		{"level present", []scan.Predicate{hasLevel}, []bool{true, true, false}},
		{"project and metadata", []scan.Predicate{alpha, hasMeta}, []bool{true, false, false}},
	}
	for _, c := range cases {
		checkScan(t, s, all, c.name, c.filters, 0, 0)
		checkScan(t, s, all, c.name+" newest 10", c.filters, 0, 10)
		sn := s.Snapshot()
		sc, err := sn.Table("test").Open(ctx, &scan.Request{Columns: []scan.Column{{Path: "id", Type: vec.String}},
			Filters: c.filters, TimeMin: scan.MinTime, TimeMax: scan.MaxTime})
		if err != nil {
			t.Fatal(err)
		}
		var decided []bool
		for _, u := range sc.Units() {
			hu, ok := u.(*headUnit)
			if !ok {
				t.Fatalf("%s: a unit of type %T", c.name, u)
			}
			decided = append(decided, hu.allDone())
		}
		if fmt.Sprint(decided) != fmt.Sprint(c.decided) {
			t.Errorf("%s: chunks decided by their summary %v, want %v", c.name, decided, c.decided)
		}
		sc.Close()
		sn.Release()
	}
}
