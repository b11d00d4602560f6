package segment

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
)

// makeEdgeColumns builds rows shaped like platform edge events: a message
// "<METHOD> | <status> | <ip> | <ray> | <url> | <ua>" assembled from
// other columns of the same row, with rows that do not fit mixed in: a
// status written "200.0" or "0200", a message of its own, a NULL message,
// a referenced column NULL (or absent from the block) while the message
// still shows the value, a rare suffix.
func makeEdgeColumns(n int, seed uint64) []testColumn {
	rng := rand.New(rand.NewPCG(seed, 3))
	cols := []testColumn{
		{desc: ColumnDesc{Path: "timestamp", Type: TypeTimestamp}},
		{desc: ColumnDesc{Path: "event_message", Type: TypeString}},
		{desc: ColumnDesc{Path: "metadata.request.method", Type: TypeString}},
		{desc: ColumnDesc{Path: "metadata.response.status_code", Type: TypeInt64}},
		{desc: ColumnDesc{Path: "metadata.request.cf_connecting_ip", Type: TypeString}},
		{desc: ColumnDesc{Path: "metadata.request.cf_ray", Type: TypeString}},
		{desc: ColumnDesc{Path: "metadata.request.url", Type: TypeString}},
		{desc: ColumnDesc{Path: "metadata.request.headers.user_agent", Type: TypeString}},
		{desc: ColumnDesc{Path: "metadata.response.origin_time", Type: TypeInt64}},
	}
	methods := []string{"GET", "POST", "PATCH", "DELETE", "OPTIONS"}
	statuses := []int64{200, 201, 204, 301, 400, 401, 404, 500, 502}
	uas := []string{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36", "node-fetch/1.0", "supabase-js/2.39.0", "Dart/3.2 (dart:io)"}
	paths := []string{"/rest/v1/todos?select=*", "/auth/v1/token?grant_type=refresh_token", "/storage/v1/object/public/avatars/a.png", "/rest/v1/rpc/get_items", "/realtime/v1/websocket?vsn=1.0.0"}
	ts := int64(1_700_000_000_000_000)
	for i := 0; i < n; i++ {
		ts += int64(rng.IntN(3000))
		method := methods[rng.IntN(len(methods))]
		status := statuses[rng.IntN(len(statuses))]
		ip := fmt.Sprintf("%d.%d.%d.%d", 1+rng.IntN(223), rng.IntN(256), rng.IntN(256), rng.IntN(256))
		ray := fmt.Sprintf("%016x", rng.Uint64())
		url := fmt.Sprintf("https://p%02d.supabase.co%s&n=%d", rng.IntN(30), paths[rng.IntN(len(paths))], rng.IntN(1000))
		ua := uas[rng.IntN(len(uas))]
		row := []any{ts, nil, method, status, ip, ray, url, ua, rng.Int64N(5000)}
		statusText := strconv.FormatInt(status, 10)
		switch i % 97 {
		case 5:
			statusText += ".0" // not the canonical rendering
		case 6:
			statusText = "0" + statusText
		}
		msg := method + " | " + statusText + " | " + ip + " | " + ray + " | " + url + " | " + ua
		switch i % 89 {
		case 3:
			msg = fmt.Sprintf("worker restarted after %d requests", rng.IntN(100000))
		case 4:
			msg = ""
		case 7:
			row[5] = nil // the ray column NULL, the message still shows it
		case 8:
			msg += " | rare-token"
		}
		if i%53 != 9 {
			row[1] = msg
		}
		if i/300 == 2 {
			row[7] = nil // the user agent absent from a whole block of 300
		}
		for c := range cols {
			cols[c].vals = append(cols[c].vals, row[c])
		}
	}
	return cols
}

// v2Fixture is testdata/v2.seg: makeEdgeColumns(v2FixtureRows,
// v2FixtureSeed) in blocks of v2FixtureBlockRows, written by the version 2
// writer (before version 3 existed) with v2FixtureOptions.
const (
	v2FixtureRows      = 1500
	v2FixtureSeed      = 11
	v2FixtureBlockRows = 300
)

var v2FixtureOptions = WriterOptions{PageBytes: 8192, PageRows: 256, FormatVersion: FormatV2}

// TestWriteFixtureV2 (re)writes testdata/v2.seg when
// SEDIMENT_WRITE_V2_FIXTURE is set; it was run once by the version 2
// writer. Otherwise it checks that FormatVersion 2 still writes the
// same bytes.
func TestWriteFixtureV2(t *testing.T) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	opts := v2FixtureOptions
	writeSegment(t, fs, "/d/v2.seg", makeEdgeColumns(v2FixtureRows, v2FixtureSeed), v2FixtureBlockRows, &opts)
	got, err := vfs.ReadFile(fs, "/d/v2.seg")
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("SEDIMENT_WRITE_V2_FIXTURE") != "" {
		if err := os.WriteFile("testdata/v2.seg", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile("testdata/v2.seg")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("version 2 writer output differs from testdata/v2.seg (%d vs %d bytes)", len(got), len(want))
	}
}

// derivedBlocks counts the blocks whose chunk of column col is encDerived.
func derivedBlocks(r *Reader, col int) int {
	n := 0
	for b := 0; b < r.NumBlocks(); b++ {
		if c := r.testChunk(b, col); c != nil && c.enc == encDerived {
			n++
		}
	}
	return n
}

// TestDerivedRoundTrip: a message column assembled from its row's other
// columns is stored as templates (in every block) and reads back byte for
// byte, whole and row by row, mixed with the rows that do not fit (a
// status written "200.0" or "0200", other messages, NULL messages, a
// referenced column NULL in the row or absent from the block), in fewer
// bytes than as plain text.
func TestDerivedRoundTrip(t *testing.T) {
	cols := makeEdgeColumns(3000, 5)
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	writeSegment(t, fs, "/d/v3.seg", cols, 1000, nil)
	opts := WriterOptions{FormatVersion: FormatV2}
	writeSegment(t, fs, "/d/v2.seg", cols, 1000, &opts)
	r := openSegment(t, fs, "/d/v3.seg")
	defer r.Close()
	old := openSegment(t, fs, "/d/v2.seg")
	defer old.Close()
	if r.Version() != FormatLatest {
		t.Fatalf("version %d", r.Version())
	}
	msg := r.Column("event_message", TypeString)
	if n := derivedBlocks(r, msg); n != r.NumBlocks() {
		t.Fatalf("event_message derived in %d of %d blocks", n, r.NumBlocks())
	}
	checkAllValues(t, r, cols)
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	off := WriterOptions{NoDerivedText: true}
	writeSegment(t, fs, "/d/off.seg", cols, 1000, &off)
	if r := openSegment(t, fs, "/d/off.seg"); derivedBlocks(r, msg) != 0 {
		t.Fatal("derived text written with NoDerivedText")
	}
	got, was := r.ColumnBytes()[msg], old.ColumnBytes()[msg]
	t.Logf("event_message: %d bytes as templates, %d as text (%d rows)", got, was, len(cols[0].vals))
	if got*2 > was {
		t.Fatalf("event_message takes %d bytes as templates, %d as text", got, was)
	}
}

// TestDerivedColumnAtATime: a writer given the block's columns through a
// fetcher (as a flush gives them, one column at a time, each column's
// buffer reused for the next) derives the message whether it is written
// before or after the columns it refers to, and reads back the same.
func TestDerivedColumnAtATime(t *testing.T) {
	cols := makeEdgeColumns(1200, 9)
	// The message last: its references are written before it.
	last := append(append([]testColumn{}, cols[:1]...), cols[2:]...)
	last = append(last, cols[1])
	for name, order := range map[string][]testColumn{"first": cols, "last": last} {
		t.Run(name, func(t *testing.T) {
			fs := vfs.NewMemFS()
			fs.MkdirAll("/d")
			writeFetched(t, fs, "/d/s.seg", order, 400, nil)
			r := openSegment(t, fs, "/d/s.seg")
			defer r.Close()
			if n := derivedBlocks(r, r.Column("event_message", TypeString)); n == 0 {
				t.Fatal("event_message not derived")
			}
			checkAllValues(t, r, order)
		})
	}
}

// TestReadVersion2: testdata/v2.seg, written by the version 2 writer,
// reads back every value; compaction's block copy writes its blocks again
// in the latest version, the message as templates, values unchanged.
func TestReadVersion2(t *testing.T) {
	data, err := os.ReadFile("testdata/v2.seg")
	if err != nil {
		t.Fatal(err)
	}
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	if err := vfs.WriteFileSynced(fs, "/d/v2.seg", data); err != nil {
		t.Fatal(err)
	}
	old := openSegment(t, fs, "/d/v2.seg")
	defer old.Close()
	if old.Version() != FormatV2 {
		t.Fatalf("version %d", old.Version())
	}
	cols := makeEdgeColumns(v2FixtureRows, v2FixtureSeed)
	checkAllValues(t, old, cols)
	if err := old.Check(); err != nil {
		t.Fatal(err)
	}
	copyAllBlocks(t, fs, old, "/d/v3.seg", nil)
	r := openSegment(t, fs, "/d/v3.seg")
	defer r.Close()
	if r.Version() != FormatLatest || derivedBlocks(r, r.Column("event_message", TypeString)) == 0 {
		t.Fatalf("version %d, message not derived", r.Version())
	}
	checkAllValues(t, r, cols)
}

// FuzzDerived: the encDerived page decoder and the footer's template
// decoder on any bytes never panic (under a table with residual pieces
// too), and a message column built from the input (rows that fit
// templates, rows with bytes of their own between the values, and rows
// that fit none) round-trips through the writer and the reader byte for
// byte.
func FuzzDerived(f *testing.F) {
	// Seeds: pages and tables the writer made for the tests' rows.
	cols := makeEdgeColumns(200, 5)
	for i := 0; i < 200; i += 37 {
		msg, _ := cols[1].vals[i].(string)
		f.Add([]byte(msg), uint8(i))
	}
	f.Add([]byte{}, uint8(3))
	f.Add([]byte("GET | 0200 | 10.0.0.1 | abc | /x | ua"), uint8(7))
	f.Add([]byte("\x01\x01\x00\x03abc"), uint8(0))
	f.Add([]byte("\x02\x02\x00\x05hello\x01\x01\x09event_msg"), uint8(255))
	f.Add([]byte("\x01\x01\x01\x01\x02\x03\x05ab12345"), uint8(2))   // ids, residual lengths and bytes
	f.Add([]byte("\x01\x02\x01\xff\xff\xff\xff\x0f12345"), uint8(4)) // a residual length past the page
	f.Add([]byte("\x00\x01\x01\x02\x02\x00\x02"), uint8(9))          // a residual piece in a footer table
	descs := []ColumnDesc{
		{Path: "timestamp", Type: TypeTimestamp},
		{Path: "event_message", Type: TypeString},
		{Path: "method", Type: TypeString},
		{Path: "status", Type: TypeInt64},
		{Path: "ratio", Type: TypeFloat64},
	}
	f.Fuzz(func(t *testing.T, in []byte, seed uint8) {
		if len(in) > 1<<12 {
			t.Skip()
		}
		// Any bytes as a footer table, and as a page under a fixed table.
		d := decbuf{b: in}
		decodeDerivedTable(&d, 1, descs, FormatLatest)
		table := &derivedTable{}
		table.tpls = [][]tplPiece{{{col: 2, ref: table.refOf(2, TypeString)}, {lit: " | ", col: -1}, {col: 3, ref: table.refOf(3, TypeInt64)}}}
		table.countResiduals()
		resTable := &derivedTable{}
		resTable.tpls = [][]tplPiece{
			{{col: 2, ref: resTable.refOf(2, TypeString)}, {lit: " [", col: -1}, {col: residualCol}, {lit: "] ", col: -1}, {col: 3, ref: resTable.refOf(3, TypeInt64)}, {col: residualCol}},
			{{col: residualCol}, {col: residualCol}},
		}
		resTable.countResiduals()
		rows := int(seed%16) + 1
		refs := make([]vec.Vector, 2)
		prepare(&refs[0], vec.String, rows, false)
		prepare(&refs[1], vec.Int64, rows, false)
		for i := 0; i < rows; i++ {
			refs[0].Bytes = append(refs[0].Bytes, "GET"...)
			refs[0].Offs[i+1] = uint32(len(refs[0].Bytes))
			refs[1].Ints[i] = int64(i * 100)
		}
		if seed&1 != 0 {
			refs[1].Nulls = vec.NewBitset(rows)
			refs[1].Nulls.Set(rows / 2)
		}
		if pv, err := parsePage(in, rows, FormatLatest); err == nil {
			var dst vec.Vector
			prepare(&dst, vec.String, rows, false)
			var ends []uint32
			for _, tt := range []*derivedTable{table, resTable} {
				prepare(&dst, vec.String, rows, false)
				out := pageOut{dst: &dst, refs: refs, derivedEnds: &ends}
				decodeDerived(&pv, &chunkMeta{enc: encDerived, derived: tt}, rowSel{lo: 0, hi: rows}, &out)
			}
		}

		// A block whose messages are built from the input around the
		// method and status columns: byte for byte back.
		n := 50 + int(seed)
		rng := rand.New(rand.NewPCG(uint64(seed), 9))
		tc := make([]testColumn, len(descs))
		for i := range tc {
			tc[i].desc = descs[i]
		}
		piece := string(in)
		for i := 0; i < n; i++ {
			method := []string{"GET", "POST", "DELETE"}[rng.IntN(3)]
			status := int64(rng.IntN(600))
			var msg any = method + " | " + strconv.FormatInt(status, 10) + " | " + method + piece
			switch rng.IntN(8) {
			case 0:
				msg = piece
			case 1:
				msg = nil
			case 2:
				msg = piece + strconv.FormatInt(status, 10) + method + piece
			case 3, 4: // bytes of the row's own between the values: residual pieces
				msg = method + " [" + strconv.Itoa(rng.IntN(100000)) + piece + "] " + strconv.FormatInt(status, 10) + " | " + method + piece[:rng.IntN(len(piece)+1)]
			}
			var st any = status
			if rng.IntN(8) == 0 {
				st = nil
			}
			tc[0].vals = append(tc[0].vals, int64(i))
			tc[1].vals = append(tc[1].vals, msg)
			tc[2].vals = append(tc[2].vals, method)
			tc[3].vals = append(tc[3].vals, st)
			tc[4].vals = append(tc[4].vals, float64(i))
		}
		fs := vfs.NewMemFS()
		fs.MkdirAll("/d")
		writeSegment(t, fs, "/d/s.seg", tc, 64, nil)
		r := openSegment(t, fs, "/d/s.seg")
		defer r.Close()
		checkAllValues(t, r, tc)
		if len(in) == 0 && seed == 3 && derivedBlocks(r, 1) == 0 { // the seed: statuses of three digits
			t.Fatal("messages of method and status only were not derived")
		}
	})
}

// TestDerivedChains: a message that shows a URL assembled from host,
// path and query columns refers to the URL whole (which then stays text:
// a derived chunk never refers to a derived one); without the message the
// URL is derived from its pieces; a column that copies another is
// derived; and all read back.
func TestDerivedChains(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	descs := []ColumnDesc{
		{Path: "timestamp", Type: TypeTimestamp},
		{Path: "event_message", Type: TypeString},
		{Path: "metadata.request.cf_ray", Type: TypeString},
		{Path: "metadata.request.host", Type: TypeString},
		{Path: "metadata.request.path", Type: TypeString},
		{Path: "metadata.request.search", Type: TypeString},
		{Path: "metadata.request.url", Type: TypeString},
		{Path: "metadata.response.cf_ray", Type: TypeString},
		{Path: "metadata.request.headers.cf_connecting_ip", Type: TypeString},
		{Path: "metadata.request.headers.x_real_ip", Type: TypeString},
	}
	cols := make([]testColumn, len(descs))
	for i := range cols {
		cols[i].desc = descs[i]
	}
	for i := 0; i < 2000; i++ {
		ray := fmt.Sprintf("%016x", rng.Uint64())
		host := fmt.Sprintf("p%02d.supabase.co", rng.IntN(40))
		path := []string{"/rest/v1/todos", "/auth/v1/token", "/storage/v1/object/a.png"}[rng.IntN(3)]
		search := fmt.Sprintf("?select=*&n=%d", rng.IntN(100000))
		url := "https://" + host + path + search
		msg := []string{"GET", "POST"}[rng.IntN(2)] + " | " + ray + " | " + url
		ip := fmt.Sprintf("10.%d.%d.%d", rng.IntN(256), rng.IntN(256), rng.IntN(256))
		for c, v := range []any{int64(i), msg, ray, host, path, search, url, ray, ip, ip} {
			cols[c].vals = append(cols[c].vals, v)
		}
	}
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	writeSegment(t, fs, "/d/s.seg", cols, 1000, nil)
	r := openSegment(t, fs, "/d/s.seg")
	defer r.Close()
	for _, path := range []string{"event_message", "metadata.response.cf_ray"} {
		if n := derivedBlocks(r, r.Column(path, TypeString)); n != r.NumBlocks() {
			t.Errorf("%s derived in %d of %d blocks", path, n, r.NumBlocks())
		}
	}
	if n := derivedBlocks(r, r.Column("metadata.request.url", TypeString)); n != 0 {
		t.Errorf("url derived in %d blocks, next to a message that refers to it", n)
	}
	// Of two copies of an address, one is derived from the other.
	if n := derivedBlocks(r, r.Column("metadata.request.headers.cf_connecting_ip", TypeString)) +
		derivedBlocks(r, r.Column("metadata.request.headers.x_real_ip", TypeString)); n != r.NumBlocks() {
		t.Errorf("addresses derived in %d of %d blocks", n, r.NumBlocks())
	}
	checkAllValues(t, r, cols)

	noMessage := append([]testColumn{cols[0]}, cols[2:]...)
	writeSegment(t, fs, "/d/u.seg", noMessage, 1000, nil)
	u := openSegment(t, fs, "/d/u.seg")
	defer u.Close()
	if n := derivedBlocks(u, u.Column("metadata.request.url", TypeString)); n != u.NumBlocks() {
		t.Errorf("without a message, url derived in %d of %d blocks", n, u.NumBlocks())
	}
	checkAllValues(t, u, noMessage)
}

// TestDerivedCopyBlockRemaps: a block copied into a directory of another
// column order keeps its templates, their column references remapped.
func TestDerivedCopyBlockRemaps(t *testing.T) {
	cols := makeEdgeColumns(900, 21)
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	writeSegment(t, fs, "/d/a.seg", cols, 300, nil)
	src := openSegment(t, fs, "/d/a.seg")
	defer src.Close()
	// The new directory: an extra column first, then src's in reverse.
	dir := []ColumnDesc{{Path: "extra", Type: TypeInt64}}
	colMap := make([]int, len(src.Columns()))
	for i := len(src.Columns()) - 1; i >= 0; i-- {
		colMap[i] = len(dir)
		dir = append(dir, src.Columns()[i])
	}
	f, _ := fs.Create("/d/b.seg")
	w, err := NewWriter(f, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for b := 0; b < src.NumBlocks(); b++ {
		if err := w.CopyBlock(src, b, colMap, b%2 == 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := openSegment(t, fs, "/d/b.seg")
	defer r.Close()
	if derivedBlocks(r, r.Column("event_message", TypeString)) != r.NumBlocks() {
		t.Fatal("copied message not derived")
	}
	checkAllValues(t, r, cols)
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
}
