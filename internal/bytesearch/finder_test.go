package bytesearch

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// pairSearches are the pair searches every Finder result is checked
// with: the one Index uses on this machine and the generic one.
var pairSearches = map[string]func(h []byte, d int, b1, b2 byte, firstRare bool) int{
	"dispatch": indexPair,
	"generic":  indexPairGeneric,
}

// checkAll compares, for pairs of offsets of needle, the Finder's
// answer with both pair searches to bytes.Index's over h.
func checkAll(t *testing.T, h []byte, needle string) {
	t.Helper()
	want := bytes.Index(h, []byte(needle))
	pairs := [][2]int{{0, 0}}
	if len(needle) >= 2 {
		// Every pair of a short needle; of a long one, those of its ends
		// and middle (the pair's distance and either byte first).
		offs := []int{0, 1, len(needle) / 2, len(needle) - 2, len(needle) - 1}
		if len(needle) <= 6 {
			offs = offs[:0]
			for a := range len(needle) {
				offs = append(offs, a)
			}
		}
		pairs = pairs[:0]
		for _, a := range offs {
			for _, b := range offs {
				if a != b {
					pairs = append(pairs, [2]int{a, b})
				}
			}
		}
	}
	for _, pr := range pairs {
		f := NewFinderPair(needle, pr[0], pr[1])
		for name, pair := range pairSearches {
			if got := f.index(h, pair); got != want {
				t.Fatalf("%s, pair %v: Index(%q, %q) = %d, bytes.Index says %d", name, pr, h, needle, got, want)
			}
		}
	}
}

// TestIndexAtEveryPlace puts a needle at every position of texts of every
// length up to three blocks of 64 positions (either side of each block
// and tail boundary), in text of its own bytes so that near misses abound.
func TestIndexAtEveryPlace(t *testing.T) {
	for _, needle := range []string{"ab", "aab", "auth/v1/", "xyzzy-long-needle-over-32-bytes-wide"} {
		filler := []byte(needle[:len(needle)-1]) // every byte but the last, repeated
		for n := 0; n <= 200; n++ {
			h := make([]byte, n)
			for i := range h {
				h[i] = filler[i%len(filler)]
			}
			checkAll(t, h, needle) // absent
			for at := 0; at+len(needle) <= n; at++ {
				g := bytes.Clone(h)
				copy(g[at:], needle)
				checkAll(t, g, needle)
			}
		}
	}
}

// TestIndexAgreesWithBytesIndex: random texts over small alphabets (many
// partial matches), random needles and needles cut from the text, looked
// for from every start.
func TestIndexAgreesWithBytesIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 300; round++ {
		alphabet := "ab/v1xyz"[:2+r.IntN(7)]
		h := make([]byte, r.IntN(300))
		for i := range h {
			h[i] = alphabet[r.IntN(len(alphabet))]
		}
		var needle string
		if len(h) > 0 && r.IntN(2) == 0 {
			a := r.IntN(len(h))
			needle = string(h[a : a+min(len(h)-a, 1+r.IntN(12))])
		} else {
			nb := make([]byte, 1+r.IntN(6))
			for i := range nb {
				nb[i] = alphabet[r.IntN(len(alphabet))]
			}
			needle = string(nb)
		}
		for s := 0; s <= len(h); s += 1 + r.IntN(40) {
			checkAll(t, h[s:], needle)
		}
	}
}

// TestIndexEmptyAndShort: the empty needle is at 0, a one-byte needle is
// a byte search, a text shorter than the needle holds none.
func TestIndexEmptyAndShort(t *testing.T) {
	var zero Finder
	if got := zero.Index([]byte("abc")); got != 0 {
		t.Errorf("empty needle: %d, want 0", got)
	}
	one := NewFinder("c", nil)
	if got := one.Index([]byte("abc")); got != 2 {
		t.Errorf("one byte: %d, want 2", got)
	}
	f := NewFinder("abcd", nil)
	if got := f.Index([]byte("abc")); got != -1 {
		t.Errorf("short text: %d, want -1", got)
	}
	if got := f.Index(nil); got != -1 {
		t.Errorf("nil text: %d, want -1", got)
	}
}

// accessText is access-log lines like Kong's, end to end.
func accessText(n int) []byte {
	r := rand.New(rand.NewPCG(14, 14))
	paths := []string{"/rest/v1/todos?select=*&id=eq.", "/auth/v1/token?grant_type=password&n=",
		"/storage/v1/object/public/avatars/", "/realtime/v1/websocket?vsn=1.0.0&n=", "/auth/v1/user?n="}
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `172.18.0.%d - - [10/Nov/2025:12:%02d:%02d +0000] "GET %s%d HTTP/1.1" %d %d "-" "Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0"`,
			r.IntN(250), r.IntN(60), r.IntN(60), paths[r.IntN(len(paths))], r.IntN(100000), 200+r.IntN(4), r.IntN(9000))
	}
	return b.Bytes()
}

// pairStops counts the places a pair search of f stops at in text.
func pairStops(f *Finder, text []byte) int {
	n := len(f.needle)
	sub := text[f.lo : len(text)-n+f.hi+1]
	stops := 0
	for s := 0; ; stops++ {
		j := indexPair(sub[s:], f.hi-f.lo, f.needle[f.lo], f.needle[f.hi], f.loRare)
		if j < 0 {
			return stops
		}
		s += j + 1
	}
}

// TestChoosePairSetsTheNeedleApart: in access logs every API's path holds
// "/v1/", so a pair of "auth/v1/" from that part ('v' and the '/' after
// it) stops at every line; the pair chosen stops at little more than the
// needle's own occurrences.
func TestChoosePairSetsTheNeedleApart(t *testing.T) {
	text := accessText(2000)
	needle := "auth/v1/"
	found := bytes.Count(text, []byte(needle))
	f := NewFinder(needle, text)
	rare, other := f.Pair()
	if stops := pairStops(&f, text); stops > found+found/20 {
		t.Errorf("pair %q %q stops %d times for %d occurrences", needle[rare], needle[other], stops, found)
	}
	bad := NewFinderPair(needle, 5, 6) // "v1"
	if stops := pairStops(&bad, text); stops < 2*found {
		t.Fatalf("the pair \"v1\" stops only %d times for %d occurrences: the text does not test the choice", stops, found)
	}
}

// TestNewFinderPairChecksOffsets: offsets outside the needle, or the same
// twice, are a programming error.
func TestNewFinderPairChecksOffsets(t *testing.T) {
	for _, pr := range [][2]int{{0, 0}, {-1, 1}, {0, 4}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("pair %v accepted for a 4-byte needle", pr)
				}
			}()
			NewFinderPair("abcd", pr[0], pr[1])
		}()
	}
	NewFinderPair("a", 5, 5) // no pair for one byte: anything goes
}

// FuzzIndex: for any text, needle and pair, Index agrees with
// bytes.Index, with the dispatched and the generic pair search, from
// every start up to the needle's length into the text.
func FuzzIndex(f *testing.F) {
	f.Add([]byte("GET /auth/v1/token HTTP/1.1"), "auth/v1/", uint8(5), uint8(3))
	f.Add([]byte(strings.Repeat("/v1/", 40)+"auth/v1/"), "auth/v1/", uint8(5), uint8(0))
	f.Add([]byte(strings.Repeat("a", 100)), "aab", uint8(0), uint8(2))
	f.Add([]byte("ab"), "b", uint8(0), uint8(0))
	f.Add([]byte(""), "", uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, h []byte, needle string, a, b uint8) {
		if len(needle) > 64 || len(h) > 1<<16 {
			return
		}
		rare, other := 0, 0
		if len(needle) >= 2 {
			rare = int(a) % len(needle)
			other = (rare + 1 + int(b)%(len(needle)-1)) % len(needle)
		}
		fd := NewFinderPair(needle, rare, other)
		for s := 0; s <= min(len(h), len(needle)+1); s++ {
			want := bytes.Index(h[s:], []byte(needle))
			for name, pair := range pairSearches {
				if got := fd.index(h[s:], pair); got != want {
					t.Fatalf("%s, pair (%d, %d), from %d: %d, bytes.Index says %d", name, rare, other, s, got, want)
				}
			}
		}
		// A Finder chosen on the text itself agrees too.
		fs := NewFinder(needle, h)
		if got, want := fs.Index(h), bytes.Index(h, []byte(needle)); got != want {
			t.Fatalf("chosen pair: %d, bytes.Index says %d", got, want)
		}
	})
}

// BenchmarkIndexAll counts every "auth/v1/" in access-log lines (bytes/s
// is the text): bytes.Index, the Finder with the generic pair search and
// with the one this machine dispatches to.
func BenchmarkIndexAll(b *testing.B) {
	text := accessText(20000)
	needle := "auth/v1/"
	want := bytes.Count(text, []byte(needle))
	f := NewFinder(needle, text)
	run := func(b *testing.B, index func(h []byte) int) {
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			for p := 0; ; {
				j := index(text[p:])
				if j < 0 {
					break
				}
				n++
				p += j + len(needle)
			}
			if n != want {
				b.Fatalf("%d found, want %d", n, want)
			}
		}
	}
	b.Run("bytes.Index", func(b *testing.B) { run(b, func(h []byte) int { return bytes.Index(h, []byte(needle)) }) })
	b.Run("generic", func(b *testing.B) { run(b, func(h []byte) int { return f.index(h, indexPairGeneric) }) })
	b.Run("finder", func(b *testing.B) { run(b, f.Index) })
}
