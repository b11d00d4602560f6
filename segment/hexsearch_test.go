package segment

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sediment/sediment/internal/vfs"
)

// makeHexRefColumns returns n rows of messages built from a hex id column
// (16 digits of one case, upper when upper, with a suffix such as "-SJC"
// in the first half of each block of blockRows rows whose index is odd
// when suffixes: such a block is hex encoded, its pages of the second half
// without suffixes), a
// path column and a status, and per row the offsets where one piece of
// its message ends and the next begins.
func makeHexRefColumns(rng *rand.Rand, n, blockRows int, upper, suffixes bool) ([]testColumn, [][]int) {
	tc := []testColumn{
		{desc: ColumnDesc{Path: "timestamp", Type: TypeTimestamp}},
		{desc: ColumnDesc{Path: "event_message", Type: TypeString}},
		{desc: ColumnDesc{Path: "ray", Type: TypeString}},
		{desc: ColumnDesc{Path: "path", Type: TypeString}},
		{desc: ColumnDesc{Path: "status", Type: TypeInt64}},
	}
	digits := "0123456789abcdef"
	if upper {
		digits = "0123456789ABCDEF"
	}
	sufs := []string{"-SJC", "-FRA", "-1A", "-LHR", "-2x"}
	paths := []string{"/storage/v1/object/logo-2", "/auth/v1/token", "/rest/v1/items?id=eq.", "/a-", "/cafe/"}
	bounds := make([][]int, n)
	for i := 0; i < n; i++ {
		var ray strings.Builder
		for k := 0; k < 16; k++ {
			ray.WriteByte(digits[rng.IntN(len(digits))])
		}
		if suffixes && (i/blockRows)%2 == 1 && i%blockRows < blockRows/2 {
			ray.WriteString(sufs[rng.IntN(len(sufs))])
		}
		path := fmt.Sprintf("%s%d.jpg", paths[rng.IntN(len(paths))], rng.IntN(3000))
		status := int64(200 + rng.IntN(4)*100)
		var msg any
		pieces := []string{"GET | ", fmt.Sprint(status), " | ", ray.String(), " | ", path}
		var sb strings.Builder
		for _, p := range pieces {
			bounds[i] = append(bounds[i], sb.Len())
			sb.WriteString(p)
		}
		bounds[i] = append(bounds[i], sb.Len())
		msg = sb.String()
		if rng.IntN(40) == 0 {
			msg, bounds[i] = nil, nil
		}
		for c, v := range []any{int64(i), msg, ray.String(), path, status} {
			tc[c].vals = append(tc[c].vals, v)
		}
	}
	return tc, bounds
}

// TestHexRefSearchRandom: SearchDerived over messages built from a hex
// id column (lower and upper case, blocks with and without suffixes)
// finds exactly the rows a plain search of the messages finds, for
// literals at every boundary of random rows' pieces and within them,
// literals that lie across the digits and the suffix, and literals no
// hex value can hold (whose search decodes no hex value).
func TestHexRefSearchRandom(t *testing.T) {
	const blockRows = 1000
	for seed := uint64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewPCG(seed, 23))
		upper, suffixes := seed%2 == 0, seed >= 3
		tc, bounds := makeHexRefColumns(rng, 3000, blockRows, upper, suffixes)
		fs := vfs.NewMemFS()
		fs.MkdirAll("/d")
		writeSegment(t, fs, "/d/s.seg", tc, blockRows, &WriterOptions{PageBytes: 2048})
		r := openSegment(t, fs, "/d/s.seg")
		msg, ray := r.Column("event_message", TypeString), r.Column("ray", TypeString)
		if derivedBlocks(r, msg) == 0 {
			t.Fatalf("seed %d: message not derived", seed)
		}
		if c := r.testChunk(1, ray); suffixes && c.enc != encHex {
			t.Fatalf("seed %d: ray not hex encoded", seed)
		}
		litSets := [][]string{{"logo-2"}, {"-SJC"}, {"-S"}, {"C | /"}, {"x-"}, {"fra"}, {"1a"}, {"a-"}, {"cafe"}, {"CAFE"},
			{"-LHR", "token"}, {"no-such"}, {"g"}, {"0 | 0"}}
		for k := 0; k < 3; k++ {
			row := rng.IntN(len(bounds))
			s, _ := tc[1].vals[row].(string)
			if s == "" {
				continue
			}
			for _, at := range bounds[row] {
				w := 1 + rng.IntN(4)
				lo, hi := max(0, at-w), min(len(s), at+w)
				litSets = append(litSets, []string{s[lo:hi]}, []string{s[lo:at]})
			}
			// Within the id: across its digits and suffix, and its end.
			id := tc[2].vals[row].(string)
			for k := 0; k < 3; k++ {
				from := rng.IntN(len(id))
				litSets = append(litSets, []string{id[from:min(len(id), from+1+rng.IntN(8))]})
			}
		}
		answered := 0
		for _, lits := range litSets {
			if len(lits[0]) == 0 {
				continue
			}
			answered += checkSearchDerived(t, r, msg, lits, rng)
			checkSearchAgainstValues(t, r, msg, tc[1].vals, lits)
		}
		if answered == 0 {
			t.Fatalf("seed %d: no search answered", seed)
		}
		r.Close()
	}
}

// TestHexColumnMayHold: a hex column's values are not read for a literal
// with bytes other than its digits when no suffix of theirs holds what
// follows the literal's digits; they are when one may, or when the
// literal is digits alone.
func TestHexColumnMayHold(t *testing.T) {
	const blockRows = 1000
	rng := rand.New(rand.NewPCG(5, 23))
	tc, _ := makeHexRefColumns(rng, 2000, blockRows, false, true)
	tc[2].vals[blockRows+3] = "0123456789abcdef-SJC"
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	writeSegment(t, fs, "/d/s.seg", tc, blockRows, &WriterOptions{PageBytes: 2048})
	r := openSegment(t, fs, "/d/s.seg")
	defer r.Close()
	ray := r.Column("ray", TypeString)
	if c := r.testChunk(1, ray); c.enc != encHex || c.pages.Len() < 3 {
		t.Fatalf("block 1: encoding %d, %d pages; want hex over several", c.enc, c.pages.Len())
	}
	all, noSuffix := [2]int{0, blockRows}, [2]int{blockRows * 3 / 4, blockRows}
	for _, tt := range []struct {
		rows [2]int
		lits []string
		want bool
	}{
		{all, []string{"logo-246"}, false},
		{all, []string{"cafe"}, true}, // digits alone
		{all, []string{"CAFE"}, false},
		{all, []string{"ef-SJ"}, true},
		{all, []string{"-SJCX"}, false},
		{all, []string{"logo-246", "c-S"}, true},
		{noSuffix, []string{"-SJC"}, false}, // pages without suffixes
		{noSuffix, []string{"f-SJC"}, false},
		{noSuffix, []string{"cafe"}, true},
	} {
		got, err := r.columnMayHold(1, ray, tt.rows[0], tt.rows[1], tt.lits, cacheNoFill)
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("rows %v %q: may hold %v, want %v", tt.rows, tt.lits, got, tt.want)
		}
	}
}
