package fuzz

import (
	"errors"
	"testing"

	"github.com/sediment/sediment/objstore"
)

// FuzzManifest: any bytes as a source's manifest object. Decoding must
// return a manifest that re-encodes to the same bytes, or fail with an
// error matching objstore.ErrCorrupt or a *objstore.ManifestVersionError;
// never panic, and allocate in proportion to the input. Seeded with an
// empty manifest, one with live and removed segments, and damaged
// variants.
func FuzzManifest(f *testing.F) {
	m := &objstore.Manifest{Source: "0b1c5e9e-6f0a-4e0c-9d3b-5f3c2a1b0c9d", Generation: 3, UpdatedAt: 1700000000000000, UpdatedBy: "n1"}
	for i, content := range []string{"a", "bb", "ccc"} {
		m.Add(objstore.SegmentEntry{Name: objstore.SegmentName("n1", uint64(i)), Size: int64(len(content)),
			Sum: objstore.SumBytes([]byte(content)), ETag: "e", MinTime: 1, MaxTime: 2, Rows: 1})
	}
	m.Remove(objstore.SegmentName("n1", 0), 1700000000000001)
	good := m.Marshal()
	f.Add(good)
	f.Add((&objstore.Manifest{Source: "s"}).Marshal())
	f.Add(good[:len(good)/2])
	f.Add([]byte("SDMF\x01\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxInput {
			t.Skip()
		}
		checkAlloc(t, allocLimit(len(data)), func() {
			m, err := objstore.DecodeManifest(data)
			if err != nil {
				var ve *objstore.ManifestVersionError
				if !errors.Is(err, objstore.ErrCorrupt) && !errors.As(err, &ve) {
					t.Fatalf("error of the wrong kind: %v", err)
				}
				return
			}
			if string(m.Marshal()) != string(data) {
				t.Fatal("a decoded manifest re-encodes differently")
			}
		})
	})
}
