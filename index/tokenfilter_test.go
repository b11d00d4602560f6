package index

import (
	"slices"
	"testing"
)

// filterTokensCase checks that tokenFilter.tokens gives, in order, the
// tokens of s that Tokenize gives and has accepts, for a filter of the
// tokens of added.
func filterTokensCase(t *testing.T, added, s string) {
	var f tokenFilter
	Tokenize(added, f.add)
	var want, got []string
	Tokenize(s, func(tok string) {
		if f.has(tok) {
			want = append(want, tok)
		}
	})
	f.tokens(s, func(tok string) { got = append(got, tok) })
	if !slices.Equal(got, want) {
		t.Fatalf("filter of %q over %q: %q, want %q", added, s, got, want)
	}
	Tokenize(added, func(tok string) {
		if !f.has(tok) {
			t.Fatalf("added token %q not in the filter", tok)
		}
	})
}

var filterTokensSeeds = [][2]string{
	{"GET rest v1", "GET /rest/v1/users?id=eq.5 | 200 | Mozilla/5.0"},
	{"a", "a"},
	{"", "x y z"},
	{"héllo wörld", "héllo, wörld! héllo"},
	{"x", ""},
	{"tail", "ends with tail"},
	{"lead", "lead at the start"},
	{"k", "...k..."},
}

func TestTokenFilterTokens(t *testing.T) {
	for _, c := range filterTokensSeeds {
		filterTokensCase(t, c[0], c[1])
	}
}

func FuzzTokenFilterTokens(f *testing.F) {
	for _, c := range filterTokensSeeds {
		f.Add(c[0], c[1])
	}
	f.Fuzz(filterTokensCase)
}
