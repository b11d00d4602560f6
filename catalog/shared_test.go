package catalog

import (
	"bytes"
	"sync"
	"testing"

	"github.com/sediment/sediment/internal/vfs"
)

// memShared is a Shared in memory; before, when set, runs between the
// read and the conditional write of an update (another node's change).
type memShared struct {
	mu     sync.Mutex
	data   []byte
	ver    int
	before func()
	writes int
}

func (m *memShared) Read() ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return bytes.Clone(m.data), nil
}

func (m *memShared) Update(mutate func(cur []byte) ([]byte, error)) ([]byte, error) {
	for {
		m.mu.Lock()
		cur, ver := bytes.Clone(m.data), m.ver
		before := m.before
		m.before = nil
		m.mu.Unlock()
		next, err := mutate(cur)
		if err != nil {
			return nil, err
		}
		if before != nil {
			before()
		}
		m.mu.Lock()
		if m.ver != ver {
			m.mu.Unlock()
			continue // lost the race: read again
		}
		if next != nil {
			m.data, m.ver = bytes.Clone(next), m.ver+1
			m.writes++
		}
		out := bytes.Clone(m.data)
		m.mu.Unlock()
		return out, nil
	}
}

// TestSharedCatalog: two nodes' catalogs sharing one copy: the first
// publishes its own; the second adopts it (with notifications); changes
// made at once on both nodes are both kept; every node converges.
func TestSharedCatalog(t *testing.T) {
	fs := vfs.NewMemFS()
	shared := &memShared{}
	a, err := Open("/a", &Options{FS: fs, Shared: shared})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateSource(SourceParams{Name: ptr("before.sharing")}); err != nil {
		t.Fatal(err)
	}
	if err := a.SyncShared(); err != nil || shared.data == nil {
		t.Fatalf("first node: %v, shared %d bytes", err, len(shared.data))
	}
	b, err := Open("/b", &Options{FS: fs, Shared: shared})
	if err != nil {
		t.Fatal(err)
	}
	var seen []Change
	b.Subscribe(func(c Change) { seen = append(seen, c) })
	if err := b.SyncShared(); err != nil {
		t.Fatal(err)
	}
	if b.SourceByName("before.sharing") == nil || len(seen) != 1 || seen[0].Kind != SourceCreated {
		t.Fatalf("second node did not adopt the shared catalog: %v", seen)
	}

	// a and b create a source each, b's landing while a's is between
	// its read and its write: a reads again, both are kept.
	shared.before = func() {
		if _, err := b.CreateSource(SourceParams{Name: ptr("from.b")}); err != nil {
			t.Error(err)
		}
	}
	if _, err := a.CreateSource(SourceParams{Name: ptr("from.a")}); err != nil {
		t.Fatal(err)
	}
	if a.SourceByName("from.b") == nil || a.SourceByName("from.a") == nil {
		t.Fatalf("a lost a change: %v", names(a))
	}
	if err := b.SyncShared(); err != nil {
		t.Fatal(err)
	}
	if len(names(b)) != 3 || b.SourceByName("from.a").Token != a.SourceByName("from.a").Token {
		t.Fatalf("b: %v", names(b))
	}
	// The local file is the shared one: a restart without the store
	// starts from it.
	a2, err := Open("/a", &Options{FS: fs})
	if err != nil || len(names(a2)) != 3 {
		t.Fatalf("a's file after sharing: %v %v", names(a2), err)
	}
	// A deletion on b reaches a as a deletion.
	if _, err := b.DeleteSource(b.SourceByName("from.a").Token); err != nil {
		t.Fatal(err)
	}
	var onA []Change
	a.Subscribe(func(c Change) { onA = append(onA, c) })
	if err := a.SyncShared(); err != nil {
		t.Fatal(err)
	}
	if len(onA) != 1 || onA[0].Kind != SourceDeleted || a.SourceByName("from.a") != nil {
		t.Fatalf("a after b's delete: %v", onA)
	}
	// An idle sync writes nothing.
	w := shared.writes
	if err := a.SyncShared(); err != nil || shared.writes != w {
		t.Fatalf("idle sync wrote (%d -> %d): %v", w, shared.writes, err)
	}
}

func names(c *Catalog) []string {
	var out []string
	for _, s := range c.Sources() {
		out = append(out, s.Name)
	}
	return out
}
