package segment

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/sediment/sediment/internal/vec"
)

// TestValidityWords: presentIn and appendValidity give what a look at
// each row's NULL bit gives, for ranges starting and ending anywhere in a
// word, NULL bitsets shorter than the rows (missing bits are present
// rows), dense and sparse NULLs, and none.
func TestValidityWords(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 3000 {
		rows := 1 + rng.IntN(300)
		d := &ColumnData{}
		if trial%5 != 0 {
			d.Nulls = vec.NewBitset(rows - rng.IntN(rows))
			share := rng.Float64()
			for i := 0; i < 64*len(d.Nulls); i++ {
				if rng.Float64() < share {
					d.Nulls.Set(i)
				}
			}
		}
		from := rng.IntN(rows)
		to := from + rng.IntN(rows-from+1)
		want, wantBits := 0, make([]byte, (to-from+7)/8)
		for i := from; i < to; i++ {
			if d.present(i) {
				want++
				wantBits[(i-from)/8] |= 1 << ((i - from) % 8)
			}
		}
		if got := d.presentIn(from, to); got != want {
			t.Fatalf("rows [%d, %d) of nulls %x: presentIn %d, want %d", from, to, d.Nulls, got, want)
		}
		if got := d.appendValidity([]byte{0xaa}, from, to); !bytes.Equal(got, append([]byte{0xaa}, wantBits...)) {
			t.Fatalf("rows [%d, %d) of nulls %x: validity %x, want aa%x", from, to, d.Nulls, got, wantBits)
		}
	}
}
