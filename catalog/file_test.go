package catalog

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/sediment/sediment/internal/vfs"
)

// realCatalog returns a file system with a catalog like a server's: the
// Supabase sources and endpoints, a source and endpoint of the user's and
// an access token, then the catalog file's bytes.
func realCatalog(t *testing.T) (*vfs.MemFS, *Catalog, []byte) {
	t.Helper()
	fs := vfs.NewMemFS()
	c := openMem(t, fs)
	if _, err := c.SeedSupabase(); err != nil {
		t.Fatal(err)
	}
	s, err := c.CreateSource(SourceParams{Name: ptr("my.app"), RetentionDays: ptr(7)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateEndpoint(EndpointParams{Name: ptr("errors"), Query: ptr("select id from `my.app` where event_message like '%error%'"),
		SourceMapping: map[string]string{"my.app": s.Token}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateAccessToken("k", []string{"public"}, "env:public", ""); err != nil {
		t.Fatal(err)
	}
	data, err := vfs.ReadFile(fs, c.path)
	if err != nil {
		t.Fatal(err)
	}
	return fs, c, data
}

// openBytes opens a catalog whose file holds data.
func openBytes(t *testing.T, data []byte, readOnly bool) (*Catalog, error) {
	t.Helper()
	fs := vfs.NewMemFS()
	if err := fs.MkdirAll("/data"); err != nil {
		t.Fatal(err)
	}
	if err := vfs.WriteFileAtomic(fs, "/data/"+FileName, data); err != nil {
		t.Fatal(err)
	}
	o := testOpts(fs)
	o.ReadOnly = readOnly
	return Open("/data", o)
}

// TestEveryBitFlipIsDetected flips a bit at every byte offset of a real
// catalog file (the endpoints' SQL, tokens, ids, the envelope, the
// whitespace): the reader must refuse every one as corrupt. By default the
// bit flipped rotates with the offset (every offset and every bit position
// covered, about 1.5 s; every 7th offset under the race detector);
// SEDIMENT_CATALOG_ALL_BITS=1 flips all eight bits of every byte (about
// 100,000 flips, 15 s).
func TestEveryBitFlipIsDetected(t *testing.T) {
	_, _, data := realCatalog(t)
	var bits []int // nil: one bit per byte, rotating
	if os.Getenv("SEDIMENT_CATALOG_ALL_BITS") != "" {
		bits = []int{0, 1, 2, 3, 4, 5, 6, 7}
	}
	flips := 0
	for off := 0; off < len(data); off += offsetStride() {
		for _, bit := range bitsAt(bits, off) {
			bad := bytes.Clone(data)
			bad[off] ^= 1 << bit
			if _, _, err := decodeFile(bad); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("flip of bit %d at offset %d (%q) not detected: %v", bit, off, data[max(0, off-20):min(len(data), off+20)], err)
			}
			flips++
		}
	}
	t.Logf("%d flips over %d bytes, all detected", flips, len(data))
	// Through Open, as the server and fsck read it: a flipped endpoint
	// query and a flipped source token.
	for _, s := range []string{"where event_message", `"token": "00000000-0000-4000-8000-000000000001"`} {
		off := bytes.Index(data, []byte(s)) + len(s) - 3
		bad := bytes.Clone(data)
		bad[off] ^= 0x01
		if _, err := openBytes(t, bad, false); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "checksum mismatch") {
			t.Fatalf("flip in %q: %v", s, err)
		}
	}
}

// offsetStride is 1 (every offset), 7 under the race detector.
func offsetStride() int {
	if raceEnabled {
		return 7
	}
	return 1
}

func bitsAt(bits []int, off int) []int {
	if bits == nil {
		return []int{off % 8}
	}
	return bits
}

// TestTruncationIsDetected cuts a real catalog file at every length (every
// 7th under the race detector): every cut into the JSON document is refused; cutting only the final newline
// loses nothing and is accepted.
func TestTruncationIsDetected(t *testing.T) {
	_, c, data := realCatalog(t)
	for n := 0; n < len(data)-1; n += offsetStride() {
		if _, _, err := decodeFile(data[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("file cut to %d of %d bytes not detected: %v", n, len(data), err)
		}
	}
	st, _, err := decodeFile(data[:len(data)-1])
	if err != nil {
		t.Fatalf("without its final newline: %v", err)
	}
	if !reflect.DeepEqual(st.payload(), c.load().payload()) {
		t.Fatal("without its final newline the catalog changed")
	}
}

// TestFormat1StillLoads: a catalog file written by the format 1 writer (a
// fixture from that version) opens with everything in it, is rewritten
// once with a checksum, its old bytes kept as the previous version; a
// read-only open leaves it as it is.
func TestFormat1StillLoads(t *testing.T) {
	v1, err := os.ReadFile("testdata/catalog-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	ro, err := openBytes(t, v1, true)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(ro.Sources()); n != 10 {
		t.Fatalf("%d sources", n)
	}
	if _, err := ro.CreateSource(SourceParams{Name: ptr("x")}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("change to a read-only catalog: %v", err)
	}
	if data, _ := vfs.ReadFile(ro.opts.FS, ro.path); !bytes.Equal(data, v1) || ro.opts.FS.Exists(ro.prev) {
		t.Fatal("a read-only open changed the files")
	}

	c, err := openBytes(t, v1, false)
	if err != nil {
		t.Fatal(err)
	}
	ep := c.EndpointByName("errors")
	if ep == nil || ep.Query != "select id from `my.app` where event_message like '%error%'" || c.SourceByName("my.app") == nil ||
		c.Authenticate("k") == nil || len(c.Endpoints()) != 3 {
		t.Fatalf("format 1 contents not loaded: %+v", ep)
	}
	data, _ := vfs.ReadFile(c.opts.FS, c.path)
	if _, format, err := decodeFile(data); err != nil || format != FormatLatest {
		t.Fatalf("not rewritten in format %d: format %d, %v", FormatLatest, format, err)
	}
	if prev, _ := vfs.ReadFile(c.opts.FS, c.prev); !bytes.Equal(prev, v1) {
		t.Fatal("the format 1 file is not kept as the previous version")
	}
	again, err := Open("/data", testOpts(c.opts.FS.(*vfs.MemFS)))
	if err != nil || !reflect.DeepEqual(again.load().payload(), c.load().payload()) {
		t.Fatalf("reopening the rewritten file: %v", err)
	}
}

// TestPreviousVersionRestores: every change keeps the file before it as
// catalog.json.prev. With catalog.json damaged, Open refuses; the
// documented recovery (RestorePrevious, run by `sediment fsck
// --restore-catalog`) puts back the catalog as it was before the last
// change and keeps the damaged file.
func TestPreviousVersionRestores(t *testing.T) {
	fs, c, before := realCatalog(t)
	if _, err := c.CreateSource(SourceParams{Name: ptr("last.change")}); err != nil {
		t.Fatal(err)
	}
	if prev, _ := vfs.ReadFile(fs, c.prev); !bytes.Equal(prev, before) {
		t.Fatal("catalog.json.prev is not the file before the last change")
	}
	if _, err := RestorePrevious("/data", testOpts(fs)); !errors.Is(err, ErrNothingToRestore) {
		t.Fatalf("restore over an intact catalog: %v", err)
	}
	// Damage: an endpoint's SQL changed by one bit.
	data, _ := vfs.ReadFile(fs, c.path)
	off := bytes.Index(data, []byte("like '%error%'"))
	damaged := bytes.Clone(data)
	damaged[off] ^= 0x20 // like -> Like
	if err := vfs.WriteFileAtomic(fs, c.path, damaged); err != nil {
		t.Fatal(err)
	}
	if _, err := Open("/data", testOpts(fs)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open of a damaged catalog: %v", err)
	}
	cur, prev := CheckFiles("/data", testOpts(fs))
	if cur.OK() || !errors.Is(cur.Err, ErrCorrupt) || !prev.OK() || prev.Format != FormatLatest {
		t.Fatalf("check: %+v %+v", cur, prev)
	}
	kept, err := RestorePrevious("/data", testOpts(fs))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := vfs.ReadFile(fs, kept); !bytes.Equal(got, damaged) || !strings.Contains(kept, FileName+".damaged-2025") {
		t.Fatalf("damaged file not kept as %s", kept)
	}
	re := openMem(t, fs)
	if re.SourceByName("last.change") != nil || re.SourceByName("my.app") == nil || re.EndpointByName("errors") == nil {
		t.Fatal("restored catalog is not the one before the last change")
	}
	// Changes go on from there.
	if _, err := re.CreateSource(SourceParams{Name: ptr("again")}); err != nil {
		t.Fatal(err)
	}

	// A missing catalog.json whose previous version exists is damage too.
	if err := fs.Remove(c.path); err != nil {
		t.Fatal(err)
	}
	if _, err := Open("/data", testOpts(fs)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open without catalog.json but with its previous version: %v", err)
	}
	if _, err := RestorePrevious("/data", testOpts(fs)); err != nil {
		t.Fatal(err)
	}
	if openMem(t, fs).SourceByName("again") != nil {
		t.Fatal("restore of a missing file did not use the previous version")
	}

	// Both damaged: no restore.
	for _, p := range []string{c.path, c.prev} {
		if err := vfs.WriteFileAtomic(fs, p, damaged); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := RestorePrevious("/data", testOpts(fs)); err == nil || !strings.Contains(err.Error(), "damaged too") {
		t.Fatalf("restore from a damaged previous version: %v", err)
	}
}
