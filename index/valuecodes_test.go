package index

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sediment/sediment/internal/vec"
)

// referenceValueIndex writes the value fields of blocks as a builder that
// kept every term's rows in a list would: each field's terms with their
// rows, dropped past maxTerms distinct values.
func referenceValueIndex(t *testing.T, blocks []valueBlock, maxTerms int) ([]byte, []byte) {
	t.Helper()
	type field struct {
		terms   map[termKey][]uint32
		dropped bool
	}
	fields := map[fieldKey]*field{}
	for _, bl := range blocks {
		k := fieldKey{bl.path, bl.kind}
		f := fields[k]
		if f == nil {
			f = &field{terms: map[termKey][]uint32{}}
			fields[k] = f
		}
		for i := 0; i < bl.v.Len; i++ {
			if bl.v.IsNull(i) {
				continue
			}
			var key termKey
			switch bl.kind {
			case kindString:
				key.str = bl.v.StringAt(i)
			case kindInt:
				key.num = bl.v.Ints[i]
			case kindBool:
				if bl.v.Bools[i] {
					key.num = 1
				}
			}
			f.terms[key] = append(f.terms[key], bl.base+uint32(i))
		}
		if bl.kind != kindBool && len(f.terms) > maxTerms {
			f.dropped = true
		}
	}
	var keys []fieldKey
	for k, f := range fields {
		if !f.dropped {
			keys = append(keys, k)
		}
	}
	sortFieldKeys(keys)
	u := &memUnits{}
	fw := newFieldWriter(u)
	for _, k := range keys {
		var terms []termOut
		for key, rows := range fields[k].terms {
			terms = append(terms, termOut{key: key, rows: rows, card: uint64(len(rows))})
		}
		if err := fw.field(k.path, k.kind, terms, nil, ^uint64(0)); err != nil {
			t.Fatal(err)
		}
	}
	return fw.finish(), u.data
}

// valueBlock is one Add of a value field.
type valueBlock struct {
	path string
	kind Kind
	base uint32
	v    *vec.Vector
}

// randomValueBlocks makes blocks of value fields of every shape a flush
// meets: dense and sparse, few terms and many (up to past the cap),
// dictionary-coded strings and plain ones, ints, bools, NULLs.
func randomValueBlocks(rng *rand.Rand, rows int) []valueBlock {
	type shape struct {
		path    string
		kind    Kind
		terms   int     // distinct values drawn from
		present float64 // share of rows with a value
		dict    bool
	}
	shapes := []shape{
		{"one", kindString, 1, 1, true},
		{"two", kindString, 2, 0.97, false},
		{"proto", kindString, 3, 1, true},
		{"method", kindString, 7, 1, true},
		{"city", kindString, 28, 1, true},
		{"worker", kindString, 60, 1, false},
		{"wide", kindString, 300, 1, true},
		{"jwt.role", kindString, 2, 0.02, true},
		{"rare", kindString, 40, 0.001, false},
		{"status", kindInt, 21, 1, false},
		{"bytes", kindInt, 5000, 0.5, false}, // dropped
		{"port", kindInt, 200, 0.9, false},
		{"cached", kindBool, 2, 0.8, false},
		{"absent", kindString, 5, 0, true},
	}
	var out []valueBlock
	for base := 0; base < rows; {
		n := min(rows-base, 1+rng.IntN(9000))
		for _, sh := range shapes {
			v := &vec.Vector{Len: n, Nulls: vec.NewBitset(n), Ints: make([]int64, n), Bools: make([]bool, n)}
			vals := make([]string, n)
			for i := range n {
				if rng.Float64() >= sh.present {
					v.Nulls.Set(i)
					continue
				}
				// Skewed: low values far more often.
				x := int(float64(sh.terms) * rng.Float64() * rng.Float64())
				switch sh.kind {
				case kindString:
					vals[i] = fmt.Sprintf("%s-%d", sh.path, x)
				case kindInt:
					v.Ints[i] = int64(x*7 - 100)
				case kindBool:
					v.Bools[i] = x%2 == 0
				}
			}
			switch sh.kind {
			case kindString:
				if sh.dict {
					d := dictVec(vals)
					v.Codes, v.Dict = d.Codes, d.Dict
				} else {
					v.Strs = vals
				}
			}
			out = append(out, valueBlock{sh.path, sh.kind, uint32(base), v})
		}
		base += n
	}
	return out
}

// TestValueFieldsSameAsReference: the builder, which keeps value fields
// as term codes until Write, writes the very index bytes of one that kept
// every term's rows, and every term reads back with its rows.
func TestValueFieldsSameAsReference(t *testing.T) {
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 14))
		blocks := randomValueBlocks(rng, 20000+int(seed)*30000)
		maxTerms := []int{64, 64, 255, 400}[seed]
		b := NewBuilder(&BuilderOptions{MaxValueTerms: maxTerms, RowsHint: 1 << 20})
		for _, bl := range blocks {
			switch bl.kind {
			case kindString:
				b.AddStrings(bl.path, bl.base, bl.v)
			case kindInt:
				b.AddInts(bl.path, bl.base, bl.v)
			case kindBool:
				b.AddBools(bl.path, bl.base, bl.v)
			}
		}
		u := &memUnits{}
		dir, err := b.Write(u)
		if err != nil {
			t.Fatal(err)
		}
		wantDir, wantUnits := referenceValueIndex(t, blocks, maxTerms)
		if !bytes.Equal(dir, wantDir) || !bytes.Equal(u.data, wantUnits) {
			t.Fatalf("seed %d: index differs from the reference (%d/%d directory bytes, %d/%d unit bytes)", seed, len(dir), len(wantDir), len(u.data), len(wantUnits))
		}
		ix, err := Open(dir, u)
		if err != nil {
			t.Fatal(err)
		}
		// Every value of every row is found in its term's rows.
		for _, bl := range blocks {
			if !ix.Has(bl.path, bl.kind) {
				continue
			}
			for i := 0; i < bl.v.Len; i += 97 {
				if bl.v.IsNull(i) {
					continue
				}
				row := bl.base + uint32(i)
				var found bool
				switch bl.kind {
				case kindString:
					bm, ok, err := ix.LookupString(bl.path, bl.v.StringAt(i))
					found = ok && err == nil && bm.Contains(row)
				case kindInt:
					bm, ok, err := ix.LookupInt(bl.path, bl.v.Ints[i])
					found = ok && err == nil && bm.Contains(row)
				case kindBool:
					want := bl.v.Bools[i]
					bm, _, ok, err := ix.Match(bl.path, kindBool, func(x any) bool { return x.(bool) == want }, true)
					found = ok && err == nil && bm.Contains(row)
				}
				if !found {
					t.Fatalf("seed %d: %s row %d not in its term's rows", seed, bl.path, row)
				}
			}
		}
		for _, p := range []string{"bytes", "wide"} {
			if has := ix.Has(p, map[string]Kind{"bytes": kindInt, "wide": kindString}[p]); has != (p == "wide" && maxTerms >= 300) {
				t.Errorf("seed %d (cap %d): field %s indexed %v", seed, maxTerms, p, has)
			}
		}
	}
}

// TestCodeChunksRoundTrip: codes read back as written, whatever the width
// and whether the chunk is dense, sparse or runs, and never take more than
// dense.
func TestCodeChunksRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var sparse []byte
	kinds := map[string]int{}
	for _, nterms := range []uint32{1, 2, 3, 4, 15, 16, 255, 256, 70000, 1 << 31} {
		for _, share := range []float64{0, 0.001, 0.3, 1} {
			for _, run := range []int{1, 3, 50, 5000} {
				codes := make([]uint32, 1+rng.IntN(3000))
				present := 0
				for i := range codes {
					switch {
					case i%run != 0:
						codes[i] = codes[i-1] // the run goes on
					case rng.Float64() < share:
						codes[i] = 1 + uint32(rng.Int64N(int64(nterms)))
					}
					if codes[i] != 0 {
						present++
					}
				}
				c := encodeCodes(100, codes, present, nterms, &sparse)
				if got := c.decode(nil); !slices.Equal(got, codes) {
					t.Fatalf("%d terms, share %v, runs of %d (width %d, runs %v): codes differ", nterms, share, run, c.width, c.runs)
				}
				if dense := (len(codes)*int(codeWidth(nterms)) + 7) / 8; len(c.data) > dense {
					t.Errorf("%d terms, share %v, runs of %d: %d bytes, more than dense (%d)", nterms, share, run, len(c.data), dense)
				}
				kinds[map[bool]string{true: "runs", false: map[bool]string{true: "sparse", false: "dense"}[c.width == 0]}[c.runs]]++
			}
		}
	}
	if kinds["runs"] == 0 || kinds["sparse"] == 0 || kinds["dense"] == 0 {
		t.Fatalf("chunks of each kind: %v", kinds)
	}
}

// FuzzCodeChunk: encoded codes decode as they were; a chunk of any bytes
// decodes without panicking, to n codes.
func FuzzCodeChunk(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 0, 0, 7}, uint8(8), uint16(7), uint32(7))
	f.Add([]byte{5, 1, 200, 3}, uint8(0), uint16(300), uint32(3))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x01}, uint8(0), uint16(10), uint32(1))
	f.Add([]byte{0x1b, 0xe4}, uint8(2), uint16(8), uint32(3))
	f.Fuzz(func(t *testing.T, data []byte, width uint8, n uint16, nterms uint32) {
		c := codeChunk{n: uint32(n), width: width, data: data}
		if got := c.decode(nil); len(got) != int(n) {
			t.Fatalf("%d codes for %d rows", len(got), n)
		}
		c = codeChunk{n: uint32(n), runs: true, data: data}
		if got := c.decode(nil); len(got) != int(n) {
			t.Fatalf("%d codes for %d rows (runs)", len(got), n)
		}
		if nterms == 0 {
			return
		}
		codes := make([]uint32, len(data))
		present := 0
		for i, x := range data {
			if x%3 != 0 {
				codes[i] = 1 + uint32(x)%nterms
				present++
			}
		}
		var sparse []byte
		c = encodeCodes(0, codes, present, nterms, &sparse)
		if got := c.decode(nil); !slices.Equal(got, codes) {
			t.Fatalf("codes %v read back as %v", codes, got)
		}
		// The same codes in runs of up to 40 rows.
		var runny []uint32
		present = 0
		for i, x := range codes {
			for range 1 + int(data[i])%40 {
				runny = append(runny, x)
				if x != 0 {
					present++
				}
			}
		}
		c = encodeCodes(0, runny, present, nterms, &sparse)
		if got := c.decode(nil); !slices.Equal(got, runny) {
			t.Fatalf("codes %v read back as %v", runny, got)
		}
	})
}

// TestValueFieldBlocksOutOfOrder: blocks added out of order, or the same
// block twice, still give each term its rows once, ascending.
func TestValueFieldBlocksOutOfOrder(t *testing.T) {
	vals := []string{"a", "b", "a", "c", "a"}
	ix := build(t, func(b *Builder) {
		b.AddStrings("f", 10, dictVec(vals))
		b.AddStrings("f", 0, strVec(vals, 0))
		b.AddStrings("f", 0, dictVec(vals)) // again
		b.AddInts("n", 7, &vec.Vector{Len: 2, Ints: []int64{5, 6}})
		b.AddInts("n", 3, &vec.Vector{Len: 2, Ints: []int64{5, 5}})
	})
	bm, ok, err := ix.LookupString("f", "a")
	if !ok || err != nil || !slices.Equal(rowsOf(bm), []uint32{0, 2, 4, 10, 12, 14}) {
		t.Fatalf("a: %v %v %v", rowsOf(bm), ok, err)
	}
	_, n, _, _ := ix.Match("f", KindString, func(v any) bool { return v == "a" }, false)
	if n != 6 {
		t.Fatalf("a counted %d rows, want 6", n)
	}
	if bm, _, _ := ix.LookupInt("n", 5); !slices.Equal(rowsOf(bm), []uint32{3, 4, 7}) {
		t.Fatalf("5: %v", rowsOf(bm))
	}
}
