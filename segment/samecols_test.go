package segment

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
)

// sameUnits reports whether the chunks of columns a and b in block blk
// lie in the same units.
func sameUnits(r *Reader, blk, a, b int) bool {
	ca, cb := r.testChunk(blk, a), r.testChunk(blk, b)
	if ca == nil || cb == nil || ca.pages.Len() != cb.pages.Len() {
		return false
	}
	for i := range ca.pages.Len() {
		ao, al := ca.pages.unit(i)
		bo, bl := cb.pages.unit(i)
		if ao != bo || al != bl {
			return false
		}
	}
	return true
}

// TestSameColumnsStoredOnce: a dictionary-encoded column whose rows,
// NULLs and values are those of one written before in the block is stored
// once in version 4 (its chunk lists the other's units), one that differs
// in a single value or a single NULL is written apart, and all of them
// read back; a block copy keeps the sharing, and version 3 shares nothing.
func TestSameColumnsStoredOnce(t *testing.T) {
	const n = 6000
	rng := rand.New(rand.NewPCG(8, 2))
	cols := []testColumn{
		{desc: ColumnDesc{Path: "timestamp", Type: TypeTimestamp}},
		{desc: ColumnDesc{Path: "ip", Type: TypeString}},
		{desc: ColumnDesc{Path: "ip_again", Type: TypeString}},
		{desc: ColumnDesc{Path: "ip_one_value_off", Type: TypeString}},
		{desc: ColumnDesc{Path: "ip_one_null_off", Type: TypeString}},
		{desc: ColumnDesc{Path: "country", Type: TypeString}},
		{desc: ColumnDesc{Path: "country_again", Type: TypeString}},
	}
	ts := int64(1_700_000_000_000_000)
	for i := 0; i < n; i++ {
		ts += int64(rng.IntN(100))
		var ip any = fmt.Sprintf("client-%04d", rng.IntN(700))
		if i%13 == 0 {
			ip = nil
		}
		off, nullOff := ip, ip
		if i == 4321 {
			off = "client-9999"
		}
		if i == 17 {
			nullOff = nil
		}
		country := []string{"US", "DE", "FR", "BR", "JP"}[rng.IntN(5)]
		row := []any{ts, ip, ip, off, nullOff, country, country}
		for c := range cols {
			cols[c].vals = append(cols[c].vals, row[c])
		}
	}
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	writeSegment(t, fs, "/d/v4.seg", cols, 3000, nil)
	v3 := WriterOptions{FormatVersion: FormatV3}
	writeSegment(t, fs, "/d/v3.seg", cols, 3000, &v3)
	r := openSegment(t, fs, "/d/v4.seg")
	defer r.Close()
	old := openSegment(t, fs, "/d/v3.seg")
	defer old.Close()
	col := func(name string) int { return r.Column(name, TypeString) }
	for blk := 0; blk < r.NumBlocks(); blk++ {
		if c := r.testChunk(blk, col("ip")); c == nil || c.enc != encDict {
			t.Fatalf("block %d: ip not dictionary encoded", blk)
		}
		if !sameUnits(r, blk, col("ip"), col("ip_again")) || !sameUnits(r, blk, col("country"), col("country_again")) {
			t.Fatalf("block %d: a copy of a column is stored apart", blk)
		}
		// Row 17 (block 0) differs in a NULL, row 4321 (block 1) in a value.
		differs := []string{"ip_one_null_off", "ip_one_value_off"}[blk]
		same := []string{"ip_one_value_off", "ip_one_null_off"}[blk]
		if sameUnits(r, blk, col("ip"), col(differs)) || !sameUnits(r, blk, col("ip"), col(same)) {
			t.Fatalf("block %d: %s shares the units of ip, or %s does not", blk, differs, same)
		}
		fa, _ := r.FirstUnit(blk, col("ip"))
		fb, _ := r.FirstUnit(blk, col("ip_again"))
		if fa != fb || !r.SameUnits(blk, col("ip"), col("ip_again")) || r.SameUnits(blk, col("ip"), col(differs)) ||
			r.SameUnits(blk, col("ip"), col("country")) {
			t.Fatalf("block %d: FirstUnit %d and %d, or SameUnits wrong", blk, fa, fb)
		}
		if sameUnits(old, blk, col("ip"), col("ip_again")) {
			t.Fatalf("block %d: version 3 shares units", blk)
		}
	}
	if r.Size() >= old.Size() {
		t.Fatalf("%d bytes with copies stored once, %d without", r.Size(), old.Size())
	}
	t.Logf("%d bytes, %d in version 3", r.Size(), old.Size())
	checkAllValues(t, r, cols)
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	copyAllBlocks(t, fs, r, "/d/copy.seg", nil)
	c := openSegment(t, fs, "/d/copy.seg")
	defer c.Close()
	checkAllValues(t, c, cols)
	if !sameUnits(c, 0, col("ip"), col("ip_again")) || c.Size() > r.Size() {
		t.Fatalf("the copy shares no units (%d bytes, %d before)", c.Size(), r.Size())
	}
	copyAllBlocks(t, fs, old, "/d/rewritten.seg", nil)
	rw := openSegment(t, fs, "/d/rewritten.seg")
	defer rw.Close()
	checkAllValues(t, rw, cols)
	if !sameUnits(rw, 1, col("ip"), col("ip_again")) {
		t.Fatal("a version 3 block rewritten as version 4 stores the copy apart")
	}
}

// TestSameChunksDigest: chunks with the same rows, NULLs, codes and
// dictionary have one digest; a dictionary cut differently ("ab", "c" vs
// "a", "bc"), another NULL, another code or width each give another.
func TestSameChunksDigest(t *testing.T) {
	var s sameChunks
	d := &ColumnData{Strs: make([]string, 4)}
	plan := func(dict []string, codes []uint32, width uint8) *chunkPlan {
		return &chunkPlan{enc: encDict, dictStrs: dict, codes: codes, width: width, present: 4}
	}
	base := s.digest(plan([]string{"ab", "c"}, []uint32{0, 1, 1, 0}, 1), d, 4)
	if again := s.digest(plan([]string{"ab", "c"}, []uint32{0, 1, 1, 0}, 1), d, 4); again != base {
		t.Fatal("the same chunk has two digests")
	}
	withNull := &ColumnData{Strs: make([]string, 4), Nulls: vec.NewBitset(4)}
	withNull.Nulls.Set(3)
	for name, sum := range map[string][32]byte{
		"dictionary cut": s.digest(plan([]string{"a", "bc"}, []uint32{0, 1, 1, 0}, 1), d, 4),
		"code":           s.digest(plan([]string{"ab", "c"}, []uint32{0, 1, 0, 0}, 1), d, 4),
		"width":          s.digest(plan([]string{"ab", "c"}, []uint32{0, 1, 1, 0}, 2), d, 4),
		"null":           s.digest(&chunkPlan{enc: encDict, dictStrs: []string{"ab", "c"}, codes: []uint32{0, 1, 1, 0}, width: 1, present: 3}, withNull, 4),
	} {
		if sum == base {
			t.Errorf("%s: same digest", name)
		}
	}
}
