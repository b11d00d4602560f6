package index

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// termsOf lays terms out as a terms unit does: each one after its length
// and before bytes of its own (what the unit keeps of its postings),
// which may hold anything, the needle too.
func termsOf(strs []string, between []string) *terms {
	var sb strings.Builder
	at := make([]int, len(strs))
	for i, s := range strs {
		sb.WriteByte(byte(len(s)))
		at[i] = sb.Len()
		sb.WriteString(s)
		sb.WriteString(between[i%len(between)])
	}
	t := &terms{blob: sb.String(), strs: make([]string, len(strs))}
	for i, s := range strs {
		t.strs[i] = t.blob[at[i] : at[i]+len(s)]
	}
	return t
}

// linearTermsWith is what termsWith answers: each term tested on its own.
func linearTermsWith(strs []string, tok string, suffix bool, limit int) ([]int, bool) {
	var match []int
	for i, s := range strs {
		if suffix && strings.HasSuffix(s, tok) || !suffix && strings.Contains(s, tok) {
			match = append(match, i)
			if len(match) > limit {
				return match, true
			}
		}
	}
	return match, false
}

func checkTermsWith(t *testing.T, tm *terms, tok string, suffix bool, limit int) {
	t.Helper()
	got, gotMany := tm.termsWith(tok, suffix, limit)
	want, wantMany := linearTermsWith(tm.strs, tok, suffix, limit)
	if !slices.Equal(got, want) || gotMany != wantMany {
		t.Fatalf("terms with %q (suffix %v, limit %d): got %v %v, want %v %v", tok, suffix, limit, got, gotMany, want, wantMany)
	}
}

// TestTermsWithFindsTheTermsHoldingTheToken: a search over the terms unit
// finds the terms a test of every term finds, where the needle also lies
// between terms, runs from a term into the bytes after it, or occurs
// twice in one term, and the first term is empty.
func TestTermsWithFindsTheTermsHoldingTheToken(t *testing.T) {
	strs := []string{"", "abc", "probe", "rareprobe", "rareprobex", "xq7rareprobe", "xq7rareprobeprobe", "zz"}
	between := []string{"\x01probe", "\x00pro", "be\x02", "", "rareprobe"}
	tm := termsOf(strs, between)
	for _, tok := range []string{"probe", "rareprobe", "xq7", "z", "abcprobe", "e\x00pro", "beprobe", "q"} {
		for _, suffix := range []bool{false, true} {
			for _, limit := range []int{0, 1, 2, 4096} {
				checkTermsWith(t, tm, tok, suffix, limit)
			}
		}
	}
}

// TestTermsWithRandomTerms compares termsWith with a test of every term
// on random sorted terms of a small alphabet (many partial matches).
func TestTermsWithRandomTerms(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "abc"[rng.IntN(3)]
		}
		return string(b)
	}
	for round := 0; round < 200; round++ {
		set := map[string]bool{}
		for range rng.IntN(40) + 1 {
			set[word(rng.IntN(8))] = true
		}
		strs := make([]string, 0, len(set))
		for s := range set {
			strs = append(strs, s)
		}
		slices.Sort(strs)
		tm := termsOf(strs, []string{word(rng.IntN(4)), word(rng.IntN(4))})
		for range 5 {
			checkTermsWith(t, tm, word(rng.IntN(4)+1), rng.IntN(2) == 0, rng.IntN(6))
		}
	}
}

// FuzzTermsWith checks termsWith against a test of every term on any
// terms and bytes between them.
func FuzzTermsWith(f *testing.F) {
	f.Add("abc,probe,rareprobe,xq7rareprobe", "\x01probe", "probe", false)
	f.Add(",a,ab,abab", "ba", "ab", true)
	f.Add("xq7rareprobe", "", "xq7rareprobe", false)
	f.Fuzz(func(t *testing.T, list, between, tok string, suffix bool) {
		if tok == "" || len(list) > 4096 {
			return
		}
		set := map[string]bool{}
		for _, s := range strings.Split(list, ",") {
			if len(s) < 256 {
				set[s] = true
			}
		}
		strs := make([]string, 0, len(set))
		for s := range set {
			strs = append(strs, s)
		}
		slices.Sort(strs)
		tm := termsOf(strs, []string{between})
		checkTermsWith(t, tm, tok, suffix, 3)
		checkTermsWith(t, tm, tok, suffix, 4096)
	})
}
