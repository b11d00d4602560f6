package fuzz

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/sediment/sediment/internal/bytesearch"
	"github.com/sediment/sediment/internal/predicate"
)

// FuzzTextSearch: a user's pattern over values laid end to end (text cut
// at '\n', as a column page holds them) finds, through the pattern's
// Searcher and the regex confirming what the literals do not decide, the
// values Go's regexp matches one by one; a Searcher never panics, whatever
// the offsets.
func FuzzTextSearch(f *testing.F) {
	for _, p := range []string{"auth/v1/(token|user)", "token", "python-httpx|Dart", `status=20[34]|timeout`, `\| 5\d\d \|`, "a|", "(?i)post", "^GET"} {
		f.Add(p, "GET /auth/v1/user HTTP\nauth/v1/to\nken\nstatus=203\nDart/3.4\n\n| 503 |", uint8(3))
	}
	f.Fuzz(func(t *testing.T, pattern, text string, cut uint8) {
		if len(pattern) > 256 || len(text) > 4096 {
			return
		}
		r, err := predicate.CompileRegex(pattern)
		if err != nil {
			return
		}
		vals := strings.Split(text, "\n")
		var data []byte
		offs := []uint32{0}
		for _, v := range vals {
			data = append(data, v...)
			offs = append(offs, uint32(len(data)))
		}
		if s, exact := r.Searcher(); s != nil {
			rows, ok := s.AppendRows(nil, data, offs)
			if !ok {
				t.Fatalf("offsets refused")
			}
			var got, want []int32
			for _, row := range rows {
				if exact || r.Match(string(data[offs[row]:offs[row+1]])) {
					got = append(got, row)
				}
			}
			for i, v := range vals {
				if r.Regexp().MatchString(v) {
					want = append(want, int32(i))
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%q over %q: rows %v, regexp says %v", pattern, vals, got, want)
			}
			// Offsets cut short or out of order: refused or followed
			// within the buffer, never a panic.
			bad := slices.Clone(offs)
			bad[int(cut)%len(bad)] = uint32(cut) * 7
			s.AppendRows(nil, data, bad)
		}
	})
}

// FuzzByteSearch: a literal found by the packed pair search, with any
// pair of its bytes or the pair chosen on the text, is where bytes.Index
// finds it, from every start near the text's beginning.
func FuzzByteSearch(f *testing.F) {
	f.Add([]byte("172.18.0.1 - - [10/Nov/2025] \"GET /rest/v1/t HTTP/1.1\"\nGET /auth/v1/token"), "auth/v1/", uint8(5), uint8(3))
	f.Add([]byte(strings.Repeat("/v1/", 20)), "/v1/", uint8(1), uint8(0))
	f.Add([]byte("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab"), "ab", uint8(0), uint8(1))
	f.Fuzz(func(t *testing.T, text []byte, needle string, a, b uint8) {
		if len(needle) > 64 || len(text) > 1<<16 {
			return
		}
		rare, other := 0, 0
		if len(needle) >= 2 {
			rare = int(a) % len(needle)
			other = (rare + 1 + int(b)%(len(needle)-1)) % len(needle)
		}
		pair := bytesearch.NewFinderPair(needle, rare, other)
		chosen := bytesearch.NewFinder(needle, text)
		for s := 0; s <= min(len(text), 40); s++ {
			want := bytes.Index(text[s:], []byte(needle))
			if got := pair.Index(text[s:]); got != want {
				t.Fatalf("pair (%d, %d) from %d: %d, bytes.Index says %d", rare, other, s, got, want)
			}
			if got := chosen.Index(text[s:]); got != want {
				t.Fatalf("chosen pair from %d: %d, bytes.Index says %d", s, got, want)
			}
		}
	})
}
