// Package varint holds the small integer codings the storage formats share
// with encoding/binary's uvarints: the length of a uvarint before it is
// written, and the zigzag mapping of signed deltas to unsigned ones.
package varint

// Len is the bytes binary.AppendUvarint takes for x.
func Len(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// Zigzag maps a signed value to an unsigned one whose size follows the
// magnitude: 0, -1, 1, -2, 2 ... become 0, 1, 2, 3, 4 ...
func Zigzag(x int64) uint64 { return uint64(x<<1) ^ uint64(x>>63) }

// Unzigzag is Zigzag's inverse.
func Unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }
