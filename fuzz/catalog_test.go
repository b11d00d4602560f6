package fuzz

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/internal/vfs"
)

// FuzzCatalogFile: any bytes as catalog.json, opened read-only as fsck
// does. The open must succeed or fail with an error wrapping
// catalog.ErrCorrupt, never panic, change nothing, and allocate in
// proportion to the file. Seeded with a format 2 file (as the server
// writes it), the format 1 fixture and small variants.
func FuzzCatalogFile(f *testing.F) {
	mem := vfs.NewMemFS()
	c, err := catalog.Open("/data", &catalog.Options{FS: mem})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := c.SeedSupabase(); err != nil {
		f.Fatal(err)
	}
	v2, err := vfs.ReadFile(mem, "/data/"+catalog.FileName)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(v2)
	if v1, err := os.ReadFile("../catalog/testdata/catalog-v1.json"); err == nil {
		f.Add(v1)
	}
	f.Add([]byte(`{"format":2,"checksum":"crc32c:00000000","catalog":{}}`))
	f.Add([]byte(`{"format":1,"sources":[null]}`))
	f.Add([]byte(`{"catalog":{},"format":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxInput {
			t.Skip()
		}
		fs := vfs.NewMemFS()
		if err := fs.MkdirAll("/d"); err != nil {
			t.Fatal(err)
		}
		if err := vfs.WriteFileAtomic(fs, "/d/"+catalog.FileName, data); err != nil {
			t.Fatal(err)
		}
		checkAlloc(t, allocLimit(len(data)), func() {
			_, err := catalog.Open("/d", &catalog.Options{FS: fs, ReadOnly: true})
			if err != nil && !errors.Is(err, catalog.ErrCorrupt) {
				t.Fatalf("error of the wrong kind: %v", err)
			}
		})
		if after, _ := vfs.ReadFile(fs, "/d/"+catalog.FileName); !bytes.Equal(after, data) || fs.Exists("/d/"+catalog.PrevFileName) {
			t.Fatal("a read-only open changed the files")
		}
	})
}
