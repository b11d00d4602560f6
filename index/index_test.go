package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sediment/sediment/internal/vec"
)

// memUnits is a unit store with checksums, like a segment's.
type memUnits struct{ data []byte }

func (m *memUnits) WriteUnit(p []byte) (int64, int64, error) {
	off := int64(len(m.data))
	m.data = append(m.data, p...)
	m.data = binary.LittleEndian.AppendUint32(m.data, crc32.ChecksumIEEE(p))
	return off, int64(len(p) + 4), nil
}

func (m *memUnits) ReadUnit(off, ln int64) ([]byte, error) {
	if off < 0 || ln < 4 || off+ln > int64(len(m.data)) {
		return nil, errors.New("out of range")
	}
	p := m.data[off : off+ln-4]
	if crc32.ChecksumIEEE(p) != binary.LittleEndian.Uint32(m.data[off+ln-4:]) {
		return nil, errors.New("crc")
	}
	return p, nil
}

func strVec(vals []string, nullEvery int) *vec.Vector {
	v := &vec.Vector{Type: vec.String, Len: len(vals), Strs: vals}
	if nullEvery > 0 {
		v.Nulls = vec.NewBitset(len(vals))
		for i := 0; i < len(vals); i += nullEvery {
			v.Nulls.Set(i)
		}
	}
	return v
}

func dictVec(vals []string) *vec.Vector {
	var dict []string
	idx := map[string]uint32{}
	codes := make([]uint32, len(vals))
	for i, s := range vals {
		c, ok := idx[s]
		if !ok {
			c = uint32(len(dict))
			idx[s] = c
			dict = append(dict, s)
		}
		codes[i] = c
	}
	return &vec.Vector{Type: vec.String, Len: len(vals), Codes: codes, Dict: dict}
}

func rowsOf(bm *roaring.Bitmap) []uint32 {
	if bm == nil {
		return nil
	}
	return bm.ToArray()
}

func build(t *testing.T, fn func(b *Builder)) *Index {
	return buildWith(t, nil, fn)
}

func buildWith(t *testing.T, opts *BuilderOptions, fn func(b *Builder)) *Index {
	t.Helper()
	b := NewBuilder(opts)
	fn(b)
	return writeAndOpen(t, b)
}

// writeAndOpen writes b's index into memory and opens it.
func writeAndOpen(t *testing.T, b *Builder) *Index {
	t.Helper()
	ix, err := Open(writeIndex(t, b))
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// writeIndex writes b's index into memory: its directory and its units.
func writeIndex(t *testing.T, b *Builder) ([]byte, *memUnits) {
	t.Helper()
	u := &memUnits{}
	dir, err := b.Write(u)
	if err != nil {
		t.Fatal(err)
	}
	return dir, u
}

func TestValueLookups(t *testing.T) {
	methods := []string{"GET", "POST", "GET", "DELETE", "GET", "POST"}
	statuses := []int64{200, 500, 200, 404, 500, 200}
	ix := build(t, func(b *Builder) {
		// Two blocks: rows 0..2 plain strings, rows 3..5 dictionary coded.
		b.AddStrings("metadata.request.method", 0, strVec(methods[:3], 0))
		b.AddStrings("metadata.request.method", 3, dictVec(methods[3:]))
		b.AddInts("metadata.response.status_code", 0, &vec.Vector{Type: vec.Int64, Len: 6, Ints: statuses})
		b.AddBools("metadata.cached", 0, &vec.Vector{Type: vec.Bool, Len: 3, Bools: []bool{true, false, true}})
	})
	if bm, ok, err := ix.LookupString("metadata.request.method", "GET"); !ok || err != nil || !slices.Equal(rowsOf(bm), []uint32{0, 2, 4}) {
		t.Fatalf("GET: %v %v %v", rowsOf(bm), ok, err)
	}
	if bm, ok, _ := ix.LookupString("metadata.request.method", "PUT"); !ok || !bm.IsEmpty() {
		t.Fatalf("PUT should be indexed and empty")
	}
	if bm, ok, _ := ix.LookupInt("metadata.response.status_code", 500); !ok || !slices.Equal(rowsOf(bm), []uint32{1, 4}) {
		t.Fatalf("500: %v", rowsOf(bm))
	}
	if _, ok, _ := ix.LookupInt("metadata.other", 1); ok {
		t.Fatal("unindexed field reported as indexed")
	}
	// Counting from term cardinalities without reading postings.
	_, n, ok, err := ix.Match("metadata.response.status_code", KindInt, func(v any) bool { return v.(int64) >= 400 }, false)
	if !ok || err != nil || n != 3 {
		t.Fatalf(">=400 count %d %v %v", n, ok, err)
	}
	bm, _, _, _ := ix.Match("metadata.cached", KindBool, func(v any) bool { return v.(bool) }, true)
	if !slices.Equal(rowsOf(bm), []uint32{0, 2}) {
		t.Fatalf("cached: %v", rowsOf(bm))
	}
}

func TestHighCardinalityValueFieldDropped(t *testing.T) {
	vals := make([]string, 20000)
	for i := range vals {
		vals[i] = fmt.Sprintf("v%d", i)
	}
	ix := build(t, func(b *Builder) { b.AddStrings("id", 0, strVec(vals, 0)) })
	if ix.Has("id", KindString) {
		t.Fatal("a field with 20000 distinct values should not be indexed")
	}
}

// TestDictVectorValueFieldBound: a dictionary-coded vector with more
// distinct values than MaxValueTerms drops its field, even after blocks
// that kept it; one whose dictionary repeats values counts each value once
// and stays indexed with every row.
func TestDictVectorValueFieldBound(t *testing.T) {
	few := []string{"GET", "POST", "GET"}
	many := make([]string, 200)
	for i := range many {
		many[i] = fmt.Sprintf("v%d", i%100)
	}
	ix := build(t, func(b *Builder) {
		b.AddStrings("method", 0, dictVec(few))
		b.AddStrings("method", 3, dictVec(many))
	})
	if ix.Has("method", KindString) {
		t.Fatal("a field given 100 distinct values in a dictionary vector should not be indexed")
	}
	// 80 dictionary entries, two of each of 40 values.
	dict := make([]string, 80)
	codes := make([]uint32, 160)
	for i := range dict {
		dict[i] = fmt.Sprintf("w%d", i%40)
	}
	for i := range codes {
		codes[i] = uint32(i % 80)
	}
	ix = build(t, func(b *Builder) {
		b.AddStrings("host", 0, &vec.Vector{Type: vec.String, Len: len(codes), Codes: codes, Dict: dict})
	})
	bm, ok, err := ix.LookupString("host", "w1")
	if !ok || err != nil {
		t.Fatalf("a field of 40 distinct values should be indexed: %v %v", ok, err)
	}
	// w1 is entries 1 and 41: rows 1, 41, 81, 121.
	if got := rowsOf(bm); !slices.Equal(got, []uint32{1, 41, 81, 121}) {
		t.Fatalf("w1 rows %v", got)
	}
}

// TestTextCandidatesExact checks the token index against a brute-force
// substring search over random messages, for needles that are whole tokens,
// parts of tokens, several tokens, case-folded, and absent.
func TestTextCandidatesExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"error", "timeout", "connection", "refused", "GET", "POST", "rest", "v1", "users",
		"duplicate", "key", "ECONNREFUSED", "200", "500", "démarrage", "8a1b2c3d4e5f6a7b"}
	msgs := make([]string, 3000)
	for i := range msgs {
		var sb strings.Builder
		for j := 0; j < 3+rng.IntN(6); j++ {
			if j > 0 {
				sb.WriteString([]string{" ", " | ", "/", ": ", "-"}[rng.IntN(5)])
			}
			w := words[rng.IntN(len(words))]
			if rng.IntN(10) == 0 {
				w += fmt.Sprint(rng.IntN(100))
			}
			sb.WriteString(w)
		}
		if i == 1234 {
			sb.WriteString(" " + strings.Repeat("z", MaxTokenLen+5))
		}
		msgs[i] = sb.String()
	}
	for _, share := range []float64{1, 0} { // keep every token; default
		t.Run(fmt.Sprintf("share=%v", share), func(t *testing.T) {
			ix := buildWith(t, &BuilderOptions{FrequentTokenShare: share}, func(b *Builder) {
				b.AddText("event_message", 0, strVec(msgs[:1500], 0))
				b.AddText("event_message", 1500, dictVec(msgs[1500:]))
			})
			checkTextCandidates(t, ix, msgs, share == 1)
		})
	}
}

func checkTextCandidates(t *testing.T, ix *Index, msgs []string, allKept bool) {
	for _, tc := range []struct {
		needle string
		fold   bool
	}{
		{"error", false}, {"rror", false}, {"erro", false}, {"timeout", false},
		{"connection refused", false}, {"tion ref", false}, {"rest/v1", false},
		{"GET | 200", false}, {"ECONNREFUSED", false}, {"econnrefused", true},
		{"Error", true}, {"users12", false}, {"notthere", false}, {"démarrage", false},
		{"8a1b2c", false}, {"zzzz", false},
	} {
		var want []uint32
		for i, m := range msgs {
			hay, nd := m, tc.needle
			if tc.fold {
				hay, nd = strings.ToLower(hay), strings.ToLower(nd)
			}
			if strings.Contains(hay, nd) {
				want = append(want, uint32(i))
			}
		}
		bm, exact, ok, err := ix.TextCandidates("event_message", tc.needle, tc.fold)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			// Declining is always safe: the caller scans. With every token
			// kept, only needles that may hide in opaque tokens decline.
			if allKept && !isHexOnly(strings.ReplaceAll(tc.needle, " ", "")) && tc.needle != "8a1b2c" {
				t.Fatalf("%q: index declined with every token kept", tc.needle)
			}
			continue
		}
		got := rowsOf(bm)
		// Candidates must be a superset; exact ones must be equal.
		for _, w := range want {
			if _, found := slices.BinarySearch(got, w); !found {
				t.Fatalf("%q: row %d (%q) missing from candidates", tc.needle, w, msgs[w])
			}
		}
		if exact && !slices.Equal(got, want) {
			t.Fatalf("%q: exact candidates %d rows, want %d", tc.needle, len(got), len(want))
		}
	}
	if !allKept {
		return
	}
	// A long token is a term too: lookups inside it stay exact.
	bm, exact, ok, _ := ix.TextCandidates("event_message", "zzzz", false)
	if !ok || !exact || !bm.Contains(1234) || bm.GetCardinality() != 1 {
		t.Fatalf("long token: exact=%v ok=%v candidates %v", exact, ok, bm)
	}
	if _, _, ok, _ := ix.TextCandidates("event_message", " | ", false); ok {
		t.Fatal("a needle without tokens cannot use the index")
	}
	// Opaque (hex) tokens are not indexed, so a hex needle cannot be
	// excluded by the index.
	if _, _, ok, _ := ix.TextCandidates("event_message", "8a1b2c3d4e5f6a7b", false); ok {
		t.Fatal("a hex needle must be left to the scan")
	}
}

func TestCorruptDirectory(t *testing.T) {
	b := NewBuilder(nil)
	b.AddInts("a", 0, &vec.Vector{Type: vec.Int64, Len: 3, Ints: []int64{1, 2, 3}})
	b.AddText("m", 0, strVec([]string{"x y", "y z", "z"}, 0))
	u := &memUnits{}
	dir, err := b.Write(u)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(dir); i++ {
		for _, delta := range []byte{1, 0x80, 0xff} {
			bad := slices.Clone(dir)
			bad[i] += delta
			ix, err := Open(bad, u)
			if err != nil {
				// The version byte reads as a version this build lacks
				// (the directory's unit checksum rules out a flipped bit).
				if !errors.Is(err, ErrCorrupt) && !(i == 0 && errors.Is(err, ErrUnsupportedVersion)) {
					t.Fatalf("byte %d: error %v not ErrCorrupt", i, err)
				}
				continue
			}
			// A directory that still parses must not panic on lookups.
			ix.LookupInt("a", 2)
			ix.TextCandidates("m", "y", false)
		}
	}
	for _, n := range []int{0, 1, len(dir) - 1} {
		if _, err := Open(dir[:n], u); err == nil {
			t.Fatalf("truncated directory of %d bytes accepted", n)
		}
	}
}

func FuzzOpenIndex(f *testing.F) {
	b := NewBuilder(nil)
	b.AddInts("a", 0, &vec.Vector{Type: vec.Int64, Len: 3, Ints: []int64{1, 2, 3}})
	b.AddStrings("s", 0, strVec([]string{"p", "q", "p"}, 0))
	b.AddText("m", 0, strVec([]string{"x y", "y z", "z"}, 0))
	u := &memUnits{}
	dir, _ := b.Write(u)
	f.Add(dir, u.data)
	f.Fuzz(func(t *testing.T, dir, units []byte) {
		ix, err := Open(dir, &rawUnits{units})
		if err != nil {
			return
		}
		for _, fi := range ix.Fields() {
			ix.Match(fi.Path, fi.Kind, func(any) bool { return true }, true)
			ix.TextCandidates(fi.Path, "y", false)
		}
	})
}

// rawUnits serves units without checksums, so the fuzzer reaches the
// decoders.
type rawUnits struct{ data []byte }

func (r *rawUnits) ReadUnit(off, ln int64) ([]byte, error) {
	if off < 0 || ln < 0 || off > int64(len(r.data)) || ln > int64(len(r.data))-off {
		return nil, errors.New("out of range")
	}
	return r.data[off : off+ln], nil
}

// TestMergeEqualsBuild merges the indexes of two row ranges and compares
// every term with an index built over all rows at once.
func TestMergeEqualsBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	n := 3000
	msgs := make([]string, n)
	status := make([]int64, n)
	method := make([]string, n)
	wide := make([]string, n)
	for i := range msgs {
		msgs[i] = fmt.Sprintf("req %d %s took %dms host-%d", rng.IntN(50), []string{"GET", "POST"}[i%2], rng.IntN(20), i%300)
		status[i] = []int64{200, 404, 500}[rng.IntN(3)]
		method[i] = []string{"GET", "POST", "PUT"}[i%3]
		wide[i] = fmt.Sprint(i) // 3000 distinct: dropped
	}
	opts := &BuilderOptions{FrequentTokenShare: 1}
	add := func(b *Builder, from, to int, base uint32) {
		b.AddText("event_message", base, strVec(msgs[from:to], 0))
		b.AddInts("status", base, &vec.Vector{Type: vec.Int64, Len: to - from, Ints: status[from:to]})
		b.AddStrings("method", base, dictVec(method[from:to]))
		b.AddStrings("wide", base, strVec(wide[from:to], 0))
	}
	whole := buildWith(t, opts, func(b *Builder) { add(b, 0, n, 0) })
	split := 1234
	a := buildWith(t, opts, func(b *Builder) { add(b, 0, split, 0) })
	c := buildWith(t, opts, func(b *Builder) { add(b, split, n, 0) })
	has := func(path string, kind Kind) bool { return true }
	u := &memUnits{}
	dir, err := Merge([]MergeInput{{Index: a, Offset: 0, Rows: uint32(split), Has: has}, {Index: c, Offset: uint32(split), Rows: uint32(n - split), Has: has}}, u, opts)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := Open(dir, u)
	if err != nil {
		t.Fatal(err)
	}
	if merged.Has("wide", KindString) || whole.Has("wide", KindString) {
		t.Fatal("a field with too many terms must be dropped")
	}
	for _, f := range whole.Fields() {
		type post struct {
			card uint64
			rows []uint32
		}
		collect := func(ix *Index) map[any]post {
			m := map[any]post{}
			err := ix.ForEachTerm(f.Path, f.Kind, func(term any, rows *roaring.Bitmap) error {
				m[term] = post{rows.GetCardinality(), rows.ToArray()}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		want, got := collect(whole), collect(merged)
		if len(want) != len(got) {
			t.Fatalf("%s: %d terms merged, %d built", f.Path, len(got), len(want))
		}
		for k, w := range want {
			if g, ok := got[k]; !ok || !slices.Equal(g.rows, w.rows) {
				t.Fatalf("%s term %v: merged %v built %v", f.Path, k, g.rows, w.rows)
			}
		}
	}
	// With the default frequency share, merged postings are either exact
	// or marked frequent (never wrong).
	a = buildWith(t, nil, func(b *Builder) { add(b, 0, split, 0) })
	c = buildWith(t, nil, func(b *Builder) { add(b, split, n, 0) })
	u = &memUnits{}
	dir, err = Merge([]MergeInput{{Index: a, Rows: uint32(split), Has: has}, {Index: c, Offset: uint32(split), Rows: uint32(n - split), Has: has}}, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if merged, err = Open(dir, u); err != nil {
		t.Fatal(err)
	}
	for _, needle := range []string{"host", "took", "req 4", "ms host-29"} {
		var want []uint32
		for i, m := range msgs {
			if strings.Contains(m, needle) {
				want = append(want, uint32(i))
			}
		}
		bm, exact, ok, err := merged.TextCandidates("event_message", needle, false)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			continue
		}
		got := bm.ToArray()
		for _, w := range want {
			if _, found := slices.BinarySearch(got, w); !found {
				t.Fatalf("%q: row %d missing after merge", needle, w)
			}
		}
		if exact && !slices.Equal(got, want) {
			t.Fatalf("%q: merged exact candidates differ", needle)
		}
	}
}

// TestLongTokens: tokens longer than MaxTokenLen are terms up to
// maxLongTerms distinct ones; rows with further ones are the long rows,
// which every lookup includes (inexact), and nothing else is.
func TestLongTokens(t *testing.T) {
	const n = maxLongTerms + 500
	msgs := make([]string, n)
	for i := range msgs {
		msgs[i] = fmt.Sprintf("GET /realtime/v1/websocket?apikey=eyJ%sK%06dpayload", strings.Repeat("x", MaxTokenLen), i)
	}
	msgs = append(msgs, "no long token here", "xq7rareprobe shows up once")
	ix := buildWith(t, nil, func(b *Builder) { b.AddText("event_message", 0, strVec(msgs, 0)) })
	bm, exact, ok, err := ix.TextCandidates("event_message", "xq7rareprobe", false)
	if err != nil || !ok {
		t.Fatalf("lookup: ok=%v err=%v", ok, err)
	}
	// The rows whose long token did not fit as a term, and the one hit.
	if exact || bm.GetCardinality() != n-maxLongTerms+1 || !bm.Contains(uint32(len(msgs)-1)) || bm.Contains(0) {
		t.Fatalf("candidates: %d rows (exact %v), want the %d long rows and the hit", bm.GetCardinality(), exact, n-maxLongTerms)
	}
	bm, _, ok, _ = ix.TextCandidates("event_message", "K000007payload", false)
	if !ok || !bm.Contains(7) || bm.Contains(8) {
		t.Fatalf("a lookup inside a long term: %v", bm)
	}
}

// TestRowsHintSameIndex: a builder told the segment's rows (or more) lets
// go of frequent tokens' postings early, and every builder moves long
// postings into bitmaps as it goes; both write the same bytes as a builder
// that holds every row as a list to the end, and hold far less on the way.
func TestRowsHintSameIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	words := []string{"GET", "POST", "rest", "v1", "users", "auth", "token", "timeout"}
	msgs := make([]string, 20000)
	methods := make([]string, len(msgs))
	for i := range msgs {
		methods[i] = words[rng.IntN(2)]
		msgs[i] = fmt.Sprintf("%s /%s/%s id%d", methods[i], words[2+rng.IntN(3)], words[5+rng.IntN(3)], rng.IntN(5000))
	}
	write := func(opts *BuilderOptions, spill int) ([]byte, []byte, uint64) {
		defer func(old int) { postingSpill = old }(postingSpill)
		postingSpill = spill
		b := NewBuilder(opts)
		for from := 0; from < len(msgs); from += 4096 {
			to := min(from+4096, len(msgs))
			b.AddText("event_message", uint32(from), strVec(msgs[from:to], 7))
			b.AddStrings("method", uint32(from), dictVec(methods[from:to]))
		}
		held := uint64(0)
		for _, f := range b.fields {
			for _, p := range f.toks.posts {
				held += uint64(len(p.enc))
				if p.bm != nil {
					held += p.bm.GetSizeInBytes()
				}
			}
		}
		u := &memUnits{}
		dir, err := b.Write(u)
		if err != nil {
			t.Fatal(err)
		}
		return dir, u.data, held
	}
	dir0, units0, held0 := write(nil, 1<<30)
	for _, tc := range []struct {
		hint  uint32
		spill int
	}{{0, 4096}, {0, 100}, {uint32(len(msgs)), 1 << 30}, {uint32(len(msgs)), 4096}, {2 * uint32(len(msgs)), 100}} {
		dir, units, held := write(&BuilderOptions{RowsHint: tc.hint}, tc.spill)
		if !slices.Equal(dir, dir0) || !slices.Equal(units, units0) {
			t.Fatalf("hint %d, spill %d: the index differs from one built holding every row as a list", tc.hint, tc.spill)
		}
		if tc.hint > 0 && held*2 > held0 {
			t.Errorf("hint %d, spill %d: %d bytes of postings held at the end, %d holding every row", tc.hint, tc.spill, held, held0)
		}
	}
}

// TestSpilledPostingsHoldSmallLists: a token whose rows moved into its
// bitmap collects further rows in a short list (postingRefill), not in the
// long one it spilled from; the index written is the same whatever the
// list lengths. (Value fields keep no postings until Write: see
// codeChunk.)
func TestSpilledPostingsHoldSmallLists(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	statuses := []string{"200", "201", "204", "301", "304", "400", "401", "404", "500", "503"}
	vals := make([]string, 100_000)
	for i := range vals {
		vals[i] = statuses[min(rng.IntN(16), len(statuses)-1)]
	}
	write := func(spill, refill int) ([]byte, []byte, int) {
		defer func(s, r int) { postingSpill, postingRefill = s, r }(postingSpill, postingRefill)
		postingSpill, postingRefill = spill, refill
		// No RowsHint: the tokens, all frequent, keep their rows to the end.
		b := NewBuilder(nil)
		for from := 0; from < len(vals); from += 8192 {
			to := min(from+8192, len(vals))
			b.AddText("status", uint32(from), dictVec(vals[from:to]))
		}
		listCap := 0
		for _, f := range b.fields {
			for _, p := range f.toks.posts {
				listCap += cap(p.enc)
			}
		}
		u := &memUnits{}
		dir, err := b.Write(u)
		if err != nil {
			t.Fatal(err)
		}
		return dir, u.data, listCap
	}
	dir0, units0, _ := write(1<<30, 1<<30) // every row in a list to the end
	dir, units, listCap := write(4096, 256)
	if !slices.Equal(dir, dir0) || !slices.Equal(units, units0) {
		t.Fatal("the index differs from one built holding every row as a list")
	}
	if want := len(statuses) * (256 + binary.MaxVarintLen64); listCap > want {
		t.Errorf("lists hold room for %d bytes, want at most %d (%d terms of 256 and a row)", listCap, want, len(statuses))
	}
	if _, _, oldCap := write(4096, 4096); oldCap <= listCap {
		t.Errorf("refilling 4096 bytes at a time holds %d, not more than 256 at a time (%d)", oldCap, listCap)
	}
}
