package segment

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
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

// TestResidualSearchAgrees: SearchDerived over Kong's lines stored with
// residual pieces finds the rows the lines hold, for literals inside a
// referenced value, inside a residual (a date, a byte count), inside a
// literal piece, and across every kind of edge (literal and residual,
// residual and value), and answers Studio's path search without
// assembling.
func TestResidualSearchAgrees(t *testing.T) {
	cols := makeKongColumns(3000, 2)
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	writeSegment(t, fs, "/d/s.seg", cols, 1000, nil)
	r := openSegment(t, fs, "/d/s.seg")
	defer r.Close()
	msg := r.Column("event_message", TypeString)
	if residualTemplates(r, msg) == 0 {
		t.Fatalf("no residual templates:\n%s", describeTemplates(r, 0, msg))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, lits := range [][]string{
		{"auth/v1/token", "auth/v1/user"},                                                     // Studio's regexp count
		{"12:0"}, {"26/Nov/2026:12:01:1"}, {":12:02"}, {"+0000] \"GET"}, {"0] \"P"}, {"[26/"}, // the date and its edges
		{"\" 200 "}, {" 200 1"}, {"1\" \"-"}, {"7 \"http"}, {"50"}, {"1234"}, // status, byte count and edges
		{"- - ["}, {"HTTP/1.1\""}, {"rare-token"}, {"Connection refused"}, {"\" rare"}, {"node\""},
		{"x"}, {"zzz", "auth/v1/user"}, {"1 - -"}, {"172.18.0.5 - - [26"},
	} {
		checkSearchDerived(t, r, msg, lits, rng)
	}
	// Studio's literals are decided from the path column and the
	// residual values, not by assembling the rows.
	lits := []string{"auth/v1/token", "auth/v1/user"}
	c := r.testChunk(0, msg)
	for i, tpl := range c.derived.tpls {
		if c.derived.nres[i+1] > 0 {
			if p := planTemplate(tpl, c.derived.types, lits); p != tplRefs {
				t.Errorf("template %d planned %d for %q", i+1, p, lits)
			}
		}
	}
}

// TestResidualSearchRandom: over random templates (string and int64
// references, residual runs of random bytes, literal runs, rows that fit
// none) the writer's residual templates read back byte for byte, and
// SearchDerived agrees with a plain scan of the original values
// (strings.Contains, and Go's regexp over the literals) for literals cut
// at every boundary of a row: a piece's start and end, one byte each side.
func TestResidualSearchRandom(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewPCG(seed, 17))
		tc, bounds := makeResidualColumns(rng, 900)
		fs := vfs.NewMemFS()
		fs.MkdirAll("/d")
		writeSegment(t, fs, "/d/s.seg", tc, 300, nil)
		r := openSegment(t, fs, "/d/s.seg")
		checkAllValues(t, r, tc)
		msg := r.Column("event_message", TypeString)
		if seed == 1 && residualTemplates(r, msg) == 0 {
			t.Fatalf("no residual templates:\n%s", describeTemplates(r, 0, msg))
		}
		var litSets [][]string
		for k := 0; k < 6; k++ {
			row := rng.IntN(len(bounds))
			s, _ := tc[1].vals[row].(string)
			if s == "" {
				continue
			}
			// Literals around a boundary of the row's pieces.
			for _, at := range bounds[row] {
				for _, w := range []int{1, 3} {
					lo, hi := max(0, at-w), min(len(s), at+w)
					if lo < hi {
						litSets = append(litSets, []string{s[lo:hi]})
					}
					if at+w <= len(s) && at < at+w {
						litSets = append(litSets, []string{s[at : at+w]})
					}
					if at-w >= 0 && at-w < at {
						litSets = append(litSets, []string{s[at-w : at]})
					}
				}
			}
		}
		litSets = append(litSets, []string{"no-such-literal"}, []string{"9", "a"})
		answered := 0
		for _, lits := range litSets {
			answered += checkSearchDerived(t, r, msg, lits, rng)
			checkSearchAgainstValues(t, r, msg, tc[1].vals, lits)
		}
		if answered == 0 {
			t.Fatalf("seed %d: no search answered", seed)
		}
		r.Close()
	}
}

// checkSearchAgainstValues compares SearchDerived over every block with a
// scan of the original values: strings.Contains, and a regexp of the
// literals.
func checkSearchAgainstValues(t *testing.T, r *Reader, col int, vals []any, lits []string) {
	t.Helper()
	quoted := make([]string, len(lits))
	for i, l := range lits {
		quoted[i] = regexp.QuoteMeta(l)
	}
	re := regexp.MustCompile(strings.Join(quoted, "|"))
	for b := 0; b < r.NumBlocks(); b++ {
		bi := r.Block(b)
		got, ok, err := r.SearchDerived(b, col, 0, bi.Rows, lits, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			continue
		}
		want := []int32{}
		for i := 0; i < bi.Rows; i++ {
			s, isStr := vals[bi.FirstRow+i].(string)
			if isStr && holdsAny(s, lits) != re.MatchString(s) {
				t.Fatalf("regexp and strings.Contains disagree on %q %q", s, lits)
			}
			if isStr && re.MatchString(s) {
				want = append(want, int32(i))
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("block %d %q: SearchDerived %v, a scan of the values %v", b, lits, got, want)
		}
	}
}

// makeResidualColumns builds a message column over two string columns and
// an int64 one from a few random shapes: per shape a sequence of literal
// runs, references and residual runs (random digits, words or
// punctuation, different per row); some rows fit no shape, some are NULL.
// It returns the columns and, per row, the offsets in its message where
// one piece ends and the next begins.
func makeResidualColumns(rng *rand.Rand, n int) ([]testColumn, [][]int) {
	tc := []testColumn{
		{desc: ColumnDesc{Path: "timestamp", Type: TypeTimestamp}},
		{desc: ColumnDesc{Path: "event_message", Type: TypeString}},
		{desc: ColumnDesc{Path: "a", Type: TypeString}},
		{desc: ColumnDesc{Path: "b", Type: TypeString}},
		{desc: ColumnDesc{Path: "n", Type: TypeInt64}},
	}
	const (
		kLit = iota
		kA
		kB
		kN
		kRes
	)
	type piece struct {
		kind int
		lit  string
	}
	seps := []string{" ", " | ", "\" ", "] \"", ", ", "=", "-", " - - ["}
	shapes := make([][]piece, 2+rng.IntN(3))
	for i := range shapes {
		refs := []int{kA, kB, kN}
		rng.Shuffle(len(refs), func(x, y int) { refs[x], refs[y] = refs[y], refs[x] })
		var sh []piece
		if rng.IntN(2) == 0 {
			sh = append(sh, piece{kind: kRes})
			sh = append(sh, piece{kind: kLit, lit: seps[rng.IntN(len(seps))]})
		}
		for k, ref := range refs {
			sh = append(sh, piece{kind: ref})
			sh = append(sh, piece{kind: kLit, lit: seps[rng.IntN(len(seps))]})
			if k == 0 || rng.IntN(2) == 0 {
				sh = append(sh, piece{kind: kRes})
				sh = append(sh, piece{kind: kLit, lit: seps[rng.IntN(len(seps))]})
			}
		}
		shapes[i] = sh
	}
	words := []string{"alpha", "beta", "gamma", "12:00:01", "x", ""}
	residual := func() string {
		switch rng.IntN(3) {
		case 0:
			return strconv.Itoa(rng.IntN(100000))
		case 1:
			return words[rng.IntN(len(words))] + strconv.Itoa(rng.IntN(10))
		}
		return fmt.Sprintf("%02d:%02d:%02d", rng.IntN(24), rng.IntN(60), rng.IntN(60))
	}
	avals := []string{"/auth/v1/token", "/rest/v1/todos?select=*", "GET", "POST", "alpha-beta"}
	bounds := make([][]int, n)
	for i := 0; i < n; i++ {
		a := avals[rng.IntN(len(avals))] + strconv.Itoa(rng.IntN(5))
		b := fmt.Sprintf("client-%03d", rng.IntN(200))
		num := int64(rng.IntN(600))
		var sb strings.Builder
		for _, p := range shapes[rng.IntN(len(shapes))] {
			bounds[i] = append(bounds[i], sb.Len())
			switch p.kind {
			case kLit:
				sb.WriteString(p.lit)
			case kA:
				sb.WriteString(a)
			case kB:
				sb.WriteString(b)
			case kN:
				sb.WriteString(strconv.FormatInt(num, 10))
			case kRes:
				sb.WriteString(residual())
			}
		}
		bounds[i] = append(bounds[i], sb.Len())
		var msg any = sb.String()
		switch rng.IntN(20) {
		case 0:
			msg, bounds[i] = nil, nil
		case 1:
			m := "free text " + residual()
			msg, bounds[i] = m, []int{0, len("free text "), len(m)}
		}
		for c, v := range []any{int64(i), msg, a, b, num} {
			tc[c].vals = append(tc[c].vals, v)
		}
	}
	return tc, bounds
}

// TestGeneralize: two templates of one shape become one with residual
// pieces where their literals differ, keeping what both share at the
// start and end of each gap; templates of other shapes do not.
func TestGeneralize(t *testing.T) {
	var ds deriveState
	lit := func(s string) tplPiece { return tplPiece{lit: s, col: -1} }
	ref := func(k int) tplPiece { return tplPiece{col: k, ref: k} }
	res := tplPiece{col: residualCol}
	a := []tplPiece{ref(0), lit(" - - [26/Nov/2026:12:22:19 +0000] \""), ref(1), lit(" 1234 \"")}
	b := []tplPiece{ref(0), lit(" - - [26/Nov/2026:12:23:05 +0000] \""), ref(1), lit(" 99 \"")}
	g, ok := ds.generalize(a, b)
	want := []tplPiece{ref(0), lit(" - - [26/Nov/2026:12:2"), res, lit(" +0000] \""), ref(1), lit(" "), res, lit(" \"")}
	if !ok || !slices.Equal(g, want) {
		t.Fatalf("generalize: %v %v, want %v", g, ok, want)
	}
	// Again with a row of another hour: the prefix shrinks.
	c := []tplPiece{ref(0), lit(" - - [26/Nov/2026:13:00:00 +0000] \""), ref(1), lit(" 5 \"")}
	g2, ok := ds.generalize(g, c)
	want2 := []tplPiece{ref(0), lit(" - - [26/Nov/2026:1"), res, lit(" +0000] \""), ref(1), lit(" "), res, lit(" \"")}
	if !ok || !slices.Equal(g2, want2) {
		t.Fatalf("generalize again: %v %v, want %v", g2, ok, want2)
	}
	// Nothing to change, or another shape: no.
	if _, ok := ds.generalize(g2, c); ok {
		t.Error("a template that already fits generalized")
	}
	if _, ok := ds.generalize(a, []tplPiece{ref(1), lit(" x "), ref(0), lit(" 1 \"")}); ok {
		t.Error("templates of other references generalized")
	}
	// Matching: the residual ends where the next piece first occurs.
	vals, has := []string{"1.2.3.4", "GET /x"}, []bool{true, true}
	s := "1.2.3.4 - - [26/Nov/2026:14:01:02 +0000] \"GET /x 777 \""
	spans, ok := matchTemplate(g2, s, vals, has, nil)
	if !ok || len(spans) != 4 || s[spans[0]:spans[1]] != "4:01:02" || s[spans[2]:spans[3]] != "777" {
		t.Fatalf("match: %v %v", spans, ok)
	}
	if _, ok := matchTemplate(g2, "1.2.3.4 - - [25/Nov", vals, has, nil); ok {
		t.Error("a row that does not fit matched")
	}
}

// TestResidualFooterVersion: a residual piece in the footer of a file
// below version 5 is corruption; in version 5 it reads back.
func TestResidualFooterVersion(t *testing.T) {
	descs := []ColumnDesc{{Path: "m", Type: TypeString}, {Path: "a", Type: TypeString}}
	table := &derivedTable{tpls: [][]tplPiece{{{col: 1}, {lit: " ", col: -1}, {col: residualCol}}}}
	table.tpls[0][0].ref = table.refOf(1, TypeString)
	var e encbuf
	table.appendFooter(&e)
	d := decbuf{b: e.b}
	got, err := decodeDerivedTable(&d, 0, descs, FormatV5)
	if err != nil || got == nil || !got.resid || got.nres[1] != 1 || !slices.Equal(got.tpls[0], table.tpls[0]) {
		t.Fatalf("version 5: %+v, %v", got, err)
	}
	d = decbuf{b: e.b}
	if _, err := decodeDerivedTable(&d, 0, descs, FormatV4); err == nil {
		t.Fatal("a residual piece read in version 4")
	}
}
