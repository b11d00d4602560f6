package fuzz

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sediment/sediment/index"
	"github.com/sediment/sediment/internal/vec"
)

// memUnits stores units back to back with no checksum, so that fuzzed
// bytes reach the index decoders (the segment's checksums are fuzzed by
// the segment targets).
type memUnits struct{ data []byte }

func (m *memUnits) WriteUnit(p []byte) (int64, int64, error) {
	off := int64(len(m.data))
	m.data = append(m.data, p...)
	return off, int64(len(p)), nil
}

func (m *memUnits) ReadUnit(off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off > int64(len(m.data)) || n > int64(len(m.data))-off {
		// As a segment reports a unit outside the file.
		return nil, fmt.Errorf("unit [%d,+%d) outside %d bytes: %w", off, n, len(m.data), index.ErrCorrupt)
	}
	return m.data[off : off+n], nil
}

func strVec(vals ...string) *vec.Vector {
	v := &vec.Vector{Type: vec.String, Len: len(vals), Strs: vals}
	for i, s := range vals {
		if s == "" {
			if v.Nulls == nil {
				v.Nulls = vec.NewBitset(len(vals))
			}
			v.Nulls.Set(i)
		}
	}
	return v
}

// indexSeeds builds indexes over every kind of field: ints, strings, bools,
// text with frequent, rare, opaque and over-long tokens.
func indexSeeds() [][2][]byte {
	var out [][2][]byte
	for _, rows := range []int{3, 300} {
		b := index.NewBuilder(nil)
		var msgs, methods []string
		var status []int64
		var oks []bool
		for i := range rows {
			msgs = append(msgs, fmt.Sprintf("GET /rest/v1/t%d?id=eq.%d req %08x %s", i%5, i, i*2654435761, strings.Repeat("z", 60+i%10)))
			methods = append(methods, []string{"GET", "POST", "", "PATCH"}[i%4])
			status = append(status, int64([]int{200, 404, 500}[i%3]))
			oks = append(oks, i%2 == 0)
		}
		b.AddText("event_message", 0, strVec(msgs...))
		b.AddStrings("metadata.method", 0, strVec(methods...))
		b.AddInts("metadata.status", 0, &vec.Vector{Type: vec.Int64, Len: rows, Ints: status})
		b.AddBools("metadata.ok", 0, &vec.Vector{Type: vec.Bool, Len: rows, Bools: oks})
		u := &memUnits{}
		dir, err := b.Write(u)
		if err != nil {
			panic(err) // building a small index cannot fail
		}
		out = append(out, [2][]byte{dir, u.data})
	}
	return out
}

// FuzzIndexOpen: a segment's index directory and units, as found on disk.
// Open and every lookup return results or errors matching
// index.ErrCorrupt; nothing panics or allocates far beyond the input.
func FuzzIndexOpen(f *testing.F) {
	for _, s := range indexSeeds() {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, dir, units []byte) {
		if len(dir)+len(units) > maxInput {
			t.Skip()
		}
		checkAlloc(t, allocLimit(len(dir)+len(units)), func() {
			ix, err := index.Open(dir, &memUnits{data: units})
			if errors.Is(err, index.ErrUnsupportedVersion) {
				return // a version byte this build does not read: refused, not misread
			}
			if err != nil {
				mustIndexCorrupt(t, "Open", err)
				return
			}
			_ = ix.String()
			ix.FieldBytes()
			for _, fi := range ix.Fields() {
				mustIndexCorrupt(t, "ForEachTerm", ix.ForEachTerm(fi.Path, fi.Kind, func(any, *roaring.Bitmap) error { return nil }))
				if fi.Kind != index.KindToken { // Match is for value fields
					_, _, _, err := ix.Match(fi.Path, fi.Kind, func(any) bool { return true }, true)
					mustIndexCorrupt(t, "Match", err)
					_, _, _, err = ix.Match(fi.Path, fi.Kind, func(any) bool { return true }, false)
					mustIndexCorrupt(t, "Match count", err)
				}
				_, _, err := ix.LookupString(fi.Path, "GET")
				mustIndexCorrupt(t, "LookupString", err)
				_, _, err = ix.LookupInt(fi.Path, 404)
				mustIndexCorrupt(t, "LookupInt", err)
				_, _, _, err = ix.TextCandidates(fi.Path, "rest/v1", false)
				mustIndexCorrupt(t, "TextCandidates", err)
				_, _, _, err = ix.TextCandidates(fi.Path, "GET", true)
				mustIndexCorrupt(t, "TextCandidates fold", err)
				_, err = ix.LongRows(fi.Path)
				mustIndexCorrupt(t, "LongRows", err)
			}
		})
	})
}

func mustIndexCorrupt(t *testing.T, op string, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, index.ErrCorrupt) {
		t.Fatalf("%s: error does not match index.ErrCorrupt: %v", op, err)
	}
}
