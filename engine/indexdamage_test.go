package engine

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/sql/scan"
)

// TestIndexDamageIsRemembered flips a bit in a segment's index. The query
// that finds it answers in full and the damage is recorded beside the
// segment; after a restart the segment is known to have a damaged index
// before any query (none reads the index again, none logs the damage as
// new), fsck (a read-only open) reports it, and the compaction that
// rebuilds the index removes the record.
func TestIndexDamageIsRemembered(t *testing.T) {
	clean, path, truth := damageFixture(t)
	rg := regionsOf(t, clean, path)
	good, _ := vfs.ReadFile(clean, path)
	id, _ := parseSeqName(filepath.Base(path), ".seg")
	marker := filepath.Join(filepath.Dir(path), indexDamageName(id))
	filtered := scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime,
		Filters: []scan.Predicate{{Path: "metadata.response.status_code", Type: vec.Int64, Op: scan.Eq, Args: []scan.Const{{Type: vec.Int64, Int: 500}}}}}
	want := expected(truth, filtered)
	const foundMsg = "segment index damaged"

	// The first flip in the index that the indexed query finds.
	var pristine *vfs.MemFS
	var e *Engine
	var s *Shard
	var logs logBuffer
	for off := rg.indexFrom; off < rg.indexTo && e == nil; off += max((rg.indexTo-rg.indexFrom)/64, 1) {
		pristine = clean.CrashClone()
		data := append([]byte(nil), good...)
		data[off] ^= 0x10
		writeFile(t, pristine, path, data)
		logs = logBuffer{}
		opts := testOptions(pristine)
		opts.Logger = logs.logger()
		e = openTestEngine(t, pristine, opts)
		s, _ = e.Shard(shardID)
		if a := queryShard(s, filtered); a.err != nil || len(a.rows) != len(want) {
			t.Fatalf("query over a damaged index: %d rows of %d, %v", len(a.rows), len(want), a.err)
		}
		if s.Info().DamagedIndexes == 0 {
			e.Close()
			e = nil
		}
	}
	if e == nil {
		t.Fatal("no flip in the index was found by the indexed query")
	}
	if !strings.Contains(logs.String(), foundMsg) {
		t.Fatal("the index damage was not logged")
	}
	if !pristine.Exists(marker) {
		t.Fatal("the damaged index is not recorded on disk")
	}
	e.Close()

	// fsck: a read-only open reports it.
	ro := testOptions(pristine.CrashClone())
	ro.ReadOnly = true
	re, err := Open("/data", ro)
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := re.Shard(shardID)
	var ide *IndexDamagedError
	found := false
	for _, p := range rs.CheckProblems() {
		if errors.As(p, &ide) && ide.File == filepath.Join("segments", segName(id)) {
			found = true
		}
	}
	re.Close()
	if !found {
		t.Fatal("a read-only open (fsck) does not report the recorded index damage")
	}

	var logs2 logBuffer
	opts2 := testOptions(pristine)
	opts2.Logger = logs2.logger()
	e2 := openTestEngine(t, pristine, opts2)
	defer e2.Close()
	s2, _ := e2.Shard(shardID)
	sn := s2.Snapshot()
	known := false
	for _, sg := range sn.segs {
		if sg.id == id {
			known = sg.ixBroken.Load()
		}
	}
	sn.Release()
	if !known {
		t.Fatal("after a restart the damaged index is not known before a query")
	}
	if a := queryShard(s2, filtered); a.err != nil || len(a.rows) != len(want) || len(a.warnings) != 0 {
		t.Fatalf("query after the restart: %d rows of %d, %v %v", len(a.rows), len(want), a.warnings, a.err)
	}
	if strings.Contains(logs2.String(), foundMsg) || s2.Info().DamagedIndexes != 0 {
		t.Fatal("after a restart the index was read again and its damage found again")
	}
	if n, err := s2.Compact(); err != nil || n != 1 {
		t.Fatalf("compaction rebuilding the index: %d, %v", n, err)
	}
	if pristine.Exists(marker) {
		t.Fatal("the record outlived the segment it describes")
	}
	if a := queryShard(s2, filtered); a.err != nil || len(a.rows) != len(want) {
		t.Fatalf("query after the rebuild: %d rows of %d, %v", len(a.rows), len(want), a.err)
	}
	checkClean(t, e2)
}
