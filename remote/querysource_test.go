package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/objstore"
	"github.com/sediment/sediment/sql/scan"
)

// switchStore is a store whose writes fail while down (one node's view
// of a store it cannot reach, while others can).
type switchStore struct {
	objstore.Store
	down atomic.Bool
}

func (s *switchStore) Put(ctx context.Context, key string, body io.ReaderAt, size int64, opts objstore.PutOptions) (objstore.ObjectInfo, error) {
	if s.down.Load() {
		return objstore.ObjectInfo{}, &objstore.OpError{Op: "put", Key: key, Kind: objstore.ErrUnavailable, Err: fmt.Errorf("switched off")}
	}
	return s.Store.Put(ctx, key, body, size, opts)
}

// ingestNode is an engine publishing as node id, serving the unsealed
// route.
type ingestNode struct {
	id    string
	store *switchStore
	rem   *Segments
	eng   *engine.Engine
	shard *engine.Shard
	srv   *httptest.Server
}

func newIngestNode(t *testing.T, id string, store objstore.Store, fs vfs.FS) *ingestNode {
	t.Helper()
	n := &ingestNode{id: id, store: &switchStore{Store: store}}
	cache, err := objstore.OpenCache(store, objstore.CacheOptions{FS: fs, Dir: "/" + id + "/cache"})
	if err != nil {
		t.Fatal(err)
	}
	n.rem, err = New(Options{Store: n.store, Cache: cache, Node: id, FS: fs, RetryMin: time.Millisecond, RetryMax: 5 * time.Millisecond,
		Publish: &objstore.PublishOptions{Update: fastUpdates}})
	if err != nil {
		t.Fatal(err)
	}
	n.eng, err = engine.Open("/"+id+"/data", &engine.Options{FS: fs, DisableBackground: true, CompactionMinInputs: 2, Remote: n.rem})
	if err != nil {
		t.Fatal(err)
	}
	n.shard, _ = n.eng.Shard(source)
	n.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(ClusterKeyHeader) != "secret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		var req UnsealedRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := WriteUnsealed(w, n.eng, fs, id, req); err != nil {
			t.Error(err)
		}
	}))
	t.Cleanup(func() {
		n.srv.Close()
		n.eng.Close()
		n.rem.Close()
		cache.Close()
	})
	return n
}

func (n *ingestNode) append(t *testing.T, from, count int, flush bool) {
	t.Helper()
	var batch []event.Event
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixMicro()
	for i := from; i < from+count; i++ {
		batch = append(batch, event.Event{ID: fmt.Sprintf("%s-%06d", n.id, i), Timestamp: base + int64(i)*1000,
			Message: fmt.Sprintf("event %d of %s", i, n.id), HasMessage: true})
	}
	if err := n.shard.Append(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if flush {
		if err := n.shard.Flush(); err != nil {
			t.Fatal(err)
		}
	}
}

func (n *ingestNode) drain(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := n.rem.Drain(ctx); err != nil {
		t.Fatal(err)
	}
}

// queryAll reads every event id of the source on a query engine, with
// the answer's warnings; an id seen twice fails the test.
func queryAll(t *testing.T, eng *engine.Engine) (map[string]bool, []string) {
	t.Helper()
	sh, err := eng.Shard(source)
	if err != nil {
		t.Fatal(err)
	}
	sn := sh.Snapshot()
	defer sn.Release()
	w := &scan.Warnings{}
	ctx := scan.WithWarnings(context.Background(), w)
	req := scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime, Columns: []scan.Column{{Path: "id", Type: vec.String}}}
	sc, err := sn.Table("t").Open(ctx, &req)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	ids := map[string]bool{}
	for _, u := range sc.Units() {
		err := u.Read(ctx, func(b *vec.Batch) error {
			b.ForEach(func(i int) {
				id := b.Cols[0].StringAt(i)
				if ids[id] {
					t.Errorf("event %s twice", id)
				}
				ids[id] = true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return ids, w.List()
}

// TestQueryNodeAnswersFromStoreAndIngestNodes: two ingest nodes write one
// source; a query node with no data of its own sees every acknowledged
// event exactly once, whether it is listed in the manifest, in a segment
// not yet published (the node's store writes fail), in a compaction's
// output that replaced listed inputs, or in a head. An ingest node that
// does not answer makes the answer partial, with a warning naming it.
func TestQueryNodeAnswersFromStoreAndIngestNodes(t *testing.T) {
	store := objstore.NewMemStore(nil)
	fs := vfs.NewMemFS()
	a := newIngestNode(t, "a", store, fs)
	b := newIngestNode(t, "b", store, fs)
	a.append(t, 0, 100, true)
	a.append(t, 100, 100, true)
	b.append(t, 0, 150, true)
	a.drain(t)
	b.drain(t)
	// Node a cannot write to the store: its compaction of the two listed
	// segments and a new flush stay local.
	a.store.down.Store(true)
	if n, err := a.shard.Compact(); err != nil || n != 2 {
		t.Fatalf("compact: %d %v", n, err)
	}
	a.append(t, 200, 50, true)
	a.append(t, 250, 25, false) // head
	b.append(t, 150, 10, false) // head

	// Every snapshot revalidates the manifest: the readers kept open
	// follow the store's latest version (checked below).
	qs, q := newQueryNode(t, store, fs, "/q", objstore.CacheOptions{}, QueryOptions{ManifestMaxAge: -1}, a, b)
	cache := qs.opts.Cache
	ids, warnings := queryAll(t, q)
	if len(ids) != 275+160 || len(warnings) != 0 {
		t.Fatalf("query node sees %d events (want 435), warnings %v", len(ids), warnings)
	}

	// Node a's store comes back; its changes are published; same answer.
	a.store.down.Store(false)
	a.drain(t)
	if ids, warnings := queryAll(t, q); len(ids) != 435 || len(warnings) != 0 {
		t.Fatalf("after publishing: %d events, warnings %v", len(ids), warnings)
	}
	// Listed segments stay open from query to query; delisted ones (a's
	// compaction inputs) were closed.
	m, _, _ := objstore.ReadManifest(context.Background(), store, source)
	if len(qs.readers.m) != len(m.Segments) {
		t.Fatalf("%d segments kept open, the manifest lists %d", len(qs.readers.m), len(m.Segments))
	}

	// Node b stops answering: its published events are still read from
	// the store, its head is missing, and the answer says so.
	b.srv.Close()
	ids, warnings = queryAll(t, q)
	if len(ids) != 425 || len(warnings) != 1 || !strings.Contains(warnings[0], b.srv.URL) || !strings.Contains(warnings[0], "not in this answer") {
		t.Fatalf("with node b away: %d events (want 425), warnings %v", len(ids), warnings)
	}
	if st := qs.Stats(); st.NodeFailures == 0 || st.UnsealedParts == 0 {
		t.Fatalf("stats %+v", st)
	}
	qs.Close()
	if len(qs.readers.m) != 0 {
		t.Fatalf("%d segments open after Close", len(qs.readers.m))
	}

	// A wrong cluster key is refused: partial, not wrong.
	qs2, _ := NewQuerySource(QueryOptions{Store: store, Cache: cache, IngestNodes: []string{a.srv.URL}, ClusterKey: "wrong"})
	q2, err := engine.Open("/q2/data", &engine.Options{FS: fs, DisableBackground: true, External: qs2})
	if err != nil {
		t.Fatal(err)
	}
	defer q2.Close()
	if _, warnings := queryAll(t, q2); len(warnings) != 1 || !strings.Contains(warnings[0], "401") {
		t.Fatalf("wrong key: warnings %v", warnings)
	}
}

func TestDecodeUnsealed(t *testing.T) {
	for _, in := range unsealedSeeds(t) {
		if _, err := DecodeUnsealed(strings.NewReader(string(in)), 1<<20); err != nil {
			t.Fatalf("seed does not decode: %v", err)
		}
		for cut := 0; cut < len(in); cut++ {
			if _, err := DecodeUnsealed(strings.NewReader(string(in[:cut])), 1<<20); err == nil {
				t.Fatalf("answer cut at %d of %d decoded", cut, len(in))
			}
		}
	}
	in := unsealedSeeds(t)[1]
	if _, err := DecodeUnsealed(strings.NewReader(string(in)), 10); err == nil {
		t.Fatal("an answer over the byte limit decoded")
	}
	bad := []byte(string(in))
	bad[len(bad)-3] ^= 1 // inside the last part's CRC
	if _, err := DecodeUnsealed(strings.NewReader(string(bad)), 1<<20); err == nil {
		t.Fatal("a damaged part decoded")
	}
}

// unsealedSeeds are valid answers: an empty one, one with parts, and one
// with parts to keep and parts the asker holds.
func unsealedSeeds(t testing.TB) [][]byte {
	var out [][]byte
	for k, parts := range [][]string{nil, {"first segment bytes", "second"}, {"kept part", "", "tail"}} {
		var b strings.Builder
		uw, err := newUnsealedWriter(&b, "n1", []string{"n1/0000000000000001.seg"})
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range parts {
			name := fmt.Sprintf("n1/head-%d", i)
			var err error
			switch {
			case k == 2 && i == 0:
				err = uw.partTagged(keepTag, name, strings.NewReader(p), int64(len(p)))
			case k == 2 && i == 1:
				err = uw.held(name)
			default:
				err = uw.part(name, strings.NewReader(p), int64(len(p)))
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := uw.end(); err != nil {
			t.Fatal(err)
		}
		out = append(out, []byte(b.String()))
	}
	return out
}

func FuzzDecodeUnsealed(f *testing.F) {
	for _, s := range unsealedSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		u, err := DecodeUnsealed(strings.NewReader(string(in)), 1<<16)
		if err != nil {
			return
		}
		var total int
		for _, p := range u.Parts {
			total += len(p.Data)
		}
		if total > 1<<16 {
			t.Fatalf("decoded %d bytes of parts past the limit", total)
		}
	})
}

// TestUnsealedAnswersShared: with UnsealedMaxAge, snapshots that read the
// same manifest share each ingest node's answer (one ask per node, not
// one per query); a head event arriving meanwhile shows once the answer
// is older than that (here: once a publication changes the manifest), and
// no event is ever counted twice or lost across the change.
func TestUnsealedAnswersShared(t *testing.T) {
	store := objstore.NewMemStore(nil)
	fs := vfs.NewMemFS()
	a := newIngestNode(t, "a", store, fs)
	b := newIngestNode(t, "b", store, fs)
	a.append(t, 0, 100, true)
	b.append(t, 0, 50, true)
	a.drain(t)
	b.drain(t)
	a.append(t, 100, 30, false) // heads
	b.append(t, 50, 20, false)
	qs, q := newQueryNode(t, store, fs, "/q", objstore.CacheOptions{}, QueryOptions{ManifestMaxAge: -1, UnsealedMaxAge: time.Hour}, a, b)
	for range 3 {
		if ids, warnings := queryAll(t, q); len(ids) != 200 || len(warnings) != 0 {
			t.Fatalf("%d events (want 200), warnings %v", len(ids), warnings)
		}
	}
	if asks := qs.Stats().UnsealedAsks; asks != 2 {
		t.Fatalf("three queries asked the two ingest nodes %d times, want once each", asks)
	}
	// Node a flushes its head and more, and publishes: a new manifest
	// generation, so both nodes are asked again.
	a.append(t, 130, 10, true)
	a.drain(t)
	if ids, warnings := queryAll(t, q); len(ids) != 210 || len(warnings) != 0 {
		t.Fatalf("after a publication: %d events (want 210), warnings %v", len(ids), warnings)
	}
	if asks := qs.Stats().UnsealedAsks; asks != 4 {
		t.Fatalf("asks %d after the manifest changed, want 4", asks)
	}
}

// TestQueryNodeHoldsHeadParts: a query node keeps the head parts an
// ingest node marks as lasting, and asks again naming them: the node then
// sends only their names and what its head gained, every event is still
// seen exactly once, and once the head is flushed and published the parts
// are let go. An answer naming a part the query node does not hold is
// refused, never read as empty.
func TestQueryNodeHoldsHeadParts(t *testing.T) {
	store := objstore.NewMemStore(nil)
	fs := vfs.NewMemFS()
	a := newIngestNode(t, "a", store, fs)
	qs, q := newQueryNode(t, store, fs, "/q", objstore.CacheOptions{}, QueryOptions{ManifestMaxAge: -1}, a)
	a.append(t, 0, 3000, false) // head rows 0-3000: two whole parts and a tail
	if ids, warnings := queryAll(t, q); len(ids) != 3000 || len(warnings) != 0 {
		t.Fatalf("%d events, warnings %v", len(ids), warnings)
	}
	st := qs.Stats()
	if st.UnsealedParts != 3 || st.UnsealedHeldParts != 0 || st.HeldParts != 2 {
		t.Fatalf("first ask: %+v", st)
	}
	sentFirst := st.UnsealedBytes

	a.append(t, 3000, 2000, false) // rows 3000-5000: two more whole parts, a new tail
	if ids, warnings := queryAll(t, q); len(ids) != 5000 || len(warnings) != 0 {
		t.Fatalf("%d events, warnings %v", len(ids), warnings)
	}
	st = qs.Stats()
	if st.UnsealedHeldParts != 2 || st.UnsealedParts != 3+3 || st.HeldParts != 4 {
		t.Fatalf("second ask: %+v", st)
	}
	if sent := st.UnsealedBytes - sentFirst; sent >= st.HeldBytes {
		t.Fatalf("second ask sent %d bytes with %d held", sent, st.HeldBytes)
	}

	// The head is flushed and published: nothing of it is held any more.
	if err := a.shard.Flush(); err != nil {
		t.Fatal(err)
	}
	a.drain(t)
	if ids, warnings := queryAll(t, q); len(ids) != 5000 || len(warnings) != 0 {
		t.Fatalf("after the flush: %d events, warnings %v", len(ids), warnings)
	}
	if st := qs.Stats(); st.HeldParts != 0 || st.HeldBytes != 0 {
		t.Fatalf("after the flush: %+v", st)
	}

	// A node claiming this node holds a part it does not: refused.
	in := unsealedSeeds(t)[2]
	ans, err := DecodeUnsealed(strings.NewReader(string(in)), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var h heldParts
	h.max = 1 << 20
	if err := h.resolve(heldKey{"n1", source}, ans, nil); err == nil || !strings.Contains(err.Error(), "does not hold") {
		t.Fatalf("resolve of a part not held: %v", err)
	}
}

// TestQueryNodeWithoutHeldParts: with MaxHeldPartBytes negative a query
// node asks as before (whole heads every time), and the answers are the
// same.
func TestQueryNodeWithoutHeldParts(t *testing.T) {
	store := objstore.NewMemStore(nil)
	fs := vfs.NewMemFS()
	a := newIngestNode(t, "a", store, fs)
	qs, q := newQueryNode(t, store, fs, "/q", objstore.CacheOptions{}, QueryOptions{ManifestMaxAge: -1, MaxHeldPartBytes: -1}, a)
	a.append(t, 0, 3000, false)
	for range 2 {
		if ids, warnings := queryAll(t, q); len(ids) != 3000 || len(warnings) != 0 {
			t.Fatalf("%d events, warnings %v", len(ids), warnings)
		}
	}
	if st := qs.Stats(); st.UnsealedParts != 6 || st.UnsealedHeldParts != 0 || st.HeldParts != 0 {
		t.Fatalf("%+v", st)
	}
}
