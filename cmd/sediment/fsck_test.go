package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
)

// damagedDataDir is a data directory with one kind of damage per file
// kind: in cloudflare.logs.prod, a flipped bit in the last record of its
// write-ahead log (whose whole length is on disk: not a torn write); in
// postgres.logs, a damaged block in its first segment, a damaged footer in
// its second and a damaged index in its third.
func damagedDataDir(t *testing.T) (dir, edge, pg string) {
	t.Helper()
	dir = t.TempDir()
	cat, err := catalog.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.SeedSupabase(); err != nil {
		t.Fatal(err)
	}
	edge = cat.SourceByName("cloudflare.logs.prod").Token
	pg = cat.SourceByName("postgres.logs").Token
	stage := t.TempDir()
	eng, err := engine.Open(stage, &engine.Options{DisableBackground: true, BlockRows: 50})
	if err != nil {
		t.Fatal(err)
	}
	batch := func(from, n int) []event.Event {
		var evs []event.Event
		for i := from; i < from+n; i++ {
			evs = append(evs, event.Event{ID: fmt.Sprintf("e%04d", i), Timestamp: 1_751_328_000_000_000 + int64(i)*1_000_000,
				Message: fmt.Sprintf("connection %d authorized", i), HasMessage: true,
				Fields: event.ObjectValue(event.Member("metadata", event.ObjectValue(event.Member("level", event.StringValue([]string{"LOG", "ERROR"}[i%2])))))})
		}
		return evs
	}
	ps, _ := eng.Shard(pg)
	for _, r := range [][2]int{{0, 200}, {200, 100}, {300, 50}} {
		if err := ps.Append(context.Background(), batch(r[0], r[1])); err != nil {
			t.Fatal(err)
		}
		if err := ps.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	es, _ := eng.Shard(edge)
	for _, r := range [][2]int{{1000, 40}, {1040, 30}, {1070, 35}} {
		if err := es.Append(context.Background(), batch(r[0], r[1])); err != nil {
			t.Fatal(err)
		}
	}
	// What a crash leaves: the logs hold their records.
	if err := os.CopyFS(filepath.Join(dir, "sources"), os.DirFS(filepath.Join(stage, "sources"))); err != nil {
		t.Fatal(err)
	}
	eng.Close()

	flip := func(path string, off func(data []byte) int) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		data[off(data)] ^= 0x08
		os.WriteFile(path, data, 0o644)
	}
	wals, _ := filepath.Glob(filepath.Join(dir, "sources", edge, "wal", "*.wal"))
	flip(wals[0], func(d []byte) int { return len(d) - 10 })
	segs, _ := filepath.Glob(filepath.Join(dir, "sources", pg, "segments", "*.seg"))
	slices.Sort(segs)
	f, _ := vfs.OS.Open(segs[0])
	r, err := segment.Open(f, "x")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(segs[0])
	for off := range data { // every unit of block 1
		if r.BlockAt(int64(off)) == 1 && off%24 == 0 {
			data[off] ^= 0x08
		}
	}
	os.WriteFile(segs[0], data, 0o644)
	r.Close()
	flip(segs[1], func(d []byte) int { return len(d) - 40 }) // the footer
	f, _ = vfs.OS.Open(segs[2])
	r, err = segment.Open(f, "x")
	if err != nil {
		t.Fatal(err)
	}
	flip(segs[2], func(d []byte) int { // the index: after the last block's units
		last := 0
		for off := range d {
			if r.BlockAt(int64(off)) >= 0 {
				last = off
			}
		}
		return last + 20
	})
	r.Close()
	return dir, edge, pg
}

// TestFsckReportsEveryKindOfDamage: fsck names each damaged file relative
// to its source, says what it costs and the command that repairs it, and
// exits 1; a flipped bit in the last log record is damage, not "ok" (as it
// is today). --repair-wal needs the server stopped, drops only the damaged
// record and says how many events it held; sediment query answers what is
// left, with warnings.
func TestFsckReportsEveryKindOfDamage(t *testing.T) {
	dir, edge, _ := damagedDataDir(t)
	var out, errb bytes.Buffer
	code := runFsck([]string{"--data-dir", dir}, &out, &errb)
	t.Logf("sediment fsck:\n%s", out.String())
	for _, want := range []string{
		"cloudflare.logs.prod " + edge + ": 0 segments, 0 rows, 0.0 MiB on disk, 70 rows in the write-ahead log",
		"  damaged: wal/0000000000000001.wal: record at offset ",
		"crc mismatch; unreadable: one record of ",
		"which says it holds 35 events (unverified: its checksum failed)",
		"    repair: until then the source is read-only (ingest answers 503); stop the server, then run `sediment fsck --data-dir " + dir + " --repair-wal --source cloudflare.logs.prod`",
		"  damaged: segments/0000000000000000.seg: block 1 of 4 (50 events): ",
		"    repair: nothing to run: the server sets block 1 aside",
		"  damaged: segments/0000000000000001.seg: unreadable (",
		"how many events it holds is unknown",
		"    repair: nothing to run: the server moves the segment to quarantine/ when it starts",
		"  damaged: segments/0000000000000002.seg: index: ",
		"    repair: nothing is lost: queries scan the segment without its index",
		"4 problem(s) found",
	} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("fsck output lacks %q:\n%s", want, out.String())
		}
	}
	if code != 1 {
		t.Fatalf("fsck exit %d", code)
	}

	// sediment query answers what is readable and lists what it misses.
	out.Reset()
	if code := runQuery([]string{"--data-dir", dir, "--format", "json", "select count(id) as n from `postgres.logs`"}, &out, &errb); code != 0 {
		t.Fatalf("query: %d %s", code, errb.String())
	}
	var q struct {
		Result   []map[string]any
		Warnings []string
	}
	if err := json.Unmarshal(out.Bytes(), &q); err != nil || q.Result[0]["n"] != float64(200) || len(q.Warnings) != 2 {
		t.Fatalf("query: %s", out.String())
	}

	// A repair needs the server stopped.
	lock, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	if code := runFsck([]string{"--data-dir", dir, "--repair-wal"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "needs the server stopped") {
		t.Fatalf("repair beside a server: %d %q", code, errb.String())
	}
	lock.Close()
	out.Reset()
	code = runFsck([]string{"--data-dir", dir, "--repair-wal", "--source", "cloudflare.logs.prod"}, &out, &errb)
	t.Logf("sediment fsck --repair-wal --source cloudflare.logs.prod:\n%s", out.String())
	if code != 0 || !strings.Contains(out.String(), "wal/0000000000000001.wal repaired: dropped ") ||
		!strings.Contains(out.String(), "holding 35 events (as the damaged records say); kept 2 records (70 events); the file as it was is quarantine/0000000000000001.wal") ||
		!strings.HasSuffix(out.String(), "ok\n") {
		t.Fatalf("repair: %d\n%s%s", code, out.String(), errb.String())
	}

	// The server sets the segment damage aside; fsck then lists it as set
	// aside rather than as damage (the block only once a read met it).
	a, err := startServer(serveConfig{DataDir: dir, PrivateToken: "k", Listen: "127.0.0.1:0", ShutdownTimeout: 10 * time.Second},
		productionDeps(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	srv := &running{t: t, a: a, base: "http://" + a.addr.String()}
	body := srv.mustDo("GET", "/api/query?sql="+url.QueryEscape("select count(id) as n from `postgres.logs`"), "k", "", 200)
	if !strings.Contains(body, `{"result":[{"n":200}],"warnings":[`) {
		t.Fatalf("server's answer: %s", body)
	}
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	code = runFsck([]string{"--data-dir", dir}, &out, &errb)
	t.Logf("sediment fsck after the server ran:\n%s", out.String())
	if code != 1 || !strings.Contains(out.String(), "  set aside: segment 0000000000000001.seg (the whole segment): an unknown number of events, in quarantine/") ||
		!strings.Contains(out.String(), "  set aside: segment 0000000000000000.seg block 1: 50 events from ") {
		t.Fatalf("fsck after the server: %d\n%s", code, out.String())
	}
}
