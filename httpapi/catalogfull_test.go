package httpapi

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/internal/vfs"
)

// TestCatalogChangeOnFullDisk creates a source while the disk cannot hold
// the catalog's new version: the API answers 507 with Retry-After and a
// message saying nothing changed (not 500), the catalog files and the
// source list are as they were, no temporary file is left taking space,
// and once space is freed the same request succeeds.
func TestCatalogChangeOnFullDisk(t *testing.T) {
	mem := vfs.NewMemFS()
	ts := startServer(t, serverConfig{
		engine:  engine.Options{FS: mem},
		catalog: &catalog.Options{FS: mem},
	})
	create := func() response {
		return ts.do("POST", "/api/sources", []byte(`{"name":"made.on.a.full.disk"}`), withKey(privKey, jsonCT...)...)
	}
	// One change first, so that the previous version exists too.
	ts.do("POST", "/api/sources", []byte(`{"name":"before.the.disk.filled"}`), withKey(privKey, jsonCT...)...).expect(t, 201, "")
	files := func() map[string][]byte {
		out := map[string][]byte{}
		names, _ := mem.List(ts.dir)
		for _, n := range names {
			if strings.HasPrefix(n, catalog.FileName) {
				b, err := vfs.ReadFile(mem, filepath.Join(ts.dir, n))
				if err != nil {
					t.Fatal(err)
				}
				out[n] = b
			}
		}
		return out
	}
	before := files()
	if len(before) != 2 {
		t.Fatalf("catalog files before: %d", len(before))
	}
	list := ts.do("GET", "/api/sources", nil, withKey(privKey)...)
	list.expect(t, 200, "")

	u, _ := mem.DiskUsage("/")
	mem.SetCapacity(u.Total - u.Free + 100)
	r := create()
	if r.status != 507 || r.header.Get("Retry-After") == "" || !strings.Contains(r.body, `"error":"Insufficient Storage`) ||
		!strings.Contains(r.body, "not saved") {
		t.Fatalf("source created on a full disk: %d retry-after %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	after := files()
	if len(after) != len(before) {
		t.Fatalf("catalog files on a full disk: %d, were %d (a temporary file left?)", len(after), len(before))
	}
	for n, b := range before {
		if !bytes.Equal(after[n], b) {
			t.Fatalf("%s changed by a refused change", n)
		}
	}
	ts.do("GET", "/api/sources", nil, withKey(privKey)...).expect(t, 200, list.body)

	mem.SetCapacity(0) // space freed
	create().expect(t, 201, "")
	if !strings.Contains(ts.do("GET", "/api/sources", nil, withKey(privKey)...).body, "made.on.a.full.disk") {
		t.Fatal("the source created once space was back is not listed")
	}
}
