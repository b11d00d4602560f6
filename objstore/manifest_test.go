package objstore

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"reflect"
	"testing"
)

func testEntry(node string, seq uint64, content string) SegmentEntry {
	return SegmentEntry{Name: SegmentName(node, seq), Size: int64(len(content)), Sum: SumBytes([]byte(content)),
		ETag: "etag-" + content, MinTime: 1000 * int64(seq), MaxTime: 1000*int64(seq) + 999, Rows: 10, Created: 42}
}

func testManifest() *Manifest {
	m := &Manifest{Source: "0b1c5e9e-6f0a-4e0c-9d3b-5f3c2a1b0c9d", Generation: 7, UpdatedAt: 1700000000000000, UpdatedBy: "n01"}
	for i, e := range []SegmentEntry{testEntry("n01", 3, "c"), testEntry("n02", 1, "a"), testEntry("n01", 1, "b")} {
		if _, err := m.Add(e); err != nil {
			panic(i)
		}
	}
	m.Remove(SegmentName("n01", 1), 1700000000000001)
	return m
}

func TestManifestRoundTrip(t *testing.T) {
	for _, m := range []*Manifest{{Source: "s"}, testManifest()} {
		b := m.Marshal()
		got, err := DecodeManifest(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, m)
		}
	}
	m := testManifest()
	var names []string
	for _, e := range m.Segments {
		names = append(names, e.Name)
	}
	if want := []string{"n01/0000000000000003.seg", "n02/0000000000000001.seg"}; !equalStrings(names, want) {
		t.Fatalf("live segments %v, want %v (sorted, removed one gone)", names, want)
	}
	if len(m.Removed) != 1 || m.Removed[0].Name != "n01/0000000000000001.seg" || m.Segments[1].Node() != "n02" || m.Segments[0].Seq() != 3 {
		t.Fatalf("removed %+v", m.Removed)
	}
}

func TestManifestAddRemoveIdempotent(t *testing.T) {
	m := testManifest()
	e := testEntry("n01", 3, "c")
	if changed, err := m.Add(e); err != nil || changed {
		t.Fatalf("adding a listed entry again: changed %v, err %v", changed, err)
	}
	other := testEntry("n01", 3, "different bytes")
	if _, err := m.Add(other); err == nil {
		t.Fatal("adding another segment under a listed name succeeded")
	}
	if _, err := m.Add(testEntry("n01", 1, "b")); err == nil {
		t.Fatal("adding a removed segment again succeeded")
	}
	if m.Remove("n09/0000000000000001.seg", 5) {
		t.Fatal("removing an unlisted segment changed the manifest")
	}
	if !m.Remove(e.Name, 5) || m.Remove(e.Name, 6) {
		t.Fatal("remove is not idempotent")
	}
	if !m.Forget(e.Name) || m.Forget(e.Name) {
		t.Fatal("forget is not idempotent")
	}
	if _, err := m.Add(SegmentEntry{Name: "bad name", Sum: SumBytes(nil)}); err == nil {
		t.Fatal("a bad name was accepted")
	}
}

// TestManifestDamage: every kind of damage is an error matching
// ErrCorrupt (or a version error), never a manifest.
func TestManifestDamage(t *testing.T) {
	good := testManifest().Marshal()
	reseal := func(b []byte) []byte { // fix the checksum after an edit
		b = b[:len(b)-4]
		return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	}
	cases := []struct {
		name    string
		damage  func([]byte) []byte
		version bool
		crc     bool
	}{
		{name: "empty", damage: func([]byte) []byte { return nil }},
		{name: "truncated", damage: func(b []byte) []byte { return b[:len(b)/2] }, crc: true},
		{name: "bad magic", damage: func(b []byte) []byte { b[0] = 'X'; return b }},
		{name: "flipped bit in an entry", damage: func(b []byte) []byte { b[len(b)/2] ^= 1; return b }, crc: true},
		{name: "flipped checksum", damage: func(b []byte) []byte { b[len(b)-1] ^= 1; return b }, crc: true},
		{name: "newer version", damage: func(b []byte) []byte { b[4] = ManifestLatest + 1; return reseal(b) }, version: true},
		{name: "version zero", damage: func(b []byte) []byte { b[4] = 0; return reseal(b) }, version: true},
		{name: "trailing bytes", damage: func(b []byte) []byte { return reseal(append(b[:len(b)-4], 0, 0, 0, 0, 0)) }},
		{name: "huge count", damage: func(b []byte) []byte {
			m := &Manifest{Source: "s"}
			b = m.Marshal()
			b = append(b[:len(b)-4-2], 0xff, 0xff, 0xff, 0x7f, 0) // live count 2^28-1, removed 0
			return reseal(append(b, 0, 0, 0, 0))
		}},
		{name: "unsorted", damage: func([]byte) []byte {
			m := testManifest()
			m.Segments[0], m.Segments[1] = m.Segments[1], m.Segments[0]
			return m.Marshal()
		}},
		{name: "live and removed", damage: func([]byte) []byte {
			m := testManifest()
			m.Removed = append(m.Removed, RemovedEntry{Name: m.Segments[1].Name})
			return m.Marshal()
		}},
		{name: "bad source", damage: func([]byte) []byte { m := testManifest(); m.Source = "../x"; return m.Marshal() }},
		{name: "inverted time range", damage: func([]byte) []byte {
			m := testManifest()
			m.Segments[0].MinTime = m.Segments[0].MaxTime + 1
			return m.Marshal()
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.damage(append([]byte(nil), good...))
			m, err := DecodeManifest(b)
			if err == nil {
				t.Fatalf("decoded %+v", m)
			}
			var ve *ManifestVersionError
			if tc.version {
				if !errors.As(err, &ve) {
					t.Fatalf("%v, want a version error", err)
				}
				return
			}
			if !errors.Is(err, ErrCorrupt) || errors.As(err, &ve) {
				t.Fatalf("%v, want ErrCorrupt", err)
			}
			if tc.crc && !errors.Is(err, ErrChecksum) {
				t.Fatalf("%v, want ErrChecksum too", err)
			}
		})
	}
}

// FuzzDecodeManifest: any bytes decode to a manifest that re-encodes to
// the same bytes, or fail with ErrCorrupt or a version error; never a
// panic.
func FuzzDecodeManifest(f *testing.F) {
	f.Add(testManifest().Marshal())
	f.Add((&Manifest{Source: "s"}).Marshal())
	f.Add([]byte("SDMF\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeManifest(b)
		if err != nil {
			var ve *ManifestVersionError
			if !errors.Is(err, ErrCorrupt) && !errors.As(err, &ve) {
				t.Fatalf("error of the wrong kind: %v", err)
			}
			return
		}
		if again := m.Marshal(); string(again) != string(b) {
			t.Fatalf("decoded manifest re-encodes differently")
		}
	})
}
