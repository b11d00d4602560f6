package segment

import (
	"encoding/binary"
	"math/bits"
	"testing"
)

// FuzzVarintsEnd: where the first k uvarints of any bytes end, and the
// set bits of any bitmap, as a byte-at-a-time count finds them.
func FuzzVarintsEnd(f *testing.F) {
	var lens []byte
	for _, l := range []uint64{0, 1, 127, 128, 300, 16384, 1 << 40} {
		lens = binary.AppendUvarint(lens, l)
	}
	f.Add(lens, 7)
	f.Add(lens, 3)
	f.Add(lens, 8)
	f.Add([]byte{}, 0)
	f.Add([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 5}, 2)
	f.Add([]byte("0123456789abcdefghij"), 17)
	f.Fuzz(func(t *testing.T, b []byte, k int) {
		if k < 0 || k > 1<<20 {
			return
		}
		pos, seen := 0, 0
		for pos < len(b) && seen < k {
			if b[pos] < 0x80 {
				seen++
			}
			pos++
		}
		got, ok := varintsEnd(b, k)
		if ok != (seen >= k) || ok && got != pos {
			t.Fatalf("varintsEnd(%x, %d) = %d, %v; want %d, %v", b, k, got, ok, pos, seen >= k)
		}
		ones := 0
		for _, x := range b {
			ones += bits.OnesCount8(x)
		}
		if n := countOnes(b); n != ones {
			t.Fatalf("countOnes(%x) = %d, want %d", b, n, ones)
		}
	})
}
