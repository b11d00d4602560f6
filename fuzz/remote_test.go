package fuzz

import (
	"bytes"
	"errors"
	"testing"

	"github.com/sediment/sediment/remote"
)

// FuzzUnsealed: any bytes as an ingest node's answer to a query node
// (remote.DecodeUnsealed). Decoding must fail with remote.ErrBadUnsealed
// or return parts within the byte limit; never panic, and allocate in
// proportion to the input. Seeded with an empty answer, one with a skip
// list and parts, and a cut one.
func FuzzUnsealed(f *testing.F) {
	empty := []byte("SDUS\x01\x02n1\x00\x00")
	full := []byte("SDUS\x01\x02n1\x01\x17n1/0000000000000001.seg\x01\x09n1/head-0\x03abc")
	full = append(full, 0xb7, 0x3f, 0x4b, 0x36, 0) // CRC-32C of "abc" (LE), end
	// a part to keep (tag 3) and one the asker holds (tag 2)
	keep := []byte("SDUS\x01\x02n1\x00\x03\x09n1/head-1\x03abc\xb7\x3f\x4b\x36\x02\x09n1/head-2\x00")
	f.Add(empty)
	f.Add(full)
	f.Add(keep)
	f.Add(full[:len(full)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxInput {
			t.Skip()
		}
		checkAlloc(t, allocLimit(len(data)), func() {
			u, err := remote.DecodeUnsealed(bytes.NewReader(data), 1<<20)
			if err != nil {
				if !errors.Is(err, remote.ErrBadUnsealed) {
					t.Fatalf("error of the wrong kind: %v", err)
				}
				return
			}
			total := 0
			for _, p := range u.Parts {
				total += len(p.Data)
			}
			if total > len(data) {
				t.Fatalf("%d bytes of parts from %d bytes of input", total, len(data))
			}
		})
	})
}
