package segment

import (
	"bytes"
	"fmt"
	"github.com/sediment/sediment/internal/vfs"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sediment/sediment/internal/vec"
)

// TestPlanScratchSameBytes: planning a run of chunks with one reused
// scratch (as a Writer does, column after column) encodes every chunk to
// the same bytes as planning each with fresh memory, whatever the chunks
// before it left in the scratch: larger and smaller dictionaries, codes
// given by the caller, ints, NULL rows.
func TestPlanScratchSameBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var chunks []struct {
		typ ColType
		d   *ColumnData
	}
	add := func(typ ColType, d *ColumnData) {
		chunks = append(chunks, struct {
			typ ColType
			d   *ColumnData
		}{typ, d})
	}
	for _, rows := range []int{5000, 300, 20000, 17} {
		for _, distinct := range []int{3, 200, 5000, rows} {
			nulls := vec.NewBitset(rows)
			strs := make([]string, rows)
			ints := make([]int64, rows)
			for i := range strs {
				if rng.IntN(7) == 0 {
					nulls.Set(i)
					continue
				}
				k := rng.IntN(distinct)
				strs[i] = fmt.Sprintf("/v1/object/%d/path", k)
				ints[i] = int64(k) * 1000
			}
			add(TypeString, &ColumnData{Nulls: nulls, Strs: strs})
			add(TypeInt64, &ColumnData{Nulls: nulls, Ints: ints})
			// The same values as codes into a dictionary that repeats entries.
			dict := make([]string, 0, distinct+1)
			for k := 0; k < distinct; k++ {
				dict = append(dict, fmt.Sprintf("/v1/object/%d/path", k))
			}
			dict = append(dict, dict[0])
			codes := make([]uint32, rows)
			for i := range codes {
				if !nulls.Get(i) {
					codes[i] = uint32(rng.IntN(len(dict)))
				}
			}
			add(TypeString, &ColumnData{Nulls: nulls, Codes: codes, Dict: dict})
		}
	}
	encode := func(p *chunkPlan, typ ColType, d *ColumnData, rows int) []byte {
		out := []byte{byte(p.enc), p.width}
		if p.enc == encDict {
			out = p.appendDict(out)
		}
		return p.appendPage(out, typ, d, 0, rows)
	}
	var sc planScratch
	for _, version := range []uint8{FormatV1, FormatV2} {
		for i, c := range chunks {
			rows := len(c.d.Strs) + len(c.d.Ints) + len(c.d.Codes)
			fresh := encode(planChunk(c.typ, c.d, rows, version, nil), c.typ, c.d, rows)
			reused := encode(planChunk(c.typ, c.d, rows, version, &sc), c.typ, c.d, rows)
			if !bytes.Equal(fresh, reused) {
				t.Fatalf("version %d chunk %d (%d rows): %d bytes with a reused scratch, %d fresh", version, i, rows, len(reused), len(fresh))
			}
		}
	}
}

// TestStrRange: a chunk's string range is its smallest and largest value
// whatever the order they come in, empty strings and shared first bytes
// included.
func TestStrRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 500; i++ {
		vals := make([]string, 1+rng.IntN(20))
		for j := range vals {
			b := make([]byte, rng.IntN(4))
			for k := range b {
				b[k] = "ab\x00\xff"[rng.IntN(4)]
			}
			vals[j] = string(b)
		}
		var r strRange
		for _, s := range vals {
			r.add(s)
		}
		if !r.any || r.min != slices.Min(vals) || r.max != slices.Max(vals) {
			t.Fatalf("range of %q: %q..%q", vals, r.min, r.max)
		}
	}
}

// TestNearlyDistinctThenRepeats: a column whose values were nearly all
// distinct in one block (ids) still gets a dictionary in the next block
// when its values repeat there, and gets none again after; every value
// reads back.
func TestNearlyDistinctThenRepeats(t *testing.T) {
	kinds := []string{"distinct", "repeats", "distinct", "repeats at the end"}
	checkIDEncodings(t, kinds, 3000, func(b, i int, kind string) string {
		switch {
		case kind == "repeats", kind == "repeats at the end" && i >= 600:
			return fmt.Sprintf("route-%d", i%12)
		}
		return fmt.Sprintf("req-%d-%06d", b, i)
	})
}

// TestProbeDistinct: after a block of distinct ids, a block whose ids
// are distinct again gets no dictionary (probeDistinct), while blocks
// whose values repeat get one: each value twice in a row (retries), each
// twice at random places, and a few routes between distinct values at
// both ends. Every value reads back.
func TestProbeDistinct(t *testing.T) {
	const blockRows = 700
	rng := rand.New(rand.NewPCG(5, 6))
	kinds := []string{"distinct", "distinct", "pairs in a row", "distinct", "pairs at random", "distinct", "distinct ends"}
	var perm []int
	checkIDEncodings(t, kinds, blockRows, func(b, i int, kind string) string {
		if i == 0 {
			perm = rng.Perm(blockRows)
		}
		switch kind {
		case "pairs in a row":
			return fmt.Sprintf("retry-%d-%06d", b, i/2)
		case "pairs at random":
			return fmt.Sprintf("pair-%d-%06d", b, perm[i]/2)
		case "distinct ends":
			if i >= 100 && i < blockRows-100 {
				return fmt.Sprintf("route-%d", i%12)
			}
		}
		return fmt.Sprintf("req-%d-%06d", b, i)
	})
}

// checkIDEncodings writes one block of blockRows ids (idOf(block, row,
// kind)) for each of kinds and checks that exactly the blocks of a kind
// other than "distinct" are dictionary encoded, and that every value reads
// back.
func checkIDEncodings(t *testing.T, kinds []string, blockRows int, idOf func(b, i int, kind string) string) {
	t.Helper()
	cols := []testColumn{{desc: ColumnDesc{Path: "timestamp", Type: TypeTimestamp}}, {desc: ColumnDesc{Path: "id", Type: TypeString}}}
	for b, kind := range kinds {
		for i := 0; i < blockRows; i++ {
			cols[0].vals = append(cols[0].vals, int64(b*blockRows+i))
			cols[1].vals = append(cols[1].vals, idOf(b, i, kind))
		}
	}
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	writeSegment(t, fs, "/d/s.seg", cols, blockRows, nil)
	r := openSegment(t, fs, "/d/s.seg")
	defer r.Close()
	id := r.Column("id", TypeString)
	for b, kind := range kinds {
		got := r.testChunk(b, id).enc
		if dict := kind != "distinct"; (got == encDict) != dict {
			t.Errorf("block %d (%s): encoding %d", b, kind, got)
		}
	}
	checkAllValues(t, r, cols)
}
