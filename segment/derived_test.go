package segment

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

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
