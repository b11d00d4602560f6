package segment

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sediment/sediment/internal/vfs"
)

// makeKongColumns builds rows shaped like Kong's access lines
// (`IP - - [date] "METHOD PATH PROTO" STATUS BYTES "REFERER" "UA"`) with
// the fields the event also carries; the date and the byte count are in
// no column. Mixed in: a referer that is NULL ("-" in the line), error
// lines of their own, a rare suffix, a NULL message, a byte count that
// starts like the status.
func makeKongColumns(n int, seed uint64) []testColumn {
	rng := rand.New(rand.NewPCG(seed, 5))
	cols := []testColumn{
		{desc: ColumnDesc{Path: "timestamp", Type: TypeTimestamp}},
		{desc: ColumnDesc{Path: "event_message", Type: TypeString}},
		{desc: ColumnDesc{Path: "metadata.request.headers.cf_connecting_ip", Type: TypeString}},
		{desc: ColumnDesc{Path: "metadata.request.method", Type: TypeString}},
		{desc: ColumnDesc{Path: "metadata.request.path", Type: TypeString}},
		{desc: ColumnDesc{Path: "metadata.request.protocol", Type: TypeString}},
		{desc: ColumnDesc{Path: "metadata.request.headers.referer", Type: TypeString}},
		{desc: ColumnDesc{Path: "metadata.request.headers.user_agent", Type: TypeString}},
		{desc: ColumnDesc{Path: "metadata.response.status_code", Type: TypeInt64}},
	}
	ips := []string{"172.18.0.1", "172.18.0.5", "81.2.69.160", "2001:db8::7"}
	methods := []string{"GET", "POST", "PATCH", "OPTIONS"}
	paths := []string{"/auth/v1/token?grant_type=password", "/auth/v1/user", "/rest/v1/todos?select=*", "/storage/v1/object/list/avatars",
		"/rest/v1/rpc/get_user_token", "/realtime/v1/websocket?apikey=x&vsn=1.0.0", "/pg/meta/default/tables"}
	uas := []string{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36", "node", "supabase-js/2.39.0", "Go-http-client/1.1"}
	referers := []string{"http://localhost:3000/project/default", "http://localhost:8000/"}
	statuses := []int64{200, 200, 200, 201, 204, 401, 404, 500}
	ts := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		ts = ts.Add(time.Duration(rng.IntN(400)) * time.Millisecond)
		ip := ips[rng.IntN(len(ips))]
		method := methods[rng.IntN(len(methods))]
		path := paths[rng.IntN(len(paths))]
		if rng.IntN(4) == 0 {
			path += "&n=" + strconv.Itoa(rng.IntN(1000))
		}
		proto := "HTTP/1.1"
		if rng.IntN(10) == 0 {
			proto = "HTTP/2.0"
		}
		status := statuses[rng.IntN(len(statuses))]
		length := 20 + rng.IntN(40000)
		if i%71 == 5 {
			length = int(status)*10 + 1 // starts like the status
		}
		var referer any
		refText := "-"
		if rng.IntN(3) > 0 {
			r := referers[rng.IntN(len(referers))]
			referer, refText = r, r
		}
		ua := uas[rng.IntN(len(uas))]
		msg := fmt.Sprintf("%s - - [%s] \"%s %s %s\" %d %d \"%s\" \"%s\"", ip, ts.Format("02/Jan/2006:15:04:05 -0700"),
			method, path, proto, status, length, refText, ua)
		var m any = msg
		switch i % 53 {
		case 7:
			m = fmt.Sprintf("%s [error] 1234#0: *%d connect() failed (111: Connection refused) while connecting to upstream",
				ts.Format("2006/01/02 15:04:05"), rng.IntN(100000))
		case 11:
			m = msg + " rare-token"
		case 13:
			m = nil
		}
		row := []any{ts.UnixMicro(), m, ip, method, path, proto, referer, ua, status}
		for c := range cols {
			cols[c].vals = append(cols[c].vals, row[c])
		}
	}
	return cols
}

// residualTemplates counts the templates with residual pieces of column
// col's chunks.
func residualTemplates(r *Reader, col int) int {
	n := 0
	for b := 0; b < r.NumBlocks(); b++ {
		if c := r.testChunk(b, col); c != nil && c.derived != nil {
			for i := range c.derived.tpls {
				if c.derived.nres[i+1] > 0 {
					n++
				}
			}
		}
	}
	return n
}

// describeTemplates renders column col's templates of block b (for test
// failures and logs).
func describeTemplates(r *Reader, b, col int) string {
	c := r.testChunk(b, col)
	if c == nil || c.derived == nil {
		return "not derived"
	}
	var sb strings.Builder
	for i, tpl := range c.derived.tpls {
		fmt.Fprintf(&sb, "%d:", i+1)
		for _, p := range tpl {
			switch {
			case p.col == residualCol:
				sb.WriteString(" R")
			case p.col >= 0:
				fmt.Fprintf(&sb, " col(%s)", r.Columns()[p.col].Path)
			default:
				fmt.Fprintf(&sb, " %q", p.lit)
			}
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

// TestResidualKongRoundTrip: Kong's access lines, whose date and byte
// count no column carries, are stored as templates with residual pieces
// in every block and read back byte for byte (whole and row by row), in
// fewer bytes than as text; version 4 stores them as text.
func TestResidualKongRoundTrip(t *testing.T) {
	cols := makeKongColumns(6000, 1)
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	writeSegment(t, fs, "/d/v5.seg", cols, 2000, nil)
	r := openSegment(t, fs, "/d/v5.seg")
	defer r.Close()
	msg := r.Column("event_message", TypeString)
	t.Logf("templates of block 0:\n%s", describeTemplates(r, 0, msg))
	if n := derivedBlocks(r, msg); n != r.NumBlocks() {
		t.Fatalf("event_message derived in %d of %d blocks", n, r.NumBlocks())
	}
	if residualTemplates(r, msg) < r.NumBlocks() {
		t.Fatal("no residual templates")
	}
	checkAllValues(t, r, cols)
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	v4 := WriterOptions{FormatVersion: FormatV4}
	writeSegment(t, fs, "/d/v4.seg", cols, 2000, &v4)
	old := openSegment(t, fs, "/d/v4.seg")
	defer old.Close()
	if derivedBlocks(old, msg) != 0 {
		t.Fatalf("version 4 derived Kong's lines:\n%s", describeTemplates(old, 0, msg))
	}
	checkAllValues(t, old, cols)
	got, was := r.ColumnBytes()[msg], old.ColumnBytes()[msg]
	t.Logf("event_message: %d bytes with residuals, %d as text (%d rows)", got, was, len(cols[0].vals))
	if got >= was {
		t.Fatalf("event_message takes %d bytes with residuals, %d as text", got, was)
	}
}
