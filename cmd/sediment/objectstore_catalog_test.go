package main

import (
	"testing"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/objstore"
)

// TestSharedCatalogLostAnswer: the store carries out a catalog write but
// its answer is lost (the request timed out after the store acted); the
// change is retried, finds itself there, and the source exists once, in
// the store and on every node.
func TestSharedCatalogLostAnswer(t *testing.T) {
	store := objstore.NewMemStore(nil)
	fs := vfs.NewMemFS()
	a, err := catalog.Open("/a", &catalog.Options{FS: fs, Shared: sharedCatalog{store: store}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.SyncShared(); err != nil {
		t.Fatal(err)
	}
	// The update reads the catalog (call 1), then writes it (call 2):
	// the write happens, its answer is lost.
	store.LoseAnswer(2)
	src, err := a.CreateSource(catalog.SourceParams{Name: ptrTo("once.only")})
	if err != nil {
		t.Fatalf("create with a lost answer: %v", err)
	}
	b, err := catalog.Open("/b", &catalog.Options{FS: fs, Shared: sharedCatalog{store: store}})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.SyncShared(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*catalog.Catalog{a, b} {
		n := 0
		for _, s := range c.Sources() {
			if s.Name == "once.only" {
				n++
				if s.Token != src.Token {
					t.Fatalf("stored source %s, the caller got %s", s.Token, src.Token)
				}
			}
		}
		if n != 1 {
			t.Fatalf("%d sources named once.only", n)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
