package segment

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
)

// searchDerivedWant is SearchDerived's answer from the assembled values:
// the rows of [from, to) (relative to from) holding one of lits.
func searchDerivedWant(t testing.TB, r *Reader, b, col, from, to int, lits []string) []int32 {
	t.Helper()
	var v vec.Vector
	if err := r.ReadColumn(b, col, from, to, &v); err != nil {
		t.Fatal(err)
	}
	want := []int32{}
	for i := 0; i < to-from; i++ {
		if !v.IsNull(i) && holdsAny(v.StringAt(i), lits) {
			want = append(want, int32(i))
		}
	}
	return want
}

// checkSearchDerived compares SearchDerived with the assembled values over
// every block of column col and a few sub-ranges of each, and returns how
// many searches it answered (ok).
func checkSearchDerived(t testing.TB, r *Reader, col int, lits []string, rng *rand.Rand) int {
	t.Helper()
	answered := 0
	for b := 0; b < r.NumBlocks(); b++ {
		rows := r.Block(b).Rows
		ranges := [][2]int{{0, rows}}
		for k := 0; k < 3 && rows > 0; k++ {
			from := rng.IntN(rows)
			ranges = append(ranges, [2]int{from, from + rng.IntN(rows-from+1)})
		}
		for _, rg := range ranges {
			got, ok, err := r.SearchDerived(b, col, rg[0], rg[1], lits, ReadOptions{})
			if err != nil {
				t.Fatalf("block %d rows %v %q: %v", b, rg, lits, err)
			}
			if !ok {
				continue
			}
			answered++
			if want := searchDerivedWant(t, r, b, col, rg[0], rg[1], lits); !slices.Equal(got, want) {
				t.Fatalf("block %d rows %v %q: rows %v, the values say %v", b, rg, lits, got, want)
			}
		}
	}
	return answered
}

// TestSearchDerivedAgreesWithValues: over platform-shaped messages stored
// as derived text (with rows no template fits, NULL messages, a referenced
// column NULL in a row), SearchDerived finds the rows holding the
// literals that the assembled values hold: literals inside one value (the
// URL), inside a template's separators, across a separator and a value,
// inside a number, and in the rows stored as they are.
func TestSearchDerivedAgreesWithValues(t *testing.T) {
	cols := makeEdgeColumns(2000, 7)
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	writeSegment(t, fs, "/d/s.seg", cols, 512, nil)
	r := openSegment(t, fs, "/d/s.seg")
	defer r.Close()
	col := r.Column("event_message", TypeString)
	if derivedBlocks(r, col) == 0 {
		t.Fatal("message not derived")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	answered := 0
	for _, lits := range [][]string{{"auth/v1/token"}, {"auth/v1/token", "rest/v1/rpc"}, {"supabase.co/storage"}, {" | "},
		{"GET | 2"}, {"| 40"}, {"40"}, {"0 | 1"}, {"restarted"}, {"rare-token"}, {"Dart/3.2 (dart:io)"}, {"x"}, {"p07.supabase"},
		{"co/rest/v1/todos?select=*&n=1"}, {"OPTIONS"}, {"S | 5"}, {".25"}, {"9.1"}, {"0.1", "Dart"}} {
		answered += checkSearchDerived(t, r, col, lits, rng)
	}
	if answered == 0 {
		t.Fatal("no search answered without assembling")
	}
	// Not derived text, or an empty literal: not answered.
	if _, ok, _ := r.SearchDerived(0, r.Column("metadata.request.url", TypeString), 0, 10, []string{"a"}, ReadOptions{}); ok {
		t.Error("a text column searched as derived")
	}
	if _, ok, _ := r.SearchDerived(0, col, 0, 10, []string{"a", ""}, ReadOptions{}); ok {
		t.Error("an empty literal searched")
	}
	if _, _, err := r.SearchDerived(0, col, 5, 4, []string{"a"}, ReadOptions{}); err == nil {
		t.Error("rows [5, 4) accepted")
	}
}

// TestTemplateCanSpan: the occurrences of a literal that cross an edge of
// a literal piece with a value beyond it.
func TestTemplateCanSpan(t *testing.T) {
	for _, c := range []struct {
		l, p          string
		before, after bool
		want          bool
	}{
		{"auth/v1/", " | ", true, true, false},
		{"a | b", " | ", true, true, true}, // holds the piece
		{"| 2", " | ", true, true, true},   // starts inside it
		{"0 |", " | ", true, true, true},   // ends inside it
		{"0 |", " | ", false, true, false}, // nothing before the piece
		{"| 2", " | ", true, false, false}, // nothing after it
		{" | ", " | ", true, true, true},   // a value ending " |" before it
		{"|", " | ", true, true, false},    // one byte: inside a piece or a value
		{"x", "abc", true, true, false},
	} {
		if got := templateCanSpan(c.l, c.p, c.before, c.after); got != c.want {
			t.Errorf("%q around %q (before %v, after %v): %v, want %v", c.l, c.p, c.before, c.after, got, c.want)
		}
	}
}

// FuzzSearchDerived: for a block of messages built from the input around
// a method and a status column (some fitting no template, some NULL, some
// with bytes of their own between the values: residual pieces) and
// literals cut from the input, SearchDerived never fails on what the
// writer wrote and finds the rows the assembled values hold.
func FuzzSearchDerived(f *testing.F) {
	f.Add("/auth/v1/token", "v1/t", uint8(3))
	f.Add(" | x", "| 2", uint8(8))
	f.Add("", "0 |", uint8(1))
	f.Add("GET", "T | 4", uint8(200))
	f.Add("|", "||", uint8(5))
	f.Add("] /r", "1] /rest", uint8(21))
	f.Add("", "7] ", uint8(40))
	descs := []ColumnDesc{
		{Path: "timestamp", Type: TypeTimestamp},
		{Path: "event_message", Type: TypeString},
		{Path: "method", Type: TypeString},
		{Path: "status", Type: TypeInt64},
		{Path: "path", Type: TypeString},
	}
	f.Fuzz(func(t *testing.T, piece, needles string, seed uint8) {
		if len(piece) > 256 || len(needles) > 64 {
			t.Skip()
		}
		var lits []string
		for _, l := range strings.Split(needles, "\n") {
			if l != "" {
				lits = append(lits, l)
			}
		}
		if len(lits) == 0 || len(lits) > 4 {
			t.Skip()
		}
		n := 60 + int(seed)
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		tc := make([]testColumn, len(descs))
		for i := range tc {
			tc[i].desc = descs[i]
		}
		for i := 0; i < n; i++ {
			method := []string{"GET", "POST", "DELETE"}[rng.IntN(3)]
			status := int64(rng.IntN(600))
			path := "/rest/v1/" + piece + strconv.Itoa(rng.IntN(50))
			var msg any = method + " | " + strconv.FormatInt(status, 10) + " | " + path + piece
			switch rng.IntN(10) {
			case 8, 9:
				msg = method + " [" + strconv.Itoa(rng.IntN(100000)) + piece + "] " + path + " " + strconv.FormatInt(status, 10)
			case 0:
				msg = piece
			case 1:
				msg = nil
			case 2:
				msg = method + path + strconv.FormatInt(status, 10) // values that meet
			case 3:
				msg = piece + strconv.FormatInt(status, 10) + " " + method
			}
			tc[0].vals = append(tc[0].vals, int64(i))
			tc[1].vals = append(tc[1].vals, msg)
			tc[2].vals = append(tc[2].vals, method)
			tc[3].vals = append(tc[3].vals, status)
			tc[4].vals = append(tc[4].vals, path)
		}
		fs := vfs.NewMemFS()
		fs.MkdirAll("/d")
		writeSegment(t, fs, "/d/s.seg", tc, 64, nil)
		r := openSegment(t, fs, "/d/s.seg")
		defer r.Close()
		checkSearchDerived(t, r, 1, lits, rng)
	})
}
