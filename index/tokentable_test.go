package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// TestAddTextTermsMatchTokenize: every term of a token field built from
// messages holds exactly the rows whose message has that token (Tokenize's
// tokens, opaque ones left out, long ones past maxLongTerms among the long
// rows), for messages with repeated, hex, long, underscore and UTF-8
// tokens, over enough distinct terms that the token table grows several
// times.
func TestAddTextTermsMatchTokenize(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	words := []string{"GET", "post", "rest_v1", "deadbeef", "DEADBEEF00", "cafe", "héllo", "日本語", "a", "Z9"}
	msgs := make([]string, 30000)
	for i := range msgs {
		var sb strings.Builder
		for k := rng.IntN(8); k >= 0; k-- {
			switch rng.IntN(6) {
			case 0:
				fmt.Fprintf(&sb, "w%d", rng.IntN(20000)) // many distinct terms
			case 1:
				fmt.Fprintf(&sb, "%x", rng.Uint64()) // opaque (mostly)
				if rng.IntN(4) == 0 {                // past MaxTokenLen: a long row
					fmt.Fprintf(&sb, "%016x%016x%016x%016x", rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64())
				}
			case 2:
				sb.WriteString(strings.Repeat("L", MaxTokenLen+rng.IntN(3)))
			default:
				sb.WriteString(words[rng.IntN(len(words))])
			}
			sb.WriteString([]string{" ", "/", "-", "=", ".", "\t", ",", "?"}[rng.IntN(8)])
		}
		msgs[i] = sb.String()
	}
	want := map[string][]uint32{}
	var long []uint32
	for i, m := range msgs {
		if i%11 == 0 {
			continue // strVec's NULL rows
		}
		Tokenize(m, func(tok string) {
			if IsOpaqueToken(tok) {
				if len(tok) > MaxTokenLen {
					long = append(long, uint32(i))
				}
				return
			}
			if r := want[tok]; len(r) == 0 || r[len(r)-1] != uint32(i) {
				want[tok] = append(r, uint32(i))
			}
		})
	}
	ix := buildWith(t, &BuilderOptions{FrequentTokenShare: 0.9}, func(b *Builder) {
		for from := 0; from < len(msgs); from += 4096 {
			to := min(from+4096, len(msgs))
			v := strVec(msgs[from:to], 0)
			v.Nulls = nil
			for i := from; i < to; i++ {
				if i%11 == 0 {
					if v.Nulls == nil {
						v.Nulls = make([]uint64, (to-from+63)/64)
					}
					v.Nulls.Set(i - from)
				}
			}
			b.AddText("event_message", uint32(from), v)
		}
	})
	got := map[string][]uint32{}
	err := ix.ForEachTerm("event_message", KindToken, func(term any, rows *roaring.Bitmap) error {
		if rows == nil {
			return fmt.Errorf("term %q frequent", term)
		}
		got[term.(string)] = rows.ToArray()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(want) < 10000 {
		t.Fatalf("%d terms, want %d (over 10000)", len(got), len(want))
	}
	for tok, rows := range want {
		if !slices.Equal(got[tok], rows) {
			t.Fatalf("term %q: rows %v, want %v", tok, got[tok], rows)
		}
	}
	lr, err := ix.LongRows("event_message")
	if err != nil {
		t.Fatal(err)
	}
	long = slices.Compact(long)
	if lr == nil || !slices.Equal(lr.ToArray(), long) {
		t.Fatalf("long rows differ: %d, want %d", lr.GetCardinality(), len(long))
	}
}

// TestAddTextDictSameIndex: messages given as dictionary codes (each
// entry tokenized once) index the same, byte for byte, as the same
// messages given as values.
func TestAddTextDictSameIndex(t *testing.T) {
	msgs := edgeMessages(20000, 3)
	plain, coded := NewBuilder(nil), NewBuilder(nil)
	for from := 0; from < len(msgs); from += 4096 {
		to := min(from+4096, len(msgs))
		plain.AddText("event_message", uint32(from), strVec(msgs[from:to], 0))
		coded.AddText("event_message", uint32(from), dictVec(msgs[from:to]))
	}
	a, b := &memUnits{}, &memUnits{}
	da, err := plain.Write(a)
	if err != nil {
		t.Fatal(err)
	}
	db, err := coded.Write(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(da) != string(db) || string(a.data) != string(b.data) {
		t.Fatalf("indexes differ: %d/%d directory bytes, %d/%d unit bytes", len(da), len(db), len(a.data), len(b.data))
	}
}

// TestTokenTable: every term put is found again with its postings, none
// that was not put is, through growth from empty.
func TestTokenTable(t *testing.T) {
	var tt tokenTable
	if tt.get("x", hashToken("x")) != nil {
		t.Fatal("empty table finds a term")
	}
	ps := make([]postings, 5000)
	for i := range ps {
		k := fmt.Sprint("t", i)
		tt.put(k, hashToken(k), &ps[i])
	}
	for i := range ps {
		k := fmt.Sprint("t", i)
		if p := tt.get(k, hashToken(k)); p != &ps[i] {
			t.Fatalf("term %q: wrong postings", k)
		}
		if p := tt.get(k+"x", hashToken(k+"x")); p != nil {
			t.Fatalf("term %qx found", k)
		}
		if len(k) <= maxShort {
			if p := tt.getShort(packShort(k), hashToken(k)); p != &ps[i] {
				t.Fatalf("short term %q: wrong postings", k)
			}
		}
		if k := fmt.Sprint("u", i); tt.getShort(packShort(k), hashToken(k)) != nil {
			t.Fatalf("short term %q found", k)
		}
	}
	if tt.len() != len(ps) || len(tt.slots) < 2*len(ps) {
		t.Fatalf("%d terms in %d slots", tt.len(), len(tt.slots))
	}
}

// TestPackShort: strings of up to maxShort bytes pack to distinct
// integers, their length included (a token never holds a 0 byte, but the
// table does not rely on it).
func TestPackShort(t *testing.T) {
	seen := map[uint64]string{}
	for _, s := range []string{"", "a", "a\x00", "\x00a", "\x00", "ab", "ba", "abcdefg", "abcdef\x00", "\xff\xff\xff\xff\xff\xff\xff", "GET", "v1", "1v"} {
		x := packShort(s)
		if x == 0 {
			t.Fatalf("%q packs to 0", s)
		}
		if o, ok := seen[x]; ok {
			t.Fatalf("%q and %q pack alike", s, o)
		}
		seen[x] = s
		if hashToken(s) != hashShort(x) {
			t.Fatalf("%q: hashToken differs from hashShort of its packing", s)
		}
	}
}
