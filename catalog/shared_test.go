package catalog

import (
	"bytes"
	"errors"
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
	// lostAnswers: the next writes happen, but Update fails as a write
	// whose answer was lost does (the store acted, the caller cannot
	// tell). retried: the next write happens, but Update goes on as a
	// client that retried the request and got 412 does (reads again).
	lostAnswers int
	retried     bool
	afterWrite  func() // runs once, after the next write, unlocked
}

var errLostAnswer = errors.New("memShared: connection reset (the write happened)")

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
			after := m.afterWrite
			m.afterWrite = nil
			switch {
			case m.lostAnswers > 0:
				m.lostAnswers--
				m.mu.Unlock()
				if after != nil {
					after()
				}
				return nil, errLostAnswer
			case m.retried:
				m.retried = false
				m.mu.Unlock()
				continue
			}
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

// TestSharedChangeAppliedOnce: a change whose write happened but whose
// answer was lost (or whose retried request found the condition failed
// because the first one had landed) is retried and found there: the
// source is created once, a deletion is not reported as "not found", and
// the caller gets the source that was stored, also when another node
// changed the catalog between the write and the retry.
func TestSharedChangeAppliedOnce(t *testing.T) {
	fs := vfs.NewMemFS()
	shared := &memShared{}
	a, err := Open("/a", &Options{FS: fs, Shared: shared})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open("/b", &Options{FS: fs, Shared: shared})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.SyncShared(); err != nil {
		t.Fatal(err)
	}
	var created int
	a.Subscribe(func(c Change) {
		if c.Kind == SourceCreated && c.Source.Name == "lost.answer" {
			created++
		}
	})

	// The answer is lost, and b writes before a tries again.
	shared.lostAnswers = 1
	shared.afterWrite = func() {
		if _, err := b.CreateSource(SourceParams{Name: ptr("from.b")}); err != nil {
			t.Error(err)
		}
	}
	s, err := a.CreateSource(SourceParams{Name: ptr("lost.answer")})
	if err != nil {
		t.Fatalf("create with a lost answer: %v", err)
	}
	if err := b.SyncShared(); err != nil {
		t.Fatal(err)
	}
	count := func(c *Catalog, name string) int {
		n := 0
		for _, x := range names(c) {
			if x == name {
				n++
			}
		}
		return n
	}
	if count(a, "lost.answer") != 1 || count(b, "lost.answer") != 1 || a.SourceByName("from.b") == nil {
		t.Fatalf("a: %v, b: %v", names(a), names(b))
	}
	if got := b.SourceByName("lost.answer"); got == nil || got.Token != s.Token {
		t.Fatalf("the caller got source %s, the catalog holds %+v", s.Token, got)
	}
	if created != 1 {
		t.Fatalf("%d SourceCreated notifications for one source", created)
	}

	// The client library retried the write itself and got 412: the
	// update reads again and finds the change there.
	shared.retried = true
	if _, err := a.CreateSource(SourceParams{Name: ptr("retried.put")}); err != nil {
		t.Fatal(err)
	}
	if count(a, "retried.put") != 1 {
		t.Fatalf("after a retried put: %v", names(a))
	}

	// A deletion whose answer is lost is not applied again (which would
	// fail with ErrNotFound).
	shared.lostAnswers = 1
	if _, err := a.DeleteSource(s.Token); err != nil {
		t.Fatalf("delete with a lost answer: %v", err)
	}
	if a.SourceByName("lost.answer") != nil {
		t.Fatalf("deleted source still there: %v", names(a))
	}

	// Every answer lost: the first try was stored, the retry finds it
	// and stores nothing more.
	shared.lostAnswers = 100
	writes := shared.writes
	if _, err := a.CreateSource(SourceParams{Name: ptr("answers.lost")}); err != nil {
		t.Fatalf("answers lost: %v", err)
	}
	if shared.writes != writes+1 || count(a, "answers.lost") != 1 {
		t.Fatalf("%d writes for one change: %v", shared.writes-writes, names(a))
	}
	shared.lostAnswers = 0
}
