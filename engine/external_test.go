package engine

import (
	"strings"
	"testing"

	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
	"github.com/sediment/sediment/sql/scan"
)

// fixedExternal hands every snapshot the same segment files and gaps.
type fixedExternal struct {
	fs    vfs.FS
	files []string
	gaps  []string
	open  int // readers not yet released
}

func (f *fixedExternal) Parts(shard string) ([]ExternalPart, []string) {
	var parts []ExternalPart
	for _, p := range f.files {
		file, err := f.fs.Open(p)
		if err != nil {
			panic(err)
		}
		r, err := segment.Open(file, p)
		if err != nil {
			panic(err)
		}
		f.open++
		parts = append(parts, ExternalPart{Name: p, Reader: r, Release: func() { f.open--; r.Close() }})
	}
	return parts, f.gaps
}

// TestExternalParts: an ingest node's sealed segment and its head, sent
// as segment files (HeadParts), are scanned by a shard with no data
// of its own through Options.External exactly as the ingest node's own
// shard scans them; a gap reaches the answer's warnings, or fails a query
// that has no place for them.
func TestExternalParts(t *testing.T) {
	fs := vfs.NewMemFS()
	ing, err := Open("/ingest", &Options{FS: fs, DisableBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ing.Close()
	sh, _ := ing.Shard("src")
	truth := testEvents(0, 300, 1_700_000_000_000_000)
	if err := sh.Append(ctx, truth[:200]); err != nil {
		t.Fatal(err)
	}
	if err := sh.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := sh.Append(ctx, truth[200:]); err != nil {
		t.Fatal(err)
	}
	sn := sh.Snapshot()
	own := sn.OwnSegments()
	heads, err := sn.HeadParts()
	sn.Release()
	if err != nil || len(own) != 1 || len(heads) != 1 {
		t.Fatalf("own %v, %d head parts, %v", own, len(heads), err)
	}
	if err := writeSent(fs, "/sent/head.seg", heads[0].Data); err != nil {
		t.Fatal(err)
	}
	if names, _ := fs.List("/ingest/sources/src/segments"); len(names) != 1 {
		t.Fatalf("encoding the head wrote into the data directory: %v", names)
	}

	ext := &fixedExternal{fs: fs, files: []string{own[0].Path, "/sent/head.seg"}}
	q, err := Open("/query", &Options{FS: fs, DisableBackground: true, External: ext})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	qs, _ := q.Shard("src")
	req := scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime}
	a := queryShard(qs, req)
	want := expected(truth, req)
	if missing := checkHonest(t, "query node", a, want); len(missing) > 0 || len(a.warnings) > 0 || a.count != 300 {
		t.Fatalf("missing %d, count %d, warnings %v", len(missing), a.count, a.warnings)
	}
	if ext.open != 0 {
		t.Fatalf("%d external readers not released", ext.open)
	}

	// An ingest node that did not answer: the answer says what it misses.
	ext.files, ext.gaps = ext.files[:1], []string{"ingest node http://a:4000 did not answer (connection refused): events it has not published"}
	a = queryShard(qs, req)
	if missing := checkHonest(t, "partial", a, want); len(missing) != 100 || len(a.warnings) != 1 || !strings.Contains(a.warnings[0], "http://a:4000") {
		t.Fatalf("partial answer: missing %d, warnings %v", len(missing), a.warnings)
	}
	// Without a warnings collector the query fails, saying why.
	sn = qs.Snapshot()
	defer sn.Release()
	req.Columns = damageCols
	sc, err := sn.Table("edge_logs").Open(ctx, &req)
	if err != nil {
		t.Fatal(err)
	}
	var perr error
	for _, u := range sc.Units() {
		if _, err := u.Count(ctx); err != nil {
			perr = err
		}
	}
	if pe, ok := perr.(*PartialError); !ok || !strings.Contains(pe.Error(), "did not answer") {
		t.Fatalf("without warnings: %v", perr)
	}
	// The query node's directory holds no data of its own.
	if names, _ := fs.List("/query/sources/src/segments"); len(names) != 0 {
		t.Fatalf("query node segments: %v", names)
	}
}

func writeSent(fs vfs.FS, p string, b []byte) error {
	if err := fs.MkdirAll("/sent"); err != nil {
		return err
	}
	return vfs.WriteFileAtomic(fs, p, b)
}
