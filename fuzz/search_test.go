package fuzz

import (
	"slices"
	"strings"
	"testing"

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
